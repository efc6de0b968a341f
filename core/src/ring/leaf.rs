//! One stretch of the circle: its sorted points, their owners and a jump table over the
//! top bits of the stretch. A lookup is one table read and, on average, one or two
//! comparisons, with no allocation.

use alloc::vec::Vec;

use super::owner_vec::OwnerVec;

/// Sorted points of one stretch of the circle with their owners and its bucket index.
#[derive(Debug, Clone, Default)]
pub(crate) struct Leaf {
    /// Sorted positions (32-bit profiles use the low half).
    pub(crate) points: Vec<u64>,
    /// `owners.get(i)` is the node index owning `points[i]`.
    pub(crate) owners: OwnerVec,
    /// `table[b]` = first `i` whose point is in bucket `b` or a later one; `buckets + 1`
    /// entries.
    table: Vec<u32>,
    /// A point's bucket is `(p >> shift) & mask`.
    shift: u32,
    mask: u64,
    /// The index (on the whole circle) of the first point.
    pub(crate) start: usize,
    /// The first leaf after this one, going round, that holds a point: where a lookup
    /// past this leaf's last point lands.
    pub(crate) next: u32,
}

impl Leaf {
    /// The leaf over already sorted `points` of a stretch `span` bits wide, its index
    /// built with one pass over them (`table`'s allocation is reused).
    pub(crate) fn new(points: Vec<u64>, owners: OwnerVec, span: u32, table: Vec<u32>) -> Leaf {
        debug_assert_eq!(points.len(), owners.len());
        let mut leaf = Leaf {
            points,
            owners,
            table,
            ..Leaf::default()
        };
        leaf.reindex(span);
        leaf
    }

    /// The leaf over already sorted `points` covering the whole circle, with its index
    /// already built (`table`: the start of each of the `2^log_buckets(len)` buckets, then
    /// the length), as [`sort_split`](super::sort::sort_split) returns it.
    #[cfg(any(feature = "fleet", not(feature = "small-sort")))]
    pub(crate) fn with_built_table(
        points: Vec<u64>,
        owners: OwnerVec,
        bits: u32,
        table: Vec<u32>,
    ) -> Leaf {
        let (buckets, shift) = layout(points.len(), bits);
        debug_assert_eq!(table.len(), buckets + 1);
        debug_assert_eq!(
            Leaf::new(points.clone(), owners.clone(), bits, Vec::new()).table,
            table
        );
        Leaf {
            points,
            owners,
            table,
            shift,
            mask: buckets as u64 - 1,
            start: 0,
            next: 0,
        }
    }

    /// Rebuilds the index after the points changed (one pass over this leaf's points).
    pub(crate) fn reindex(&mut self, span: u32) {
        let (buckets, shift) = layout(self.points.len(), span);
        self.shift = shift;
        self.mask = buckets as u64 - 1;
        let (points, table) = (&self.points, &mut self.table);
        // table[b]: the first point whose bucket is b or later.
        table.clear();
        table.resize(buckets + 1, points.len() as u32);
        let mut next = 0usize;
        for (i, &p) in points.iter().enumerate() {
            let b = (bucket(p, shift) & self.mask) as usize;
            if b >= next {
                table[next..=b].fill(i as u32);
                next = b + 1;
            }
        }
    }

    /// Brings the index up to date after the points of `changed` (sorted) were inserted
    /// or removed: while the bucket layout stays the same, each bucket's start moves by
    /// the number of changed points before it, a pass over the table instead of the
    /// points.
    pub(crate) fn reindex_after<T>(&mut self, span: u32, changed: &[(u64, T)], inserted: bool) {
        let (buckets, shift) = layout(self.points.len(), span);
        if self.points.is_empty() || self.table.len() != buckets + 1 || shift != self.shift {
            return self.reindex(span);
        }
        let table = &mut self.table;
        let apply = |t: &mut [u32], n: u32| {
            if inserted {
                t.iter_mut().for_each(|x| *x += n);
            } else {
                t.iter_mut().for_each(|x| *x -= n);
            }
        };
        let (mut from, mut seen) = (0usize, 0u32);
        for (p, _) in changed {
            let b = (bucket(*p, shift) & self.mask) as usize;
            if b >= from {
                apply(&mut table[from..=b], seen);
                from = b + 1;
            }
            seen += 1;
        }
        apply(&mut table[from..], seen);
        // `changed` are the points that came or went: the index then ends at the length.
        // Should a caller's list ever disagree, a full pass rebuilds it rather than leave a
        // lookup an index past its points.
        debug_assert_eq!(table[buckets] as usize, self.points.len());
        if table.get(buckets).map(|&e| e as usize) != Some(self.points.len()) {
            self.reindex(span);
        }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.points.len()
    }

