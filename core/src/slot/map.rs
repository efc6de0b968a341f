//! The slot map: which node owns each of the 16384 slots, and the nodes themselves.
use alloc::{string::String, vec, vec::Vec};
use core::{fmt, ops::RangeInclusive};

use crate::error::{write_all, ErrorCode, Quoted};

use super::{key_slot, Address, AddressError, Health, Node, NodeIndex, Role, SLOT_COUNT};

/// Marks an unowned slot in the owner table.
const NO_OWNER: u16 = u16::MAX;
/// Node indexes are `u16` and `u16::MAX` marks "no owner".
const MAX_NODES: usize = NO_OWNER as usize;

/// The routing table of a Redis Cluster: each of the 16384 slots → the master serving it
/// (or nothing), plus every known node with its address, role, replicas and health.
///
/// Build it from `CLUSTER SHARDS` ([`SlotMap::from_shards`]) or `CLUSTER SLOTS`
/// ([`SlotMap::from_slots`]), or by hand; follow redirections with
/// [`apply_redirect`](SlotMap::apply_redirect); plan resharding with
/// [`Plan::new`](super::Plan::new).
///
/// ```
/// use keyroute::slot::{Address, SlotMap};
///
/// let mut map = SlotMap::new();
/// let a = map.add_master("a", Address::new("10.0.0.1", 7000))?;
/// let b = map.add_master("b", Address::new("10.0.0.2", 7000))?;
/// map.assign(0..=8191, a)?;
/// map.assign(8192..=16383, b)?;
/// assert_eq!(map.node_for_key(b"foo").map(|n| n.id()), Some("b")); // slot 12182
/// assert_eq!(map.slot_count(a), 8192);
/// assert!(map.is_complete());
/// # Ok::<(), keyroute::slot::MapError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct SlotMap {
    pub(crate) nodes: Vec<Node>,
    /// `owners[slot]` = node index, or [`NO_OWNER`]. Always `SLOT_COUNT` long.
    pub(crate) owners: Vec<u16>,
}

impl Default for SlotMap {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for SlotMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotMap")
            .field("nodes", &self.nodes)
            .field("ranges", &self.ranges().collect::<Vec<_>>())
            .finish()
    }
}

/// A run of consecutive slots with the same owner, from [`SlotMap::ranges`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SlotRange {
    /// First slot of the run.
    pub start: u16,
    /// Last slot of the run (inclusive).
    pub end: u16,
    /// Owner of every slot in the run, `None` if unassigned.
    pub owner: Option<NodeIndex>,
}

