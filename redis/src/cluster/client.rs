//! A Redis Cluster client that routes commands by hash slot over one connection per
//! node, on the core [`SlotMap`] (the `redis` crate's own slot map is private, so
//! routing, redirects, pipelines and refreshes are ours; connections and the protocol
//! are the `redis` crate's).
//!
//! Redirects and errors:
//!
//! | reply | what the client does |
//! |---|---|
//! | `MOVED slot host:port` | [`SlotMap::apply_redirect`] updates that slot, resends there, and asks for a full refresh (throttled to one per [`ClusterConfig::refresh_interval`]) |
//! | `ASK slot host:port` | sends `ASKING` then the command to that node, once; the map is untouched |
//! | `TRYAGAIN`, `CLUSTERDOWN`, `MASTERDOWN`, `LOADING` | backs off exponentially ([`ClusterConfig::backoff`]) and retries; `CLUSTERDOWN` and `MASTERDOWN` also refresh |
//! | `READONLY` (a master demoted by a failover) | drops the connection, refreshes (not throttled), backs off, retries |
//! | connection refused (the request was not sent) | drops the connection, backs off, refreshes, retries; if no node at all answers the refresh, returns [`Error::NoReachableNode`] at once |
//! | connection lost or timeout after the request was sent | see below |
//! | anything else | returned to the caller |
//!
//! Every reply listed above as retried means the command did **not** run, so resending
//! it counts nothing twice. A request that was sent and then met a broken connection or
//! a timeout may have run: [`query`](ClusterClient::query) and the other typed calls
//! resend it (at-least-once, right for idempotent commands); the
//! [`ConnectionLike`] implementation (what [`LeastUsed`](crate::LeastUsed) and
//! [`Leases`](crate::Leases) use) does not: it returns the error, drops the connection
//! and refreshes the map on the next call, so a pick is counted at most once per call
//! (the caller is told it may or may not have run, exactly as with
//! [`Reconnecting`](crate::Reconnecting)). Reads are always resent.
//!
//! Pipelines (`req_packed_commands`, e.g. [`LeastUsed::pick_many`]
//! (crate::LeastUsed::pick_many)) are split here, per command: the commands answered
//! are kept, and only the commands answered `MOVED`/`ASK`/`TRYAGAIN`/... are resent
//! (with `ASKING` before each one sent after `ASK`). So when a slot migrates in the
//! middle of a pipeline, every command runs exactly once.
//!
//! Replica reads: with [`ClusterConfig::read_from_replicas`], read-only commands (`GET`,
//! `ZRANGE`, `HGETALL`, `ZCARD`, `EVALSHA_RO`, ... see [`is_read_command`]) go to a
//! replica of the slot's master (after `READONLY` on that connection), falling back to
//! the master if no replica is healthy or the replica fails. Replication is
//! asynchronous: a replica may answer with data a few milliseconds old.
use std::collections::HashMap;
use std::fmt;
use std::thread;
use std::time::{Duration, Instant};

use keyroute::slot::{key_slot, Address, Health, Redirect, RedirectAction, SlotMap, SLOT_COUNT};
use redis::{
    Cmd, Connection, ConnectionLike, FromRedisValue, RedisResult, ServerError, ServerErrorKind,
    Value,
};

use super::topology::{fetch_topology_with, TopologySource};
use crate::conn::{exchange, Armed, Endpoint, Timeouts};
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
    /// Send read-only commands to a replica of the slot's master (`READONLY`), see the
    /// module docs. Default `false`: every command goes to the master.
    pub read_from_replicas: bool,
    /// How long one command may take in all, retries, back-offs and refreshes included:
    /// a slot with no owner (mid-failover: `CLUSTER_NO_OWNER`) is retried until then,
    /// then reported. Default 5 s.
    pub call_timeout: Duration,
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
            read_from_replicas: false,
            call_timeout: Duration::from_secs(5),
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
    /// `TRYAGAIN` replies met (a multi-key command during a slot migration).
    pub tryagain: u64,
    /// Commands answered by a replica.
    pub replica_reads: u64,
    /// Pipelines of which some commands were answered and others redirected (then only
    /// those were resent).
    pub split_pipelines: u64,
}

/// Whether `name` (a command name, any case) only reads, so that it may go to a replica
/// with [`ClusterConfig::read_from_replicas`] and may always be resent.
///
/// ```
/// use keyroute_redis::cluster::is_read_command;
/// assert!(is_read_command(b"zrange"));
/// assert!(!is_read_command(b"EVALSHA"));
/// ```
#[must_use]
pub fn is_read_command(name: &[u8]) -> bool {
    const READS: &[&[u8]] = &[
        b"GET",
        b"MGET",
        b"STRLEN",
        b"GETRANGE",
        b"EXISTS",
        b"TYPE",
        b"TTL",
        b"PTTL",
        b"EXPIRETIME",
        b"PEXPIRETIME",
        b"ZRANGE",
        b"ZRANGEBYSCORE",
        b"ZREVRANGE",
        b"ZSCORE",
        b"ZMSCORE",
        b"ZCARD",
        b"ZCOUNT",
        b"ZRANK",
        b"ZREVRANK",
        b"HGET",
        b"HMGET",
        b"HGETALL",
        b"HLEN",
        b"HEXISTS",
        b"HKEYS",
        b"HVALS",
        b"SMEMBERS",
        b"SCARD",
        b"SISMEMBER",
        b"LRANGE",
        b"LLEN",
        b"LINDEX",
        b"EVAL_RO",
        b"EVALSHA_RO",
        b"FCALL_RO",
        b"DUMP",
    ];
    READS.iter().any(|r| r.eq_ignore_ascii_case(name))
}

