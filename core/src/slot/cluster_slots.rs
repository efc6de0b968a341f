//! Building a slot map from the reply of `CLUSTER SLOTS` (deprecated since Redis 7.0,
//! still the only choice before it).
//!
//! The wire parsing lives with the network code; these plain structs mirror the reply.
use alloc::{string::String, vec::Vec};

use super::{Address, MapError, Role, SlotMap};

/// One entry of a `CLUSTER SLOTS` reply: a slot range, its master, its replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotsEntry {
    /// First slot of the range.
    pub start: u16,
    /// Last slot of the range (inclusive).
    pub end: u16,
    /// The master serving the range.
    pub master: SlotsNode,
    /// Its replicas.
    pub replicas: Vec<SlotsNode>,
}

/// A node in a [`SlotsEntry`]: `[endpoint, port, id, {metadata}]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotsNode {
    /// The preferred endpoint: an IP by default; `?` when unknown; empty when the client
    /// should reuse the host it is connected to.
    pub endpoint: String,
    /// The port.
    pub port: u16,
    /// The node id (Redis 4.0+); empty if the server did not send one.
    pub id: String,
    /// Metadata `ip` (Redis 7.0+, when the endpoint is not the IP).
    pub ip: Option<String>,
    /// Metadata `hostname` (Redis 7.0+, when announced and not the endpoint).
    pub hostname: Option<String>,
}

impl SlotsNode {
    /// The address to connect to: the endpoint, or when it is `?` the metadata `ip`, else
    /// `hostname` (else `?` stays, and connecting will fail visibly).
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotsNode};
    ///
    /// let n = SlotsNode { endpoint: "?".into(), port: 7000, id: String::new(),
    ///                     ip: Some("10.0.0.3".into()), hostname: None };
    /// assert_eq!(n.address(), Address::new("10.0.0.3", 7000));
    /// ```
    #[must_use]
    pub fn address(&self) -> Address {
        let host = if self.endpoint == "?" {
            self.ip
                .as_deref()
                .or(self.hostname.as_deref())
                .unwrap_or("?")
        } else {
            &self.endpoint
        };
        Address::new(host, self.port)
    }
}

impl SlotMap {
    /// Builds a map from a parsed `CLUSTER SLOTS` reply.
    ///
    /// Nodes are identified by id, or by address when the id is empty, and numbered in
    /// order of first appearance. Masters without slots do not appear in this reply
    /// (use `CLUSTER SHARDS` to see them). Health is [`Health::Unknown`](super::Health).
    ///
    /// # Errors
    /// [`MapError::SlotOwnedTwice`] when ranges of different masters overlap,
    /// [`MapError::BadRange`], and [`MapError::RoleConflict`] /
    /// [`MapError::AddressConflict`] when listings of one node disagree.
    ///
    /// ```
    /// use keyroute::slot::{SlotMap, SlotsEntry, SlotsNode};
    ///
    /// let node = |port: u16, id: &str| SlotsNode {
    ///     endpoint: "127.0.0.1".into(), port, id: id.into(), ip: None, hostname: None,
    /// };
    /// let reply = vec![
    ///     SlotsEntry { start: 0, end: 5460, master: node(7000, "a"), replicas: vec![node(7003, "a1")] },
    ///     SlotsEntry { start: 5461, end: 16383, master: node(7001, "b"), replicas: vec![] },
    /// ];
    /// let map = SlotMap::from_slots(&reply)?;
    /// assert!(map.is_complete());
    /// assert_eq!(map.node_for_key(b"foo").map(|n| n.id()), Some("b"));
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    pub fn from_slots(entries: &[SlotsEntry]) -> Result<Self, MapError> {
        let mut map = Self::new();
        for entry in entries {
            let m = &entry.master;
            let master = map.intern(&m.id, m.address(), Role::Master, None)?;
            for r in &entry.replicas {
                map.intern(&r.id, r.address(), Role::Replica, Some(master))?;
            }
            map.claim(entry.start, entry.end, master)?;
        }
        Ok(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn node(port: u16, id: &str) -> SlotsNode {
        SlotsNode {
            endpoint: "h".into(),
            port,
            id: id.into(),
            ip: None,
            hostname: None,
        }
    }

    #[test]
    fn same_master_in_several_entries() {
        let reply = [
            SlotsEntry {
                start: 0,
                end: 9,
                master: node(1, ""),
                replicas: vec![node(2, "")],
            },
            SlotsEntry {
                start: 20,
                end: 29,
                master: node(1, ""),
                replicas: vec![node(2, "")],
            },
        ];
        let map = SlotMap::from_slots(&reply).expect("valid");
        assert_eq!(map.nodes().len(), 2);
        assert_eq!(map.slot_counts(), [20, 0]);
    }

    #[test]
    fn conflicts() {
        let role = [
            SlotsEntry {
                start: 0,
                end: 9,
                master: node(1, "a"),
                replicas: vec![node(2, "b")],
            },
            SlotsEntry {
                start: 10,
                end: 19,
                master: node(2, "b"),
                replicas: vec![],
            },
        ];
        assert!(matches!(
            SlotMap::from_slots(&role),
            Err(MapError::RoleConflict(_))
        ));
        let moved = [
            SlotsEntry {
                start: 0,
                end: 9,
                master: node(1, "a"),
                replicas: vec![],
            },
            SlotsEntry {
                start: 10,
                end: 19,
                master: node(3, "a"),
                replicas: vec![],
            },
        ];
        assert!(matches!(
            SlotMap::from_slots(&moved),
            Err(MapError::AddressConflict { .. })
        ));
        let reversed = [SlotsEntry {
            start: 9,
            end: 0,
            master: node(1, "a"),
            replicas: vec![],
        }];
        assert_eq!(
            SlotMap::from_slots(&reversed),
            Err(MapError::BadRange { start: 9, end: 0 })
        );
    }
}