impl SlotRange {
    /// Number of slots in the run (`end - start + 1`).
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.end) - usize::from(self.start) + 1
    }

    /// Always `false`: a range holds at least one slot.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl SlotMap {
    /// An empty map: no nodes, every slot unassigned.
    #[must_use]
    pub fn new() -> Self {
        Self {
            nodes: Vec::new(),
            owners: vec![NO_OWNER; usize::from(SLOT_COUNT)],
        }
    }

    /// Adds a master (with no slots yet) and returns its index.
    ///
    /// `id` is the cluster node id, or `""` if unknown.
    ///
    /// # Errors
    /// [`MapError::BadAddress`] for an empty host or port 0; [`MapError::DuplicateId`]
    /// if a node with that non-empty id exists; [`MapError::TooManyNodes`] past 65535
    /// nodes.
    ///
    /// ```
    /// use keyroute::slot::{Address, MapError, SlotMap};
    ///
    /// let mut map = SlotMap::new();
    /// map.add_master("a", Address::new("h", 1))?;
    /// assert!(matches!(map.add_master("a", Address::new("h", 2)), Err(MapError::DuplicateId(_))));
    /// assert!(matches!(map.add_master("b", Address::new("", 7000)), Err(MapError::BadAddress(_))));
    /// # Ok::<(), MapError>(())
    /// ```
    pub fn add_master(&mut self, id: &str, addr: Address) -> Result<NodeIndex, MapError> {
        check_address(&addr)?;
        self.push(id, addr, Role::Master, None)
    }

    /// Adds a replica of `master` and returns its index.
    ///
    /// # Errors
    /// As [`add_master`](Self::add_master), plus [`MapError::UnknownNode`] /
    /// [`MapError::NotAMaster`] if `master` is not a master of this map.
    ///
    /// ```
    /// use keyroute::slot::{Address, Role, SlotMap};
    ///
    /// let mut map = SlotMap::new();
    /// let m = map.add_master("m", Address::new("h", 1))?;
    /// let r = map.add_replica(m, "r", Address::new("h", 2))?;
    /// assert_eq!(map[m].replicas(), &[r]);
    /// assert_eq!((map[r].role(), map[r].master()), (Role::Replica, Some(m)));
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    pub fn add_replica(
        &mut self,
        master: NodeIndex,
        id: &str,
        addr: Address,
    ) -> Result<NodeIndex, MapError> {
        self.check_master(master)?;
        check_address(&addr)?;
        self.push(id, addr, Role::Replica, Some(master))
    }

    pub(crate) fn push(
        &mut self,
        id: &str,
        addr: Address,
        role: Role,
        master: Option<NodeIndex>,
    ) -> Result<NodeIndex, MapError> {
        if !id.is_empty() && self.find_id(id).is_some() {
            return Err(MapError::DuplicateId(String::from(id)));
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(MapError::TooManyNodes);
        }
        let index = NodeIndex(self.nodes.len() as u16);
        self.nodes.push(Node {
            id: String::from(id),
            addr,
            role,
            master,
            replicas: Vec::new(),
            health: Health::Unknown,
        });
        if let Some(m) = master {
            self.nodes[m.get()].replicas.push(index);
        }
        Ok(index)
    }

    /// Sets a node's health.
    ///
    /// # Errors
    /// [`MapError::UnknownNode`] if `node` is not from this map.
    pub fn set_health(&mut self, node: NodeIndex, health: Health) -> Result<(), MapError> {
        self.nodes
            .get_mut(node.get())
            .ok_or(MapError::UnknownNode(node))?
            .health = health;
        Ok(())
    }

    /// Gives the slots `slots` (inclusive) to the master `node`, whoever owned them.
    ///
    /// # Errors
    /// [`MapError::BadRange`] unless `start <= end <= 16383`; [`MapError::UnknownNode`] /
    /// [`MapError::NotAMaster`] for a bad `node`. Nothing changes on error.
    pub fn assign(&mut self, slots: RangeInclusive<u16>, node: NodeIndex) -> Result<(), MapError> {
        check_range(&slots)?;
        self.check_master(node)?;
        self.owners[usize::from(*slots.start())..=usize::from(*slots.end())].fill(node.0);
        Ok(())
    }

    /// Makes the slots `slots` (inclusive) unowned.
    ///
    /// # Errors
    /// [`MapError::BadRange`] unless `start <= end <= 16383`.
    pub fn unassign(&mut self, slots: RangeInclusive<u16>) -> Result<(), MapError> {
        check_range(&slots)?;
        self.owners[usize::from(*slots.start())..=usize::from(*slots.end())].fill(NO_OWNER);
        Ok(())
    }

    pub(crate) fn check_master(&self, node: NodeIndex) -> Result<(), MapError> {
        match self.nodes.get(node.get()) {
            None => Err(MapError::UnknownNode(node)),
            Some(n) if n.role != Role::Master => Err(MapError::NotAMaster(node)),
            Some(_) => Ok(()),
        }
    }

    /// Sets one slot's owner; `slot < SLOT_COUNT` and `node` valid are the caller's duty.
    pub(crate) fn set_owner(&mut self, slot: u16, node: Option<NodeIndex>) {
        if let Some(o) = self.owners.get_mut(usize::from(slot)) {
            *o = node.map_or(NO_OWNER, |n| n.0);
        }
    }

    /// Finds the node a reply lists (by id, or by address when the id is unknown) or adds
    /// it, checking that every listing agrees on address, role and master.
    pub(crate) fn intern(
        &mut self,
        id: &str,
        addr: Address,
        role: Role,
        master: Option<NodeIndex>,
    ) -> Result<NodeIndex, MapError> {
        let existing = if id.is_empty() {
            self.iter()
                .find(|(_, n)| n.id.is_empty() && n.addr == addr)
                .map(|(i, _)| i)
        } else {
            self.find_id(id)
        };
        let Some(index) = existing else {
            return self.push(id, addr, role, master);
        };
        let n = &self.nodes[index.get()];
        if n.addr != addr {
            return Err(MapError::AddressConflict {
                id: String::from(id),
                first: n.addr.clone(),
                second: addr,
            });
        }
        if n.role != role || n.master != master {
            return Err(MapError::RoleConflict(n.name().into_owned()));
        }
        Ok(index)
    }

    /// Assigns a range from a reply: a slot already given to another master is an error.
    pub(crate) fn claim(&mut self, start: u16, end: u16, node: NodeIndex) -> Result<(), MapError> {
        check_range(&(start..=end))?;
        for slot in start..=end {
            let o = &mut self.owners[usize::from(slot)];
            if *o != NO_OWNER && *o != node.0 {
                let first = self.nodes[usize::from(*o)].name().into_owned();
                return Err(MapError::SlotOwnedTwice {
                    slot,
                    first,
                    second: self.nodes[node.get()].name().into_owned(),
                });
            }
            *o = node.0;
        }
        Ok(())
    }

    /// Turns a replica into a master (after a failover), detaching it from its old master.
    pub(crate) fn promote(&mut self, node: NodeIndex) {
        let Some(n) = self.nodes.get_mut(node.get()) else {
            return;
        };
        if n.role == Role::Master {
            return;
        }
        n.role = Role::Master;
        if let Some(old) = n.master.take() {
            if let Some(m) = self.nodes.get_mut(old.get()) {
                m.replicas.retain(|&r| r != node);
            }
        }
    }

    /// The master owning `slot`, `None` if unassigned or `slot >= 16384`.
    #[must_use]
    pub fn owner(&self, slot: u16) -> Option<NodeIndex> {
        match self.owners.get(usize::from(slot)) {
            Some(&o) if o != NO_OWNER => Some(NodeIndex(o)),
            _ => None,
        }
    }

    /// The master owning `key`'s slot.
    #[must_use]
    pub fn owner_of_key(&self, key: &[u8]) -> Option<NodeIndex> {
        self.owner(key_slot(key))
    }

    /// The node with index `node`, `None` if it is not from this map.
    #[must_use]
    pub fn node(&self, node: NodeIndex) -> Option<&Node> {
        self.nodes.get(node.get())
    }

    /// The master owning `slot`.
    #[must_use]
    pub fn node_for_slot(&self, slot: u16) -> Option<&Node> {
        self.owner(slot).and_then(|n| self.node(n))
    }

    /// The master owning `key`'s slot.
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotMap};
    ///
    /// let mut map = SlotMap::new();
    /// let a = map.add_master("a", Address::new("h", 1))?;
    /// map.assign(12182..=12182, a)?;
    /// assert_eq!(map.node_for_key(b"foo").map(|n| n.id()), Some("a"));
    /// assert!(map.node_for_key(b"bar").is_none());
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    #[must_use]
    pub fn node_for_key(&self, key: &[u8]) -> Option<&Node> {
        self.node_for_slot(key_slot(key))
    }

    /// Every node, indexed by [`NodeIndex::get`].
    #[must_use]
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The [`NodeIndex`] of `nodes()[i]`, if there is such a node (for bindings that hand
    /// plain integers across).
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotMap};
    /// let mut map = SlotMap::new();
    /// let a = map.add_master("a", Address::new("h", 1))?;
    /// assert_eq!(map.node_index(0), Some(a));
    /// assert_eq!(map.node_index(1), None);
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    #[must_use]
    pub fn node_index(&self, i: usize) -> Option<NodeIndex> {
        (i < self.nodes.len()).then_some(NodeIndex(i as u16))
    }

    /// Every node with its index.
    pub fn iter(&self) -> impl Iterator<Item = (NodeIndex, &Node)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (NodeIndex(i as u16), n))
    }

    /// Every master with its index.
    pub fn masters(&self) -> impl Iterator<Item = (NodeIndex, &Node)> + '_ {
        self.iter().filter(|(_, n)| n.role == Role::Master)
    }

    /// The node with cluster id `id` (non-empty).
    #[must_use]
    pub fn find_id(&self, id: &str) -> Option<NodeIndex> {
        if id.is_empty() {
            return None;
        }
        self.iter().find(|(_, n)| n.id == id).map(|(i, _)| i)
    }

    /// The node at `host:port` (a master if several nodes claim the address).
    #[must_use]
    pub fn find_addr(&self, host: &str, port: u16) -> Option<NodeIndex> {
        let mut found = None;
        for (i, n) in self.iter() {
            if n.addr.port == port && n.addr.host == host {
                if n.role == Role::Master {
                    return Some(i);
                }
                found = found.or(Some(i));
            }
        }
        found
    }

    /// How many slots `node` owns (0 for an unknown node).
    #[must_use]
    pub fn slot_count(&self, node: NodeIndex) -> usize {
        self.owners.iter().filter(|&&o| o == node.0).count()
    }

    /// Slots owned per node, indexed by [`NodeIndex::get`].
    #[must_use]
    pub fn slot_counts(&self) -> Vec<usize> {
        let mut counts = vec![0usize; self.nodes.len()];
        for &o in &self.owners {
            if let Some(c) = counts.get_mut(usize::from(o)) {
                *c += 1;
            }
        }
        counts
    }

    /// Number of slots nobody owns.
    #[must_use]
    pub fn unassigned_count(&self) -> usize {
        self.owners.iter().filter(|&&o| o == NO_OWNER).count()
    }

    /// `true` if every slot has an owner (Redis's `cluster_state:ok` needs this).
    #[must_use]
    pub fn is_complete(&self) -> bool {
        self.owners.iter().all(|&o| o != NO_OWNER)
    }

    /// The whole slot space as runs of equal owner, in slot order (unassigned runs
    /// included, with `owner: None`).
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotMap, SlotRange};
    ///
    /// let mut map = SlotMap::new();
    /// let a = map.add_master("a", Address::new("h", 1))?;
    /// map.assign(100..=16383, a)?;
    /// let runs: Vec<SlotRange> = map.ranges().collect();
    /// assert_eq!(runs, [
    ///     SlotRange { start: 0, end: 99, owner: None },
    ///     SlotRange { start: 100, end: 16383, owner: Some(a) },
    /// ]);
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    pub fn ranges(&self) -> impl Iterator<Item = SlotRange> + '_ {
        let mut start = 0usize;
        core::iter::from_fn(move || {
            let first = *self.owners.get(start)?;
            let len = self.owners[start..]
                .iter()
                .position(|&o| o != first)
                .unwrap_or(self.owners.len() - start);
            let range = SlotRange {
                start: start as u16,
                end: (start + len - 1) as u16,
                owner: (first != NO_OWNER).then_some(NodeIndex(first)),
            };
            start += len;
            Some(range)
        })
    }

    /// The slot ranges `node` owns, in slot order.
    ///
    /// ```
    /// use keyroute::slot::{Address, SlotMap};
    ///
    /// let mut map = SlotMap::new();
    /// let a = map.add_master("a", Address::new("h", 1))?;
    /// map.assign(0..=9, a)?;
    /// map.assign(20..=20, a)?;
    /// assert_eq!(map.node_ranges(a).collect::<Vec<_>>(), [0..=9, 20..=20]);
    /// # Ok::<(), keyroute::slot::MapError>(())
    /// ```
    pub fn node_ranges(&self, node: NodeIndex) -> impl Iterator<Item = RangeInclusive<u16>> + '_ {
        self.ranges()
            .filter(move |r| r.owner == Some(node))
            .map(|r| r.start..=r.end)
    }
}

