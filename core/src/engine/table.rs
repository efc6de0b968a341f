//! [`Table`]: a lookup table of owners, `table[h % len]` (Maglev, HAProxy `map-based`).

use alloc::vec::Vec;

use super::error::EngineError;
use super::keyhash::{KeyHash, KeyTag};
use super::Engine;
use crate::ring::NodeSpec;

/// A table of owners indexed by `hash(key) % len`: Maglev's lookup table
/// ([`maglev_table`](super::maglev_table)) and HAProxy's `map-based` server map.
///
/// ```
/// use keyroute::engine::{Engine, KeyHash, KeyTag, Table};
/// use keyroute::ring::parse_nodes;
/// let t = Table::new("example", KeyHash::Crc32, KeyTag::Whole, parse_nodes("a,b")?, vec![0, 1, 1])?;
/// assert_eq!(t.slots().len(), 3);
/// assert!(t.get(b"k").is_some());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Table {
    name: &'static str,
    key_hash: KeyHash,
    tag: KeyTag,
    nodes: Vec<NodeSpec>,
    slots: Vec<u32>,
}

impl Table {
    /// A table over `nodes` with the given slots (node indexes).
    ///
    /// # Errors
    /// Node errors; [`EngineError::BadOption`] for a slot naming no node.
    pub fn new(
        name: &'static str,
        key_hash: KeyHash,
        tag: KeyTag,
        nodes: Vec<NodeSpec>,
        slots: Vec<u32>,
    ) -> Result<Table, EngineError> {
        super::check_nodes(&nodes)?;
        if slots.iter().any(|&s| s as usize >= nodes.len()) {
            return Err(EngineError::BadOption {
                engine: name,
                option: "slots".into(),
                reason: "a slot names a node that is not in the list".into(),
            });
        }
        Ok(Table {
            name,
            key_hash,
            tag,
            nodes,
            slots,
        })
    }

    /// The engine's name (`"maglev"`, `"haproxy-map"`, ...).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The nodes.
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// The slots: node indexes.
    pub fn slots(&self) -> &[u32] {
        &self.slots
    }

    /// The hash of `key` (after the hash tag).
    #[inline]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.key_hash.hash(self.tag.apply(key))
    }

    /// The owner of a key hash: `slots[h % len]`.
    #[inline]
    pub fn owner_of_hash(&self, h: u64) -> Option<usize> {
        let len = self.slots.len() as u64;
        if len == 0 {
            return None;
        }
        Some(self.slots[(h % len) as usize] as usize)
    }
}

impl Engine for Table {
    fn len(&self) -> usize {
        self.nodes.len()
    }
    fn node_name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }
    fn node_weight(&self, i: usize) -> u32 {
        self.nodes[i].weight
    }
    fn node_address(&self, i: usize) -> Option<&str> {
        self.nodes[i].address.as_deref()
    }
    #[inline]
    fn get_index(&self, key: &[u8]) -> Option<usize> {
        self.owner_of_hash(self.hash_key(key))
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        super::owner_then_next(self.get_index(key), self.nodes.len(), n, out);
    }
}