/// How one command is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// By the slot of its key.
    Slot(u16),
    /// No key: any master.
    Any,
    /// `SCRIPT ...`/`FUNCTION ...`: every master (scripts are cached per node).
    Everywhere,
}

/// Where a command goes and whether it only reads, from its arguments.
fn route_of(args: &[&[u8]]) -> (Route, bool) {
    let Some(name) = args.first() else {
        return (Route::Any, false);
    };
    let read = is_read_command(name);
    let is = |n: &[u8]| name.eq_ignore_ascii_case(n);
    if is(b"SCRIPT") || is(b"FUNCTION") {
        return (Route::Everywhere, false);
    }
    let key = if [
        "EVAL",
        "EVALSHA",
        "EVAL_RO",
        "EVALSHA_RO",
        "FCALL",
        "FCALL_RO",
    ]
    .iter()
    .any(|n| is(n.as_bytes()))
    {
        let numkeys = args
            .get(2)
            .and_then(|n| std::str::from_utf8(n).ok())
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0);
        if numkeys > 0 {
            args.get(3)
        } else {
            None
        }
    } else if is(b"PING") || is(b"ECHO") || is(b"TIME") || is(b"INFO") || is(b"CLUSTER") {
        None
    } else {
        args.get(1)
    };
    (key.map_or(Route::Any, |k| Route::Slot(key_slot(k))), read)
}

/// One packed command: its bytes and its arguments.
pub(crate) type Packed<'a> = (&'a [u8], Vec<&'a [u8]>);

/// Splits packed commands (`*N\r\n$len\r\n...`, as the `redis` crate packs them) into
/// `(bytes of the command, its arguments)`.
pub(crate) fn split_packed(mut buf: &[u8]) -> Option<Vec<Packed<'_>>> {
    fn line(buf: &[u8], prefix: u8) -> Option<(usize, &[u8])> {
        if buf.first() != Some(&prefix) {
            return None;
        }
        let end = buf.windows(2).position(|w| w == b"\r\n")?;
        let n = std::str::from_utf8(&buf[1..end]).ok()?.parse().ok()?;
        Some((n, &buf[end + 2..]))
    }
    let mut out = Vec::new();
    while !buf.is_empty() {
        let whole = buf;
        let (n, mut rest) = line(buf, b'*')?;
        let mut args = Vec::new();
        for _ in 0..n {
            let (len, r) = line(rest, b'$')?;
            if r.len() < len + 2 {
                return None;
            }
            args.push(&r[..len]);
            rest = &r[len + 2..];
        }
        out.push((&whole[..whole.len() - rest.len()], args));
        buf = rest;
    }
    Some(out)
}

/// A Redis Cluster client routing commands by slot (see the module docs).
///
/// Not `Sync`: one client per thread, each with its own connections (one per node).
/// It implements [`ConnectionLike`], so [`LeastUsed`](crate::LeastUsed) and
/// [`Leases`](crate::Leases) run on it; call [`explain`](Self::explain) on their errors
/// to get this client's own error (with its code) back.
///
/// ```no_run
/// use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
///
/// let mut c = ClusterClient::connect(&["redis://127.0.0.1:7000"], ClusterConfig::default())?;
/// c.set(b"user:1", b"alice")?;
/// assert_eq!(c.get(b"user:1")?.as_deref(), Some(&b"alice"[..]));
/// let n: i64 = c.query(&redis::cmd("INCR").arg("hits"))?;
/// let pool = keyroute_redis::LeastUsed::new("{jobs}:proxies")?;
/// let picked = pool.pick(&mut c).map_err(|e| c.explain(e))?;
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
pub struct ClusterClient {
    /// The first seed: its credentials and TLS settings open every node.
    endpoint: Endpoint,
    seeds: Vec<Address>,
    config: ClusterConfig,
    map: SlotMap,
    source: TopologySource,
    conns: HashMap<Address, Connection>,
    /// Connections to replicas, each after `READONLY`.
    replica_conns: HashMap<Address, Connection>,
    last_refresh: Instant,
    refresh_wanted: bool,
    /// Refresh on the next call, not throttled (a node failed under us).
    refresh_now: bool,
    stats: ClusterStats,
    /// The error of the last failed [`ConnectionLike`] call, for [`explain`](Self::explain).
    last_error: Option<Error>,
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

/// Whether a call may resend a request that was sent and met a broken connection or a
/// timeout (it may have run).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Resend {
    /// At-least-once: the typed calls.
    Yes,
    /// At-most-once: the `ConnectionLike` calls (scripts that count).
    No,
}

