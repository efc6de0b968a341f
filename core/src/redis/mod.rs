//! Native Redis (feature `redis`): least-used pools and leases run as scripts with
//! EVALSHA, a client sharded by a [`Ring`](crate::ring::Ring), and Redis Cluster routing
//! and resharding over the core [`slot`](crate::slot) model.
