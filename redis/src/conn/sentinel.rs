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
//! name is closed, and the next one is opened on the new master. Each check asks one
//! Sentinel (the one that answered last; after a failure, the next in the list) and waits
//! for it at most [`RECHECK_WAIT`], so a Sentinel that does not answer costs one call a
//! second that much at most.

use std::time::{Duration, Instant};

use keyroute::slot::Address;
use redis::{Connection, Value};

use super::{Endpoint, Place, Timeouts};
use crate::error::{Error, Result};

/// How often a connection behind Sentinel asks whether its master is still the master.
pub(crate) const RECHECK: Duration = Duration::from_secs(1);

/// The longest a check waits for a Sentinel (to connect, and for its answer).
pub(crate) const RECHECK_WAIT: Duration = Duration::from_millis(500);

/// When a connection (or a pool of them) behind Sentinel last asked the Sentinels for
/// the master, which one, and the answer.
#[derive(Debug, Default)]
pub(crate) struct MasterCheck {
    named: Option<Address>,
    asked: Option<Instant>,
    /// The Sentinel to ask next (an index into the URL's list).
    next: usize,
}

impl MasterCheck {
    /// If it is time to ask again, the Sentinel to ask (and marks it asked now, so that
    /// callers sharing this check ask once per [`RECHECK`] between them).
    pub(crate) fn due(&mut self) -> Option<usize> {
        if self.asked.is_some_and(|at| at.elapsed() < RECHECK) {
            return None;
        }
        self.asked = Some(Instant::now());
        Some(self.next)
    }

    /// Records the answer of Sentinel `i` to [`ask_one`]: no answer moves on to the next.
    pub(crate) fn answered(&mut self, i: usize, master: Option<Address>) {
        match master {
            Some(m) => self.named = Some(m),
            None => self.next = i.wrapping_add(1),
        }
    }

    /// Records a connect to `master` (the Sentinels named it just now).
    pub(crate) fn connected(&mut self, master: Option<Address>) {
        self.asked = Some(Instant::now());
        if master.is_some() {
            self.named = master;
        }
    }

    /// Whether a connection to `at` leads to a master the Sentinels no longer name.
    pub(crate) fn stale(&self, at: Option<&Address>) -> bool {
        matches!((&self.named, at), (Some(named), Some(at)) if named != at)
    }

    /// For a connection to `at` that is not shared: asks a Sentinel if it is time, and
    /// whether `at` is no longer the master they name (false when it did not answer).
    pub(crate) fn moved(&mut self, endpoint: &Endpoint, at: Option<&Address>, t: Timeouts) -> bool {
        if let Some(i) = self.due() {
            let now = ask_one(endpoint, i, t);
            self.answered(i, now);
        }
        self.stale(at)
    }
}

/// The master Sentinel `i` (modulo their number) of `endpoint` names now, waiting at
/// most `timeouts` and [`RECHECK_WAIT`]; `None` if it did not answer, or `endpoint` is
/// not a Sentinel URL.
pub(crate) fn ask_one(endpoint: &Endpoint, i: usize, timeouts: Timeouts) -> Option<Address> {
    let Place::Sentinel { sentinels, service } = endpoint.place() else {
        return None;
    };
    let sentinel = sentinels.get(i % sentinels.len().max(1))?;
    let short = Timeouts {
        connect: timeouts.connect.min(RECHECK_WAIT),
        io: timeouts.io.min(RECHECK_WAIT),
    };
    ask(endpoint, sentinel, service, short).ok()
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
            Ok(master) => match endpoint.open_node_raw(&master, timeouts) {
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
