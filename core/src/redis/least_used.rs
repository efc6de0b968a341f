//! [`LeastUsed`]: the least-used pool of [`select`](crate::select) on a Redis server or a
//! Redis Cluster, run with `EVALSHA`; plus [`connect`] and [`Reconnecting`], connections
//! whose connect, read and write timeouts are bounded by [`Timeouts`].

#[allow(unused_imports)]
use std::prelude::rust_2021::*;

use std::time::Duration;

use ::redis::{Client, Connection, ConnectionLike, RedisResult, ServerErrorKind, Value};

use super::error::{Error, Result};
use crate::select::{
    seed_overwrite_arg, side_key, PoolError, Restore, Script, LEAST_USED, MAX_EXACT_COUNT, REMOVE,
    RESTORE, SEED,
};

/// How many picks [`LeastUsed::pick_many`] sends in one pipeline.
pub const PICK_BATCH: usize = 512;

/// How many times in a row a call loads the script and is answered `NOSCRIPT` again
/// (someone flushing the script cache between the load and the retry) before giving up.
const NOSCRIPT_ROUNDS: usize = 16;

/// Bounds on how long a connection waits. Both must be non-zero.
///
/// ```
/// use std::time::Duration;
/// use keyroute::redis::Timeouts;
/// let t = Timeouts::default();
/// assert_eq!(t.connect, Duration::from_secs(2));
/// assert_eq!(Timeouts::uniform(Duration::from_millis(300)).io, Duration::from_millis(300));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timeouts {
    /// Establishing the TCP connection (and the handshake).
    pub connect: Duration,
    /// Each read and each write on an established connection: a request never waits
    /// longer than this for its reply.
    pub io: Duration,
}

impl Timeouts {
    /// The same bound for connecting and for I/O.
    pub const fn uniform(timeout: Duration) -> Self {
        Timeouts {
            connect: timeout,
            io: timeout,
        }
    }
}

impl Default for Timeouts {
    /// Two seconds each.
    fn default() -> Self {
        Timeouts::uniform(Duration::from_secs(2))
    }
}

fn nonzero(d: Duration) -> Duration {
    d.max(Duration::from_millis(1))
}

fn open(client: &Client, timeouts: Timeouts) -> RedisResult<Connection> {
    let con = client.get_connection_with_timeout(nonzero(timeouts.connect))?;
    con.set_read_timeout(Some(nonzero(timeouts.io)))?;
    con.set_write_timeout(Some(nonzero(timeouts.io)))?;
    Ok(con)
}

/// Opens a standalone connection (`redis://host:port/db`) with the given timeouts.
///
/// # Errors
/// A bad URL, a refused or timed-out connection.
pub fn connect(url: &str, timeouts: Timeouts) -> Result<Connection> {
    let client = Client::open(url).map_err(|e| Error::redis(format!("open {url}"), e))?;
    open(&client, timeouts).map_err(|e| Error::redis(format!("connect to {url}"), e))
}

/// A standalone connection that reconnects on the next request after a connection
/// error (refused, reset, timed out). It never resends a request on its own: a pick
/// whose reply was lost may or may not have been counted, and the caller decides.
///
/// Connects lazily: [`new`](Self::new) only checks the URL.
pub struct Reconnecting {
    client: Client,
    timeouts: Timeouts,
    con: Option<Connection>,
}

impl std::fmt::Debug for Reconnecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnecting")
            .field("client", &self.client)
            .field("timeouts", &self.timeouts)
            .field("connected", &self.con.is_some())
            .finish()
    }
}

impl Reconnecting {
    /// A reconnecting connection to `url` (`redis://host:port/db`).
    ///
    /// # Errors
    /// A URL the `redis` crate does not accept.
    pub fn new(url: &str, timeouts: Timeouts) -> Result<Self> {
        let client = Client::open(url).map_err(|e| Error::redis(format!("open {url}"), e))?;
        Ok(Reconnecting {
            client,
            timeouts,
            con: None,
        })
    }

    /// The timeouts of every connection it opens.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Opens the connection now unless one is open, so that an unreachable server is
    /// reported before the first request.
    ///
    /// # Errors
    /// A refused or timed-out connection.
    pub fn ensure_connected(&mut self) -> Result<()> {
        if self.con.is_none() {
            let con = open(&self.client, self.timeouts).map_err(|e| {
                Error::redis(
                    format!("connect to {}", self.client.get_connection_info().addr()),
                    e,
                )
            })?;
            self.con = Some(con);
        }
        Ok(())
    }

