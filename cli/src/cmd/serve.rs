//! `keyroute serve`: the caching broker service (crate `keyroute-serve`). Every flag can
//! also come from the environment (`KEYROUTE_BIND`, ...). Logs are structured
//! (`tracing`), on stderr; `KEYROUTE_LOG` (or `RUST_LOG`) sets the level
//! (`info` by default), `KEYROUTE_LOG_FORMAT=json` prints one JSON object per line.
//!
//! ```text
//! keyroute serve --bind tcp://127.0.0.1:5555 --workers-bind tcp://127.0.0.1:5556 \
//!     --metrics 127.0.0.1:9464 --cap cards=20
//! ```
use std::net::SocketAddr;
use std::time::Duration;

use keyroute::cache::{CacheSettings, SessionSettings};
use keyroute::error::ErrorCode;
use keyroute_redis::redact;
use keyroute_serve::{Config, ServeError};

use super::CliError;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The protocol (frames, message types, errors, loader workers) is \
    docs/protocol.md. SIGTERM or SIGINT stops the service gracefully: new requests are \
    refused (SHUTTING_DOWN), queued and running ones drain until --grace-ms, and every \
    accepted request gets exactly one reply.\n\n\
    Example:\n  keyroute serve --bind tcp://127.0.0.1:5555 --workers-bind \
    tcp://127.0.0.1:5556 --metrics 127.0.0.1:9464"
)]
pub struct Args {
    /// Clients' ZeroMQ endpoint (ROUTER).
    #[arg(long, env = "KEYROUTE_BIND", default_value = "tcp://127.0.0.1:5555")]
    pub bind: String,
    /// Loader workers' ZeroMQ endpoint (ROUTER; tcp:// or ipc://).
    #[arg(
        long,
        env = "KEYROUTE_WORKERS_BIND",
        default_value = "tcp://127.0.0.1:5556"
    )]
    pub workers_bind: String,
    /// Redis for state shared by every instance: a URL (redis://, rediss:// for TLS,
    /// redis+unix://, redis+sentinel://HOSTS/SERVICE; a Cluster node is detected), or
    /// comma-separated Cluster seeds. Without it, state is in memory. Secrets in it are
    /// never printed.
    #[arg(long, env = "KEYROUTE_REDIS", hide_env_values = true)]
    pub redis: Option<String>,
    /// TLS: the CA certificate (PEM) that signed Redis's certificate; turns TLS on.
    #[arg(long, env = "KEYROUTE_TLS_CA", value_name = "PEM")]
    pub tls_ca: Option<String>,
    /// TLS: a client certificate (PEM), for servers with tls-auth-clients yes.
    #[arg(long, env = "KEYROUTE_TLS_CERT", value_name = "PEM")]
    pub tls_cert: Option<String>,
    /// TLS: the client certificate's key (PEM).
    #[arg(long, env = "KEYROUTE_TLS_KEY", value_name = "PEM")]
    pub tls_key: Option<String>,
    /// CURVE: the service's key pair (a ZeroMQ certificate as pyzmq writes it, the
    /// .key_secret file, or one line with the Z85 secret key). Turns CURVE on for both
    /// sockets; needs --curve-worker-keys. Never printed.
    #[arg(long, env = "KEYROUTE_CURVE_SECRET_KEY", value_name = "FILE")]
    pub curve_secret_key: Option<std::path::PathBuf>,
    /// CURVE: the worker public keys admitted (a file of Z85 keys or certificates, or a
    /// directory of *.key certificates); any other worker key is refused.
    #[arg(long, env = "KEYROUTE_CURVE_WORKER_KEYS", value_name = "PATH")]
    pub curve_worker_keys: Option<std::path::PathBuf>,
    /// CURVE: the client public keys admitted (same forms); without it any client key is.
    #[arg(long, env = "KEYROUTE_CURVE_CLIENT_KEYS", value_name = "PATH")]
    pub curve_client_keys: Option<std::path::PathBuf>,
    /// Queue capacity (allocated at start).
    #[arg(
        long,
        env = "KEYROUTE_QUEUE",
        default_value_t = 3000,
        allow_negative_numbers = true
    )]
    pub queue: i128,
    /// Threads running requests (started at start).
    #[arg(
        long,
        env = "KEYROUTE_THREADS",
        default_value_t = 100,
        allow_negative_numbers = true
    )]
    pub threads: i128,
    /// Deadline of a request whose header says 0.
    #[arg(
        long,
        env = "KEYROUTE_DEFAULT_DEADLINE_MS",
        default_value_t = 5000,
        allow_negative_numbers = true
    )]
    pub default_deadline_ms: i128,
    /// At most N requests of KIND run (and load) at once; repeatable.
    #[arg(
        long = "cap",
        value_name = "KIND=N",
        env = "KEYROUTE_CAP",
        value_delimiter = ','
    )]
    pub caps: Vec<String>,
    /// Serve Prometheus metrics on http://HOST:PORT/metrics, and /healthz (alive) and
    /// /readyz (ready to serve) on the same port.
    #[arg(long, value_name = "HOST:PORT", env = "KEYROUTE_METRICS")]
    pub metrics: Option<String>,
    /// /readyz answers 503 until a loader worker is registered for KIND; repeatable.
    #[arg(
        long = "require-kind",
        value_name = "KIND",
        env = "KEYROUTE_REQUIRE_KIND",
        value_delimiter = ','
    )]
    pub require_kinds: Vec<String>,
    /// Requests of message type TYPE (e.g. cache.get) must carry a session id in their
    /// header: one without is answered SESSION_EXPIRED; repeatable. Whatever the type, a
    /// session id that is there is checked and slid with the request's data operation.
    #[arg(
        long = "require-session",
        value_name = "TYPE",
        env = "KEYROUTE_REQUIRE_SESSION",
        value_delimiter = ','
    )]
    pub require_sessions: Vec<String>,
    /// Log one info line (type, id, time in queue, store and loads) for each request
    /// answered after N ms, as for each request that fails.
    #[arg(
        long,
        env = "KEYROUTE_SLOW_MS",
        default_value_t = 1000,
        allow_negative_numbers = true
    )]
    pub slow_ms: i128,
    /// Drop a loader worker silent this long and fail its loads over.
    #[arg(
        long,
        env = "KEYROUTE_WORKER_TIMEOUT_MS",
        default_value_t = 3000,
        allow_negative_numbers = true
    )]
    pub worker_timeout_ms: i128,
    /// How long a stop drains before answering what is left SHUTTING_DOWN.
    #[arg(
        long,
        env = "KEYROUTE_GRACE_MS",
        default_value_t = 5000,
        allow_negative_numbers = true
    )]
    pub grace_ms: i128,
    /// Largest frame (bytes) read; larger ones are answered VALUE_TOO_LARGE.
    #[arg(long, env = "KEYROUTE_MAX_FRAME", default_value_t = 16 << 20, allow_negative_numbers = true)]
    pub max_frame: i128,
    /// Lease of a load (ms): another instance may take over a load silent this long.
    #[arg(
        long,
        env = "KEYROUTE_LEASE_MS",
        default_value_t = i128::from(CacheSettings::DEFAULT.lease_ms),
        allow_negative_numbers = true
    )]
    pub lease_ms: i128,
    /// How long a loaded value is fresh (ms).
    #[arg(
        long,
        env = "KEYROUTE_SOFT_TTL_MS",
        default_value_t = i128::from(CacheSettings::DEFAULT.soft_ttl_ms),
        allow_negative_numbers = true
    )]
    pub soft_ttl_ms: i128,
    /// How long a loaded value is kept (ms; served stale while one request refreshes it).
    #[arg(
        long,
        env = "KEYROUTE_HARD_TTL_MS",
        default_value_t = i128::from(CacheSettings::DEFAULT.hard_ttl_ms),
        allow_negative_numbers = true
    )]
    pub hard_ttl_ms: i128,
    /// Sessions' sliding lifetime (ms).
    #[arg(
        long,
        env = "KEYROUTE_SESSION_TTL_MS",
        default_value_t = i128::from(SessionSettings::DEFAULT.ttl_ms),
        allow_negative_numbers = true
    )]
    pub session_ttl_ms: i128,
    /// The longest deadline a client may ask for (ms); longer ones are cut to it.
    #[arg(
        long,
        env = "KEYROUTE_MAX_DEADLINE_MS",
        default_value_t = 60_000,
        allow_negative_numbers = true
    )]
    pub max_deadline_ms: i128,
    /// The most product.get waiting for one load; more are refused TOO_MANY_WAITERS.
    #[arg(
        long,
        env = "KEYROUTE_MAX_WAITERS_PER_KEY",
        default_value_t = 10_000,
        allow_negative_numbers = true
    )]
    pub max_waiters_per_key: i128,
    /// The most product.get waiting for loads in all; more are refused TOO_MANY_WAITERS.
    #[arg(
        long,
        env = "KEYROUTE_MAX_WAITERS",
        default_value_t = 100_000,
        allow_negative_numbers = true
    )]
    pub max_waiters: i128,
    /// Memory budget of the in-memory store (bytes): past it expired entries go first,
    /// then the least recently used cache entries; sessions are never evicted (one that
    /// does not fit is refused STORE_FULL). Not used with --redis.
    #[arg(
        long,
        env = "KEYROUTE_MEMORY_MAX",
        default_value_t = 256 << 20,
        allow_negative_numbers = true
    )]
    pub memory_max: i128,
    /// The most bytes of replies kept for one client that does not read them (beyond the
    /// 16 replies ZeroMQ queues itself); past it that client's replies are dropped and
    /// counted in keyroute_serve_replies_dropped_total.
    #[arg(
        long,
        env = "KEYROUTE_CLIENT_BUFFER_BYTES",
        default_value_t = 8 << 20,
        allow_negative_numbers = true
    )]
    pub client_buffer_bytes: i128,
    /// The same bound over every client together (at least --client-buffer-bytes).
    #[arg(
        long,
        env = "KEYROUTE_CLIENT_BUFFERS_TOTAL_BYTES",
        default_value_t = 256 << 20,
        allow_negative_numbers = true
    )]
    pub client_buffers_total_bytes: i128,
}

