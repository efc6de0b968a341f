//! [`Config`]: everything `keyroute serve` is started with.

use std::net::SocketAddr;
use std::time::Duration;

use keyroute::cache::{CacheSettings, SessionSettings};

use crate::error::ServeError;

/// How the service runs. [`Config::default`] is what `keyroute serve` uses without flags.
///
/// ```
/// use keyroute_serve::Config;
/// let mut config = Config::default();
/// config.add_cap("cards=4")?;
/// assert_eq!(config.queue, 3000);
/// assert_eq!(config.caps, vec![("cards".to_string(), 4)]);
/// assert!(config.add_cap("cards").is_err());
/// # Ok::<(), keyroute_serve::ServeError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    /// The clients' endpoint (ZeroMQ ROUTER), e.g. `tcp://127.0.0.1:5555`.
    pub bind: String,
    /// The loader workers' endpoint (ZeroMQ ROUTER; tcp or ipc).
    pub workers_bind: String,
    /// Redis URL(s) for shared state: `redis://host:port` (standalone) or a comma-separated
    /// list of seeds prefixed `cluster:` / several URLs (Redis Cluster). `None`: in memory.
    pub redis: Option<String>,
    /// Queue capacity (requests waiting for a thread), allocated at start.
    pub queue: usize,
    /// Threads running requests (started at start).
    pub threads: usize,
    /// Deadline of a request whose header says 0.
    pub default_deadline: Duration,
    /// Per-kind caps: at most N requests of that kind run (and load) at once.
    pub caps: Vec<(String, usize)>,
    /// Where to serve Prometheus metrics (`/metrics`) and the health endpoints
    /// (`/healthz`, `/readyz`), if anywhere.
    pub metrics: Option<SocketAddr>,
    /// The kinds `/readyz` requires a registered loader worker for (`--require-kind`).
    pub require_kinds: Vec<String>,
    /// The message types a request must carry a session id for (`--require-session`):
    /// without one it is answered `SESSION_EXPIRED`. Default none.
    pub require_sessions: Vec<keyroute::frame::MsgType>,
    /// A request answered after this long is logged (one `info` line), as is every
    /// request that fails (`--slow-ms`).
    pub slow: Duration,
    /// A worker silent this long is dropped and its loads failed over.
    pub worker_timeout: Duration,
    /// How long a stop (SIGTERM) drains before answering what is left "shutting down".
    pub grace: Duration,
    /// The largest frame read (header, body or payload); larger ones get a data error
    /// `VALUE_TOO_LARGE`. Frames over 4x this (at least 128 MiB) drop the connection.
    pub max_frame: usize,
    /// Lease of a load in the store (a load that outlives it without heartbeat may be
    /// taken over); sessions' sliding TTL; values' soft and hard TTLs.
    pub lease: Duration,
    /// Sessions' sliding lifetime.
    pub session_ttl: Duration,
    /// How long a loaded value is fresh.
    pub soft_ttl: Duration,
    /// How long a loaded value is kept (served stale after the soft TTL while one
    /// request refreshes it).
    pub hard_ttl: Duration,
    /// The longest deadline a client may ask for; longer ones are cut to it.
    pub max_deadline: Duration,
    /// The most `product.get` parked behind one load; more are refused
    /// `TOO_MANY_WAITERS`.
    pub max_waiters_per_key: usize,
    /// The most `product.get` parked behind loads in all; more are refused
    /// `TOO_MANY_WAITERS`.
    pub max_waiters: usize,
    /// The in-memory store's budget (values, session data and their keys): past it,
    /// expired entries go first, then the least recently used cache entries; sessions
    /// are never evicted (one that does not fit is refused `STORE_FULL`).
    pub memory_max: usize,
    /// The most bytes of replies kept for one client that does not read them (beyond
    /// the 16 replies ZeroMQ itself queues); past it, that client's replies are dropped
    /// and counted (`keyroute_serve_replies_dropped_total`).
    pub client_buffer_bytes: usize,
    /// The same bound over every client together.
    pub client_buffers_total_bytes: usize,
    /// ZeroMQ CURVE on both sockets and the public keys admitted ([`crate::curve`]);
    /// `None`: plain sockets (a warning at start for one bound beyond loopback).
    pub curve: Option<crate::curve::Curve>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            bind: "tcp://127.0.0.1:5555".into(),
            workers_bind: "tcp://127.0.0.1:5556".into(),
            redis: None,
            queue: 3000,
            threads: 100,
            default_deadline: Duration::from_millis(5000),
            caps: Vec::new(),
            metrics: None,
            require_kinds: Vec::new(),
            require_sessions: Vec::new(),
            slow: Duration::from_millis(1000),
            worker_timeout: Duration::from_millis(3000),
            grace: Duration::from_millis(5000),
            max_frame: 16 << 20,
            lease: Duration::from_millis(CacheSettings::DEFAULT.lease_ms),
            session_ttl: Duration::from_millis(SessionSettings::DEFAULT.ttl_ms),
            soft_ttl: Duration::from_millis(CacheSettings::DEFAULT.soft_ttl_ms),
            hard_ttl: Duration::from_millis(CacheSettings::DEFAULT.hard_ttl_ms),
            max_deadline: Duration::from_secs(60),
            max_waiters_per_key: 10_000,
            max_waiters: 100_000,
            memory_max: 256 << 20,
            client_buffer_bytes: 8 << 20,
            client_buffers_total_bytes: 256 << 20,
            curve: None,
        }
    }
}

