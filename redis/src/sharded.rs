//! A client over standalone Redis nodes, routed by a core [`Ring`] of any profile, that
//! can add and remove nodes and move exactly the keys whose owner changed while writes
//! continue.
//!
//! # The write-during-rebalance protocol
//!
//! A ring change is staged, not applied: [`add_node`](ShardedClient::add_node) and
//! [`remove_node`](ShardedClient::remove_node) set a *pending* ring next to the *current*
//! one, and the client enters migration mode until [`rebalance`](ShardedClient::rebalance)
//! commits the pending ring. In migration mode every operation on a key `k` whose owner
//! differs (`old = current(k)`, `new = pending(k)`) does:
//!
//! 1. **pull**: `MIGRATE new-host new-port k <db> <timeout> REPLACE [AUTH...]` on `old`;
//! 2. runs the command on `new`.
//!
//! `rebalance` SCANs every node of the current ring and pulls each key that does not
//! belong there any more under the pending ring, then commits. Why this loses and
//! duplicates nothing:
//!
//! * In migration mode nothing is ever written to `old` for a moving key (commands go to
//!   `new`), so a key leaves `old` only by `MIGRATE`, and SCAN (which returns every key
//!   present for the whole scan) sees every key that still needs moving.
//! * `MIGRATE` is atomic on the source: the key is restored on the target, then deleted
//!   from the source, with no command of another client in between. After step 1 the
//!   key is not on `old` and cannot come back, so step 2 acts on the only copy, and two
//!   clients pulling the same key cannot both move it (the second gets `NOKEY`).
//! * `REPLACE` is right: at the instant of the pull `old` still holds the key, so no
//!   write under the protocol has reached `new` yet; a copy already on `new` can only be
//!   a stray from before the change (or a write that bypassed the protocol) and the
//!   owner's copy wins.
//! * Deletes are pulls followed by `DEL` on `new`, so an old copy cannot resurface.
//! * TTLs travel with `MIGRATE` (it sends the remaining PTTL); an expired key is `NOKEY`.
//! * Every operation holds a read lock on the ring state for its duration; staging and
//!   committing take the write lock, so no operation routed by a stale ring is in flight
//!   when a change starts or ends.
//!
//! `DUMP` + `RESTORE` + `DEL` from the client is *not* used: it is three round trips, and
//! a concurrent writer can slip between the `DUMP` and the `DEL` (its new value would be
//! overwritten by the stale dump, or a deleted key resurrected). `MIGRATE` needs the
//! nodes to reach each other at the addresses the client uses.
//!
//! The protocol holds for every thread sharing one `ShardedClient`. Several processes
//! must each stage the same change before any of them calls `rebalance` (each may then
//! call `rebalance` too; a second one finds nothing to move and commits).
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard};
use std::time::Duration;

use keyroute::ring::Ring;
use keyroute::slot::Address;
use redis::{Cmd, Connection, ConnectionLike, FromRedisValue, Value};

use crate::conn::{command_key, Endpoint, Timeouts};
use crate::error::{is_broken, Error};

/// Timeouts and batch sizes of a [`ShardedClient`].
#[derive(Debug, Clone)]
pub struct ShardedConfig {
    /// TCP connect timeout. Default 1 s.
    pub connect_timeout: Duration,
    /// Read/write timeout per command. Default 5 s (must exceed the `MIGRATE` timeout).
    pub io_timeout: Duration,
    /// `MIGRATE` timeout in milliseconds. Default 2000.
    pub migrate_timeout_ms: u64,
    /// `SCAN ... COUNT` hint used by [`ShardedClient::rebalance`]. Default 500.
    pub scan_count: usize,
    /// Whose credentials and TLS settings open every node: a URL of the
    /// [grammar](Endpoint) (its host is not used). Default none: plain TCP, no `AUTH`.
    pub credentials: Option<Endpoint>,
}

impl ShardedConfig {
    /// The connect and I/O timeouts as [`Timeouts`].
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect: self.connect_timeout,
            io: self.io_timeout,
        }
    }
}

impl Default for ShardedConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(1),
            io_timeout: Duration::from_secs(5),
            migrate_timeout_ms: 2000,
            scan_count: 500,
            credentials: None,
        }
    }
}

/// What [`ShardedClient::rebalance`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RebalanceReport {
    /// Keys moved since the change was staged: by the rebalance scan and by operations
    /// that pulled a key on access. Equals the number of keys whose owner changed (keys
    /// that expired or were deleted before being touched excepted).
    pub moved: u64,
    /// Of those, keys moved by the rebalance scan itself.
    pub moved_by_scan: u64,
    /// Keys the scan looked at (on every node of the old ring).
    pub scanned: u64,
}