fn count(flag: &str, v: i128) -> Result<usize, CliError> {
    usize::try_from(v)
        .map_err(|_| CliError::new(ErrorCode::OutOfRange, format!("{flag} {v} is out of range")))
}

fn ms(flag: &'static str, v: i128) -> Result<Duration, CliError> {
    let n = keyroute::cache::checked_ms(flag, v, 1)
        .map_err(|e| CliError::new(e.code(), e.to_string()))?;
    Ok(Duration::from_millis(n))
}

impl Args {
    /// The service configuration.
    pub fn config(&self) -> Result<Config, CliError> {
        let mut c = Config {
            bind: self.bind.clone(),
            workers_bind: self.workers_bind.clone(),
            redis: self.redis.as_ref().map(|r| {
                keyroute_redis::split_seeds(r)
                    .into_iter()
                    .map(|u| {
                        keyroute_redis::with_tls_files(
                            u,
                            self.tls_ca.as_deref(),
                            self.tls_cert.as_deref(),
                            self.tls_key.as_deref(),
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            }),
            queue: count("--queue", self.queue)?,
            threads: count("--threads", self.threads)?,
            default_deadline: ms("--default-deadline-ms", self.default_deadline_ms)?,
            caps: Vec::new(),
            metrics: None,
            require_kinds: Vec::new(),
            require_sessions: Vec::new(),
            slow: ms("--slow-ms", self.slow_ms)?,
            worker_timeout: ms("--worker-timeout-ms", self.worker_timeout_ms)?,
            grace: ms("--grace-ms", self.grace_ms)?,
            max_frame: count("--max-frame", self.max_frame)?,
            lease: ms("--lease-ms", self.lease_ms)?,
            soft_ttl: ms("--soft-ttl-ms", self.soft_ttl_ms)?,
            hard_ttl: ms("--hard-ttl-ms", self.hard_ttl_ms)?,
            session_ttl: ms("--session-ttl-ms", self.session_ttl_ms)?,
            max_deadline: ms("--max-deadline-ms", self.max_deadline_ms)?,
            max_waiters_per_key: count("--max-waiters-per-key", self.max_waiters_per_key)?,
            max_waiters: count("--max-waiters", self.max_waiters)?,
            memory_max: count("--memory-max", self.memory_max)?,
            client_buffer_bytes: count("--client-buffer-bytes", self.client_buffer_bytes)?,
            client_buffers_total_bytes: count(
                "--client-buffers-total-bytes",
                self.client_buffers_total_bytes,
            )?,
            curve: None,
        };
        for cap in &self.caps {
            c.add_cap(cap).map_err(serve_error)?;
        }
        for kind in &self.require_kinds {
            c.require_kind(kind).map_err(serve_error)?;
        }
        for name in &self.require_sessions {
            c.require_session(name).map_err(serve_error)?;
        }
        if let Some(m) = &self.metrics {
            let addr: SocketAddr = m.parse().map_err(|_| {
                CliError::new(
                    ErrorCode::BadAddress,
                    format!("--metrics {m:?} is not HOST:PORT (an IP address and a port)"),
                )
            })?;
            c.metrics = Some(addr);
        }
        match (
            &self.curve_secret_key,
            &self.curve_worker_keys,
            &self.curve_client_keys,
        ) {
            (Some(secret), workers, clients) => {
                c.curve = Some(
                    keyroute_serve::curve::Curve::from_files(
                        secret,
                        workers.as_deref(),
                        clients.as_deref(),
                    )
                    .map_err(serve_error)?,
                );
            }
            (None, None, None) => {}
            (None, _, _) => {
                return Err(serve_error(ServeError::Config(
                    "--curve-worker-keys and --curve-client-keys need --curve-secret-key".into(),
                )))
            }
        }
        c.check().map_err(serve_error)?;
        Ok(c)
    }
}

fn serve_error(e: ServeError) -> CliError {
    let code = match &e {
        ServeError::Config(_) => ErrorCode::OutOfRange,
        ServeError::KeyFile(_) => ErrorCode::BadConfig,
        ServeError::Store(_) => ErrorCode::RedisConnect,
        _ => ErrorCode::Internal,
    };
    // Store errors come redacted from keyroute-redis; redact anything URL-like again.
    CliError::new(code, redact(&e.to_string()))
}

fn init_logs() {
    use tracing_subscriber::EnvFilter;
    let filter = std::env::var("KEYROUTE_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok())
        .or_else(|| EnvFilter::try_from_default_env().ok())
        .unwrap_or_else(|| EnvFilter::new("info"));
    let json = std::env::var("KEYROUTE_LOG_FORMAT").is_ok_and(|v| v == "json");
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

pub fn run(args: Args) -> Result<(), CliError> {
    let config = args.config()?;
    init_logs();
    keyroute_serve::run(config).map_err(serve_error)
}
