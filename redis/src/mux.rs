//! [`Multiplexed`] (feature `mux`): one connection per server shared by every thread of
//! the process, auto-pipelined: the commands of concurrent callers are written together
//! and their replies matched in order, as ioredis and Lettuce do. It is the `redis`
//! crate's own [`MultiplexedConnection`], driven by one tokio worker thread, behind the
//! sync [`ConnectionLike`] every keyroute call takes; the default (and the rest of the
//! sync API) stays one connection per caller, with no tokio.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Cmd, ConnectionLike, Pipeline, RedisResult, Value};

use crate::cluster::split_packed;
use crate::conn::{connect_error, nonzero, Endpoint, Place, Timeouts};
use crate::error::{is_broken, Error, Result, DEADLINE_OF};

/// The process's one runtime for multiplexed connections: a single worker thread runs
/// every connection's reader and writer; callers wait on their own threads.
fn runtime() -> std::result::Result<&'static tokio::runtime::Runtime, String> {
    static RT: OnceLock<std::result::Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("keyroute-mux")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn io_error(kind: std::io::ErrorKind, text: String) -> redis::RedisError {
    std::io::Error::new(kind, text).into()
}

/// What all handles of one [`Multiplexed`] share: the connection, and how many times it
/// was replaced (so that a handle drops only the connection its own call failed on).
struct Shared {
    endpoint: Endpoint,
    timeouts: Timeouts,
    con: Mutex<(u64, Option<MultiplexedConnection>)>,
    /// The generation of the connection in `con` (0: none), read without the lock.
    current: AtomicU64,
}

/// One multiplexed, auto-pipelined connection to a standalone server, shared by every
/// clone (feature `mux`): clone it once per thread, and every thread's calls go out on
/// the same socket, written together when they are concurrent, their replies matched in
/// order. Under [`LeastUsed`](crate::LeastUsed), [`Leases`](crate::Leases) and every
/// call that takes a [`ConnectionLike`], as [`Reconnecting`](crate::Reconnecting) is.
///
/// Guarantees, as on [`Reconnecting`](crate::Reconnecting):
/// - a deadline per call: every call (a command, a script, a pipeline) ends within the I/O
///   timeout with [`Error::Timeout`] (`REDIS_TIMEOUT`); a call that connects first within
///   the larger of the two timeouts. A late reply is matched to its own (abandoned) call,
///   so the connection stays usable after a timeout;
/// - `EVALSHA` with `NOSCRIPT` reload (the scripts' callers do it, on any connection);
/// - it connects lazily, and after a connection error the next call opens a new
///   connection; a request that may have run is never resent;
/// - passwords never appear in its errors or its `Debug` form.
///
/// Not for Sentinel URLs (use [`Reconnecting`](crate::Reconnecting)), and not to be called
/// from inside a tokio runtime (its calls block their thread).
///
/// ```
/// use std::time::Duration;
/// use keyroute_redis::{LeastUsed, Multiplexed, Timeouts};
/// let mux = Multiplexed::new("redis://:pw@127.0.0.1:1", Timeouts::uniform(Duration::from_millis(200)))?;
/// let pool = LeastUsed::new("{p}:pool")?;
/// let err = pool.pick(&mut mux.clone()).unwrap_err();
/// assert_eq!(err.code().as_str(), "REDIS_CONNECT");
/// assert!(!err.to_string().contains("pw") && !format!("{mux:?}").contains("pw"));
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone)]
pub struct Multiplexed {
    shared: Arc<Shared>,
    /// This handle's copy of the shared connection, and its generation.
    local: Option<(u64, MultiplexedConnection)>,
}

impl std::fmt::Debug for Multiplexed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Multiplexed")
            .field("url", &self.shared.endpoint.shown())
            .field("timeouts", &self.shared.timeouts)
            .field("connected", &self.local.is_some())
            .finish()
    }
}

impl Multiplexed {
    /// A multiplexed connection to `url` (`redis://`, `rediss://`; `redis+unix://` is
    /// taken but not yet tested; not `redis+sentinel://`); only the URL is checked now.
    ///
    /// # Errors
    /// [`Error::BadUrl`], also for a Sentinel URL.
    pub fn new(url: &str, timeouts: Timeouts) -> Result<Self> {
        Self::to(Endpoint::parse(url)?, timeouts)
    }

    /// A multiplexed connection to `endpoint`.
    ///
    /// # Errors
    /// [`Error::BadUrl`] for a Sentinel endpoint.
    pub fn to(endpoint: Endpoint, timeouts: Timeouts) -> Result<Self> {
        if matches!(endpoint.place(), Place::Sentinel { .. }) {
            return Err(Error::BadUrl {
                url: endpoint.shown().to_string(),
                reason: "a multiplexed connection does not follow Sentinel yet: use Reconnecting"
                    .into(),
            });
        }
        Ok(Multiplexed {
            shared: Arc::new(Shared {
                endpoint,
                timeouts,
                con: Mutex::new((0, None)),
                current: AtomicU64::new(0),
            }),
            local: None,
        })
    }

    /// The URL, password redacted.
    pub fn url(&self) -> &str {
        self.shared.endpoint.shown()
    }

    /// Connects now unless connected, so that an unreachable server is reported before the
    /// first request.
    ///
    /// # Errors
    /// As [`connect`](crate::connect).
    pub fn ensure_connected(&mut self) -> Result<()> {
        self.connection(Instant::now() + self.budget()).map(|_| ())
    }

