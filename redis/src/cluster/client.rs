//! A Redis Cluster client that routes single-key commands by hash slot over one
//! connection per node, on the core [`SlotMap`] (the `redis` crate's own slot map is
//! private, so routing, redirects and refreshes are ours; connections and the protocol
//! are the `redis` crate's).
//!
//! Redirects and errors:
//!
//! | reply | what the client does |
//! |---|---|
//! | `MOVED slot host:port` | [`SlotMap::apply_redirect`] updates that slot, resends there, and asks for a full refresh (throttled to one per [`ClusterConfig::refresh_interval`]) |
//! | `ASK slot host:port` | sends `ASKING` then the command to that node, once; the map is untouched |
//! | `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN`, `LOADING` | backs off exponentially ([`ClusterConfig::backoff`]) and retries; `CLUSTERDOWN` and `MASTERDOWN` also refresh |
//! | `READONLY`, connection error or timeout | drops the connection, refreshes (not throttled), backs off, retries |
//! | anything else | returned to the caller |
//!
//! Every command is tried at most [`ClusterConfig::max_attempts`] times. A command
//! retried after a connection error may have run once already (at-least-once); only
//! idempotent commands are safe to retry blindly, exactly as with any Redis client.
use std::collections::HashMap;
use std::fmt;
use std::thread;
use std::time::{Duration, Instant};

use keyroute::slot::{key_slot, Address, Redirect, RedirectAction, SlotMap, SLOT_COUNT};
use redis::{Cmd, Connection, ConnectionLike, FromRedisValue, ServerErrorKind, Value};

use super::topology::{fetch_topology, TopologySource};
use crate::conn::{command_key, open_addr, parse_seed, Timeouts};
use crate::error::Error;

/// Timeouts, retries and refresh throttling of a [`ClusterClient`].
#[derive(Debug, Clone)]
pub struct ClusterConfig {
    /// TCP connect timeout per node. Default 1 s.
    pub connect_timeout: Duration,
    /// Read and write timeout per command. Default 1 s.
    pub io_timeout: Duration,
    /// Tries per command, redirects and retries included. Default 16.
    pub max_attempts: u32,
    /// First back-off after `TRYAGAIN`/`CLUSTERDOWN`/a connection error; doubles per
    /// retry up to [`max_backoff`](Self::max_backoff). Default 10 ms.
    pub backoff: Duration,
    /// Upper bound of one back-off sleep. Default 500 ms.
    pub max_backoff: Duration,
    /// After a `MOVED`, the full refresh waits until this long since the previous one
    /// (the moved slot itself is updated at once). Default 100 ms.
    pub refresh_interval: Duration,
}

impl ClusterConfig {
    /// The connect and I/O timeouts as [`Timeouts`].
    pub fn timeouts(&self) -> Timeouts {
        Timeouts {
            connect: self.connect_timeout,
            io: self.io_timeout,
        }
    }
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(1),
            io_timeout: Duration::from_secs(1),
            max_attempts: 16,
            backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(500),
            refresh_interval: Duration::from_millis(100),
        }
    }
}

/// Counters of what the client did, for tests and monitoring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClusterStats {
    /// `MOVED` replies followed.
    pub moved: u64,
    /// `ASK` replies followed.
    pub asked: u64,
    /// Full topology refreshes done.
    pub refreshes: u64,
    /// Back-off sleeps (`TRYAGAIN`, `CLUSTERDOWN`, connection errors, ...).
    pub backoffs: u64,
}

/// A Redis Cluster client routing single-key commands by slot (see the module docs).
///
/// Not `Sync`: one client per thread, each with its own connections (one per node).
///
/// ```no_run
/// use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
///
/// let mut c = ClusterClient::connect(&["redis://127.0.0.1:7000"], ClusterConfig::default())?;
/// c.set(b"user:1", b"alice")?;
/// assert_eq!(c.get(b"user:1")?.as_deref(), Some(&b"alice"[..]));
/// let n: i64 = c.query(&redis::cmd("INCR").arg("hits"))?;
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
pub struct ClusterClient {
    seeds: Vec<Address>,
    config: ClusterConfig,
    map: SlotMap,
    source: TopologySource,
    conns: HashMap<Address, Connection>,
    last_refresh: Instant,
    refresh_wanted: bool,
    stats: ClusterStats,
}

impl fmt::Debug for ClusterClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterClient")
            .field("seeds", &self.seeds)
            .field("map", &self.map)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

enum Outcome {
    Done(Value),
    Retry(String),
}

impl ClusterClient {
    /// Connects to the first reachable seed (`redis://host:port` or `host:port`) and
    /// fetches the topology.
    ///
    /// # Errors
    /// A bad seed, or no seed answering with a valid topology.
    pub fn connect(seeds: &[&str], config: ClusterConfig) -> Result<Self, Error> {
        let seeds = seeds
            .iter()
            .map(|s| parse_seed(s))
            .collect::<Result<Vec<_>, _>>()?;
        let mut c = Self {
            seeds,
            config,
            map: SlotMap::new(),
            source: TopologySource::Shards,
            conns: HashMap::new(),
            last_refresh: Instant::now(),
            refresh_wanted: false,
            stats: ClusterStats::default(),
        };
        c.refresh()?;
        Ok(c)
    }

