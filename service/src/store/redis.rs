//! [`RedisStore`]: state shared by every instance on Redis (standalone or Cluster): the
//! calls of the message types run as scripts (`EVALSHA`), reads that load through
//! keyroute-redis's smart cache ([`SmartCache`]): single flight across instances, fenced
//! fills, sessions any instance can read.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::throttle::LogThrottle;

use keyroute::cache::{Call, Notify, SessionId, Value};
use keyroute::error::ErrorCode;
use keyroute::frame::TransportError;
use keyroute_redis::cache::{eval_cluster, CacheConfig, LoadError, SmartCache, Store as Shared};
use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
use keyroute_redis::{connect, redact, Error, Reconnecting, Timeouts};

use super::{LoadFailure, Loader, Store, StoreInfo, StoreStats, WarmLoader};
use crate::proto::Answer;

/// Idle direct connections kept (one per thread that may call at once; more are opened
/// and closed).
const MAX_IDLE: usize = 128;

/// How long a `/readyz` probe's answer is reused: the probes of many scrapers at once
/// cost Redis one `PING` (per master) at most this often.
const PING_REUSE: Duration = Duration::from_millis(500);

enum Direct {
    /// Behind Sentinel it follows a failover (asks the Sentinels at most once a second
    /// whether its master is still theirs), as the smart cache's connections do.
    Single(Box<Reconnecting>),
    Cluster(Box<ClusterClient>),
}

/// What [`RedisStore::open`] needs besides the URL.
#[derive(Clone, Debug)]
pub struct RedisConfig {
    /// Lease of a load (extended every third while the load runs).
    pub lease: Duration,
    /// Freshness of a loaded value.
    pub soft_ttl: Duration,
    /// How long a value is kept.
    pub hard_ttl: Duration,
    /// Sessions' sliding lifetime (unused: each session call carries the service's
    /// `--session-ttl-ms`).
    pub session_ttl: Duration,
    /// Connect and reply timeouts.
    pub timeouts: Timeouts,
}

/// State on Redis, shared by every `keyroute serve` instance on it. See [`Store`].
///
/// ```no_run
/// use std::time::Duration;
/// use keyroute_serve::store::{RedisConfig, RedisStore, Store};
/// let store = RedisStore::open("redis://127.0.0.1:6379", RedisConfig {
///     lease: Duration::from_secs(2), soft_ttl: Duration::from_secs(60),
///     hard_ttl: Duration::from_secs(600), session_ttl: Duration::from_secs(1800),
///     timeouts: Default::default(),
/// })?;
/// assert_eq!(store.info().role, "master");
/// # Ok::<(), keyroute_serve::ServeError>(())
/// ```
pub struct RedisStore {
    cache: SmartCache,
    shown: String,
    target: Target,
    direct: Mutex<Vec<Direct>>,
    role: Mutex<(Instant, String)>,
    /// The last readiness probe: when, and its outcome.
    pinged: Mutex<Option<(Instant, Result<(), String>)>>,
}

#[derive(Clone, Debug)]
enum Target {
    Single(String, Timeouts),
    Cluster(Vec<String>, ClusterConfig, Timeouts),
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("redis", &self.shown)
            .finish_non_exhaustive()
    }
}

fn store_error(e: &Error) -> crate::ServeError {
    crate::ServeError::Store(e.to_string())
}

/// When the last "store unavailable" line was logged.
static UNAVAILABLE_LOG: Mutex<LogThrottle> = Mutex::new(LogThrottle::new());

/// `STORE_UNAVAILABLE`, with the store's error logged (at most one line a second;
/// `keyroute_serve_errors_total` counts them all): a `READONLY` says the URL names a
/// replica.
fn unavailable(e: &dyn std::fmt::Display, readonly: bool) -> Answer {
    let ready = UNAVAILABLE_LOG
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .ready(Instant::now());
    if ready {
        if readonly {
            tracing::warn!(error = %e, "the store refused a write (READONLY): --redis names a replica; point it at the master, or use redis+sentinel:// (answered STORE_UNAVAILABLE; at most one such line a second)");
        } else {
            tracing::warn!(error = %e, "the store is unavailable (answered STORE_UNAVAILABLE; at most one such line a second)");
        }
    }
    Answer::Transport(TransportError::StoreUnavailable)
}

