//! keyroute on real Redis: the scripts and cluster operations of the `keyroute` core,
//! run with the `redis` crate (sync API).
//!
//! * [`LeastUsed`] and [`Leases`]: least-used and least-concurrency selection, each
//!   operation one atomic script (`EVALSHA`, loading the text on `NOSCRIPT`);
//! * [`cluster`]: a Redis Cluster client routing by slot over the core slot map
//!   (`MOVED`/`ASK`, refreshes), and live resharding of a core plan;
//! * [`sharded`]: a client over standalone nodes routed by a core ring, with live
//!   rebalancing;
//! * [`connect`], [`Reconnecting`], [`Timeouts`]: bounded connections, passwords
//!   redacted in every message ([`redact`]);
//! * [`Link`]: a standalone server or a Redis Cluster behind one connection type.
//!
//! Every failure is an [`Error`] with a stable [`code`](Error::code), the same code the
//! Python, JavaScript and C bindings show.
//!
//! ```no_run
//! use keyroute_redis::{connect, LeastUsed, Timeouts};
//! let mut con = connect("redis://127.0.0.1:6379", Timeouts::default())?;
//! let pool = LeastUsed::new("{jobs}:proxies")?;
//! pool.seed(&mut con, ["proxy-1", "proxy-2"], 0, false)?;
//! if let Some(proxy) = pool.pick(&mut con)? {
//!     println!("next job goes to {}", String::from_utf8_lossy(&proxy));
//! }
//! # Ok::<(), keyroute_redis::Error>(())
//! ```

pub mod affinity;
pub mod cache;
pub mod cluster;
mod conn;
mod error;
pub mod leases;
pub mod least_used;
mod link;
#[cfg(feature = "mux")]
mod mux;
mod script;
pub mod sharded;

/// The `redis` crate this one is built on: its `ConnectionLike` is what every call takes.
pub use ::redis;
pub use affinity::{Affinity, Taken};
pub use conn::{
    command_key, connect, open_addr, parse_seed, redact, split_seeds, with_tls_files, Direct,
    Endpoint, Place, Reconnecting, Timeouts,
};
pub use error::{Error, Result};
pub use leases::{Lease, Leases, Now, Release};
pub use least_used::{LeastUsed, PICK_BATCH};
pub use link::Link;
#[cfg(feature = "mux")]
pub use mux::Multiplexed;