    /// Whether a connection is currently open (none before the first request and after a
    /// connection error).
    pub fn is_connected(&self) -> bool {
        self.con.is_some()
    }

    fn with<T>(&mut self, f: impl FnOnce(&mut Connection) -> RedisResult<T>) -> RedisResult<T> {
        let con = match &mut self.con {
            Some(con) => con,
            slot => slot.insert(open(&self.client, self.timeouts)?),
        };
        let result = f(con);
        let broken = match &result {
            Err(err) => {
                err.is_io_error()
                    || err.is_timeout()
                    || err.is_connection_dropped()
                    || err.is_unrecoverable_error()
                    || !con.is_open()
            }
            Ok(_) => !con.is_open(),
        };
        if broken {
            self.con = None;
        }
        result
    }
}

impl ConnectionLike for Reconnecting {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.with(|con| con.req_packed_command(cmd))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.with(|con| con.req_packed_commands(cmd, offset, count))
    }

    fn get_db(&self) -> i64 {
        self.client.get_connection_info().redis_settings().db()
    }

    fn check_connection(&mut self) -> bool {
        self.with(|con| Ok(con.check_connection())).unwrap_or(false)
    }

    fn is_open(&self) -> bool {
        self.con.as_ref().is_some_and(Connection::is_open)
    }
}

/// A least-used pool on Redis: a sorted set (member = proxy id, score = assignments)
/// and its side hash, driven by the [scripts of `select`](crate::select::SCRIPTS) with
/// `EVALSHA` (loading them on `NOSCRIPT`).
///
/// The handle holds only the keys and the scripts; every call takes the connection: a
/// standalone [`Connection`], a [`Reconnecting`] one, or a
/// [`ClusterConnection`](::redis::cluster::ClusterConnection) (both keys share the pool
/// key's hash slot). It is `Send + Sync` and cheap to clone.
///
/// Semantics are those of the in-memory [`Pool`](crate::select::Pool): ties go to the
/// byte-wise smallest member, an empty or missing pool picks `None`.
///
/// ```
/// use keyroute::redis::LeastUsed;
/// let pool = LeastUsed::new("{proxies}:pool")?;
/// assert_eq!(pool.side_key(), b"{proxies}:pool:removed");
/// assert!(LeastUsed::new("").is_err());
/// # Ok::<(), keyroute::redis::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct LeastUsed {
    pool_key: Vec<u8>,
    side_key: Vec<u8>,
    least_used: ::redis::Script,
    seed: ::redis::Script,
    remove: ::redis::Script,
    restore: ::redis::Script,
    /// `EVALSHA <least-used> 1 <pool>`, packed once.
    packed_pick: Vec<u8>,
    /// `EVAL <least-used text> 1 <pool>`, packed once (pipelines on a cluster).
    packed_eval: Vec<u8>,
}

pub(crate) fn script(script: &Script) -> ::redis::Script {
    let loaded = ::redis::Script::new(script.text());
    debug_assert_eq!(loaded.get_hash(), script.sha1(), "{}", script.name());
    loaded
}

/// [`ScriptInvocation::invoke`](::redis::ScriptInvocation::invoke) (EVALSHA, on
/// NOSCRIPT load and retry once), retried while the script cache keeps being flushed
/// between the load and the retry. A NOSCRIPT reply means the script did not run, so
/// nothing is counted twice.
pub(crate) fn invoke<T: ::redis::FromRedisValue>(
    call: &::redis::ScriptInvocation<'_>,
    con: &mut dyn ConnectionLike,
) -> RedisResult<T> {
    let mut rounds = 0;
    loop {
        match call.invoke(con) {
            Err(err)
                if rounds < NOSCRIPT_ROUNDS
                    && err.kind() == ::redis::ErrorKind::Server(ServerErrorKind::NoScript) =>
            {
                rounds += 1;
            }
            result => return result,
        }
    }
}

pub(crate) fn show(key: &[u8]) -> String {
    String::from_utf8_lossy(key).into_owned()
}