    /// Heap bytes held: points, owners and the bucket table (capacities).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.points.capacity() * core::mem::size_of::<u64>()
            + self.owners.heap_bytes()
            + self.table.capacity() * core::mem::size_of::<u32>()
    }

    /// Drops the index's memory (the leaf is about to be rebuilt) and gives it back.
    pub(crate) fn take_table(&mut self) -> Vec<u32> {
        core::mem::take(&mut self.table)
    }

    /// Index of this leaf's first point `>= target`; the leaf's length when every point
    /// is below it. `target` lies in this leaf's stretch.
    #[inline(always)]
    pub(crate) fn lower_bound(&self, target: u64) -> usize {
        // Slices, not the vectors: indexing a slice is built into the language, where a
        // `Vec` index is a call to `Index::index`, which size-optimised builds (the .wasm)
        // leave out of line.
        let (points, table): (&[u64], &[u32]) = (&self.points, &self.table);
        let b = (bucket(target, self.shift) & self.mask) as usize;
        let (lo, hi) = match (table.get(b), table.get(b + 1)) {
            (Some(&lo), Some(&hi)) => (lo as usize, hi as usize),
            _ => return 0,
        };
        if hi - lo > SCAN {
            return lo + points[lo..hi].partition_point(|&p| p < target);
        }
        // Count the bucket's points below `target` without a data-dependent branch: a
        // mispredicted branch per lookup would also stall the hashing of the next keys in
        // a batch. The points past the bucket are in later buckets, so at or above
        // `target`: they count for nothing and need no mask, except past the end of the
        // leaf, where reads are clamped in bounds and masked out.
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
            let Some(last) = points.len().checked_sub(1) else {
                return 0;
            };
            let mut i = lo;
            for j in 0..SCAN {
                let p = points[(lo + j).min(last)];
                i += usize::from((lo + j < hi) & (p < target));
            }
            i
        }
    }
}

/// A walk over one array of every leaf in circle order (the positions, or the owners):
/// `open` gives a leaf's iterator, and the walk goes on to the next leaf when one ends.
/// [`PositionsIter`](super::PositionsIter) and [`OwnersIter`](super::OwnersIter) are
/// walks.
#[derive(Debug, Clone)]
pub(crate) struct Walk<'a, I> {
    leaves: core::slice::Iter<'a, Leaf>,
    leaf: I,
    open: fn(&'a Leaf) -> I,
    left: usize,
}

impl<'a, I: Iterator + Default> Walk<'a, I> {
    /// A walk over `leaves`, which hold `len` points in all.
    pub(crate) fn new(leaves: &'a [Leaf], len: usize, open: fn(&'a Leaf) -> I) -> Self {
        Walk {
            leaves: leaves.iter(),
            leaf: I::default(),
            open,
            left: len,
        }
    }
}

impl<I: Iterator> Iterator for Walk<'_, I> {
    type Item = I::Item;

    #[inline]
    fn next(&mut self) -> Option<I::Item> {
        loop {
            if let Some(x) = self.leaf.next() {
                self.left -= 1;
                return Some(x);
            }
            self.leaf = (self.open)(self.leaves.next()?);
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

/// Buckets with at most this many points are scanned branch-free; fuller ones (2–18% of
/// lookups: there are 1.5–3 points per bucket on average) take a binary search. With a
/// bucket per 0.5–1 point, 2 beat 4 by a third on lookups; with 1.5–3 points per bucket,
/// 4 (8 was 1.5x slower on 4096-key batches, side by side).
const SCAN: usize = 4;

/// log2 of the number of buckets of the index of `len` points over `bits` bits.
pub(crate) fn log_buckets(len: usize, bits: u32) -> u32 {
    layout(len, bits).0.trailing_zeros()
}

/// The number of buckets of the index of `len` points over a stretch `bits` bits wide,
/// and the shift from a point to its bucket: the most buckets that leave 1.5 points or
/// more to each (1.5–3 points per bucket; the index costs 1.3–2.7 bytes per point, 1.6
/// at 160,000 points: issue 17's memory target of 12 bytes per point, with 8-byte native
/// positions and 2-byte owners).
pub(crate) fn layout(len: usize, bits: u32) -> (usize, u32) {
    let per_bucket = (len.saturating_mul(2) / 3).max(1);
    let log = (usize::BITS - 1 - per_bucket.leading_zeros()).min(bits);
    (1usize << log, bits - log)
}

#[inline(always)]
pub(crate) fn bucket(p: u64, shift: u32) -> u64 {
    p.checked_shr(shift).unwrap_or(0)
}
