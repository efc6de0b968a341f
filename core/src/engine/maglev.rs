//! Maglev's lookup table, as Envoy builds it.

use alloc::vec::Vec;

use super::{EngineError, Kind, Options};
use crate::hashes::xxh64;
use crate::ring::NodeSpec;

/// The `maglev` entry of the registry: Envoy's table
/// ([`build_table`](super::fleet::envoy::build_table)), by default at least 100 slots per
/// node and at least Envoy's 65537: one removal then moves at most 2/n of the keys up to
/// ~150 nodes (measured; the extra disruption of Maglev's greedy fill shrinks as M/n
/// grows).
pub(crate) fn build(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let default = next_prime((100 * nodes.len() as u64).max(65537));
    super::fleet::envoy::build_table(name, nodes, o, default)
}

/// The smallest prime `>= n` (at least 2).
///
/// ```
/// use keyroute::engine::next_prime;
/// assert_eq!(next_prime(100), 101);
/// assert_eq!(next_prime(65537), 65537);
/// assert_eq!(next_prime(0), 2);
/// ```
pub fn next_prime(n: u64) -> u64 {
    let mut c = n.max(2);
    while !is_prime(c) {
        c += 1;
    }
    c
}

pub(crate) fn is_prime(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    let mut d = 2u64;
    while d.saturating_mul(d) <= n {
        if n.is_multiple_of(d) {
            return false;
        }
        d += 1;
    }
    true
}

/// Envoy's Maglev table (`constructMaglevTableInternal` and
/// `OriginalMaglevTable::constructImplementationInternals`): for each host key,
/// `offset = XXH64(key, 0) % M`, `skip = XXH64(key, 1) % (M − 1) + 1`; hosts take turns
/// in the given order (Envoy ≥ 1.27 sorts them by key first), a host of normalized weight
/// `w` taking a turn whenever `iteration · w >= target` (then `target += max w`), and
/// filling the next free slot of its permutation. Returns the table: `M` host indexes.
///
/// `weights` are the hosts' raw weights (normalized here as Envoy does: `w / Σw` in
/// doubles). `table_size` must be a prime above the number of hosts.
///
/// ```
/// use keyroute::engine::maglev_table;
/// let t = maglev_table(&["a", "b", "c"], &[1, 1, 1], 7);
/// assert_eq!(t.len(), 7);
/// let counts = (0..3).map(|h| t.iter().filter(|&&x| x == h).count()).collect::<Vec<_>>();
/// assert!(counts.iter().all(|&c| c == 2 || c == 3));
/// ```
pub fn maglev_table<S: AsRef<str>>(keys: &[S], weights: &[u32], table_size: u64) -> Vec<u32> {
    let m = table_size;
    let n = keys.len().min(weights.len());
    if n == 0 || m < 2 {
        return Vec::new();
    }
    let sum: u64 = weights[..n].iter().map(|&w| u64::from(w)).sum();
    let nw: Vec<f64> = weights[..n]
        .iter()
        .map(|&w| f64::from(w) * 1.0 / sum as f64)
        .collect();
    let max_nw = nw.iter().copied().fold(0.0f64, f64::max);
    struct Entry {
        offset: u64,
        skip: u64,
        weight: f64,
        target: f64,
        next: u64,
    }
    let mut entries: Vec<Entry> = keys[..n]
        .iter()
        .zip(&nw)
        .map(|(k, &w)| {
            let k = k.as_ref().as_bytes();
            Entry {
                offset: xxh64(k, 0) % m,
                skip: xxh64(k, 1) % (m - 1) + 1,
                weight: w,
                target: 0.0,
                next: 0,
            }
        })
        .collect();
    const EMPTY: u32 = u32::MAX;
    let mut table = alloc::vec![EMPTY; m as usize];
    let mut filled = 0u64;
    let mut iteration: u32 = 1;
    while filled < m {
        for (i, e) in entries.iter_mut().enumerate() {
            if filled >= m {
                break;
            }
            if f64::from(iteration) * e.weight < e.target {
                continue;
            }
            e.target += max_nw;
            let mut c = (e.offset + e.skip * e.next) % m;
            while table[c as usize] != EMPTY {
                e.next += 1;
                c = (e.offset + e.skip * e.next) % m;
            }
            table[c as usize] = i as u32;
            e.next += 1;
            filled += 1;
        }
        iteration = iteration.wrapping_add(1);
    }
    table
}
