//! [`Rendezvous`]: highest-random-weight hashing, weighted, with top-k.

use alloc::vec::Vec;

use super::error::EngineError;
use super::keyhash::{KeyHash, KeyTag};
use super::ln::ln;
use super::Engine;
use crate::hashes::xxh64;
use crate::ring::NodeSpec;

/// go-redis' (and `dgryski/go-rendezvous`') score mixer.
#[inline(always)]
fn xorshift_mult64(mut x: u64) -> u64 {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    x.wrapping_mul(2_685_821_657_736_338_717)
}

/// Rendezvous (HRW) hashing: each node scores `xorshift_mult64(hash(key) ^ XXH64(name))`
/// and the highest score wins (ties: the node listed first), exactly as go-redis' `Ring`
/// (v8+) does with equal weights. With unequal weights a node's score `s` becomes
/// `w / −ln(u)` with `u = (s >> 11 + ½) / 2⁵³` (the logarithmic method: node `i` wins a
/// share `wᵢ / Σw` of keys). [`Engine::get_n_into`] ranks the nodes: the top `n`.
///
/// ```
/// use keyroute::engine::{Engine, KeyHash, KeyTag, Rendezvous};
/// use keyroute::ring::parse_nodes;
/// let r = Rendezvous::new(KeyHash::Xxh64(0), KeyTag::Whole, parse_nodes("a,b=3,c")?)?;
/// let top2 = r.get_n(b"user:1", 2);
/// assert_eq!(top2.len(), 2);
/// assert_eq!(Some(top2[0]), r.get(b"user:1"));
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Rendezvous {
    key_hash: KeyHash,
    tag: KeyTag,
    nodes: Vec<NodeSpec>,
    node_hashes: Vec<u64>,
    weighted: bool,
}

impl Rendezvous {
    /// A rendezvous engine.
    ///
    /// # Errors
    /// Node errors.
    pub fn new(key_hash: KeyHash, tag: KeyTag, nodes: Vec<NodeSpec>) -> Result<Self, EngineError> {
        super::check_nodes(&nodes)?;
        let node_hashes = nodes.iter().map(|n| xxh64(n.name.as_bytes(), 0)).collect();
        let weighted = nodes.windows(2).any(|w| w[0].weight != w[1].weight);
        Ok(Rendezvous {
            key_hash,
            tag,
            nodes,
            node_hashes,
            weighted,
        })
    }

    /// The nodes.
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// The hash of `key` (after the hash tag).
    #[inline]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.key_hash.hash(self.tag.apply(key))
    }

    /// Node `i`'s score for a key hash (higher wins).
    #[inline]
    pub fn score(&self, key_hash: u64, i: usize) -> f64 {
        let s = xorshift_mult64(key_hash ^ self.node_hashes[i]);
        if !self.weighted {
            return s as f64;
        }
        let u = ((s >> 11) as f64 + 0.5) / 9_007_199_254_740_992.0;
        f64::from(self.nodes[i].weight) / -ln(u)
    }

    /// The winner of a key hash.
    #[inline]
    pub fn winner(&self, kh: u64) -> Option<usize> {
        if self.weighted {
            let mut best: Option<(usize, f64)> = None;
            for i in 0..self.nodes.len() {
                let s = self.score(kh, i);
                if best.is_none_or(|(_, b)| s > b) {
                    best = Some((i, s));
                }
            }
            return best.map(|b| b.0);
        }
        let (first, rest) = self.node_hashes.split_first()?;
        let mut best = 0;
        let mut max = xorshift_mult64(kh ^ first);
        for (i, nh) in rest.iter().enumerate() {
            let s = xorshift_mult64(kh ^ nh);
            if s > max {
                max = s;
                best = i + 1;
            }
        }
        Some(best)
    }
}

impl Engine for Rendezvous {
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
        self.winner(self.hash_key(key))
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        out.clear();
        let kh = self.hash_key(key);
        if !self.weighted {
            // Exact u64 order (f64 loses low bits): rank by the integer scores.
            let mut ints: Vec<(u64, usize)> = (0..self.nodes.len())
                .map(|i| (xorshift_mult64(kh ^ self.node_hashes[i]), i))
                .collect();
            ints.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            out.extend(ints.iter().take(n).map(|x| x.1));
            return;
        }
        let mut scored: Vec<(f64, usize)> = (0..self.nodes.len())
            .map(|i| (self.score(kh, i), i))
            .collect();
        scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.extend(scored.iter().take(n).map(|x| x.1));
    }
}
