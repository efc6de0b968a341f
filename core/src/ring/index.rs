//! The sorted circle and its bucket index: a lookup is one table read and, on average,
//! one or two comparisons, with no allocation.

use alloc::vec::Vec;

use super::owners::OwnerVec;

/// Sorted points with their owners and a jump table over the top bits of the circle.
#[derive(Debug, Clone, Default)]
pub(crate) struct Circle {
    /// Sorted positions (32-bit profiles use the low half).
    pub(crate) points: Vec<u64>,
    /// `owners.get(i)` is the node index owning `points[i]`.
    pub(crate) owners: OwnerVec,
    /// `table[b]` = first `i` with `points[i] >> shift >= b`; `buckets + 1` entries.
    pub(crate) table: Vec<u32>,
    /// `bits - log2(buckets)`.
    shift: u32,
    /// Circle width in bits (32 or 64).
    bits: u32,
}

impl Circle {
    /// Builds the index over already sorted `points` (the engines' circles).
    #[cfg(any(test, feature = "fleet"))]
    pub(crate) fn new(points: Vec<u64>, owners: Vec<u32>, bits: u32) -> Circle {
        Circle::with_table(points, OwnerVec::from_wide(owners), bits, Vec::new())
    }

    /// Builds the index over already sorted `points`, reusing `table`'s allocation for the index (a change to a ring
    /// then touches no fresh memory for it).
    pub(crate) fn with_table(
        points: Vec<u64>,
        owners: OwnerVec,
        bits: u32,
        mut table: Vec<u32>,
    ) -> Circle {
        debug_assert_eq!(points.len(), owners.len());
        debug_assert!(points.windows(2).all(|w| w[0] <= w[1]));
        let (buckets, shift) = layout(points.len(), bits);
        // table[b]: the first point whose bucket is b or later (one pass over the points).
        table.clear();
        table.resize(buckets + 1, points.len() as u32);
        let mut next = 0usize;
        for (i, &p) in points.iter().enumerate() {
            let b = bucket(p, shift) as usize;
            if b >= next {
                table[next..=b].fill(i as u32);
                next = b + 1;
            }
        }
        Circle {
            points,
            owners,
            table,
            shift,
            bits,
        }
    }

    /// The circle over already sorted `points` with its index already built (`table`:
    /// the start of each of the `2^log_buckets(len)` buckets, then the length), as
    /// [`sort_split`](super::sort::sort_split) returns it.
    #[cfg_attr(feature = "small-sort", allow(dead_code))]
    pub(crate) fn with_built_table(
        points: Vec<u64>,
        owners: OwnerVec,
        bits: u32,
        table: Vec<u32>,
    ) -> Circle {
        let (buckets, shift) = layout(points.len(), bits);
        debug_assert_eq!(table.len(), buckets + 1);
        debug_assert_eq!(
            Circle::with_table(points.clone(), owners.clone(), bits, Vec::new()).table,
            table
        );
        Circle {
            points,
            owners,
            table,
            shift,
            bits,
        }
    }

    /// The circle after points were inserted into or removed from the arrays (`changed`:
    /// those points, sorted): when the bucket layout stays the same, the old index
    /// (`table`, built for `old_shift`) is shifted by the number of changed points before
    /// each bucket, a pass of additions instead of a pass over every point.
    pub(crate) fn updated(
        points: Vec<u64>,
        owners: OwnerVec,
        bits: u32,
        mut table: Vec<u32>,
        old_shift: u32,
        changed: &[u64],
        inserted: bool,
    ) -> Circle {
        let (buckets, shift) = layout(points.len(), bits);
        if points.is_empty() || table.len() != buckets + 1 || shift != old_shift {
            return Circle::with_table(points, owners, bits, table);
        }
        let mut from = 0usize;
        let mut seen = 0u32;
        let apply = |t: &mut [u32], n: u32| {
            if inserted {
                t.iter_mut().for_each(|x| *x += n);
            } else {
                t.iter_mut().for_each(|x| *x -= n);
            }
        };
        for &p in changed {
            let b = bucket(p, shift) as usize;
            if b >= from {
                apply(&mut table[from..=b], seen);
                from = b + 1;
            }
            seen += 1;
        }
        apply(&mut table[from..], seen);
        debug_assert_eq!(table[buckets] as usize, points.len());
        Circle {
            points,
            owners,
            table,
            shift,
            bits,
        }
    }

    /// The shift of the index now in use.
    pub(crate) fn shift(&self) -> u32 {
        self.shift
    }