    /// The current slot map.
    #[must_use]
    pub fn map(&self) -> &SlotMap {
        &self.map
    }

    /// Which command the last refresh used.
    #[must_use]
    pub fn topology_source(&self) -> TopologySource {
        self.source
    }

    /// What the client did so far.
    #[must_use]
    pub fn stats(&self) -> ClusterStats {
        self.stats
    }

    /// The configuration.
    #[must_use]
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// Fetches the topology now, asking the known masters first, then the seeds.
    /// Connections to nodes that left the map are closed.
    ///
    /// # Errors
    /// [`Error::NoReachableNode`] if nobody answered with a complete-enough map.
    pub fn refresh(&mut self) -> Result<(), Error> {
        let mut candidates: Vec<Address> =
            self.map.masters().map(|(_, n)| n.addr().clone()).collect();
        for s in &self.seeds {
            if !candidates.contains(s) {
                candidates.push(s.clone());
            }
        }
        let mut last = String::from("no candidates");
        for addr in candidates {
            let res = match self.conns.get_mut(&addr) {
                Some(con) => fetch_topology(con),
                None => match open_addr(&addr, self.config.timeouts()) {
                    Ok(mut con) => {
                        let r = fetch_topology(&mut con);
                        self.conns.insert(addr.clone(), con);
                        r
                    }
                    Err(e) => Err(e),
                },
            };
            match res {
                Ok((map, source)) if map.owner_count() > 0 => {
                    self.map = map;
                    self.source = source;
                    self.last_refresh = Instant::now();
                    self.refresh_wanted = false;
                    self.stats.refreshes += 1;
                    let known: Vec<Address> =
                        self.map.nodes().iter().map(|n| n.addr().clone()).collect();
                    self.conns.retain(|a, _| known.contains(a));
                    return Ok(());
                }
                Ok(_) => last = format!("{addr}: no slot is served"),
                Err(e) => {
                    if e.is_connection_error() {
                        self.conns.remove(&addr);
                    }
                    last = format!("{addr}: {e}");
                }
            }
        }
        Err(Error::NoReachableNode(last))
    }

    fn maybe_refresh(&mut self) {
        if self.refresh_wanted && self.last_refresh.elapsed() >= self.config.refresh_interval {
            // A failed refresh keeps the current map; the next redirect or error retries.
            if self.refresh().is_err() {
                self.last_refresh = Instant::now();
            }
        }
    }