struct State {
    current: Ring,
    pending: Option<Ring>,
    addrs: HashMap<String, Address>,
}

/// A client over standalone Redis nodes routed by a [`Ring`]. `Send + Sync`: share one
/// (e.g. in an `Arc`) between threads; connections are pooled per node.
///
/// ```no_run
/// use keyroute_redis::sharded::{ShardedClient, ShardedConfig};
/// use keyroute::ring::{Profile, Ring};
///
/// let ring = Ring::with_nodes(Profile::native(), [("127.0.0.1:6379", 1), ("127.0.0.1:6380", 1)])?;
/// let client = ShardedClient::from_ring(ring, ShardedConfig::default())?;
/// client.set(b"k", b"v")?;
/// client.add_node("127.0.0.1:6381", "127.0.0.1:6381".parse()?, 1)?;
/// let report = client.rebalance()?;
/// println!("moved {} keys", report.moved);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ShardedClient {
    state: RwLock<State>,
    pool: Mutex<HashMap<Address, Vec<Connection>>>,
    config: ShardedConfig,
    moved: AtomicU64,
}

impl core::fmt::Debug for ShardedClient {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let st = self.read();
        f.debug_struct("ShardedClient")
            .field("nodes", &st.addrs)
            .field("rebalancing", &st.pending.is_some())
            .finish_non_exhaustive()
    }
}