/// Returns the node; panics if `node` is not from this map (use [`SlotMap::node`] for a
/// checked lookup).
impl core::ops::Index<NodeIndex> for SlotMap {
    type Output = Node;
    fn index(&self, node: NodeIndex) -> &Node {
        &self.nodes[node.get()]
    }
}

pub(crate) fn check_range(slots: &RangeInclusive<u16>) -> Result<(), MapError> {
    let (start, end) = (*slots.start(), *slots.end());
    if start > end || end >= SLOT_COUNT {
        return Err(MapError::BadRange { start, end });
    }
    Ok(())
}

/// Why a slot map could not be built or changed. Nothing changes when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MapError {
    /// A slot range is reversed or reaches past 16383.
    BadRange {
        /// First slot given.
        start: u16,
        /// Last slot given.
        end: u16,
    },
    /// The node index is not from this map.
    UnknownNode(NodeIndex),
    /// Slots or replicas were given to a node that is a replica.
    NotAMaster(NodeIndex),
    /// Two nodes with the same cluster id.
    DuplicateId(String),
    /// More than 65535 nodes.
    TooManyNodes,
    /// A reply gives one slot to two different masters.
    SlotOwnedTwice {
        /// The slot.
        slot: u16,
        /// Name of the first owner seen.
        first: String,
        /// Name of the second owner seen.
        second: String,
    },
    /// A `CLUSTER SHARDS` shard has slots or replicas but no node with role master.
    ShardWithoutMaster {
        /// Position of the shard in the reply.
        shard: usize,
    },
    /// A `CLUSTER SHARDS` shard lists more than one master.
    ShardWithSeveralMasters {
        /// Position of the shard in the reply.
        shard: usize,
    },
    /// One node is listed as master and as replica, or as replica of two masters.
    RoleConflict(String),
    /// A `CLUSTER SHARDS` node has neither `port` nor `tls-port`.
    MissingPort(String),
    /// A node's address cannot be used (empty host, port 0).
    BadAddress(AddressError),
    /// One node id is listed with two addresses.
    AddressConflict {
        /// The node id.
        id: String,
        /// First address seen.
        first: Address,
        /// Second address seen.
        second: Address,
    },
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadRange { start, end } => write!(
                f,
                "slot range {start}-{end} is invalid; ranges are START-END with \
                 START <= END <= 16383"
            ),
            Self::UnknownNode(n) => write!(
                f,
                "node {n} is not in this slot map; use an index returned by this map"
            ),
            Self::NotAMaster(n) => write!(
                f,
                "node {n} is a replica; only masters own slots and have replicas"
            ),
            Self::DuplicateId(id) => write!(
                f,
                "node id {} is already in the slot map; node ids must be unique",
                Quoted(id)
            ),
            Self::TooManyNodes => f.write_str("a slot map holds at most 65535 nodes"),
            Self::SlotOwnedTwice {
                slot,
                first,
                second,
            } => {
                write!(f, "slot {slot} is claimed by both ")?;
                write_all(
                    f,
                    &[
                        first,
                        " and ",
                        second,
                        "; the reply is inconsistent (mid-failover?), fetch it again",
                    ],
                )
            }
            Self::ShardWithoutMaster { shard } => write!(
                f,
                "shard #{shard} of CLUSTER SHARDS has no master; fetch it again once \
                 failover completes"
            ),
            Self::ShardWithSeveralMasters { shard } => write!(
                f,
                "shard #{shard} of CLUSTER SHARDS lists several masters; fetch it again"
            ),
            Self::RoleConflict(name) => write_all(
                f,
                &[
                    "node ",
                    name,
                    " is listed both as master and replica (or under two masters); the \
                     reply is inconsistent, fetch it again",
                ],
            ),
            Self::MissingPort(name) => write_all(
                f,
                &[
                    "node ",
                    name,
                    " has neither port nor tls-port in CLUSTER SHARDS; set one",
                ],
            ),
            Self::BadAddress(e) => write!(f, "node address: {e}"),
            Self::AddressConflict { id, first, second } => write!(
                f,
                "node id {} is listed at {first} and at {second}; the reply is \
                 inconsistent, fetch it again",
                Quoted(id)
            ),
        }
    }
}