    fn backoff(&mut self, attempt: u32) {
        self.stats.backoffs += 1;
        let d = self
            .config
            .backoff
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.config.max_backoff);
        thread::sleep(d);
    }

    fn connection(&mut self, addr: &Address) -> Result<&mut Connection, Error> {
        match self.conns.entry(addr.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(e) => {
                Ok(e.insert(open_addr(addr, self.config.timeouts())?))
            }
        }
    }

    /// Sends `cmd` (whose key hashes to `slot`) to `addr`, with `ASKING` first if `asking`.
    fn send(&mut self, addr: &Address, cmd: &Cmd, asking: bool) -> Result<Value, Error> {
        let io = self.config.io_timeout;
        let con = self.connection(addr)?;
        let fail = |e: redis::RedisError| Error::from_redis(&format!("{addr}"), &e, Some(io));
        if asking {
            let ok = con.req_command(&redis::cmd("ASKING")).map_err(fail)?;
            if let Value::ServerError(e) = ok {
                return Ok(Value::ServerError(e));
            }
        }
        con.req_command(cmd).map_err(fail)
    }

    /// Runs `cmd` on the master serving `slot`, following redirects (see module docs).
    ///
    /// # Errors
    /// Any non-retried error reply or connection error as [`Error::Redis`];
    /// [`Error::TooManyAttempts`] after [`ClusterConfig::max_attempts`] tries.
    pub fn query_slot<T: FromRedisValue>(&mut self, slot: u16, cmd: &Cmd) -> Result<T, Error> {
        let v = self.route(slot, cmd)?;
        T::from_redis_value(v).map_err(|e| Error::protocol(format!("slot {slot}"), e.to_string()))
    }

    /// Runs a single-key `cmd`, routed by `key`.
    ///
    /// # Errors
    /// As [`query_slot`](Self::query_slot).
    pub fn query_key<T: FromRedisValue>(&mut self, key: &[u8], cmd: &Cmd) -> Result<T, Error> {
        self.query_slot(key_slot(key), cmd)
    }

    /// Runs `cmd`, routed by its first argument after the command name (the key of
    /// `GET`, `SET`, `INCR`, `HSET`, `EXPIRE`, ...). Use
    /// [`query_key`](Self::query_key) for commands whose key is elsewhere.
    ///
    /// # Errors
    /// [`Error::Protocol`] if `cmd` has no argument; else as
    /// [`query_slot`](Self::query_slot).
    pub fn query<T: FromRedisValue>(&mut self, cmd: &Cmd) -> Result<T, Error> {
        let slot = command_key(cmd)
            .map(key_slot)
            .ok_or_else(|| Error::protocol("cluster", "command without a key".to_string()))?;
        self.query_slot(slot, cmd)
    }

    /// `GET key`.
    ///
    /// # Errors
    /// As [`query_slot`](Self::query_slot).
    pub fn get(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, Error> {
        self.query_key(key, redis::cmd("GET").arg(key))
    }

    /// `SET key value`.
    ///
    /// # Errors
    /// As [`query_slot`](Self::query_slot).
    pub fn set(&mut self, key: &[u8], value: &[u8]) -> Result<(), Error> {
        self.query_key(key, redis::cmd("SET").arg(key).arg(value))
    }

    /// `DEL key`; whether it existed.
    ///
    /// # Errors
    /// As [`query_slot`](Self::query_slot).
    pub fn del(&mut self, key: &[u8]) -> Result<bool, Error> {
        let n: i64 = self.query_key(key, redis::cmd("DEL").arg(key))?;
        Ok(n > 0)
    }

    fn route(&mut self, slot: u16, cmd: &Cmd) -> Result<Value, Error> {
        let mut ask: Option<Address> = None;
        let mut last = String::new();
        for attempt in 0..self.config.max_attempts {
            self.maybe_refresh();
            let asking = ask.is_some();
            let addr = match ask.take() {
                Some(a) => a,
                None => match self.map.node_for_slot(slot) {
                    Some(n) => n.addr().clone(),
                    None => {
                        if self.last_refresh.elapsed() < self.config.refresh_interval && attempt > 0
                        {
                            return Err(Error::NoOwner { slot });
                        }
                        self.refresh()?;
                        match self.map.node_for_slot(slot) {
                            Some(n) => n.addr().clone(),
                            None => return Err(Error::NoOwner { slot }),
                        }
                    }
                },
            };
            match self.attempt(&addr, cmd, asking, &mut ask, attempt)? {
                Outcome::Done(v) => return Ok(v),
                Outcome::Retry(why) => last = why,
            }
        }
        Err(Error::TooManyAttempts { slot, last })
    }

    fn attempt(
        &mut self,
        addr: &Address,
        cmd: &Cmd,
        asking: bool,
        ask: &mut Option<Address>,
        attempt: u32,
    ) -> Result<Outcome, Error> {
        let err = match self.send(addr, cmd, asking) {
            Ok(Value::ServerError(e)) => e,
            Ok(v) => return Ok(Outcome::Done(v)),
            Err(e) if e.is_connection_error() => {
                self.conns.remove(addr);
                let why = e.to_string();
                self.backoff(attempt);
                let _ = self.refresh();
                return Ok(Outcome::Retry(why));
            }
            Err(e) => return Err(e),
        };
        let why = format!("{addr}: {} {}", err.code(), err.details().unwrap_or(""));
        match err.kind() {
            Some(ServerErrorKind::Moved | ServerErrorKind::Ask) => {
                let text = format!("{} {}", err.code(), err.details().unwrap_or(""));
                let redirect = Redirect::parse(&text)
                    .map_err(|e| Error::protocol("cluster", format!("{text:?}: {e}")))?;
                match self.map.apply_redirect(&redirect, &addr.host)? {
                    RedirectAction::Moved { .. } => {
                        self.stats.moved += 1;
                        self.refresh_wanted = true;
                    }
                    RedirectAction::Ask { addr, .. } => {
                        self.stats.asked += 1;
                        *ask = Some(addr);
                    }
                    other => {
                        return Err(Error::protocol(
                            "cluster",
                            format!("unexpected redirect {other:?}"),
                        ))
                    }
                }
                Ok(Outcome::Retry(why))
            }
            Some(ServerErrorKind::TryAgain | ServerErrorKind::BusyLoading) => {
                self.backoff(attempt);
                Ok(Outcome::Retry(why))
            }
            Some(ServerErrorKind::ClusterDown | ServerErrorKind::MasterDown) => {
                self.backoff(attempt);
                self.refresh_wanted = true;
                Ok(Outcome::Retry(why))
            }
            Some(ServerErrorKind::ReadOnly) => {
                self.conns.remove(addr);
                let _ = self.refresh();
                self.backoff(attempt);
                Ok(Outcome::Retry(why))
            }
            _ => Err(Error::from_redis(
                &format!("{addr}"),
                &err.into(),
                Some(self.config.io_timeout),
            )),
        }
    }
}

trait OwnerCount {
    fn owner_count(&self) -> usize;
}

impl OwnerCount for SlotMap {
    fn owner_count(&self) -> usize {
        usize::from(SLOT_COUNT) - self.unassigned_count()
    }
}