/// The answer for a Redis-side error.
fn answer(e: Error) -> Answer {
    match e {
        Error::Input(i) => Answer::data(i.code(), i.to_string()),
        Error::CacheTimeout { .. } => Answer::Transport(TransportError::LoadTimeout),
        Error::Backend { code, message, .. } => LoadFailure::answer(&code, &message),
        e if e.is_connection_error() || e.is_timeout() => unavailable(&e, false),
        Error::Server { ref code, .. }
            if matches!(
                code.as_str(),
                "READONLY" | "MASTERDOWN" | "LOADING" | "NOREPLICAS" | "CLUSTERDOWN" | "TRYAGAIN"
            ) =>
        {
            unavailable(&e, code == "READONLY")
        }
        e if matches!(
            e.code(),
            ErrorCode::ClusterNoOwner
                | ErrorCode::ClusterRetriesExhausted
                | ErrorCode::ClusterUnreachable
                | ErrorCode::RedisConnect
                | ErrorCode::RedisConnectionLost
                | ErrorCode::RedisTimeout
        ) =>
        {
            unavailable(&e, false)
        }
        e => Answer::data(e.code(), e.to_string()),
    }
}

/// An error of a direct connection: keyroute-redis's, or the `redis` crate's.
#[derive(Debug)]
enum DirectError {
    Keyroute(Error),
    Raw(redis::RedisError),
}

impl From<Error> for DirectError {
    fn from(e: Error) -> Self {
        DirectError::Keyroute(e)
    }
}

impl DirectError {
    fn is_readonly(&self) -> bool {
        match self {
            DirectError::Keyroute(e) => e.code() == ErrorCode::RedisReadonly,
            DirectError::Raw(e) => e.code() == Some("READONLY"),
        }
    }

    fn is_connection_error(&self) -> bool {
        match self {
            DirectError::Keyroute(e) => e.is_connection_error(),
            DirectError::Raw(e) => e.is_io_error() || e.is_connection_dropped() || e.is_timeout(),
        }
    }
}

fn direct_answer(e: DirectError) -> Answer {
    match e {
        DirectError::Keyroute(e) => answer(e),
        DirectError::Raw(e)
            if e.is_io_error()
                || e.is_connection_dropped()
                || e.is_timeout()
                || e.is_connection_refusal()
                || matches!(
                    e.code(),
                    Some("READONLY" | "MASTERDOWN" | "LOADING" | "CLUSTERDOWN" | "TRYAGAIN")
                ) =>
        {
            unavailable(&e, e.code() == Some("READONLY"))
        }
        DirectError::Raw(e) => Answer::data(ErrorCode::RedisServer, e.to_string()),
    }
}

