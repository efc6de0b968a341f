//! Jump consistent hash: the paper's algorithm and Guava's variant, two separate engines.

use alloc::vec::Vec;

use super::error::EngineError;
use super::keyhash::KeyHash;
use super::{Engine, Kind, Options};
use crate::ring::NodeSpec;

/// Lamping & Veach's jump consistent hash (arXiv:1406.2294), as the paper's C++ code and
/// `dgryski/go-jump` compute it: the bucket in `0..buckets` of a 64-bit key; `None` for 0
/// buckets.
///
/// ```
/// use keyroute::engine::jump_hash;
/// assert_eq!(jump_hash(0, 1), Some(0));
/// assert_eq!(jump_hash(0, 0), None);
/// assert!(jump_hash(42, 1000).is_some_and(|b| b < 1000));
/// ```
#[inline]
pub fn jump_hash(key: u64, buckets: u32) -> Option<u32> {
    if buckets == 0 {
        return None;
    }
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if sse41_cpuid::get() {
        // SAFETY: the CPU runs SSE4.1 (checked just above).
        return Some(unsafe { jump_sse41(key, buckets) });
    }
    Some(jump_portable(key, buckets))
}

/// The paper's loop as its C++ writes it: `b` and `j` 64-bit integers.
#[inline]
fn jump_portable(mut key: u64, buckets: u32) -> u32 {
    let (mut b, mut j) = (-1i64, 0i64);
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        // (b + 1) * (2^31 / ((key >> 33) + 1)): two roundings.
        j = ((b + 1) as f64 * ((1u64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b as u32
}

#[cfg(all(target_arch = "x86_64", not(miri)))]
cpufeatures::new!(sse41_cpuid, "sse4.1");

/// [`jump_portable`] with `j` kept as the f64 it is computed as. What the loop carries
/// from one step to the next is `j`; the integer round trip (`j` to i64, `b + 1` back to
/// f64: two conversions, ~10 cycles) becomes one `ROUNDSD` toward zero, so the chain per
/// step is round + add + multiply. Same answers: for `j >= 0`, `trunc(j) < N` exactly
/// when `j < N`, and `trunc(j) + 1 < 2^32 + 1` is exact in f64. Measured at 1000
/// buckets with the key hash: 34 ns before, 23 ns after (`bench/benches/engines.rs`, `jump 1000
/// nodes`); held to [`jump_portable`] by `core/tests/fleet_props.rs`.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "sse4.1")]
fn jump_sse41(mut key: u64, buckets: u32) -> u32 {
    use core::arch::x86_64::{_mm_cvtsd_f64, _mm_round_sd, _mm_set_sd, _MM_FROUND_TO_ZERO};
    let n = f64::from(buckets);
    let (mut b, mut j) = (0f64, 0f64);
    while j < n {
        let v = _mm_set_sd(j);
        b = _mm_cvtsd_f64(_mm_round_sd::<{ _MM_FROUND_TO_ZERO }>(v, v));
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        // `key >> 33` < 2^31: the signed conversion is exact and one instruction.
        j = (b + 1.0) * ((1u64 << 31) as f64 / (((key >> 33) + 1) as i64) as f64);
    }
    b as u32
}

/// Guava's `Hashing.consistentHash(long input, int buckets)`: the paper's generator, but
/// one rounding (`(c+1) / ((x+1)/2³¹)`) and Java's `int` overflow when `x = 2³¹−1`, so it
/// differs from [`jump_hash`] on rare inputs. `None` for 0 buckets (Guava throws).
///
/// ```
/// use keyroute::engine::guava_consistent_hash;
/// assert_eq!(guava_consistent_hash(0, 1), Some(0));
/// assert!(guava_consistent_hash(-7, 100).is_some_and(|b| b < 100));
/// ```
#[inline]
pub fn guava_consistent_hash(input: i64, buckets: u32) -> Option<u32> {
    if buckets == 0 {
        return None;
    }
    let buckets = i32::try_from(buckets).unwrap_or(i32::MAX);
    let mut state = input as u64;
    let mut candidate: i32 = 0;
    loop {
        state = state
            .wrapping_mul(2_862_933_555_777_941_757)
            .wrapping_add(1);
        let next_double = f64::from(((state >> 33) as i32).wrapping_add(1)) / 2_147_483_648.0;
        // Java's (int) of a double: NaN is 0, out of range saturates (as Rust's `as`).
        let next = (f64::from(candidate.wrapping_add(1)) / next_double) as i32;
        if next >= 0 && next < buckets {
            candidate = next;
        } else {
            return Some(candidate as u32);
        }
    }
}

/// The `jump` entry of the registry: the paper's jump, keys by `hash` (`xxh64`).
pub(crate) fn build_paper(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    build(JumpVariant::Paper, "xxh64", nodes, o)
}

/// The `guava-jump` entry: Guava's jump, keys by `hash` (`murmur3_128`).
pub(crate) fn build_guava(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    build(JumpVariant::Guava, "murmur3_128", nodes, o)
}

fn build(
    variant: JumpVariant,
    default: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let h = o.choice("hash", &["xxh64", "murmur3_128", "murmur3_32", "crc32"])?;
    let key_hash = match h.unwrap_or(default) {
        "murmur3_128" => KeyHash::Murmur3_128,
        "murmur3_32" => KeyHash::Murmur3_32,
        "crc32" => KeyHash::Crc32,
        _ => KeyHash::Xxh64(0),
    };
    Ok(Kind::Jump(Jump::new(variant, key_hash, nodes)?))
}

/// Which jump algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JumpVariant {
    /// The paper's ([`jump_hash`]).
    Paper,
    /// Guava's ([`guava_consistent_hash`]).
    Guava,
}

/// A jump engine over named nodes: the key's hash picks bucket `i`, node `i` owns it. Jump
/// has no weights, and only the last node can be removed without moving other keys.
///
/// ```
/// use keyroute::engine::{Engine, Jump, JumpVariant, KeyHash};
/// use keyroute::ring::parse_nodes;
/// let j = Jump::new(JumpVariant::Guava, KeyHash::Murmur3_128, parse_nodes("a,b,c,d")?)?;
/// assert!(j.get(b"user:1").is_some());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Jump {
    variant: JumpVariant,
    key_hash: KeyHash,
    nodes: Vec<NodeSpec>,
}

impl Jump {
    /// A jump engine.
    ///
    /// # Errors
    /// Node errors; [`EngineError::BadOption`] for a weight other than 1.
    pub fn new(
        variant: JumpVariant,
        key_hash: KeyHash,
        nodes: Vec<NodeSpec>,
    ) -> Result<Jump, EngineError> {
        super::check_nodes(&nodes)?;
        if let Some(n) = nodes.iter().find(|n| n.weight != 1) {
            return Err(EngineError::BadOption {
                engine: match variant {
                    JumpVariant::Paper => "jump",
                    JumpVariant::Guava => "guava-jump",
                },
                option: alloc::format!("weight of {}", n.name),
                reason: "jump consistent hashing has no weights: give every node weight 1".into(),
            });
        }
        Ok(Jump {
            variant,
            key_hash,
            nodes,
        })
    }

    /// The variant.
    pub fn variant(&self) -> JumpVariant {
        self.variant
    }

    /// The key hash.
    pub fn key_hash(&self) -> KeyHash {
        self.key_hash
    }

    /// The nodes.
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// The bucket of a key's 64-bit hash.
    #[inline]
    pub fn bucket_of_hash(&self, h: u64) -> Option<usize> {
        let n = u32::try_from(self.nodes.len()).ok()?;
        match self.variant {
            JumpVariant::Paper => jump_hash(h, n),
            JumpVariant::Guava => guava_consistent_hash(h as i64, n),
        }
        .map(|b| b as usize)
    }
}

impl Engine for Jump {
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
        self.bucket_of_hash(self.key_hash.hash(key))
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        super::owner_then_next(self.get_index(key), self.nodes.len(), n, out);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_path_gives_the_portable_answer() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for k in 0..50_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = match k % 3 {
                0 => (x >> 54) as u32 + 1,
                1 => (x >> 40) as u32 + 1,
                _ => u32::MAX - (x >> 60) as u32,
            };
            let want = super::jump_portable(x, n);
            assert_eq!(super::jump_hash(x, n), Some(want), "key {x} buckets {n}");
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            if super::sse41_cpuid::get() {
                // SAFETY: checked.
                assert_eq!(
                    unsafe { super::jump_sse41(x, n) },
                    want,
                    "key {x} buckets {n}"
                );
            }
        }
    }
}