/// A failure of one request: before it was sent (the connect failed) or after.
enum SendError {
    NotSent(Error),
    MaybeSent(Error),
}

impl ClusterClient {
    /// Connects to the first reachable seed (`redis://host:port` or `host:port`) and
    /// fetches the topology.
    ///
    /// # Errors
    /// A bad seed, or no seed answering with a valid topology.
    pub fn connect(seeds: &[&str], config: ClusterConfig) -> Result<Self, Error> {
        let mut c = Self::lazy(seeds, config)?;
        c.refresh()?;
        Ok(c)
    }

    /// A client that only checks the seeds now: the topology is fetched by the first
    /// call (or [`refresh`](Self::refresh)), so a cluster that is down when the client
    /// is made gives errors ([`Error::NoReachableNode`]) until it is up, then works
    /// without a new client.
    ///
    /// ```
    /// use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
    /// let mut c = ClusterClient::lazy(&["127.0.0.1:1"], ClusterConfig::default())?;
    /// assert_eq!(c.get(b"k").unwrap_err().code().as_str(), "CLUSTER_UNREACHABLE");
    /// assert!(ClusterClient::lazy(&["no port"], ClusterConfig::default()).is_err());
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    ///
    /// # Errors
    /// A bad seed ([`Error::BadUrl`]), or no seed at all ([`Error::NoReachableNode`]).
    pub fn lazy(seeds: &[&str], config: ClusterConfig) -> Result<Self, Error> {
        let endpoints = seeds
            .iter()
            .map(|s| Endpoint::parse(s))
            .collect::<Result<Vec<_>, _>>()?;
        let seeds = endpoints
            .iter()
            .map(|e| e.check_cluster_seed().cloned())
            .collect::<Result<Vec<_>, _>>()?;
        let Some(endpoint) = endpoints.into_iter().next() else {
            return Err(Error::NoReachableNode(
                "no seed given: name at least one cluster node (host:port)".to_string(),
            ));
        };
        Ok(Self {
            endpoint,
            seeds,
            config,
            map: SlotMap::new(),
            source: TopologySource::Shards,
            conns: HashMap::new(),
            replica_conns: HashMap::new(),
            last_refresh: Instant::now(),
            refresh_wanted: false,
            refresh_now: false,
            stats: ClusterStats::default(),
            last_error: None,
        })
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

    /// The first seed, whose credentials and TLS settings open every node.
    #[must_use]
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// `err` from a call made through [`ConnectionLike`] (e.g. a
    /// [`LeastUsed`](crate::LeastUsed) call on this client), or, when that call failed in
    /// this client's routing (no node reachable, retries exhausted, a timeout), that
    /// error with its own code: the `ConnectionLike` calls can only return the `redis`
    /// crate's error type.
    ///
    /// ```
    /// use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
    /// let mut c = ClusterClient::lazy(&["127.0.0.1:1"], ClusterConfig::default())?;
    /// let pool = keyroute_redis::LeastUsed::new("{p}:pool")?;
    /// let err = pool.pick(&mut c).map_err(|e| c.explain(e)).unwrap_err();
    /// assert_eq!(err.code().as_str(), "CLUSTER_UNREACHABLE");
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn explain(&mut self, err: Error) -> Error {
        match self.last_error.take() {
            Some(own) if !matches!(err, Error::Server { .. } | Error::WrongType { .. }) => {
                match (own, err) {
                    // Keep the caller's context (which pool) on a routing error.
                    (Error::Timeout { after, .. }, Error::Timeout { context, .. }) => {
                        Error::Timeout { context, after }
                    }
                    (own, _) => own,
                }
            }
            _ => err,
        }
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
        // Replicas last: after a failover they may be the only nodes left that answer.
        for n in self.map.nodes() {
            if !candidates.contains(n.addr()) {
                candidates.push(n.addr().clone());
            }
        }
        let mut last = String::from("no candidates");
        // Refused credentials or TLS are the caller's to fix: reported as such, not as an
        // unreachable cluster.
        let mut refused = None;
        for addr in candidates {
            let res = match self.conns.get_mut(&addr) {
                Some(con) => fetch_topology_with(con, self.endpoint.is_tls()),
                None => match self.endpoint.open_node_raw(&addr, self.config.timeouts()) {
                    Ok(mut con) => {
                        let r = fetch_topology_with(&mut con, self.endpoint.is_tls());
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
                    self.refresh_now = false;
                    self.stats.refreshes += 1;
                    let known: Vec<Address> =
                        self.map.nodes().iter().map(|n| n.addr().clone()).collect();
                    self.conns.retain(|a, _| known.contains(a));
                    self.replica_conns.retain(|a, _| known.contains(a));
                    return Ok(());
                }
                Ok(_) => last = format!("{addr}: no slot is served"),
                Err(e) => {
                    self.conns.remove(&addr);
                    last = format!("{addr}: {e}");
                    if matches!(e, Error::Auth { .. } | Error::Tls { .. }) {
                        refused = Some(e);
                    }
                }
            }
        }
        self.last_refresh = Instant::now();
        Err(refused.unwrap_or(Error::NoReachableNode(last)))
    }

    fn refresh_soon(&mut self) {
        self.refresh_wanted = true;
        self.refresh_now = true;
    }

    fn maybe_refresh(&mut self) {
        if self.refresh_wanted
            && (self.refresh_now || self.last_refresh.elapsed() >= self.config.refresh_interval)
        {
            self.refresh_now = false;
            // A failed refresh keeps the current map; the next redirect or error retries.
            let _ = self.refresh();
        }
    }

    /// A back-off sleep, cut to end by `until`.
    fn backoff_until(&mut self, attempt: u32, until: Instant) {
        self.stats.backoffs += 1;
        let d = self
            .config
            .backoff
            .saturating_mul(1u32 << attempt.min(16))
            .min(self.config.max_backoff)
            .min(until.saturating_duration_since(Instant::now()));
        thread::sleep(d);
    }

    fn connection(
        &mut self,
        addr: &Address,
        replica: bool,
        until: Instant,
    ) -> Result<&mut Connection, Error> {
        let mut timeouts = self.config.timeouts();
        // A connect made for a call ends with the call's time.
        timeouts.connect = timeouts.connect.min(left(until));
        let endpoint = &self.endpoint;
        let conns = if replica {
            &mut self.replica_conns
        } else {
            &mut self.conns
        };
        match conns.entry(addr.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => Ok(e.into_mut()),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut con = endpoint.open_node_raw(addr, timeouts)?;
                if replica {
                    let ok = con.req_command(&redis::cmd("READONLY")).map_err(|err| {
                        Error::from_redis(&format!("READONLY on {addr}"), &err, None)
                    })?;
                    if let Value::ServerError(err) = ok {
                        return Err(Error::from_redis(
                            &format!("READONLY on {addr}"),
                            &err.into(),
                            None,
                        ));
                    }
                }
                Ok(e.insert(con))
            }
        }
    }

    fn drop_connection(&mut self, addr: &Address, replica: bool) {
        if replica {
            self.replica_conns.remove(addr);
        } else {
            self.conns.remove(addr);
        }
    }

    /// Sends `packed` to `addr`, with `ASKING` first if `asking`, waiting for the reply
    /// no later than `until`.
    fn send(
        &mut self,
        addr: &Address,
        packed: &[u8],
        asking: bool,
        replica: bool,
        until: Instant,
    ) -> Result<Value, SendError> {
        let io = self.config.io_timeout;
        let con = self
            .connection(addr, replica, until)
            .map_err(SendError::NotSent)?;
        within(con, io, until, |con, wait, _| {
            let fail = |e: redis::RedisError| {
                SendError::MaybeSent(Error::from_redis(&format!("{addr}"), &e, Some(wait)))
            };
            if asking {
                let ok = con.req_command(&redis::cmd("ASKING")).map_err(fail)?;
                if let Value::ServerError(e) = ok {
                    return Ok(Value::ServerError(e));
                }
            }
            con.req_packed_command(packed).map_err(fail)
        })
    }

    /// A replica of the master serving `slot`, if any that is not marked failed: an
    /// online one first. (Redis 7.0's `CLUSTER SHARDS` reports in-sync replicas as
    /// `loading` too; a replica that really is loading answers `LOADING`, and the read
    /// then goes to the master.)
    fn replica_for(&self, slot: u16) -> Option<Address> {
        let master = self.map.node_for_slot(slot)?;
        let replicas: Vec<&keyroute::slot::Node> = master
            .replicas()
            .iter()
            .filter_map(|&r| self.map.node(r))
            .filter(|n| n.health() != Health::Failed)
            .collect();
        replicas
            .iter()
            .find(|n| n.health() == Health::Online)
            .or_else(|| replicas.first())
            .map(|n| n.addr().clone())
    }

    /// Runs `cmd` on the master serving `slot`, following redirects (see module docs).
    ///
    /// # Errors
    /// Any non-retried error reply or connection error as [`Error::Redis`];
    /// [`Error::TooManyAttempts`] after [`ClusterConfig::max_attempts`] tries.
    pub fn query_slot<T: FromRedisValue>(&mut self, slot: u16, cmd: &Cmd) -> Result<T, Error> {
        let read = cmd_name(cmd).is_some_and(is_read_command);
        let v = self.route(
            Route::Slot(slot),
            &cmd.get_packed_command(),
            read,
            Resend::Yes,
        )?;
        let v = match v {
            Value::ServerError(e) => {
                return Err(Error::from_redis(&format!("slot {slot}"), &e.into(), None))
            }
            v => v,
        };
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
        let slot = crate::conn::command_key(cmd)
            .map(key_slot)
            .ok_or_else(|| Error::protocol("cluster", "command without a key".to_string()))?;
        self.query_slot(slot, cmd)
    }

    /// `GET key` (from a replica with [`ClusterConfig::read_from_replicas`]).
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

    /// The master to send a command of `route` to (refreshing an empty map first).
    fn master_for(&mut self, route: Route, attempt: u32) -> Result<Address, Error> {
        let slot = match route {
            Route::Slot(s) => s,
            Route::Any | Route::Everywhere => {
                if self.map.masters().next().is_none() {
                    self.refresh()?;
                }
                return self
                    .map
                    .masters()
                    .find(|(i, _)| self.map.slot_count(*i) > 0)
                    .or_else(|| self.map.masters().next())
                    .map(|(_, n)| n.addr().clone())
                    .ok_or_else(|| Error::NoReachableNode("no master known".to_string()));
            }
        };
        if let Some(n) = self.map.node_for_slot(slot) {
            return Ok(n.addr().clone());
        }
        if self.last_refresh.elapsed() < self.config.refresh_interval
            && attempt > 0
            && self.map.masters().next().is_some()
        {
            return Err(Error::NoOwner { slot });
        }
        self.refresh()?;
        self.map
            .node_for_slot(slot)
            .map(|n| n.addr().clone())
            .ok_or(Error::NoOwner { slot })
    }

    fn route(
        &mut self,
        route: Route,
        packed: &[u8],
        read: bool,
        resend: Resend,
    ) -> Result<Value, Error> {
        if route == Route::Everywhere {
            return self.everywhere(packed);
        }
        let resend = if read { Resend::Yes } else { resend };
        let mut ask: Option<Address> = None;
        let mut replica_failed = false;
        let mut last = String::new();
        let slot = match route {
            Route::Slot(s) => s,
            _ => 0,
        };
        let until = Instant::now() + self.config.call_timeout;
        for attempt in 0..self.config.max_attempts {
            if attempt > 0 && Instant::now() >= until {
                return Err(self.out_of_time(slot, format!("slot {slot}"), &last));
            }
            self.maybe_refresh();
            let asking = ask.is_some();
            let replica = match (&ask, route) {
                (None, Route::Slot(s))
                    if read && self.config.read_from_replicas && !replica_failed =>
                {
                    if self.map.masters().next().is_none() {
                        self.refresh()?;
                    }
                    self.replica_for(s)
                }
                _ => None,
            };
            let on_replica = replica.is_some();
            let addr = match (ask.take(), replica) {
                (Some(a), _) => a,
                (None, Some(r)) => r,
                (None, None) => match self.master_for(route, attempt) {
                    Ok(a) => a,
                    // Mid-failover no master may serve the slot yet: wait for one within
                    // the call's time (nothing was sent).
                    Err(Error::NoOwner { .. })
                        if Instant::now() + self.config.backoff < until
                            && attempt + 1 < self.config.max_attempts =>
                    {
                        self.backoff_until(attempt, until);
                        self.refresh_soon();
                        last = format!("no node serves slot {slot}");
                        continue;
                    }
                    Err(e) => return Err(e),
                },
            };
            let outcome = match self.send(&addr, packed, asking, on_replica, until) {
                Ok(Value::ServerError(e))
                    if on_replica
                        && matches!(
                            e.kind(),
                            Some(
                                ServerErrorKind::Moved
                                    | ServerErrorKind::Ask
                                    | ServerErrorKind::TryAgain
                                    | ServerErrorKind::BusyLoading
                                    | ServerErrorKind::ClusterDown
                                    | ServerErrorKind::MasterDown
                            )
                        ) =>
                {
                    // The replica cannot answer (loading, its master lost the slot, ...):
                    // the master does, and a refresh learns what changed.
                    replica_failed = true;
                    self.refresh_wanted = true;
                    Outcome::Retry(format!(
                        "{addr}: {} {}",
                        e.code(),
                        e.details().unwrap_or("")
                    ))
                }
                Ok(Value::ServerError(e)) => {
                    self.on_error_reply(&addr, e, &mut ask, attempt, on_replica, until)?
                }
                Ok(v) => {
                    if on_replica {
                        self.stats.replica_reads += 1;
                    }
                    Outcome::Done(v)
                }
                Err(SendError::NotSent(e) | SendError::MaybeSent(e))
                    if on_replica && e.is_connection_error() =>
                {
                    // Reads only: try the master.
                    self.drop_connection(&addr, true);
                    replica_failed = true;
                    Outcome::Retry(e.to_string())
                }
                Err(SendError::NotSent(e)) if e.is_connection_error() => {
                    self.drop_connection(&addr, false);
                    let why = e.to_string();
                    self.backoff_until(attempt, until);
                    self.refresh().map_err(|r| match r {
                        Error::NoReachableNode(s) => {
                            Error::NoReachableNode(format!("{s} (first: {why})"))
                        }
                        other => other,
                    })?;
                    Outcome::Retry(why)
                }
                Err(SendError::MaybeSent(e)) if e.is_connection_error() => {
                    self.drop_connection(&addr, false);
                    self.refresh_wanted = true;
                    if resend == Resend::No {
                        // It may have run: the caller decides.
                        self.refresh_soon();
                        return Err(e);
                    }
                    let why = e.to_string();
                    self.backoff_until(attempt, until);
                    let _ = self.refresh();
                    Outcome::Retry(why)
                }
                Err(SendError::NotSent(e) | SendError::MaybeSent(e)) => return Err(e),
            };
            match outcome {
                Outcome::Done(v) => return Ok(v),
                Outcome::Retry(why) => last = why,
            }
        }
        Err(Error::TooManyAttempts { slot, last })
    }

    /// The error of a call whose time ([`ClusterConfig::call_timeout`]) ran out:
    /// `CLUSTER_NO_OWNER` while it waited for `slot` to get an owner, else a timeout
    /// naming `what` and the `last` thing that went wrong.
    fn out_of_time(&self, slot: u16, what: String, last: &str) -> Error {
        if last.starts_with("no node serves") {
            return Error::NoOwner { slot };
        }
        Error::Timeout {
            context: format!("{what}: {last}"),
            after: Some(self.config.call_timeout),
        }
    }

    /// What to do with an error reply: retry (the command did not run), or give it to
    /// the caller (`Done`, as the error value).
    fn on_error_reply(
        &mut self,
        addr: &Address,
        err: ServerError,
        ask: &mut Option<Address>,
        attempt: u32,
        on_replica: bool,
        until: Instant,
    ) -> Result<Outcome, Error> {
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
                if err.kind() == Some(ServerErrorKind::TryAgain) {
                    self.stats.tryagain += 1;
                }
                self.backoff_until(attempt, until);
                Ok(Outcome::Retry(why))
            }
            Some(ServerErrorKind::ClusterDown | ServerErrorKind::MasterDown) => {
                self.backoff_until(attempt, until);
                self.refresh_wanted = true;
                Ok(Outcome::Retry(why))
            }
            Some(ServerErrorKind::ReadOnly) => {
                self.drop_connection(addr, on_replica);
                let _ = self.refresh();
                self.backoff_until(attempt, until);
                Ok(Outcome::Retry(why))
            }
            _ => Ok(Outcome::Done(Value::ServerError(err))),
        }
    }

    /// `SCRIPT ...`/`FUNCTION ...` on every master: the first master's reply if every
    /// master answered, else the first failure (a master that cannot be reached is
    /// skipped while another answered: a node that comes back loads the script on
    /// `NOSCRIPT`).
    fn everywhere(&mut self, packed: &[u8]) -> Result<Value, Error> {
        if self.map.masters().next().is_none() {
            self.refresh()?;
        }
        let masters: Vec<Address> = self.map.masters().map(|(_, n)| n.addr().clone()).collect();
        let until = Instant::now() + self.config.call_timeout;
        let mut first: Option<Value> = None;
        let mut failure: Option<Error> = None;
        for addr in masters {
            match self.send(&addr, packed, false, false, until) {
                Ok(Value::ServerError(e)) => {
                    if first.is_none() {
                        first = Some(Value::ServerError(e));
                    }
                }
                Ok(v) => {
                    if !matches!(first, Some(ref f) if !matches!(f, Value::ServerError(_))) {
                        first = Some(v);
                    }
                }
                Err(SendError::NotSent(e) | SendError::MaybeSent(e)) => {
                    self.drop_connection(&addr, false);
                    self.refresh_wanted = true;
                    failure.get_or_insert(e);
                }
            }
        }
        match (first, failure) {
            (Some(v), _) => Ok(v),
            (None, Some(e)) => Err(e),
            (None, None) => Err(Error::NoReachableNode("no master known".to_string())),
        }
    }

    /// A pipeline: each command routed by its own key; commands answered with a
    /// redirect or a retryable error are resent alone, the others are answered once.
    fn pipeline(&mut self, packed: &[u8], count: usize) -> Result<Vec<Value>, Error> {
        let commands = split_packed(packed)
            .filter(|c| c.len() == count)
            .ok_or_else(|| Error::protocol("cluster pipeline", "malformed packed commands"))?;
        let routes: Vec<(Route, bool)> = commands.iter().map(|(_, a)| route_of(a)).collect();
        if routes.iter().any(|(r, _)| *r == Route::Everywhere) {
            // SCRIPT/FUNCTION in a pipeline: one at a time.
            let mut out = Vec::with_capacity(count);
            for ((bytes, _), (route, read)) in commands.iter().zip(&routes) {
                out.push(self.route(*route, bytes, *read, Resend::No)?);
            }
            return Ok(out);
        }
        let mut replies: Vec<Option<Value>> = vec![None; count];
        let mut asks: Vec<Option<Address>> = vec![None; count];
        let mut pending: Vec<usize> = (0..count).collect();
        let mut split = false;
        let mut last = String::new();
        let mut attempt = 0;
        // The whole pipeline, every round and wait included, within the call's time.
        let until = Instant::now() + self.config.call_timeout;
        'rounds: while !pending.is_empty() {
            let slot = match routes[pending[0]].0 {
                Route::Slot(s) => s,
                _ => 0,
            };
            if attempt >= self.config.max_attempts {
                return Err(Error::TooManyAttempts { slot, last });
            }
            if attempt > 0 && Instant::now() >= until {
                return Err(self.out_of_time(slot, format!("pipeline of {count} commands"), &last));
            }
            self.maybe_refresh();
            // Group the pending commands by where they go, keeping their order.
            let mut groups: Vec<(Address, Vec<usize>)> = Vec::new();
            for &i in &pending {
                let addr = match asks[i].clone() {
                    Some(a) => a,
                    None => match self.master_for(routes[i].0, attempt) {
                        Ok(a) => a,
                        // Mid-failover a slot may have no owner yet: wait for one within
                        // the call's time (nothing of this round was sent).
                        Err(Error::NoOwner { slot })
                            if Instant::now() + self.config.backoff < until
                                && attempt + 1 < self.config.max_attempts =>
                        {
                            self.backoff_until(attempt, until);
                            self.refresh_soon();
                            last = format!("no node serves slot {slot}");
                            attempt += 1;
                            continue 'rounds;
                        }
                        Err(e) => return Err(e),
                    },
                };
                match groups.iter_mut().find(|(a, _)| *a == addr) {
                    Some((_, v)) => v.push(i),
                    None => groups.push((addr, vec![i])),
                }
            }
            let mut next = Vec::new();
            let mut wait = false;
            for (addr, idx) in groups {
                let mut bytes = Vec::new();
                let mut n = 0;
                for &i in &idx {
                    if asks[i].is_some() {
                        bytes.extend_from_slice(b"*1\r\n$6\r\nASKING\r\n");
                        n += 1;
                    }
                    bytes.extend_from_slice(commands[i].0);
                    n += 1;
                }
                let io = self.config.io_timeout;
                let sent = match self.connection(&addr, false, until) {
                    Err(e) => Err(SendError::NotSent(e)),
                    Ok(con) => within(con, io, until, |con, wait, armed| {
                        exchange(con, armed, &bytes, 0, n, io, until).map_err(|e| {
                            SendError::MaybeSent(Error::from_redis(
                                &format!("{addr}"),
                                &e,
                                Some(wait),
                            ))
                        })
                    }),
                };
                let got = match sent {
                    Ok(v) => v,
                    Err(SendError::NotSent(e)) if e.is_connection_error() => {
                        self.drop_connection(&addr, false);
                        last = e.to_string();
                        let why = last.clone();
                        self.backoff_until(attempt, until);
                        self.refresh().map_err(|r| match r {
                            Error::NoReachableNode(s) => {
                                Error::NoReachableNode(format!("{s} (first: {why})"))
                            }
                            other => other,
                        })?;
                        next.extend(idx);
                        continue;
                    }
                    Err(SendError::NotSent(e) | SendError::MaybeSent(e)) => {
                        // Some commands may have run: the caller decides.
                        self.drop_connection(&addr, false);
                        self.refresh_wanted = true;
                        self.refresh_soon();
                        return Err(e);
                    }
                };
                let mut got = got.into_iter();
                for &i in &idx {
                    if asks[i].take().is_some() {
                        // ASKING's own reply (+OK).
                        got.next();
                    }
                    let reply = got.next().unwrap_or(Value::Nil);
                    match reply {
                        Value::ServerError(e) => {
                            let mut ask = None;
                            match self.on_error_reply_quiet(&addr, e, &mut ask)? {
                                Outcome::Done(v) => replies[i] = Some(v),
                                Outcome::Retry(why) => {
                                    wait |= ask.is_none() && !why.contains("MOVED");
                                    last = why;
                                    asks[i] = ask;
                                    next.push(i);
                                }
                            }
                        }
                        v => replies[i] = Some(v),
                    }
                }
            }
            if !next.is_empty() && next.len() < pending.len() {
                split = true;
            }
            if wait {
                self.backoff_until(attempt, until);
            }
            next.sort_unstable();
            pending = next;
            attempt += 1;
        }
        if split {
            self.stats.split_pipelines += 1;
        }
        Ok(replies
            .into_iter()
            .map(|r| r.unwrap_or(Value::Nil))
            .collect())
    }

    /// As [`on_error_reply`](Self::on_error_reply) for one command of a pipeline: no
    /// back-off here (the pipeline backs off once per round).
    fn on_error_reply_quiet(
        &mut self,
        addr: &Address,
        err: ServerError,
        ask: &mut Option<Address>,
    ) -> Result<Outcome, Error> {
        match err.kind() {
            Some(ServerErrorKind::TryAgain) => {
                self.stats.tryagain += 1;
                Ok(Outcome::Retry(format!("{addr}: TRYAGAIN")))
            }
            Some(ServerErrorKind::BusyLoading) => Ok(Outcome::Retry(format!("{addr}: LOADING"))),
            Some(ServerErrorKind::ClusterDown | ServerErrorKind::MasterDown) => {
                self.refresh_wanted = true;
                Ok(Outcome::Retry(format!("{addr}: {}", err.code())))
            }
            Some(ServerErrorKind::ReadOnly) => {
                self.drop_connection(addr, false);
                self.refresh_wanted = true;
                self.refresh_soon();
                Ok(Outcome::Retry(format!("{addr}: READONLY")))
            }
            // Only redirects are left here: no back-off to bound.
            _ => self.on_error_reply(addr, err, ask, 0, false, Instant::now()),
        }
    }

    /// Remembers `err` for [`explain`](Self::explain) and turns it into the `redis`
    /// crate's error type (an I/O error of the same kind, whose text is ours).
    fn remember(&mut self, err: Error) -> redis::RedisError {
        let kind = match &err {
            Error::Timeout { .. } => std::io::ErrorKind::TimedOut,
            Error::Connect { .. } => std::io::ErrorKind::ConnectionRefused,
            Error::ConnectionLost { .. } => std::io::ErrorKind::ConnectionReset,
            _ => std::io::ErrorKind::Other,
        };
        let io = std::io::Error::new(kind, err.to_string());
        self.last_error = Some(err);
        io.into()
    }
}

