//! Redis Cluster: a client routing single-key commands by slot ([`ClusterClient`]),
//! fetching the topology into the core slot map ([`topology`]), and executing resharding
//! plans on the live cluster ([`reshard`]).

mod client;
pub mod reshard;
pub mod topology;

#[cfg(feature = "mux")]
pub(crate) use client::split_packed;
pub use client::{is_read_command, ClusterClient, ClusterConfig, ClusterStats};
pub use reshard::{execute_plan, Progress, ReshardOptions, ReshardReport};
pub use topology::{fetch_topology, fetch_topology_from, TopologySource};