impl LeastUsed {
    /// A handle on the pool at `pool_key`; the side key is derived by
    /// [`side_key`](crate::select::side_key). Sends nothing.
    ///
    /// # Errors
    /// [`Error::Key`] for an empty pool key or one that needs a hash tag.
    pub fn new(pool_key: impl AsRef<[u8]>) -> Result<Self> {
        let pool_key = pool_key.as_ref().to_vec();
        let side_key = side_key(&pool_key)?;
        let packed_pick = ::redis::cmd("EVALSHA")
            .arg(LEAST_USED.sha1())
            .arg(1)
            .arg(&pool_key)
            .get_packed_command();
        let packed_eval = ::redis::cmd("EVAL")
            .arg(LEAST_USED.text())
            .arg(1)
            .arg(&pool_key)
            .get_packed_command();
        Ok(LeastUsed {
            pool_key,
            side_key,
            least_used: script(&LEAST_USED),
            seed: script(&SEED),
            remove: script(&REMOVE),
            restore: script(&RESTORE),
            packed_pick,
            packed_eval,
        })
    }

    /// The pool key (a sorted set).
    pub fn pool_key(&self) -> &[u8] {
        &self.pool_key
    }

    /// The side key (a hash of removed members' counts).
    pub fn side_key(&self) -> &[u8] {
        &self.side_key
    }

    fn context(&self, what: &str) -> String {
        format!("{what} (pool {})", show(&self.pool_key))
    }

