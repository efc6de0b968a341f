//! The smart cache on Redis, standalone or Cluster: [`SmartCache`] (entries loaded once
//! across every instance), [`Sessions`], [`Devices`], all on a shared [`Store`]. The
//! storage model, scripts and state models are in [`keyroute::cache`].
//!
//! # How a cold key is loaded once
//!
//! 1. In each process, concurrent callers of one key form a single flight: one leader
//!    talks to Redis, the others wait for its outcome.
//! 2. The leader runs `sc-get`. A hit returns the value. A lease (with a fence) makes it
//!    the loader: its loader runs in the calling thread while a heartbeat extends the
//!    lease every lease/3 (server time); then `sc-fill` stores the value if the fence is
//!    still current, bumps the version and publishes a wake-up.
//! 3. A leader told to wait subscribes to the client's channel (`SUBSCRIBE` standalone,
//!    `SSUBSCRIBE` on the node owning the slot on Cluster), re-checks, then sleeps until a
//!    wake-up names its entry or the poll timer (10 ms doubling to 200 ms, never past the
//!    lease or the deadline) fires.
//! 4. A holder that dies stops heartbeating; its lease expires and the next caller takes
//!    over with a higher fence. A holder that was only paused finds its fill fenced.
//! 5. A loader error is cached for the negative TTL (`sc-abandon`): waiters get it at
//!    once instead of calling the backend again.
//!
//! # Guarantees, and failover
//!
//! The fence promises **no stale overwrite**: a fill from a lease that was taken over or
//! invalidated is rejected, whatever the timing. It does not promise exactly one loader
//! during a partition or right after a failover (the backend may see a second call). To
//! narrow that window, run the masters with `min-replicas-to-write 1` (a master cut off
//! from its replicas refuses the grant). A client of the scripts can also send
//! `WAIT 1 <ms>` on the grant's connection so the lease survives a failover; `SmartCache`
//! does not do that (yet). The fence (`max(f + 1, now_ms)`) stays monotonic even when a
//! failover lost the last increments, as long as the new master's clock is not behind by
//! more than the failover took.
//!
//! On Cluster, a call's Redis round trips are bounded by the [`ClusterConfig`]
//! (`io_timeout`, `max_attempts`, back-offs), not by the call's deadline: keep those small
//! when deadlines are tight.
//!
//! [`ClusterConfig`]: crate::cluster::ClusterConfig
//!
//! Nothing is started by linking this crate: a [`Store`] opens its connections (and loads
//! the scripts) when it is made, and a heartbeat thread lives only while a loader runs.
//!
//! ```no_run
//! use std::time::{Duration, Instant};
//! use keyroute_redis::cache::{CacheConfig, Devices, LoadError, SessionConfig, Sessions, SmartCache, Store};
//!
//! let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
//! let cache = SmartCache::new(store.clone(), CacheConfig::default())?;
//! let sessions = Sessions::new(store.clone(), SessionConfig::default())?;
//! let devices = Devices::new(store);
//!
//! let deadline = Instant::now() + Duration::from_secs(5);
//! let cards = cache.get_or_load("client-42", "cards", deadline, || Ok::<_, LoadError>(b"[]".to_vec()))?;
//! let report = cache.warm("ios-7F3A", &["accounts", "cards"], |client, kind| Ok(b"[]".to_vec()))?;
//! # Ok::<(), keyroute_redis::Error>(())
//! ```

mod config;
mod devices;
pub(crate) mod exec;
mod flight;
mod load_error;
mod random;
mod resp;
mod resp_conn;
mod sessions;
mod smart;
mod stats;
mod store;
mod wakeup;
mod warm;

pub use config::CacheConfig;
pub use devices::Devices;
pub use exec::{eval, evalsha};
pub use load_error::LoadError;
pub use sessions::{NewSession, SessionConfig, Sessions};
pub use smart::{SmartCache, MAX_FENCED_LOADS};
pub use stats::Stats;
pub use store::{eval_cluster, Store};
pub use warm::WarmReport;
