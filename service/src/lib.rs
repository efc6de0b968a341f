//! `keyroute serve`: the caching broker service. Front servers in any language talk to it
//! over ZeroMQ; loader workers in any language load what is missing from the slow
//! backend. The protocol is `docs/protocol.md`; the pure parts (the frame header, message
//! types, transport errors and the deadline queue) are in the core
//! ([`keyroute::frame`], [`keyroute::queue`]).
//!
//! * **Broker**: one thread owns a ROUTER socket for clients and one for workers; it only
//!   reads headers and dispatches. `ping` is answered by the broker itself.
//! * **Queue**: fixed capacity, allocated at start ([`keyroute::queue::DeadlineQueue`]):
//!   priority, then deadline, then arrival; expired requests are answered `EXPIRED` and
//!   never run; a full queue refuses at once with `QUEUE_FULL`; `--cap KIND=N` bounds how
//!   many requests of a kind run (and load) at once.
//! * **Threads** (`--threads`, started at start) run requests against the [`store`]
//!   (in memory, or Redis shared by every instance).
//! * **Single flight**: a `product.get` whose key is already loading parks (no thread, no
//!   queue slot) and gets the same answer; across instances the Redis store's fenced
//!   lease makes one load for all.
//! * **Loader workers** declare kinds and a capacity (`worker.ready`, also the heartbeat),
//!   get `load` messages (least-used idle worker first) and answer `loaded` / `failed`;
//!   a silent worker is dropped and its loads go to another worker.
//! * **Stop**: on SIGTERM (or [`Service::stop`]) new requests get `SHUTTING_DOWN`, the rest
//!   drain until the grace deadline, and whatever is left is answered `SHUTTING_DOWN`:
//!   every accepted request gets exactly one reply (`app.start` excepted: it has none).
//! * **Metrics and health**: Prometheus text on `--metrics ADDR` ([`Metrics`]), and
//!   `/healthz` (alive) and `/readyz` (the store answers, a worker is registered for every
//!   `--require-kind`, not stopping) on the same port.
//! * **Tracing**: each request runs in a `request` span carrying its id (hex); one `info`
//!   line for each request that fails or takes longer than `--slow-ms` (type, id,
//!   outcome, time in the queue, in the store and waiting for loads; at most 100 such
//!   lines a second).
//! * **Panics** (bugs) in a store call or in encoding a reply are answered `INTERNAL`
//!   to that request; the broker goes on.
//!
//! ```no_run
//! use keyroute_serve::{Config, Service};
//! let mut config = Config::default();
//! config.bind = "tcp://127.0.0.1:5555".into();
//! config.workers_bind = "tcp://127.0.0.1:5556".into();
//! let service = Service::start(config)?;
//! // ... later, from any thread:
//! service.stop();
//! service.wait()?;
//! # Ok::<(), keyroute_serve::ServeError>(())
//! ```

mod broker;
mod cmd;
mod config;
pub mod curve;
mod error;
#[doc(hidden)]
pub mod fuzzing;
mod health;
pub mod loader_worker;
mod metrics;
mod metrics_http;
mod outbox;
mod proto;
pub mod store;
mod throttle;
mod worker_msg;
mod workers;

/// The former name of [`loader_worker`] (renamed so that it is not taken for `workers.rs`,
/// the broker's registry of loader workers).
#[deprecated(note = "renamed `keyroute_serve::loader_worker`")]
pub mod worker {
    pub use crate::loader_worker::*;
}

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

pub use config::{Config, MAX_QUEUE, MAX_THREADS};
pub use error::ServeError;
pub use loader_worker::LoaderWorker;
pub use metrics::Metrics;
pub use proto::Answer;

use store::{MemoryConfig, MemoryStore, RedisConfig, RedisStore, Store};

/// A running service.
#[derive(Debug)]
pub struct Service {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<(), ServeError>>,
    metrics_addr: Option<SocketAddr>,
}