    /// Adds `members` at count `initial` (see [`SEED_SCRIPT`](crate::select::SEED_SCRIPT)):
    /// members already in the pool keep their counts unless `overwrite`. Returns how many
    /// members were new.
    ///
    /// # Errors
    /// [`Error::Pool`] when `initial` is above [`MAX_EXACT_COUNT`] (nothing is sent);
    /// [`Error::Redis`] on a connection or server error.
    pub fn seed<I>(
        &self,
        con: &mut dyn ConnectionLike,
        members: I,
        initial: u64,
        overwrite: bool,
    ) -> Result<usize>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        if initial > MAX_EXACT_COUNT {
            return Err(PoolError::InitialCountTooLarge { initial }.into());
        }
        let mut call = self.seed.key(&self.pool_key);
        call.key(&self.side_key)
            .arg(initial)
            .arg(seed_overwrite_arg(overwrite));
        for member in members {
            call.arg(member.as_ref());
        }
        invoke(&call, con).map_err(|e| Error::redis(self.context("seed"), e))
    }

    /// Picks the least-used member and counts the assignment, in one atomic script call
    /// (`EVALSHA`, loading the script on `NOSCRIPT`). `Ok(None)` when the pool is empty or
    /// missing: then exactly one `EVALSHA` was sent, and the caller must make no request.
    ///
    /// # Errors
    /// [`Error::Redis`] on a connection error or timeout (the pick may or may not have
    /// been counted) or a server error.
    pub fn pick(&self, con: &mut dyn ConnectionLike) -> Result<Option<Vec<u8>>> {
        let call = self.least_used.key(&self.pool_key);
        invoke(&call, con).map_err(|e| Error::redis(self.context("pick"), e))
    }

    /// Up to `n` picks, pipelined ([`PICK_BATCH`] per round trip); fewer only when the
    /// pool is (or becomes) empty. Each pick is atomic, the sequence is not: other
    /// clients' picks may interleave.
    ///
    /// On a standalone connection the pipeline is `EVALSHA`s; picks answered `NOSCRIPT`
    /// (the script cache was flushed, even in the middle of the pipeline) are neither lost
    /// nor doubled: the script is loaded with `SCRIPT LOAD` and only those picks are sent
    /// again.
    ///
    /// On a [`ClusterConnection`](::redis::cluster::ClusterConnection) (any connection
    /// whose `supports_pipelining()` is false) the pipeline goes to the node of the pool's
    /// slot, but the `redis` crate turns an error reply anywhere in it into an error for
    /// the whole pipeline, hiding which picks ran; so there the pipeline is `EVAL`s of the
    /// same script text, which cannot meet `NOSCRIPT` (one request, ~150 bytes more per
    /// pick). Known limit: if the pool key itself migrates (resharding) in the middle of
    /// a cluster pipeline, the `redis` crate may resend the whole pipeline after `ASK`,
    /// counting the picks before the move twice.
    ///
    /// # Errors
    /// As [`pick`](Self::pick); on an error the picks of earlier batches were counted
    /// but are not returned.
    pub fn pick_many(&self, con: &mut dyn ConnectionLike, n: usize) -> Result<Vec<Vec<u8>>> {
        let per_pick = if con.supports_pipelining() {
            &self.packed_pick
        } else {
            &self.packed_eval
        };
        let mut picks = Vec::with_capacity(n.min(PICK_BATCH * 8));
        let mut packed = Vec::new();
        let mut left = n;
        let mut rounds = 0;
        while left > 0 {
            let batch = left.min(PICK_BATCH);
            packed.clear();
            for _ in 0..batch {
                packed.extend_from_slice(per_pick);
            }
            let replies = con
                .req_packed_commands(&packed, 0, batch)
                .map_err(|e| Error::redis(self.context("pick_many"), e))?;
            let mut noscript = 0;
            let mut empty = false;
            for reply in replies {
                match reply {
                    Value::BulkString(member) => {
                        picks.push(member);
                        left -= 1;
                    }
                    Value::Nil => empty = true,
                    Value::ServerError(err) if err.kind() == Some(ServerErrorKind::NoScript) => {
                        noscript += 1;
                    }
                    Value::ServerError(err) => {
                        return Err(Error::redis(self.context("pick_many"), err.into()));
                    }
                    other => {
                        return Err(Error::UnexpectedReply {
                            context: self.context("pick_many"),
                            reply: format!("{other:?}"),
                        })
                    }
                }
            }
            if empty {
                break;
            }
            if noscript < batch {
                rounds = 0;
            }
            if noscript > 0 {
                rounds += 1;
                if rounds > NOSCRIPT_ROUNDS {
                    return Err(Error::UnexpectedReply {
                        context: self.context("pick_many"),
                        reply: format!("NOSCRIPT after {NOSCRIPT_ROUNDS} SCRIPT LOADs"),
                    });
                }
                self.least_used
                    .load(con)
                    .map_err(|e| Error::redis(self.context("load the least-used script"), e))?;
            }
        }
        Ok(picks)
    }

    /// Takes `member` out of the pool, remembering its count in the side hash. Returns the
    /// count remembered, `None` (changing nothing) when it was not in the pool.
    ///
    /// # Errors
    /// [`Error::Redis`] on a connection or server error.
    pub fn remove(&self, con: &mut dyn ConnectionLike, member: &[u8]) -> Result<Option<u64>> {
        let mut call = self.remove.key(&self.pool_key);
        call.key(&self.side_key).arg(member);
        invoke(&call, con).map_err(|e| Error::redis(self.context("remove"), e))
    }

    /// Puts `member` back: [`Restore::Keep`] its remembered count, or
    /// [`Restore::AtMinimum`] the pool's current minimum (0 when empty). A member already
    /// in the pool keeps its count. Returns the count afterwards.
    ///
    /// # Errors
    /// [`Error::Redis`] on a connection or server error.
    pub fn restore(
        &self,
        con: &mut dyn ConnectionLike,
        member: &[u8],
        mode: Restore,
    ) -> Result<u64> {
        let mut call = self.restore.key(&self.pool_key);
        call.key(&self.side_key).arg(member).arg(mode.as_arg());
        invoke(&call, con).map_err(|e| Error::redis(self.context("restore"), e))
    }

    /// `(member, count)` in pick order (`ZRANGE pool 0 -1 WITHSCORES`).
    ///
    /// # Errors
    /// [`Error::Redis`] on a connection or server error.
    pub fn counts(&self, con: &mut dyn ConnectionLike) -> Result<Vec<(Vec<u8>, u64)>> {
        let pairs: Vec<(Vec<u8>, f64)> = ::redis::cmd("ZRANGE")
            .arg(&self.pool_key)
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES")
            .query(con)
            .map_err(|e| Error::redis(self.context("counts"), e))?;
        Ok(pairs.into_iter().map(|(m, s)| (m, score(s))).collect())
    }

    /// `(member, count)` remembered for removed members, in member byte order
    /// (`HGETALL side`).
    ///
    /// # Errors
    /// [`Error::Redis`] on a connection or server error.
    pub fn removed(&self, con: &mut dyn ConnectionLike) -> Result<Vec<(Vec<u8>, u64)>> {
        let mut pairs: Vec<(Vec<u8>, u64)> = ::redis::cmd("HGETALL")
            .arg(&self.side_key)
            .query(con)
            .map_err(|e| Error::redis(self.context("removed"), e))?;
        pairs.sort();
        Ok(pairs)
    }
}

/// A sorted-set score as a count (scores are integers in `0..=2^53`).
pub(crate) fn score(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        s as u64
    } else {
        0
    }
}
