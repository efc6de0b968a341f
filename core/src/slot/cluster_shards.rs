//! Building a slot map from the reply of `CLUSTER SHARDS` (Redis 7.0+).
//!
//! The wire parsing lives with the network code; these plain structs mirror the reply so
//! that any parser (RESP2 or RESP3, any language binding) can feed the same builder.
use alloc::{string::String, vec::Vec};

use super::{Address, Health, MapError, Role, SlotMap};

/// One shard of a `CLUSTER SHARDS` reply: the slots it serves and its nodes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Shard {
    /// The `slots` field, paired up: inclusive `(start, end)` ranges.
    pub slots: Vec<(u16, u16)>,
    /// The `nodes` field: the master and its replicas.
    pub nodes: Vec<ShardNode>,
}

/// One node of a [`Shard`], with the fields of its `CLUSTER SHARDS` map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardNode {
    /// `id`: the 40-hex-digit node id.
    pub id: String,
    /// `port` (absent when only TLS is served).
    pub port: Option<u16>,
    /// `tls-port` (present when TLS is configured).
    pub tls_port: Option<u16>,
    /// `ip`.
    pub ip: String,
    /// `endpoint`: the preferred endpoint (`cluster-preferred-endpoint-type`); `?` when
    /// unknown, empty when the client should reuse the host it is connected to.
    pub endpoint: String,
    /// `hostname`, if the node announces one.
    pub hostname: Option<String>,
    /// `role`: master or replica.
    pub role: Role,
    /// `replication-offset`.
    pub replication_offset: u64,
    /// `health`: online, failed or loading.
    pub health: Health,
}

impl ShardNode {
    /// The address a client should connect to: `endpoint` (or `ip` when the endpoint is
    /// `?`, i.e. unknown) and `port` (or `tls-port` when there is no plain port).
    ///
    /// ```
    /// use keyroute::slot::{Address, Health, Role, ShardNode};
    ///
    /// let n = ShardNode {
    ///     id: "e1f2".into(), port: Some(7000), tls_port: None, ip: "10.0.0.1".into(),
    ///     endpoint: "?".into(), hostname: None, role: Role::Master,
    ///     replication_offset: 0, health: Health::Online,
    /// };
    /// assert_eq!(n.address(), Some(Address::new("10.0.0.1", 7000)));
    /// ```
    #[must_use]
    pub fn address(&self) -> Option<Address> {
        let port = self.port.or(self.tls_port)?;
        let host = if self.endpoint == "?" {
            &self.ip
        } else {
            &self.endpoint
        };
        Some(Address::new(host.as_str(), port))
    }
}