/// The largest queue and thread counts accepted.
pub const MAX_QUEUE: usize = 1 << 20;
/// The most threads.
pub const MAX_THREADS: usize = 4096;
/// The largest `--max-waiters` (and `--max-waiters-per-key`) accepted.
pub const MAX_WAITERS: usize = 1 << 22;

impl Config {
    /// Adds a `KIND=N` cap (N ≥ 1).
    ///
    /// # Errors
    /// [`ServeError::Config`] for a spec that is not `KIND=N`, a bad kind, N = 0, or a
    /// kind capped twice.
    ///
    /// ```
    /// let mut c = keyroute_serve::Config::default();
    /// assert!(c.add_cap("a{b}=1").is_err());
    /// assert!(c.add_cap("loans=0").is_err());
    /// ```
    pub fn add_cap(&mut self, spec: &str) -> Result<(), ServeError> {
        let bad = |why: &str| ServeError::Config(format!("--cap {spec:?}: {why}"));
        let (kind, n) = spec
            .rsplit_once('=')
            .ok_or_else(|| bad("expected KIND=N"))?;
        keyroute::cache::check_kind(kind.as_bytes()).map_err(|e| bad(&e.to_string()))?;
        let n: usize = n
            .trim()
            .parse()
            .map_err(|_| bad("N is not a positive integer"))?;
        if n == 0 {
            return Err(bad("N must be at least 1"));
        }
        if self.caps.iter().any(|(k, _)| k == kind) {
            return Err(bad("this kind is capped twice"));
        }
        self.caps.push((kind.to_string(), n));
        Ok(())
    }

    /// Adds a kind `/readyz` requires a loader worker for (`--require-kind`); a kind
    /// given twice counts once.
    ///
    /// # Errors
    /// [`ServeError::Config`] for a kind the core refuses (empty, over 128 bytes, `{`,
    /// `}` or control bytes).
    ///
    /// ```
    /// let mut c = keyroute_serve::Config::default();
    /// c.require_kind("cards")?;
    /// c.require_kind("cards")?;
    /// assert_eq!(c.require_kinds, vec!["cards".to_string()]);
    /// assert!(c.require_kind("a{b}").is_err());
    /// # Ok::<(), keyroute_serve::ServeError>(())
    /// ```
    pub fn require_kind(&mut self, kind: &str) -> Result<(), ServeError> {
        keyroute::cache::check_kind(kind.as_bytes())
            .map_err(|e| ServeError::Config(format!("--require-kind {kind:?}: {e}")))?;
        if !self.require_kinds.iter().any(|k| k == kind) {
            self.require_kinds.push(kind.to_string());
        }
        Ok(())
    }