    fn budget(&self) -> Duration {
        nonzero(self.shared.timeouts.io.max(self.shared.timeouts.connect))
    }

    /// This handle's connection (the shared one, opened by `until` if none is).
    fn connection(&mut self, until: Instant) -> Result<(u64, MultiplexedConnection)> {
        if let Some((gen, con)) = &self.local {
            if *gen == self.shared.current.load(Ordering::Acquire) {
                return Ok((*gen, con.clone()));
            }
        }
        let mut guard = self
            .shared
            .con
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if guard.1.is_none() {
            let con = self.open(until)?;
            guard.0 += 1;
            guard.1 = Some(con);
            self.shared.current.store(guard.0, Ordering::Release);
        }
        let gen = guard.0;
        let con = guard.1.clone().ok_or_else(|| Error::ConnectionLost {
            context: self.url().to_string(),
            detail: "no connection".into(),
        })?;
        self.local = Some((gen, con.clone()));
        Ok((gen, con))
    }

    fn open(&self, until: Instant) -> Result<MultiplexedConnection> {
        let endpoint = &self.shared.endpoint;
        let timeouts = self.shared.timeouts;
        let client = endpoint.client()?;
        let rt = runtime().map_err(|e| Error::Connect {
            context: endpoint.shown().to_string(),
            detail: format!("cannot start the tokio runtime: {e}"),
        })?;
        let wait = until
            .saturating_duration_since(Instant::now())
            .min(nonzero(timeouts.connect));
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(nonzero(wait)))
            .set_response_timeout(None);
        let fut = async move {
            tokio::time::timeout(
                nonzero(wait),
                client.get_multiplexed_async_connection_with_config(&config),
            )
            .await
            .unwrap_or_else(|_| {
                Err(io_error(
                    std::io::ErrorKind::TimedOut,
                    "connect timed out".into(),
                ))
            })
        };
        rt.handle()
            .block_on(fut)
            .map_err(|e| connect_error(endpoint.shown(), endpoint, timeouts, &e))
    }

    /// Drops the shared connection if it is still the one of generation `gen`.
    fn drop_connection(&mut self, gen: u64) {
        let mut guard = self
            .shared
            .con
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if guard.0 == gen {
            guard.1 = None;
            self.shared.current.store(0, Ordering::Release);
        }
        self.local = None;
    }

    /// Runs `packed` (`offset + count` replies, the last `count` returned) within the
    /// call's deadline.
    fn call(&mut self, packed: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(io_error(
                std::io::ErrorKind::Other,
                "a Multiplexed connection blocks its caller: not from inside a tokio runtime"
                    .into(),
            ));
        }
        let start = Instant::now();
        let fresh = self.local.is_none();
        let (gen, mut con) = self.connection(start + self.budget()).map_err(|e| {
            let kind = match &e {
                Error::Timeout { .. } => std::io::ErrorKind::TimedOut,
                Error::Connect { .. } => std::io::ErrorKind::ConnectionRefused,
                _ => std::io::ErrorKind::Other,
            };
            io_error(kind, e.to_string())
        })?;
        let until = if fresh {
            start + self.budget()
        } else {
            Instant::now() + nonzero(self.shared.timeouts.io)
        };
        let wait = until.saturating_duration_since(Instant::now());
        let Some(commands) = split_packed(packed) else {
            return Err(io_error(
                std::io::ErrorKind::InvalidInput,
                "malformed packed command".into(),
            ));
        };
        let cmds: Vec<Cmd> = commands
            .iter()
            .map(|(_, args)| {
                let mut cmd = Cmd::new();
                for a in args {
                    cmd.arg(*a);
                }
                cmd
            })
            .collect();
        let single = offset == 0 && count == 1 && cmds.len() == 1;
        let fut = async move {
            let out = if single {
                tokio::time::timeout(wait, con.send_packed_command(&cmds[0]))
                    .await
                    .map(|r| r.map(|v| vec![v]))
            } else {
                let mut pipe = Pipeline::with_capacity(cmds.len());
                for cmd in cmds {
                    pipe.add_command(cmd);
                }
                tokio::time::timeout(wait, con.send_packed_commands(&pipe, offset, count)).await
            };
            out.unwrap_or_else(|_| {
                let ms = wait.as_micros().div_ceil(1000);
                Err(io_error(
                    std::io::ErrorKind::TimedOut,
                    format!("no reply within {DEADLINE_OF}{ms} ms"),
                ))
            })
        };
        let rt = runtime().map_err(|e| io_error(std::io::ErrorKind::Other, e))?;
        let result = rt.handle().block_on(fut);
        // A late reply is matched to its abandoned call: a timeout leaves the connection
        // usable. Any other transport error ends it.
        if matches!(&result, Err(e) if is_broken(e) && !e.is_timeout()) {
            self.drop_connection(gen);
        }
        result
    }
}

impl ConnectionLike for Multiplexed {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let mut replies = self.call(cmd, 0, 1)?;
        Ok(replies.pop().unwrap_or(Value::Nil))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.call(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.shared.endpoint.db()
    }

    fn check_connection(&mut self) -> bool {
        matches!(
            self.req_command(&redis::cmd("PING")),
            Ok(Value::SimpleString(_))
        )
    }

    fn is_open(&self) -> bool {
        self.local.is_some()
    }
}