impl SlotMap {
    /// Builds a map from a parsed `CLUSTER SHARDS` reply.
    ///
    /// Nodes are numbered in reply order, each shard's master first, then its replicas.
    /// Addresses come from [`ShardNode::address`]. A shard with nodes but no slots
    /// (a new, empty master) is kept.
    ///
    /// # Errors
    /// [`MapError::ShardWithoutMaster`] / [`MapError::ShardWithSeveralMasters`],
    /// [`MapError::SlotOwnedTwice`] when shards overlap, [`MapError::BadRange`],
    /// [`MapError::MissingPort`], and conflicts between listings of one node id.
    ///
    /// ```
    /// use keyroute::slot::{Health, Role, Shard, ShardNode, SlotMap};
    ///
    /// let node = |id: &str, port, role| ShardNode {
    ///     id: id.into(), port: Some(port), tls_port: None, ip: "127.0.0.1".into(),
    ///     endpoint: "127.0.0.1".into(), hostname: None, role,
    ///     replication_offset: 0, health: Health::Online,
    /// };
    /// let reply = vec![
    ///     Shard { slots: vec![(0, 8191)], nodes: vec![node("a", 7000, Role::Master), node("a1", 7003, Role::Replica)] },
    ///     Shard { slots: vec![(8192, 16383)], nodes: vec![node("b", 7001, Role::Master)] },
    /// ];
    /// let map = SlotMap::from_shards(&reply)?;
    /// assert!(map.is_complete());
    /// assert_eq!(map.node_for_slot(100).map(|n| n.id()), Some("a"));
    /// let a = map.find_id("a").expect("listed");
    /// assert_eq!(map[a].replicas().len(), 1);
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    pub fn from_shards(shards: &[Shard]) -> Result<Self, MapError> {
        let mut map = Self::new();
        for (index, shard) in shards.iter().enumerate() {
            let mut masters = shard.nodes.iter().filter(|n| n.role == Role::Master);
            let master = match (masters.next(), masters.next()) {
                (Some(m), None) => m,
                (None, _) if shard.nodes.is_empty() && shard.slots.is_empty() => continue,
                (None, _) => return Err(MapError::ShardWithoutMaster { shard: index }),
                (Some(_), Some(_)) => {
                    return Err(MapError::ShardWithSeveralMasters { shard: index })
                }
            };
            let address = |n: &ShardNode| {
                n.address()
                    .ok_or_else(|| MapError::MissingPort(n.id.clone()))
            };
            let m = map.intern(&master.id, address(master)?, Role::Master, None)?;
            map.set_health(m, master.health)?;
            for replica in shard.nodes.iter().filter(|n| n.role == Role::Replica) {
                let r = map.intern(&replica.id, address(replica)?, Role::Replica, Some(m))?;
                map.set_health(r, replica.health)?;
            }
            for &(start, end) in &shard.slots {
                map.claim(start, end, m)?;
            }
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn node(id: &str, port: u16, role: Role) -> ShardNode {
        ShardNode {
            id: id.into(),
            port: Some(port),
            tls_port: None,
            ip: "10.0.0.1".into(),
            endpoint: "10.0.0.1".into(),
            hostname: None,
            role,
            replication_offset: 0,
            health: Health::Online,
        }
    }

    #[test]
    fn errors() {
        let no_master = [Shard {
            slots: vec![(0, 1)],
            nodes: vec![node("r", 1, Role::Replica)],
        }];
        assert_eq!(
            SlotMap::from_shards(&no_master),
            Err(MapError::ShardWithoutMaster { shard: 0 })
        );
        let two = [Shard {
            slots: vec![],
            nodes: vec![node("a", 1, Role::Master), node("b", 2, Role::Master)],
        }];
        assert_eq!(
            SlotMap::from_shards(&two),
            Err(MapError::ShardWithSeveralMasters { shard: 0 })
        );
        let overlap = [
            Shard {
                slots: vec![(0, 10)],
                nodes: vec![node("a", 1, Role::Master)],
            },
            Shard {
                slots: vec![(10, 20)],
                nodes: vec![node("b", 2, Role::Master)],
            },
        ];
        assert!(matches!(
            SlotMap::from_shards(&overlap),
            Err(MapError::SlotOwnedTwice { slot: 10, .. })
        ));
        let mut portless = node("a", 1, Role::Master);
        portless.port = None;
        let portless = [Shard {
            slots: vec![],
            nodes: vec![portless],
        }];
        assert_eq!(
            SlotMap::from_shards(&portless),
            Err(MapError::MissingPort("a".into()))
        );
        let bad_range = [Shard {
            slots: vec![(5, 16384)],
            nodes: vec![node("a", 1, Role::Master)],
        }];
        assert_eq!(
            SlotMap::from_shards(&bad_range),
            Err(MapError::BadRange {
                start: 5,
                end: 16384
            })
        );
    }

    #[test]
    fn empty_master_and_health() {
        let mut failed = node("a1", 3, Role::Replica);
        failed.health = Health::Failed;
        let shards = [
            Shard {
                slots: vec![(0, 16383)],
                nodes: vec![failed, node("a", 1, Role::Master)],
            },
            Shard {
                slots: vec![],
                nodes: vec![node("new", 2, Role::Master)],
            },
            Shard::default(),
        ];
        let map = SlotMap::from_shards(&shards).expect("valid");
        assert_eq!(map.nodes().len(), 3);
        let new = map.find_id("new").expect("kept");
        assert_eq!(map.slot_count(new), 0);
        let a1 = map.find_id("a1").expect("kept");
        assert_eq!(map[a1].health(), Health::Failed);
        assert_eq!(map[a1].master(), map.find_id("a"));
    }
}
