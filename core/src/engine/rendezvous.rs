//! [`Rendezvous`]: highest-random-weight hashing, weighted, with top-k.

use alloc::vec::Vec;

use super::error::EngineError;
use super::keyhash::{KeyHash, KeyTag};
use super::{Engine, Kind, Options};
use crate::hashes::xxh64;
use crate::ring::NodeSpec;
use crate::util::ln;

/// go-redis' (and `dgryski/go-rendezvous`') score mixer.
#[inline(always)]
fn xorshift_mult64(mut x: u64) -> u64 {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    x.wrapping_mul(2_685_821_657_736_338_717)
}

/// The `rendezvous` entry of the registry: XXH64 keys, the whole key or (`hash_tag`) its
/// `{tag}`.
pub(crate) fn build(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let tag = if o.flag("hash_tag")?.unwrap_or(false) {
        KeyTag::Braces
    } else {
        KeyTag::Whole
    };
    Ok(Kind::Rendezvous(Rendezvous::new(
        KeyHash::Xxh64(0),
        tag,
        nodes,
    )?))
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
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if !self.node_hashes.is_empty() && avx512_cpuid::get() {
            // SAFETY: the CPU runs AVX-512 F and DQ (checked just above).
            return Some(unsafe { winner_avx512(kh, &self.node_hashes) });
        }
        winner_portable(kh, &self.node_hashes)
    }
}

/// The unweighted winner: the highest `xorshift_mult64(kh ^ node hash)`, the first node
/// listed on ties; `None` without nodes.
#[inline]
fn winner_portable(kh: u64, node_hashes: &[u64]) -> Option<usize> {
    {
        let (first, rest) = node_hashes.split_first()?;
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

#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(avx512_cpuid, "avx512f", "avx512dq");

/// [`winner_portable`] eight nodes at a time (AVX-512: `VPMULLQ` is the 64-bit multiply
/// the mixer needs). Each lane keeps its best score and the first node index that scored
/// it; the winner is the highest score, and among lanes that hold it the smallest index,
/// which is the first node listed, as in the scalar loop. At 100 nodes with the key hash:
/// 107 ns before, 31 ns after (go-redis profile: 33 ns; `bench/benches/engines.rs`); held to
/// [`winner_portable`] by this module's tests. `node_hashes` must not be empty.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx512f,avx512dq")]
fn winner_avx512(kh: u64, node_hashes: &[u64]) -> usize {
    use core::arch::x86_64::{
        __m512i, __mmask8, _mm512_add_epi64, _mm512_cmpeq_epu64_mask, _mm512_mask_cmpgt_epu64_mask,
        _mm512_mask_mov_epi64, _mm512_mask_reduce_min_epu64, _mm512_maskz_loadu_epi64,
        _mm512_maskz_mov_epi64, _mm512_mullo_epi64, _mm512_reduce_max_epu64, _mm512_set1_epi64,
        _mm512_setr_epi64, _mm512_slli_epi64, _mm512_srli_epi64, _mm512_xor_si512,
    };
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn mix(x: __m512i, mul: __m512i) -> __m512i {
        let x = _mm512_xor_si512(x, _mm512_srli_epi64::<12>(x));
        let x = _mm512_xor_si512(x, _mm512_slli_epi64::<25>(x));
        let x = _mm512_xor_si512(x, _mm512_srli_epi64::<27>(x));
        _mm512_mullo_epi64(x, mul)
    }
    let n = node_hashes.len();
    let k = _mm512_set1_epi64(kh as i64);
    let mul = _mm512_set1_epi64(2_685_821_657_736_338_717);
    let eight = _mm512_set1_epi64(8);
    let lanes = |at: usize| -> __mmask8 {
        let left = n - at;
        if left >= 8 {
            0xff
        } else {
            (1u8 << left) - 1
        }
    };
    let load = |at: usize, m: __mmask8| {
        // SAFETY: lanes in `m` are `at..at + popcount(m)`, all within `node_hashes`; the
        // masked-off lanes are not read.
        unsafe { _mm512_maskz_loadu_epi64(m, node_hashes.as_ptr().add(at).cast()) }
    };
    let mut idx = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    // The first eight (or fewer) nodes start each lane; a lane with no node keeps score 0
    // and index u64::MAX, so it never wins a tie.
    let m = lanes(0);
    let mut best = _mm512_maskz_mov_epi64(m, mix(_mm512_xor_si512(load(0, m), k), mul));
    let mut best_i = _mm512_mask_mov_epi64(_mm512_set1_epi64(-1), m, idx);
    let mut at = 8;
    while at < n {
        idx = _mm512_add_epi64(idx, eight);
        let m = lanes(at);
        let s = mix(_mm512_xor_si512(load(at, m), k), mul);
        let gt = _mm512_mask_cmpgt_epu64_mask(m, s, best);
        best = _mm512_mask_mov_epi64(best, gt, s);
        best_i = _mm512_mask_mov_epi64(best_i, gt, idx);
        at += 8;
    }
    let max = _mm512_reduce_max_epu64(best);
    let holders = _mm512_cmpeq_epu64_mask(best, _mm512_set1_epi64(max as i64));
    _mm512_mask_reduce_min_epu64(holders, best_i) as usize
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

#[cfg(test)]
mod tests {
    #[test]
    fn every_path_gives_the_portable_winner() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in 1..=70usize {
            // Random node hashes, and lists with repeats so that scores tie.
            let mut hashes: alloc::vec::Vec<u64> = (0..n).map(|_| next()).collect();
            if n > 3 {
                let h = hashes[1];
                hashes[n - 1] = h;
                hashes[n / 2] = h;
            }
            for _ in 0..400 {
                let kh = next();
                let want = super::winner_portable(kh, &hashes);
                #[cfg(all(target_arch = "x86_64", not(miri)))]
                if super::avx512_cpuid::get() {
                    // SAFETY: checked; `hashes` is not empty.
                    let got = unsafe { super::winner_avx512(kh, &hashes) };
                    assert_eq!(Some(got), want, "n={n} kh={kh}");
                }
                // The tie rule: the winner's score is the highest, and no node before it
                // has that score.
                let w = want.expect("a winner");
                let score = |i: usize| super::xorshift_mult64(kh ^ hashes[i]);
                assert!((0..n).all(|i| score(i) <= score(w)));
                assert!((0..w).all(|i| score(i) < score(w)));
            }
        }
    }
}
