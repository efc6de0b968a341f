//! Finding a master through Redis Sentinel, every wait bounded: each Sentinel in turn is
//! asked `SENTINEL get-master-addr-by-name`, and the master it names is connected to with
//! the URL's credentials and checked with `ROLE`, so a replica (a stale answer, a
//! failover under way) is never written to.
//!
//! Written here rather than with the `redis` crate's `sentinel` feature: its sync client
//! connects to Sentinels and masters without a timeout (`Client::get_connection`), so one
//! Sentinel that drops packets would hold a caller without bound.
//!
//! An open connection asks again at most once per [`RECHECK`] ([`MasterCheck`]): after a
//! `SENTINEL FAILOVER` the old master keeps answering as a master until the Sentinels
//! turn it into a replica (measured: 11 s), and every write it takes meanwhile is lost
//! when it resyncs from the new master. A connection whose master the Sentinels no longer
//! name is closed, and the next one is opened on the new master.

use std::time::{Duration, Instant};

use keyroute::slot::Address;
use redis::{Connection, Value};

use super::{Endpoint, Place, Timeouts};
use crate::error::{Error, Result};

/// How often a connection behind Sentinel asks whether its master is still the master.
pub(crate) const RECHECK: Duration = Duration::from_secs(1);

/// When a connection behind Sentinel last asked the Sentinels for the master, and the
/// answer.
#[derive(Debug, Default)]
pub(crate) struct MasterCheck {
    named: Option<Address>,
    asked: Option<Instant>,
}

impl MasterCheck {
    /// Whether it is time to ask again (and, if so, marks it asked now, so that callers
    /// sharing this check ask once per [`RECHECK`] between them).
    pub(crate) fn due(&mut self) -> bool {
        if self.asked.is_some_and(|at| at.elapsed() < RECHECK) {
            return false;
        }
        self.asked = Some(Instant::now());
        true
    }

    /// Records a master just named (by an answer to [`named_master`], or by a connect).
    pub(crate) fn named(&mut self, master: Option<Address>) {
        if master.is_some() {
            self.named = master;
        }
    }

    /// Records a connect to `master` (the Sentinels named it just now).
    pub(crate) fn connected(&mut self, master: Option<Address>) {
        self.asked = Some(Instant::now());
        self.named(master);
    }

    /// Whether a connection to `at` leads to a master the Sentinels no longer name.
    pub(crate) fn stale(&self, at: Option<&Address>) -> bool {
        matches!((&self.named, at), (Some(named), Some(at)) if named != at)
    }

    /// For a connection to `at` that is not shared: asks the Sentinels if it is time, and
    /// whether `at` is no longer the master they name (false when no Sentinel answered).
    pub(crate) fn moved(&mut self, endpoint: &Endpoint, at: Option<&Address>, t: Timeouts) -> bool {
        if self.due() {
            let now = named_master(endpoint, t);
            self.named(now);
        }
        self.stale(at)
    }
}

/// The master the Sentinels of `endpoint` name now: the first answer, in the order given;
/// `None` if none answered or `endpoint` is not a Sentinel URL. One short question per
/// Sentinel tried, each bounded by `timeouts`.
pub(crate) fn named_master(endpoint: &Endpoint, timeouts: Timeouts) -> Option<Address> {
    let Place::Sentinel { sentinels, service } = endpoint.place() else {
        return None;
    };
    sentinels
        .iter()
        .find_map(|s| ask(endpoint, s, service, timeouts).ok())
}

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
            // So is a Sentinel's refused password or certificate (REDIS_TLS, as for a
            // master): every Sentinel is reached with the same settings.
            Err(e @ (Error::Auth { .. } | Error::Tls { .. })) => return Err(e),
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