impl RedisStore {
    /// Opens the store: `url` is one Redis URL (a Cluster node is detected with `INFO
    /// cluster`), or several comma-separated seeds of a Cluster.
    ///
    /// # Errors
    /// [`ServeError::Store`](crate::ServeError::Store): a bad URL, Redis unreachable, a
    /// configuration out of range.
    pub fn open(url: &str, config: RedisConfig) -> Result<RedisStore, crate::ServeError> {
        let seeds = keyroute_redis::split_seeds(url);
        let first = *seeds
            .first()
            .ok_or_else(|| crate::ServeError::Store("empty --redis".into()))?;
        let clustered = seeds.len() > 1 || {
            let mut con = connect(first, config.timeouts).map_err(|e| store_error(&e))?;
            let info: String = redis::cmd("INFO")
                .arg("cluster")
                .query(&mut con)
                .map_err(|e| {
                    crate::ServeError::Store(format!("INFO cluster on {}: {e}", redact(first)))
                })?;
            info.contains("cluster_enabled:1")
        };
        let (shared, target) = if clustered {
            let cc = ClusterConfig {
                connect_timeout: config.timeouts.connect,
                io_timeout: config.timeouts.io,
                ..ClusterConfig::default()
            };
            let s = Shared::cluster(&seeds, cc.clone()).map_err(|e| store_error(&e))?;
            (
                s,
                Target::Cluster(
                    seeds.iter().map(|s| s.to_string()).collect(),
                    cc,
                    config.timeouts,
                ),
            )
        } else {
            let s = Shared::standalone(first, config.timeouts).map_err(|e| store_error(&e))?;
            (s, Target::Single(first.to_string(), config.timeouts))
        };
        let cache = SmartCache::new(
            shared.clone(),
            CacheConfig {
                lease: config.lease,
                soft_ttl: config.soft_ttl,
                hard_ttl: config.hard_ttl,
                ..CacheConfig::default()
            },
        )
        .map_err(|e| store_error(&e))?;
        let store = RedisStore {
            cache,
            shown: shared.describe().to_string(),
            target,
            direct: Mutex::new(Vec::new()),
            role: Mutex::new((Instant::now() - Duration::from_secs(60), String::new())),
            pinged: Mutex::new(None),
        };
        // Fail now rather than at the first request.
        store.with(|_| Ok(())).map_err(|e| match e {
            DirectError::Keyroute(e) => store_error(&e),
            DirectError::Raw(e) => crate::ServeError::Store(e.to_string()),
        })?;
        Ok(store)
    }

    fn open_direct(&self) -> Result<Direct, Error> {
        match &self.target {
            Target::Single(url, t) => {
                let mut con = Reconnecting::new(url, *t)?;
                con.ensure_connected()?;
                Ok(Direct::Single(Box::new(con)))
            }
            Target::Cluster(seeds, cc, _) => {
                let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
                Ok(Direct::Cluster(Box::new(ClusterClient::connect(
                    &seeds,
                    cc.clone(),
                )?)))
            }
        }
    }

    fn pool(&self) -> MutexGuard<'_, Vec<Direct>> {
        self.direct.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on a direct connection (for plain reads and the calls the smart cache has
    /// no method for).
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Direct) -> Result<T, DirectError>,
    ) -> Result<T, DirectError> {
        let pooled = self.pool().pop();
        let mut d = match pooled {
            Some(d) => d,
            None => self.open_direct()?,
        };
        let out = f(&mut d);
        // A demoted master (READONLY) is dropped too: the next connection asks the
        // Sentinels (or the topology) again.
        if !matches!(&out, Err(e) if e.is_connection_error() || e.is_readonly()) {
            let mut pool = self.pool();
            if pool.len() < MAX_IDLE {
                pool.push(d);
            }
        }
        out
    }

    fn exec(&self, call: &Call<'_>) -> Result<Value, DirectError> {
        let (Target::Single(_, timeouts) | Target::Cluster(_, _, timeouts)) = self.target;
        self.with(|d| match d {
            Direct::Single(con) => Ok(keyroute_redis::cache::eval(con, call)?),
            // NOSCRIPT (a replica promoted by a failover has no scripts) is handled there.
            Direct::Cluster(c) => Ok(eval_cluster(c, call, timeouts)?),
        })
    }

    /// `PING` on a pooled connection: the standalone server (or the Sentinels' master),
    /// or every master of the Cluster (through the master owning its first slot).
    fn probe_ping(&self) -> Result<(), String> {
        let ping = redis::cmd("PING");
        let out = self.with(|d| match d {
            Direct::Single(con) => ping
                .query::<redis::Value>(con)
                .map(|_| true)
                .map_err(DirectError::Raw),
            Direct::Cluster(c) => {
                let firsts: Vec<u16> = c
                    .map()
                    .masters()
                    .filter_map(|(i, _)| c.map().node_ranges(i).next().map(|r| *r.start()))
                    .collect();
                for &slot in &firsts {
                    c.query_slot::<redis::Value>(slot, &ping)?;
                }
                Ok(!firsts.is_empty())
            }
        });
        match out {
            Ok(true) => Ok(()),
            Ok(false) => Err("CLUSTER_NO_OWNER: no master owns a slot".into()),
            Err(e) => {
                let (code, text) = match &e {
                    DirectError::Keyroute(e) => (e.code().as_str(), e.to_string()),
                    DirectError::Raw(e) => (ErrorCode::RedisServer.as_str(), e.to_string()),
                };
                // keyroute-redis's errors are redacted already; redact again whatever
                // looks like a URL.
                Err(format!("{code}: {}", redact(&text)))
            }
        }
    }

    fn probe_role(&self) -> String {
        if matches!(self.target, Target::Cluster(..)) {
            return "cluster".into();
        }
        let role = self.with(|d| match d {
            Direct::Single(con) => {
                let v: redis::Value = redis::cmd("ROLE").query(con).map_err(DirectError::Raw)?;
                Ok(match v {
                    redis::Value::Array(items) => match items.into_iter().next() {
                        Some(redis::Value::BulkString(b)) => {
                            String::from_utf8_lossy(&b).into_owned()
                        }
                        Some(redis::Value::SimpleString(s)) => s,
                        _ => "unknown".into(),
                    },
                    _ => "unknown".into(),
                })
            }
            Direct::Cluster(_) => Ok("cluster".into()),
        });
        match role {
            Ok(r) if r == "slave" => "replica".into(),
            Ok(r) => r,
            Err(_) => "unreachable".into(),
        }
    }
}