/// What is left until `until` (zero once it passed).
fn left(until: Instant) -> Duration {
    until.saturating_duration_since(Instant::now())
}

/// Runs `f` on `con` with every wait (each reply, each write) cut to end by `until`: the
/// I/O timeout `io`, or less when the call's time runs out first (`f` gets the wait it
/// was given, and the timeouts set, which [`exchange`] cuts further before each reply of
/// a pipeline). The socket is set back to `io` after (only when it was cut: a call with
/// time to spare costs no system call).
fn within<T, E>(
    con: &mut Connection,
    io: Duration,
    until: Instant,
    f: impl FnOnce(&mut Connection, Duration, &mut Armed) -> Result<T, E>,
) -> Result<T, E> {
    let wait = io.min(left(until)).max(Duration::from_millis(1));
    let mut armed = Armed::at(io);
    if wait < io {
        let _ = con.set_read_timeout(Some(wait));
        let _ = con.set_write_timeout(Some(wait));
        armed = Armed::at(wait);
    }
    let out = f(con, wait, &mut armed);
    if armed != Armed::at(io) {
        let _ = con.set_read_timeout(Some(io));
        let _ = con.set_write_timeout(Some(io));
    }
    out
}

fn cmd_name(cmd: &Cmd) -> Option<&[u8]> {
    match cmd.args_iter().next()? {
        redis::Arg::Simple(b) => Some(b),
        _ => None,
    }
}

