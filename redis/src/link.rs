//! [`Link`]: one standalone server ([`Reconnecting`]) or a Redis Cluster
//! ([`ClusterClient`]) behind one [`ConnectionLike`], so that every entrance (the CLI,
//! the Python and C bindings) opens either with the same code and reports a failure with
//! the same error and code.

use redis::{ConnectionLike, RedisResult, Value};

use crate::cluster::{ClusterClient, ClusterConfig};
use crate::conn::{Reconnecting, Timeouts};
use crate::error::Error;

/// A standalone server, or a Redis Cluster: what [`LeastUsed`](crate::LeastUsed) and
/// [`Leases`](crate::Leases) run on at every entrance that takes either.
///
/// Neither kind opens anything when made: the first call (or
/// [`ensure_connected`](Self::ensure_connected)) connects or fetches the topology, and a
/// server or cluster that is down gives errors until it is up, then works without a new
/// `Link`. On a cluster, calls follow `MOVED`/`ASK`, retry `TRYAGAIN`/`CLUSTERDOWN`
/// (commands that did not run) and find the new master after a failover; a request that
/// may have run is never resent, on either kind.
///
/// ```
/// use std::time::Duration;
/// use keyroute_redis::{Link, LeastUsed, Timeouts};
/// let t = Timeouts::uniform(Duration::from_millis(200));
/// let mut cluster = Link::cluster(&["127.0.0.1:1", "redis://127.0.0.1:2"], t, false)?;
/// assert!(cluster.is_cluster());
/// let pool = LeastUsed::new("{p}:pool")?;
/// let err = pool.pick(&mut cluster).map_err(|e| cluster.explain(e)).unwrap_err();
/// assert_eq!(err.code().as_str(), "CLUSTER_UNREACHABLE");
/// let mut single = Link::single("redis://127.0.0.1:1", t)?;
/// assert_eq!(single.ensure_connected().unwrap_err().code().as_str(), "REDIS_CONNECT");
/// assert_eq!(Link::cluster(&[], t, false).unwrap_err().code().as_str(), "CLUSTER_UNREACHABLE");
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Debug)]
pub enum Link {
    /// One standalone server (a cluster node works for a pool whose slot it serves).
    Single(Box<Reconnecting>),
    /// A Redis Cluster.
    Cluster(Box<ClusterClient>),
}

impl Link {
    /// A standalone server at `url` (`redis://[[user]:password@]host:port[/db]` or
    /// `host:port`); only the URL is checked now.
    ///
    /// # Errors
    /// A bad URL ([`Error::BadUrl`]).
    pub fn single(url: &str, timeouts: Timeouts) -> Result<Self, Error> {
        Ok(Link::Single(Box::new(Reconnecting::new(url, timeouts)?)))
    }

    /// A Redis Cluster from its `seeds` (any nodes of it, `host:port` or
    /// `redis://host:port`); only the seeds are checked now. With `read_from_replicas`,
    /// read-only commands go to a replica of the slot's master (`READONLY`).
    ///
    /// # Errors
    /// A bad seed ([`Error::BadUrl`]), or no seed ([`Error::NoReachableNode`]).
    pub fn cluster(
        seeds: &[&str],
        timeouts: Timeouts,
        read_from_replicas: bool,
    ) -> Result<Self, Error> {
        let config = ClusterConfig {
            connect_timeout: timeouts.connect,
            io_timeout: timeouts.io,
            read_from_replicas,
            ..ClusterConfig::default()
        };
        Ok(Link::Cluster(Box::new(ClusterClient::lazy(seeds, config)?)))
    }

    /// Whether this is a cluster.
    #[must_use]
    pub fn is_cluster(&self) -> bool {
        matches!(self, Link::Cluster(_))
    }

    /// Connects now (a standalone server), or fetches the topology now (a cluster).
    ///
    /// # Errors
    /// The connect's error (a refused password is [`Error::Auth`]), or
    /// [`Error::NoReachableNode`] when no node of the cluster answered.
    pub fn ensure_connected(&mut self) -> Result<(), Error> {
        match self {
            Link::Single(con) => con.ensure_connected(),
            Link::Cluster(c) => c.refresh(),
        }
    }

    /// `err` from a call made on this link, or, when the call failed in the connect made
    /// on its behalf or in the cluster routing, that error with its own code (a refused
    /// password is `REDIS_AUTH`, no node reachable `CLUSTER_UNREACHABLE`).
    pub fn explain(&mut self, err: Error) -> Error {
        match self {
            Link::Single(con) => con.explain(err),
            Link::Cluster(c) => c.explain(err),
        }
    }

    fn con(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Link::Single(con) => con.as_mut(),
            Link::Cluster(c) => c.as_mut(),
        }
    }
}

impl ConnectionLike for Link {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.con().req_packed_command(cmd)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.con().req_packed_commands(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Single(con) => con.get_db(),
            Link::Cluster(c) => c.get_db(),
        }
    }

    fn supports_pipelining(&self) -> bool {
        match self {
            Link::Single(con) => con.supports_pipelining(),
            Link::Cluster(c) => c.supports_pipelining(),
        }
    }

    fn check_connection(&mut self) -> bool {
        self.con().check_connection()
    }

    fn is_open(&self) -> bool {
        match self {
            Link::Single(con) => con.is_open(),
            Link::Cluster(c) => c.is_open(),
        }
    }
}