    /// Requires a session id in the header of every request of the message type `name`
    /// (`--require-session`): one without is answered `SESSION_EXPIRED` (whatever the
    /// type, a session id that is there is checked and slid). A type given twice counts
    /// once.
    ///
    /// # Errors
    /// [`ServeError::Config`] for a name that is not a client message type, and for
    /// `ping` (answered by the broker itself: it never looks at a session).
    ///
    /// ```
    /// let mut c = keyroute_serve::Config::default();
    /// c.require_session("cache.get")?;
    /// c.require_session("cache.get")?;
    /// assert_eq!(c.require_sessions.len(), 1);
    /// assert!(c.require_session("ping").is_err());
    /// assert!(c.require_session("load").is_err());
    /// # Ok::<(), keyroute_serve::ServeError>(())
    /// ```
    pub fn require_session(&mut self, name: &str) -> Result<(), ServeError> {
        use keyroute::frame::MsgType;
        let t = MsgType::from_name(name)
            .filter(|t| t.is_client() && *t != MsgType::Ping)
            .ok_or_else(|| {
                let names: Vec<&str> = MsgType::ALL
                    .iter()
                    .filter(|t| t.is_client() && **t != MsgType::Ping)
                    .map(|t| t.name())
                    .collect();
                ServeError::Config(format!(
                    "--require-session {name:?}: not a client message type (one of {})",
                    names.join(", ")
                ))
            })?;
        if !self.require_sessions.contains(&t) {
            self.require_sessions.push(t);
        }
        Ok(())
    }

    /// Checks the numbers.
    ///
    /// # Errors
    /// [`ServeError::Config`] naming the first value out of range.
    ///
    /// ```
    /// let mut c = keyroute_serve::Config::default();
    /// assert!(c.check().is_ok());
    /// c.threads = 0;
    /// assert!(c.check().is_err());
    /// ```
    pub fn check(&self) -> Result<(), ServeError> {
        let range = |what: &str, v: usize, lo: usize, hi: usize| {
            if v < lo || v > hi {
                Err(ServeError::Config(format!(
                    "{what} {v} is outside {lo}..={hi}"
                )))
            } else {
                Ok(())
            }
        };
        range("--queue", self.queue, 1, MAX_QUEUE)?;
        range("--threads", self.threads, 1, MAX_THREADS)?;
        range("--max-frame", self.max_frame, 1024, 1 << 30)?;
        range(
            "--max-waiters-per-key",
            self.max_waiters_per_key,
            1,
            MAX_WAITERS,
        )?;
        range("--max-waiters", self.max_waiters, 1, MAX_WAITERS)?;
        range("--memory-max", self.memory_max, 1 << 20, 1 << 44)?;
        range("--require-kind (count)", self.require_kinds.len(), 0, 1024)?;
        range(
            "--client-buffer-bytes",
            self.client_buffer_bytes,
            1 << 10,
            1 << 40,
        )?;
        range(
            "--client-buffers-total-bytes",
            self.client_buffers_total_bytes,
            self.client_buffer_bytes,
            1 << 44,
        )?;
        let ms = |what: &str, d: Duration| {
            if d.is_zero() || d > Duration::from_secs(86_400 * 366) {
                Err(ServeError::Config(format!(
                    "{what} {} ms is outside 1..=31622400000",
                    d.as_millis()
                )))
            } else {
                Ok(())
            }
        };
        ms("--default-deadline-ms", self.default_deadline)?;
        ms("--max-deadline-ms", self.max_deadline)?;
        ms("--worker-timeout-ms", self.worker_timeout)?;
        ms("--grace-ms", self.grace)?;
        ms("--slow-ms", self.slow)?;
        ms("lease", self.lease)?;
        Ok(())
    }

    /// The cap of a kind, if it has one.
    ///
    /// ```
    /// let mut c = keyroute_serve::Config::default();
    /// c.add_cap("cards=2")?;
    /// assert_eq!(c.cap_of("cards"), Some(2));
    /// assert_eq!(c.cap_of("loans"), None);
    /// # Ok::<(), keyroute_serve::ServeError>(())
    /// ```
    pub fn cap_of(&self, kind: &str) -> Option<usize> {
        self.caps.iter().find(|(k, _)| k == kind).map(|(_, n)| *n)
    }
}