/// The cluster as one connection: each command is routed by its key (the first key of
/// `EVAL`/`EVALSHA`/`FCALL`, else the first argument), `SCRIPT`/`FUNCTION` go to every
/// master, keyless commands to any master, pipelines are split per command (see the
/// module docs). A request that may have run is never resent (reads excepted).
impl ConnectionLike for ClusterClient {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.last_error = None;
        let commands = split_packed(cmd).filter(|c| c.len() == 1);
        let Some(commands) = commands else {
            let e = Error::protocol("cluster", "malformed packed command");
            return Err(self.remember(e));
        };
        let (route, read) = route_of(&commands[0].1);
        match self.route(route, cmd, read, Resend::No) {
            Ok(v) => Ok(v),
            Err(e) => Err(self.remember(e)),
        }
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.last_error = None;
        if offset > 0 {
            // MULTI/EXEC: one node, no redirects followed (a transaction is one slot).
            let route = split_packed(cmd)
                .and_then(|c| {
                    c.iter()
                        .map(|(_, a)| route_of(a).0)
                        .find(|r| matches!(r, Route::Slot(_)))
                })
                .unwrap_or(Route::Any);
            let addr = match self.master_for(route, 0) {
                Ok(a) => a,
                Err(e) => return Err(self.remember(e)),
            };
            let io = self.config.io_timeout;
            let until = Instant::now() + self.config.call_timeout;
            let result = match self.connection(&addr, false, until) {
                Ok(con) => within(con, io, until, |con, wait, armed| {
                    exchange(con, armed, cmd, offset, count, io, until)
                        .map_err(|e| Error::from_redis(&format!("{addr}"), &e, Some(wait)))
                }),
                Err(e) => Err(e),
            };
            return result.map_err(|e| {
                if e.is_connection_error() {
                    self.drop_connection(&addr, false);
                    self.refresh_wanted = true;
                }
                self.remember(e)
            });
        }
        match self.pipeline(cmd, count) {
            Ok(v) => Ok(v),
            Err(e) => Err(self.remember(e)),
        }
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        self.req_command(&redis::cmd("PING")).is_ok()
    }

    fn is_open(&self) -> bool {
        !self.conns.is_empty()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_commands_are_split_and_routed() {
        let mut packed = redis::cmd("EVALSHA")
            .arg("abc")
            .arg(1)
            .arg("{p}:pool")
            .get_packed_command();
        packed.extend(redis::cmd("GET").arg("k").get_packed_command());
        packed.extend(
            redis::cmd("SCRIPT")
                .arg("LOAD")
                .arg("return 1")
                .get_packed_command(),
        );
        packed.extend(
            redis::cmd("EVAL")
                .arg("return 1")
                .arg(0)
                .get_packed_command(),
        );
        let split = split_packed(&packed).expect("well formed");
        assert_eq!(split.len(), 4);
        assert_eq!(
            split.iter().map(|(b, _)| b.len()).sum::<usize>(),
            packed.len()
        );
        assert_eq!(
            route_of(&split[0].1),
            (Route::Slot(key_slot(b"{p}:pool")), false)
        );
        assert_eq!(route_of(&split[1].1), (Route::Slot(key_slot(b"k")), true));
        assert_eq!(route_of(&split[2].1).0, Route::Everywhere);
        assert_eq!(route_of(&split[3].1).0, Route::Any);
        assert!(split_packed(b"*1\r\n$5\r\nGET").is_none());
        assert!(split_packed(b"GET k\r\n").is_none());
    }
}