fn loader_error(f: LoadFailure) -> LoadError {
    LoadError::new(f.code(), f.message())
}

impl Store for RedisStore {
    fn info(&self) -> StoreInfo {
        let mut role = self.role.lock().unwrap_or_else(|e| e.into_inner());
        if role.0.elapsed() > Duration::from_secs(1) {
            *role = (Instant::now(), self.probe_role());
        }
        StoreInfo {
            address: self.shown.clone(),
            role: role.1.clone(),
        }
    }

    fn ping(&self) -> Result<(), String> {
        // One probe at a time; the others wait for it and share its answer.
        let mut last = self.pinged.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, out)) = &*last {
            if at.elapsed() < PING_REUSE {
                return out.clone();
            }
        }
        let out = self.probe_ping();
        *last = Some((Instant::now(), out.clone()));
        out
    }

    fn stats(&self) -> StoreStats {
        let s = self.cache.stats();
        StoreStats {
            hits: s.hits,
            misses: s.leases,
            backend_loads: s.backend_calls,
            takeovers: s.takeovers,
            fenced_fills: s.fenced_fills,
        }
    }

    fn notify(&self) -> Notify {
        match self.target {
            Target::Single(..) => Notify::Publish,
            Target::Cluster(..) => Notify::ShardPublish,
        }
    }

    fn run(&self, call: &Call<'_>) -> Result<Value, Answer> {
        self.exec(call).map_err(direct_answer)
    }

    fn get_or_load(
        &self,
        session: Option<&SessionId>,
        client: &str,
        kind: &str,
        deadline: Instant,
        loader: Loader<'_>,
    ) -> Result<Vec<u8>, Answer> {
        let load = || loader().map_err(loader_error);
        match session {
            None => self.cache.get_or_load(client, kind, deadline, load),
            Some(sid) => {
                self.cache
                    .get_or_load_in_session(sid.as_bytes(), client, kind, deadline, load)
            }
        }
        .map_err(answer)
    }

    fn warm(
        &self,
        device: &str,
        kinds: &[String],
        loader: WarmLoader<'_>,
    ) -> Result<usize, Answer> {
        let report = self
            .cache
            .warm(device, kinds, |client, kind| {
                loader(
                    &String::from_utf8_lossy(client),
                    &String::from_utf8_lossy(kind),
                )
                .map_err(loader_error)
            })
            .map_err(answer)?;
        Ok(report.granted.len())
    }
}