impl MapError {
    /// The stable code of the error.
    ///
    /// ```
    /// use keyroute::slot::MapError;
    /// assert_eq!(MapError::BadRange { start: 5, end: 1 }.code().as_str(), "BAD_RANGE");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::BadRange { .. } => ErrorCode::BadRange,
            Self::UnknownNode(_) => ErrorCode::UnknownNode,
            Self::NotAMaster(_) => ErrorCode::NotAMaster,
            Self::DuplicateId(_) => ErrorCode::DuplicateNode,
            Self::TooManyNodes => ErrorCode::TooManyNodes,
            Self::MissingPort(_) => ErrorCode::BadAddress,
            Self::BadAddress(e) => e.code(),
            Self::SlotOwnedTwice { .. }
            | Self::ShardWithoutMaster { .. }
            | Self::ShardWithSeveralMasters { .. }
            | Self::RoleConflict(_)
            | Self::AddressConflict { .. } => ErrorCode::InconsistentTopology,
        }
    }
}

impl core::error::Error for MapError {}

fn check_address(addr: &Address) -> Result<(), MapError> {
    if addr.host.is_empty() {
        return Err(MapError::BadAddress(AddressError::EmptyHost));
    }
    if addr.port == 0 {
        return Err(MapError::BadAddress(AddressError::BadPort));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: u16) -> Address {
        Address::new("h", p)
    }

    #[test]
    fn assign_validation() {
        let mut map = SlotMap::new();
        let a = map.add_master("a", addr(1)).expect("add");
        let r = map.add_replica(a, "r", addr(2)).expect("add");
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 5..=4;
        assert_eq!(
            map.assign(reversed, a),
            Err(MapError::BadRange { start: 5, end: 4 })
        );
        assert_eq!(
            map.assign(0..=16384, a),
            Err(MapError::BadRange {
                start: 0,
                end: 16384
            })
        );
        assert_eq!(map.assign(0..=1, r), Err(MapError::NotAMaster(r)));
        assert_eq!(
            map.assign(0..=1, NodeIndex(9)),
            Err(MapError::UnknownNode(NodeIndex(9)))
        );
        assert_eq!(
            map.add_replica(r, "x", addr(3)),
            Err(MapError::NotAMaster(r))
        );
        assert_eq!(map.unassigned_count(), 16384);
        map.assign(0..=16383, a).expect("assign");
        map.unassign(10..=19).expect("unassign");
        assert_eq!(map.slot_count(a), 16374);
        assert_eq!(map.slot_counts(), [16374, 0]);
        assert_eq!(map.ranges().count(), 3);
        assert!(!map.is_complete());
        assert_eq!(map.owner(16384), None);
    }

    #[test]
    fn find_addr_prefers_master() {
        let mut map = SlotMap::new();
        let a = map.add_master("a", addr(1)).expect("add");
        let r = map.add_replica(a, "r", addr(2)).expect("add");
        let b = map.add_master("b", addr(2)).expect("add");
        assert_eq!(map.find_addr("h", 2), Some(b));
        assert_eq!(map.find_addr("h", 1), Some(a));
        assert_eq!(map.find_addr("x", 1), None);
        assert_eq!(map.find_id("r"), Some(r));
        assert_eq!(map.find_id(""), None);
    }

    #[test]
    fn promote_detaches() {
        let mut map = SlotMap::new();
        let a = map.add_master("a", addr(1)).expect("add");
        let r = map.add_replica(a, "r", addr(2)).expect("add");
        map.promote(r);
        assert_eq!(map[r].role(), Role::Master);
        assert_eq!(map[r].master(), None);
        assert!(map[a].replicas().is_empty());
    }
}
