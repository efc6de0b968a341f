//! [`Modulo`]: `hash % Σweight`, walked over the nodes in list order.

use alloc::vec::Vec;

use super::error::EngineError;
use super::keyhash::{KeyHash, KeyTag};
use super::Engine;
use crate::ring::NodeSpec;

/// How a [`Modulo`] engine derives the number it reduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Reduce {
    /// `hash(key)`.
    Plain,
    /// nginx's plain `hash`: `(crc32(key) >> 16) & 0x7fff` (Cache::Memcached).
    Nginx,
}

/// Modulo hashing over weights: `w = h % Σweight`, then the node whose weight range in
/// list order holds `w` (nginx's plain `hash $key`, twemproxy's `distribution: modula`,
/// where a node of weight `k` takes `k` consecutive slots).
///
/// ```
/// use keyroute::engine::{Engine, KeyHash, KeyTag, Modulo};
/// use keyroute::ring::parse_nodes;
/// let m = Modulo::new("example", KeyHash::Crc32, KeyTag::Whole, parse_nodes("a,b=3")?)?;
/// assert_eq!(m.owner_of_hash(0), Some(0));
/// assert_eq!(m.owner_of_hash(1), Some(1));
/// assert_eq!(m.owner_of_hash(4), Some(0));
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Modulo {
    name: &'static str,
    key_hash: KeyHash,
    tag: KeyTag,
    reduce: Reduce,
    nodes: Vec<NodeSpec>,
    /// `ends[i]` = the sum of the weights of nodes `0..=i`.
    ends: Vec<u64>,
}

impl Modulo {
    /// A modulo engine.
    ///
    /// # Errors
    /// Node errors.
    pub fn new(
        name: &'static str,
        key_hash: KeyHash,
        tag: KeyTag,
        nodes: Vec<NodeSpec>,
    ) -> Result<Modulo, EngineError> {
        super::check_nodes(&nodes)?;
        let mut sum = 0u64;
        let ends = nodes
            .iter()
            .map(|n| {
                sum += u64::from(n.weight);
                sum
            })
            .collect();
        Ok(Modulo {
            name,
            key_hash,
            tag,
            reduce: Reduce::Plain,
            nodes,
            ends,
        })
    }

    /// nginx's plain `hash $key`: `((crc32(key) >> 16) & 0x7fff) % Σweight`.
    ///
    /// # Errors
    /// Node errors.
    pub fn nginx(nodes: Vec<NodeSpec>) -> Result<Modulo, EngineError> {
        let mut m = Modulo::new("nginx-hash", KeyHash::Crc32, KeyTag::Whole, nodes)?;
        m.reduce = Reduce::Nginx;
        Ok(m)
    }

    /// The engine's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The nodes.
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// The number reduced for `key`.
    #[inline]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        let h = self.key_hash.hash(self.tag.apply(key));
        match self.reduce {
            Reduce::Plain => h,
            Reduce::Nginx => (h >> 16) & 0x7fff,
        }
    }

    /// The node whose range holds `h % Σweight`.
    #[inline]
    pub fn owner_of_hash(&self, h: u64) -> Option<usize> {
        let total = *self.ends.last()?;
        let w = h % total;
        Some(self.ends.partition_point(|&e| e <= w))
    }
}

impl Engine for Modulo {
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