impl ShardedClient {
    /// A client for `ring` whose node names are `host:port` addresses.
    ///
    /// # Errors
    /// [`Error::Protocol`] if a node name is not `host:port`.
    pub fn from_ring(ring: Ring, config: ShardedConfig) -> Result<Self, Error> {
        let addrs = ring
            .nodes()
            .iter()
            .map(|n| {
                Address::parse(n.name())
                    .map(|a| (n.name().to_string(), a))
                    .map_err(|e| {
                        Error::protocol("sharded client", format!("node {:?}: {e}", n.name()))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(ring, addrs, config)
    }

    /// A client for `ring`, with the address of every node (names may be aliases).
    ///
    /// # Errors
    /// [`Error::UnknownNode`] if a ring node has no address.
    pub fn new(
        ring: Ring,
        addresses: impl IntoIterator<Item = (String, Address)>,
        config: ShardedConfig,
    ) -> Result<Self, Error> {
        let addrs: HashMap<String, Address> = addresses.into_iter().collect();
        if let Some(n) = ring.nodes().iter().find(|n| !addrs.contains_key(n.name())) {
            return Err(Error::UnknownNode(n.name().to_string()));
        }
        Ok(Self {
            state: RwLock::new(State {
                current: ring,
                pending: None,
                addrs,
            }),
            pool: Mutex::new(HashMap::new()),
            config,
            moved: AtomicU64::new(0),
        })
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The ring in force (the old one while a change is pending).
    #[must_use]
    pub fn ring(&self) -> Ring {
        self.read().current.clone()
    }

    /// The staged ring, if a change awaits [`rebalance`](Self::rebalance).
    #[must_use]
    pub fn pending_ring(&self) -> Option<Ring> {
        self.read().pending.clone()
    }

    /// The node that owns `key` (under the pending ring while a change is pending).
    #[must_use]
    pub fn owner(&self, key: &[u8]) -> Option<String> {
        let st = self.read();
        st.pending
            .as_ref()
            .unwrap_or(&st.current)
            .get(key)
            .map(str::to_string)
    }

    fn checkout(&self, addr: &Address) -> Result<Connection, Error> {
        let pooled = self
            .pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_mut(addr)
            .and_then(Vec::pop);
        match pooled {
            Some(c) => Ok(c),
            None => self.open(addr),
        }
    }

    /// A new connection to `addr`, with the configured credentials and TLS.
    fn open(&self, addr: &Address) -> Result<Connection, Error> {
        match &self.config.credentials {
            Some(e) => e.open_node_raw(addr, self.config.timeouts()),
            None => crate::conn::Endpoint::plain(addr).open_node_raw(addr, self.config.timeouts()),
        }
    }

    fn checkin(&self, addr: &Address, con: Connection) {
        self.pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .entry(addr.clone())
            .or_default()
            .push(con);
    }

    /// Runs `cmd` on `addr` with a pooled connection; returns the raw reply, error
    /// replies included.
    fn exec(&self, addr: &Address, cmd: &Cmd) -> Result<Value, Error> {
        let mut con = self.checkout(addr)?;
        match con.req_command(cmd) {
            Ok(v) => {
                self.checkin(addr, con);
                Ok(v)
            }
            Err(e) => {
                if is_broken(&e) {
                    // The node failed (or restarted): its other pooled connections are
                    // as dead as this one; a retry opens a fresh one.
                    self.pool
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(addr);
                } else {
                    self.checkin(addr, con);
                }
                Err(Error::from_redis(
                    &format!("{addr}"),
                    &e,
                    Some(self.config.io_timeout),
                ))
            }
        }
    }

    /// Moves `key` from `from` to `to` with `MIGRATE ... REPLACE`; `true` if it moved.
    /// With [`credentials`](ShardedConfig::credentials), into their database and logged
    /// in with them (`AUTH2 user password` or `AUTH password`): the source node has no
    /// credentials of its own for the target.
    fn pull(&self, from: &Address, to: &Address, key: &[u8]) -> Result<bool, Error> {
        let credentials = self.config.credentials.as_ref();
        let mut cmd = redis::cmd("MIGRATE");
        cmd.arg(&to.host)
            .arg(to.port)
            .arg(key)
            .arg(credentials.map_or(0, Endpoint::db))
            .arg(self.config.migrate_timeout_ms)
            .arg("REPLACE");
        if let Some(e) = credentials {
            e.migrate_auth(&mut cmd);
        }
        let v = self.exec(from, &cmd)?;
        match v {
            Value::Okay => {
                self.moved.fetch_add(1, Ordering::Relaxed);
                Ok(true)
            }
            Value::SimpleString(s) if s == "OK" => {
                self.moved.fetch_add(1, Ordering::Relaxed);
                Ok(true)
            }
            Value::SimpleString(s) if s == "NOKEY" => Ok(false),
            Value::ServerError(e) => Err(Error::from_redis("MIGRATE", &e.into(), None)),
            other => Err(Error::protocol("MIGRATE", format!("{other:?}"))),
        }
    }

    /// Where `key` must be served now, pulling it there first when a change is pending.
    fn route(&self, st: &State, key: &[u8]) -> Result<Address, Error> {
        let new = st.pending.as_ref().unwrap_or(&st.current);
        let owner = new.get(key).ok_or(Error::Busy("the ring has no node"))?;
        let to = &st.addrs[owner];
        if st.pending.is_some() {
            if let Some(old) = st.current.get(key) {
                if old != owner {
                    self.pull(&st.addrs[old], to, key)?;
                }
            }
        }
        Ok(to.clone())
    }

    /// Runs a single-key `cmd` on the node owning `key`.
    ///
    /// # Errors
    /// A connection error or an error reply as [`Error::Redis`]; a failed pull
    /// during a pending change.
    pub fn query_key<T: FromRedisValue>(&self, key: &[u8], cmd: &Cmd) -> Result<T, Error> {
        let st = self.read();
        let addr = self.route(&st, key)?;
        let v = self.exec(&addr, cmd)?;
        drop(st);
        match v {
            Value::ServerError(e) => Err(Error::from_redis(&format!("{addr}"), &e.into(), None)),
            v => T::from_redis_value(v)
                .map_err(|e| Error::protocol(format!("{addr}"), e.to_string())),
        }
    }

    /// Runs `cmd`, routed by its first argument after the command name.
    ///
    /// # Errors
    /// [`Error::Protocol`] without a key; else as [`query_key`](Self::query_key).
    pub fn query<T: FromRedisValue>(&self, cmd: &Cmd) -> Result<T, Error> {
        let key = command_key(cmd)
            .ok_or_else(|| Error::protocol("sharded client", "command without a key"))?;
        self.query_key(key, cmd)
    }

    /// `GET key`.
    ///
    /// # Errors
    /// As [`query_key`](Self::query_key).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        self.query_key(key, redis::cmd("GET").arg(key))
    }

    /// `SET key value`.
    ///
    /// # Errors
    /// As [`query_key`](Self::query_key).
    pub fn set(&self, key: &[u8], value: &[u8]) -> Result<(), Error> {
        self.query_key(key, redis::cmd("SET").arg(key).arg(value))
    }

    /// `DEL key`; whether it existed.
    ///
    /// # Errors
    /// As [`query_key`](Self::query_key).
    pub fn del(&self, key: &[u8]) -> Result<bool, Error> {
        let n: i64 = self.query_key(key, redis::cmd("DEL").arg(key))?;
        Ok(n > 0)
    }

    fn stage(
        &self,
        change: impl FnOnce(&mut Ring, &mut HashMap<String, Address>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut st = self
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if st.pending.is_some() {
            return Err(Error::Busy(
                "a ring change is pending: call rebalance() first",
            ));
        }
        let mut ring = st.current.clone();
        let mut addrs = st.addrs.clone();
        change(&mut ring, &mut addrs)?;
        st.addrs = addrs;
        st.pending = Some(ring);
        self.moved.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// Stages adding node `name` at `addr` with `weight`. Keys move to it on access and
    /// by [`rebalance`](Self::rebalance), which makes the change final.
    ///
    /// # Errors
    /// [`Error::Busy`] if a change is already pending; [`Error::Ring`] for
    /// a duplicate name or zero weight.
    pub fn add_node(&self, name: &str, addr: Address, weight: u32) -> Result<(), Error> {
        self.stage(|ring, addrs| {
            ring.add(name, weight)?;
            addrs.insert(name.to_string(), addr);
            Ok(())
        })
    }

    /// Stages removing node `name`; [`rebalance`](Self::rebalance) drains it.
    ///
    /// # Errors
    /// [`Error::Busy`] if a change is already pending; [`Error::Ring`] if
    /// the node is unknown.
    pub fn remove_node(&self, name: &str) -> Result<(), Error> {
        self.stage(|ring, _| {
            ring.remove(name)?;
            Ok(())
        })
    }

    /// Moves every key whose owner changed under the pending ring (SCAN on every node of
    /// the current ring + `MIGRATE ... REPLACE`, see the module docs), then commits the
    /// pending ring. Without a pending change it does nothing.
    ///
    /// # Errors
    /// A connection or `MIGRATE` error (a node down or restarting, e.g. `IOERR` from a
    /// target that died), its context naming the node and the key: the change stays
    /// pending and `rebalance` can be called again once the node is back (already moved
    /// keys are not moved twice). Every key is then on exactly one node: `MIGRATE`
    /// deletes a key from the source only after the target acknowledged it (with
    /// `appendfsync always` on the nodes this also holds across a node's crash and
    /// restart, except that a source killed between the target's acknowledgement and its
    /// own `DEL` can keep a copy, identical to the target's, which the next `rebalance`
    /// removes).
    pub fn rebalance(&self) -> Result<RebalanceReport, Error> {
        self.rebalance_inner().map_err(|e| {
            context(
                e,
                "rebalance stopped; the ring change stays pending: call rebalance() again once every node answers",
            )
        })
    }

    fn rebalance_inner(&self) -> Result<RebalanceReport, Error> {
        let (old, new, addrs) = {
            let st = self.read();
            let Some(new) = st.pending.clone() else {
                return Ok(RebalanceReport::default());
            };
            (st.current.clone(), new, st.addrs.clone())
        };
        let mut report = RebalanceReport::default();
        for node in old.nodes() {
            let from = &addrs[node.name()];
            let mut con = self.open(from)?;
            let mut cursor: u64 = 0;
            loop {
                let (next, keys): (u64, Vec<Vec<u8>>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("COUNT")
                    .arg(self.config.scan_count)
                    .query(&mut con)
                    .map_err(|e| Error::from_redis(&format!("SCAN {from}"), &e, None))?;
                for key in keys {
                    report.scanned += 1;
                    let owner = new
                        .get(&key)
                        .ok_or(Error::Busy("the new ring has no node"))?;
                    if owner != node.name()
                        && self.pull(from, &addrs[owner], &key).map_err(|e| {
                            context(
                                e,
                                &format!(
                                    "moving {} from {from} to {}",
                                    String::from_utf8_lossy(&key),
                                    addrs[owner]
                                ),
                            )
                        })?
                    {
                        report.moved_by_scan += 1;
                    }
                }
                cursor = next;
                if cursor == 0 {
                    break;
                }
            }
        }
        let mut st = self
            .state
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let new = st.pending.take().unwrap_or(new);
        st.addrs.retain(|name, _| new.contains(name));
        st.current = new;
        let live: Vec<Address> = st.addrs.values().cloned().collect();
        self.pool
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|a, _| live.contains(a));
        report.moved = self.moved.swap(0, Ordering::Relaxed);
        Ok(report)
    }
}

/// `err` with `what` prepended to its context (variants without one are unchanged).
fn context(err: Error, what: &str) -> Error {
    let add = |c: String| format!("{what}: {c}");
    match err {
        Error::Connect { context, detail } => Error::Connect {
            context: add(context),
            detail,
        },
        Error::Timeout { context, after } => Error::Timeout {
            context: add(context),
            after,
        },
        Error::ConnectionLost { context, detail } => Error::ConnectionLost {
            context: add(context),
            detail,
        },
        Error::Server {
            context,
            code,
            detail,
        } => Error::Server {
            context: add(context),
            code,
            detail,
        },
        Error::Protocol { context, detail } => Error::Protocol {
            context: add(context),
            detail,
        },
        other => other,
    }
}
