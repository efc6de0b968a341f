//! Cluster nodes as the slot map sees them: id, address, role, replicas, health.
use alloc::{string::String, vec::Vec};
use core::fmt;

use super::Address;

/// A node's position in one [`SlotMap`](super::SlotMap). Indexes are dense (`0..n` in the
/// order nodes were added) and stay valid while that map lives; a map rebuilt from a
/// refresh numbers its nodes afresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct NodeIndex(pub(crate) u16);

impl NodeIndex {
    /// The index as a `usize`, e.g. into [`SlotMap::nodes`](super::SlotMap::nodes).
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotMap};
    ///
    /// let mut map = SlotMap::new();
    /// let a = map.add_master("a", Address::new("h", 1))?;
    /// assert_eq!(a.get(), 0);
    /// assert_eq!(map.nodes()[a.get()].id(), "a");
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    #[must_use]
    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl fmt::Display for NodeIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Whether a node serves slots or replicates one that does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Role {
    /// Serves writes for its slots (Redis says "master"; also "primary").
    Master,
    /// Replicates a master.
    Replica,
}

impl Role {
    /// The role from the text Redis uses (`master`/`primary`, `replica`/`slave`),
    /// ASCII case-insensitively.
    ///
    /// ```
    /// use keyroute::slot::Role;
    ///
    /// assert_eq!(Role::from_redis("master"), Some(Role::Master));
    /// assert_eq!(Role::from_redis("slave"), Some(Role::Replica));
    /// assert_eq!(Role::from_redis("arbiter"), None);
    /// ```
    #[must_use]
    pub fn from_redis(s: &str) -> Option<Self> {
        if s.eq_ignore_ascii_case("master") || s.eq_ignore_ascii_case("primary") {
            Some(Self::Master)
        } else if s.eq_ignore_ascii_case("replica") || s.eq_ignore_ascii_case("slave") {
            Some(Self::Replica)
        } else {
            None
        }
    }
}

impl Role {
    /// The name every binding shows: `"master"` or `"replica"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Master => "master",
            Self::Replica => "replica",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A node's health as `CLUSTER SHARDS` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Health {
    /// Serving.
    Online,
    /// Loading its dataset (replica syncing, restart): do not read from it yet.
    Loading,
    /// Marked failed by the cluster.
    Failed,
    /// Not reported (learned from `CLUSTER SLOTS` or a `MOVED`).
    Unknown,
}

impl Health {
    /// The health from `CLUSTER SHARDS` text (`online`, `loading`, `failed`); anything
    /// else is [`Health::Unknown`].
    ///
    /// ```
    /// use keyroute::slot::Health;
    ///
    /// assert_eq!(Health::from_redis("online"), Health::Online);
    /// assert_eq!(Health::from_redis("?"), Health::Unknown);
    /// ```
    #[must_use]
    pub fn from_redis(s: &str) -> Self {
        if s.eq_ignore_ascii_case("online") {
            Self::Online
        } else if s.eq_ignore_ascii_case("loading") {
            Self::Loading
        } else if s.eq_ignore_ascii_case("failed") || s.eq_ignore_ascii_case("fail") {
            Self::Failed
        } else {
            Self::Unknown
        }
    }
}

impl Health {
    /// The name every binding shows: `"online"`, `"loading"`, `"failed"` or `"unknown"`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Online => "online",
            Self::Loading => "loading",
            Self::Failed => "failed",
            Self::Unknown => "unknown",
        }
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One cluster node. Built and kept consistent by [`SlotMap`](super::SlotMap) (a
/// replica's master lists it among its replicas, and the reverse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub(crate) id: String,
    pub(crate) addr: Address,
    pub(crate) role: Role,
    pub(crate) master: Option<NodeIndex>,
    pub(crate) replicas: Vec<NodeIndex>,
    pub(crate) health: Health,
}

impl Node {
    /// The 40-hex-digit cluster node id, or `""` if unknown (a node learned from a
    /// `MOVED`, or from `CLUSTER SLOTS` of a Redis older than 4.0).
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Where to connect.
    #[must_use]
    pub fn addr(&self) -> &Address {
        &self.addr
    }

    /// Master or replica.
    #[must_use]
    pub fn role(&self) -> Role {
        self.role
    }

    /// For a replica, the master it replicates (if known).
    #[must_use]
    pub fn master(&self) -> Option<NodeIndex> {
        self.master
    }

    /// For a master, its replicas.
    #[must_use]
    pub fn replicas(&self) -> &[NodeIndex] {
        &self.replicas
    }

    /// Health as last reported.
    #[must_use]
    pub fn health(&self) -> Health {
        self.health
    }

    /// A short human name: the id if known, else the address.
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotMap};
    ///
    /// let mut map = SlotMap::new();
    /// let a = map.add_master("", Address::new("10.0.0.1", 7000))?;
    /// assert_eq!(map[a].name(), "10.0.0.1:7000");
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    #[must_use]
    pub fn name(&self) -> alloc::borrow::Cow<'_, str> {
        if self.id.is_empty() {
            // Not `to_string()`: its `expect` (writing to a String cannot fail) would bring
            // panic formatting into small builds.
            let mut name = alloc::string::String::new();
            let _ = fmt::Write::write_fmt(&mut name, format_args!("{}", self.addr));
            alloc::borrow::Cow::Owned(name)
        } else {
            alloc::borrow::Cow::Borrowed(&self.id)
        }
    }
}
