//! Native Redis (feature `redis`): least-used pools and leases run as scripts with
//! EVALSHA, a client sharded by a [`Ring`](crate::ring::Ring), and Redis Cluster routing
//! and resharding over the core [`slot`](crate::slot) model.

pub mod error;
pub mod leases;
pub mod least_used;

pub use error::{Error, Result};
pub use leases::{Lease, Leases, Release};
pub use least_used::{connect, LeastUsed, Reconnecting, Timeouts};
pub mod cluster;
pub mod reshard;
pub mod sharded;
pub mod topology;
