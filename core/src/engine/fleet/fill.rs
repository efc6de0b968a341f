//! The points of a large ring hashed on every core the machine offers (with `std`, off
//! WebAssembly): each node's points are independent of the others', and hashing them is
//! most of a large build. 200k nginx servers (32M points) on 2 cores, side by side
//! (`bench/benches/config.rs`): 1.29-1.37 s a build on one thread, 1.19-1.26 s on two.

use alloc::vec::Vec;

use crate::ring::sort::cores_for;

/// The keys of every node's points: `counts[i]` of node `i`, written by `fill(i, out)`
/// into `out` (exactly `counts[i]` long), node after node.
pub(crate) fn fill_keys(counts: &[usize], fill: impl Fn(usize, &mut [u64]) + Sync) -> Vec<u64> {
    let total: usize = counts.iter().sum();
    // Zeroed pages come from the kernel untouched: each thread faults in its own.
    let mut keys = alloc::vec![0u64; total];
    let threads = cores_for(total);
    if threads <= 1 {
        fill_range(&mut keys, counts, 0, &fill);
        return keys;
    }
    #[cfg(all(feature = "std", not(target_family = "wasm")))]
    {
        // Nodes cut into `threads` stretches of about as many points each.
        let share = total.div_ceil(threads);
        std::thread::scope(|s| {
            let (mut rest, mut node) = (&mut keys[..], 0);
            while node < counts.len() {
                let first = node;
                let mut len = 0;
                while node < counts.len() && (len < share || node == first) {
                    len += counts[node];
                    node += 1;
                }
                let (mine, after) = rest.split_at_mut(len);
                rest = after;
                let fill = &fill;
                s.spawn(move || fill_range(mine, counts, first, fill));
            }
        });
    }
    keys
}

/// The points of nodes `first..` into `out`, as far as it goes.
fn fill_range(out: &mut [u64], counts: &[usize], first: usize, fill: &impl Fn(usize, &mut [u64])) {
    let (mut at, mut node) = (0, first);
    while at < out.len() {
        let end = at + counts[node];
        fill(node, &mut out[at..end]);
        at = end;
        node += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::sort::PARALLEL_FROM;

    #[test]
    fn every_node_fills_its_own_stretch_in_order() {
        for counts in [
            alloc::vec![3, 0, 5, 1],
            alloc::vec![0; 4],
            alloc::vec![PARALLEL_FROM / 3 + 7; 5],
            alloc::vec![PARALLEL_FROM + 1],
        ] {
            let keys = fill_keys(&counts, |i, out| {
                for (k, slot) in out.iter_mut().enumerate() {
                    *slot = (i as u64) << 32 | k as u64;
                }
            });
            let want: Vec<u64> = counts
                .iter()
                .enumerate()
                .flat_map(|(i, &c)| (0..c as u64).map(move |k| (i as u64) << 32 | k))
                .collect();
            assert_eq!(keys, want);
        }
    }
}
