//! Finding a master through Redis Sentinel, every wait bounded: each Sentinel in turn is
//! asked `SENTINEL get-master-addr-by-name`, and the master it names is connected to with
//! the URL's credentials and checked with `ROLE`, so a replica (a stale answer, a
//! failover under way) is never written to.
//!
//! Written here rather than with the `redis` crate's `sentinel` feature: its sync client
//! connects to Sentinels and masters without a timeout (`Client::get_connection`), so one
//! Sentinel that drops packets would hold a caller without bound.

use keyroute::slot::Address;
use redis::{Connection, Value};

use super::{Endpoint, Timeouts};
use crate::error::{Error, Result};

/// The master of `service`: its address and an open connection to it.
pub(crate) fn open_master(
    endpoint: &Endpoint,
    sentinels: &[Address],
    service: &str,
    timeouts: Timeouts,
) -> Result<(Address, Connection)> {
    let mut seen = Vec::new();
    for sentinel in sentinels {
        match ask(endpoint, sentinel, service, timeouts) {
            Ok(master) => match endpoint.open_node(&master, timeouts) {
                Ok(mut con) => match role(&mut con) {
                    Ok(r) if r == "master" => return Ok((master, con)),
                    Ok(r) => seen.push(format!("{sentinel} names {master}, which is a {r}")),
                    Err(e) => seen.push(format!("{sentinel} names {master}: {e}")),
                },
                // A refused password is the caller's to fix: say so, not "no master".
                Err(e @ (Error::Auth { .. } | Error::Tls { .. })) => return Err(e),
                Err(e) => seen.push(format!("{sentinel} names {master}: {e}")),
            },
            Err(e @ Error::Auth { .. }) => return Err(e),
            Err(e) => seen.push(format!("{sentinel}: {e}")),
        }
    }
    Err(Error::Connect {
        context: format!("find the master {service:?} through Sentinel"),
        detail: format!("no Sentinel named a reachable master: {}", seen.join("; ")),
    })
}

/// What `sentinel` says the master of `service` is.
fn ask(
    endpoint: &Endpoint,
    sentinel: &Address,
    service: &str,
    timeouts: Timeouts,
) -> Result<Address> {
    let client = endpoint.sentinel_client(sentinel)?;
    let mut con = super::open(&client, &format!("Sentinel {sentinel}"), endpoint, timeouts)?;
    let reply: Option<(String, u16)> = redis::cmd("SENTINEL")
        .arg("get-master-addr-by-name")
        .arg(service)
        .query(&mut con)
        .map_err(|e| {
            Error::from_redis(
                &format!("SENTINEL get-master-addr-by-name on {sentinel}"),
                &e,
                None,
            )
        })?;
    let (host, port) = reply.ok_or_else(|| Error::Connect {
        context: format!("Sentinel {sentinel}"),
        detail: format!("it knows no master named {service:?}"),
    })?;
    Ok(Address::new(host, port))
}

/// The first element of `ROLE`: `master`, `slave` or `sentinel`.
fn role(con: &mut Connection) -> Result<String> {
    let v: Value = redis::cmd("ROLE")
        .query(con)
        .map_err(|e| Error::from_redis("ROLE", &e, None))?;
    match v {
        Value::Array(items) => match items.first() {
            Some(Value::BulkString(b)) => Ok(String::from_utf8_lossy(b).into_owned()),
            Some(Value::SimpleString(s)) => Ok(s.clone()),
            _ => Err(Error::protocol("ROLE", "no role in the reply")),
        },
        _ => Err(Error::protocol("ROLE", "not an array")),
    }
}