    /// Heap bytes held: points, owners and the bucket table (capacities).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.points.capacity() * core::mem::size_of::<u64>()
            + self.owners.heap_bytes()
            + self.table.capacity() * core::mem::size_of::<u32>()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }

    /// Index of the first point `>= target` (wrapping to 0 past the end), or `None` on an
    /// empty circle. `target` may be `1 << bits` (one past the top), which wraps.
    #[inline(always)]
    pub(crate) fn lower_bound(&self, target: u64, above: bool) -> Option<usize> {
        if self.points.is_empty() {
            return None;
        }
        let target = if above {
            match target.checked_add(1) {
                Some(t) if self.bits == 64 || t >> 32 == 0 => t,
                _ => return Some(0),
            }
        } else {
            target
        };
        // Slices, not the vectors: indexing a slice is built into the language, where a
        // `Vec` index is a call to `Index::index`, which size-optimised builds (the .wasm)
        // leave out of line.
        let (points, table): (&[u64], &[u32]) = (&self.points, &self.table);
        let b = bucket(target, self.shift) as usize;
        // `target` is within the circle, so `b < buckets` and `b + 1` is in the table.
        let (lo, hi) = match (table.get(b), table.get(b + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => return Some(0),
        };
        let last = points.len() - 1;
        let i = if hi - lo <= SCAN {
            // Count the bucket's points below `target` without a data-dependent branch:
            // a mispredicted branch per lookup would also stall the hashing of the next
            // keys in a batch. The points past the bucket are in later buckets, so at or
            // above `target`: they count for nothing and need no mask, except past the
            // end of the circle, where reads are clamped in bounds and masked out.
            if let Some(w) = points.get(lo..).and_then(|p| p.first_chunk::<SCAN>()) {
                // Indexes, not `iter().map().sum()`: the size-optimised .wasm left the
                // iterator's fold and sum as calls (14% of a batch in a profile).
                let mut i = lo;
                #[allow(clippy::needless_range_loop)]
                for j in 0..SCAN {
                    i += usize::from(w[j] < target);
                }
                i
            } else {
                let mut i = lo;
                for j in 0..SCAN {
                    let p = points[(lo + j).min(last)];
                    i += usize::from((lo + j < hi) & (p < target));
                }
                i
            }
        } else {
            lo + points[lo..hi].partition_point(|&p| p < target)
        };
        Some(if i > last { 0 } else { i })
    }
}

/// Buckets with at most this many points are scanned branch-free; fuller ones (2–18% of
/// lookups: there are 1.5–3 points per bucket on average) take a binary search. With a
/// bucket per 0.5–1 point, 2 beat 4 by a third on lookups; with 1.5–3 points per bucket,
/// 4 (8 was 1.5x slower on 4096-key batches, side by side).
const SCAN: usize = 4;

/// log2 of the number of buckets of the index of `len` points on a `bits`-bit circle.
pub(crate) fn log_buckets(len: usize, bits: u32) -> u32 {
    layout(len, bits).0.trailing_zeros()
}

/// The number of buckets of the index of `len` points, and the shift from a point to its
/// bucket: the most buckets that leave 1.5 points or more to each (1.5–3 points per
/// bucket; the index costs 1.3–2.7 bytes per point, 1.6 at 160,000 points: issue 17's
/// memory target of 12 bytes per point, with 8-byte native positions and 2-byte owners).
fn layout(len: usize, bits: u32) -> (usize, u32) {
    let per_bucket = (len.saturating_mul(2) / 3).max(1);
    let log = (usize::BITS - 1 - per_bucket.leading_zeros()).min(bits);
    (1usize << log, bits - log)
}

#[inline]
fn bucket(p: u64, shift: u32) -> u64 {
    p.checked_shr(shift).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn matches_a_plain_binary_search() {
        let pts: Vec<u64> = vec![5, 5, 9, 1000, 1 << 31, (1 << 32) - 1];
        let owners = (0..pts.len() as u32).collect();
        let c = Circle::new(pts.clone(), owners, 32);
        for t in [
            0u64,
            4,
            5,
            6,
            9,
            10,
            999,
            1000,
            1001,
            1 << 31,
            (1 << 32) - 2,
            (1 << 32) - 1,
        ] {
            let want = pts.partition_point(|&p| p < t) % pts.len();
            assert_eq!(c.lower_bound(t, false), Some(want), "t={t}");
            let want_above = pts.partition_point(|&p| p <= t) % pts.len();
            assert_eq!(c.lower_bound(t, true), Some(want_above), "t={t}");
        }
        assert_eq!(Circle::new(vec![], vec![], 64).lower_bound(3, false), None);
        let c64 = Circle::new(vec![7, u64::MAX], vec![0, 1], 64);
        assert_eq!(c64.lower_bound(u64::MAX, false), Some(1));
        assert_eq!(c64.lower_bound(u64::MAX, true), Some(0));
    }

    proptest::proptest! {
        // Crowded buckets (more than SCAN points: the partition_point path), sparse
        // ones (the branch-free scan), duplicates, both circle widths.
        #[test]
        fn equals_a_plain_binary_search(
            mut pts in proptest::collection::vec(0u64..(1 << 32), 1..200),
            crowd in proptest::collection::vec(0u64..64, 0..40),
            targets in proptest::collection::vec(0u64..(1 << 32), 1..50),
            wide in proptest::bool::ANY,
        ) {
            // `crowd` puts many points just above the first one: one bucket over-full.
            let base = pts[0];
            pts.extend(crowd.iter().map(|c| (base + c).min((1 << 32) - 1)));
            let scale = if wide { 1u64 << 32 } else { 1 };
            let mut pts: Vec<u64> = pts.iter().map(|p| p * scale).collect();
            pts.sort_unstable();
            let bits = if wide { 64 } else { 32 };
            let owners = (0..pts.len() as u32).collect();
            let c = Circle::new(pts.clone(), owners, bits);
            for t in targets.iter().map(|t| t * scale).chain(pts.iter().copied()) {
                let want = pts.partition_point(|&p| p < t) % pts.len();
                proptest::prop_assert_eq!(c.lower_bound(t, false), Some(want));
                let want_above = pts.partition_point(|&p| p <= t) % pts.len();
                proptest::prop_assert_eq!(c.lower_bound(t, true), Some(want_above));
            }
        }
    }
}