impl Service {
    /// Opens the store, binds the sockets (and the metrics listener), starts the threads
    /// and the broker.
    ///
    /// # Errors
    /// A bad configuration, an endpoint that cannot be bound, a store that cannot be
    /// opened.
    pub fn start(config: Config) -> Result<Service, ServeError> {
        config.check()?;
        let ms = |d: std::time::Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let store: Arc<dyn Store> = match &config.redis {
            None => Arc::new(MemoryStore::new(MemoryConfig {
                lease_ms: ms(config.lease),
                soft_ms: ms(config.soft_ttl),
                hard_ms: ms(config.hard_ttl),
                memory_max: config.memory_max,
                ..MemoryConfig::default()
            })),
            Some(url) => Arc::new(RedisStore::open(
                url,
                RedisConfig {
                    lease: config.lease,
                    soft_ttl: config.soft_ttl,
                    hard_ttl: config.hard_ttl,
                    session_ttl: config.session_ttl,
                    timeouts: keyroute_redis::Timeouts::uniform(std::time::Duration::from_millis(
                        1000,
                    )),
                },
            )?),
        };
        let in_memory = config.redis.is_none();
        let service = Service::start_with_store(config, store)?;
        if in_memory {
            // After the start: a start that fails says why, not this.
            tracing::warn!(
                "the store is in memory (no --redis): sessions, cached values and device bindings live in this process only and are lost when it stops or restarts; use --redis to keep them and to share them between instances"
            );
        }
        Ok(service)
    }

    /// As [`start`](Self::start), over a store of the caller's (`config.redis` and the
    /// in-memory store's settings are not used): for embedding the broker over another
    /// [`Store`].
    ///
    /// # Errors
    /// A bad configuration, an endpoint that cannot be bound.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use keyroute_serve::store::{MemoryStore, Store};
    /// use keyroute_serve::{Config, Service};
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new(Default::default()));
    /// let service = Service::start_with_store(Config::default(), store)?;
    /// service.stop();
    /// service.wait()?;
    /// # Ok::<(), keyroute_serve::ServeError>(())
    /// ```
    pub fn start_with_store(config: Config, store: Arc<dyn Store>) -> Result<Service, ServeError> {
        config.check()?;
        limit_malloc_arenas();
        let info = store.info();
        let metrics = Arc::new(Metrics::new());
        let stop = Arc::new(AtomicBool::new(false));
        // The kinds the connected workers declared: kept by the broker, read by app.start
        // and /readyz.
        let declared = Arc::new(Mutex::new(Vec::new()));
        let metrics_addr = match config.metrics {
            Some(addr) => Some(metrics_http::serve(
                addr,
                metrics_http::Served {
                    metrics: Arc::clone(&metrics),
                    store: Arc::clone(&store),
                    readiness: health::Readiness::new(
                        Arc::clone(&store),
                        config.require_kinds.clone(),
                        Arc::clone(&declared),
                        Arc::clone(&stop),
                    ),
                },
            )?),
            None => None,
        };
        let ctx = zmq::Context::new();
        let broker = broker::Broker::new(
            config.clone(),
            store,
            metrics,
            Arc::clone(&stop),
            declared,
            &ctx,
        )?;
        tracing::info!(
            bind = %config.bind,
            workers_bind = %config.workers_bind,
            store = %info.address,
            role = %info.role,
            queue = config.queue,
            threads = config.threads,
            metrics = ?metrics_addr,
            "keyroute serve started"
        );
        let thread = std::thread::Builder::new()
            .name("broker".into())
            .spawn(move || {
                let out = broker.run();
                drop(ctx);
                out
            })
            .map_err(|e| ServeError::Io("broker thread".into(), e))?;
        Ok(Service {
            stop,
            thread,
            metrics_addr,
        })
    }

    /// Asks the service to stop (as SIGTERM does): refuse new requests, drain, answer
    /// what is left at the grace deadline.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// The stop flag, for signal handlers.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// Where the metrics listener is bound.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// Waits until the broker has stopped.
    ///
    /// # Errors
    /// A fatal ZeroMQ error of the broker.
    pub fn wait(self) -> Result<(), ServeError> {
        self.thread
            .join()
            .unwrap_or_else(|_| Err(ServeError::Config("the broker thread panicked".into())))
    }
}

/// With glibc, every thread that allocates may get its own malloc arena (up to 8 per
/// core); with a hundred threads handing buffers to each other the arenas fragment and
/// RSS creeps up under a steady load (measured: +35 MB in 25 s of refused requests; +8 MB
/// with two arenas). One
/// arena keeps it flat (the broker and the threads hardly contend on malloc).
fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; M_ARENA_MAX takes any int.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

/// Runs the service until SIGTERM or SIGINT, then stops it gracefully.
///
/// # Errors
/// As [`Service::start`] and [`Service::wait`].
pub fn run(config: Config) -> Result<(), ServeError> {
    let service = Service::start(config)?;
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(sig, service.stop_flag())
            .map_err(|e| ServeError::Io("signal handler".into(), e))?;
    }
    service.wait()
}
