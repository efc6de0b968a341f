//! The sorted circle, cut into leaves by the top bits of a position.
//!
//! A ring of fewer than [`CHUNK_FROM`] points is one leaf: one sorted array of positions,
//! one of owners and the bucket index over them. A larger ring is cut into `2^k` leaves
//! of about 512–1,024 points each, leaf `j` holding the positions whose top `k` bits are
//! `j`. A lookup takes one more step (the leaf of the position's top bits), and a change
//! to one node touches only the leaves its points fall in: one add to a 30,000 x 160 ring
//! merges into 160 leaves of about 600 points, where one array of 4.8 million points moved
//! all of them (issue 17).

use alloc::vec::Vec;

use super::leaf::Leaf;
use super::owner_vec::{OwnerInt, OwnerVec};

/// Rings of at least this many points are cut into leaves (below it, one leaf: every
/// change moves all points, which stays under 0.3 ms for a 1000 x 160 ring). Unit tests,
/// fuzzing and the `small-leaves` feature (for the ring suites) cut rings of 64 points,
/// so that small rings cross leaves.
const CHUNK_FROM: usize = if SMALL { 64 } else { 1 << 18 };

/// log2 of the points a leaf holds on average, at least (2^9 to 2^10 after a build). A
/// change is bound by memory: each leaf it touches is read from DRAM. One add to the
/// 30,000 x 160 ring took 2.5 ms with leaves of 2^11 to 2^12 points and 1.2 ms with
/// these (criterion, a fresh clone per add).
const LEAF_LOG: u32 = if SMALL { 3 } else { 9 };

const SMALL: bool = cfg!(any(test, fuzzing, feature = "small-leaves"));

/// The circle's sorted points with their owners, in leaves.
#[derive(Debug, Clone)]
pub(crate) struct Circle {
    /// `2^leaf_log` leaves, in circle order; never empty.
    leaves: Vec<Leaf>,
    /// The leaf of position `p` is `p >> leaf_shift` (`bits - leaf_log`).
    leaf_shift: u32,
    leaf_log: u32,
    /// Circle width in bits (32 or 64).
    bits: u32,
    /// Points on the circle.
    len: usize,
}

/// log2 of the number of leaves for a circle of `len` points.
fn leaf_log_for(len: usize, bits: u32) -> u32 {
    if len < CHUNK_FROM {
        return 0;
    }
    (usize::BITS - 1 - len.leading_zeros())
        .saturating_sub(LEAF_LOG)
        .min(bits / 2)
}

impl Circle {
    /// A circle without points.
    pub(crate) fn empty(bits: u32) -> Circle {
        Circle::build(Vec::new(), Vec::new(), bits, None, Vec::new())
    }

    /// The circle over already sorted `points` and their `owners`. `table` is the index
    /// [`sort_split`](super::sort::sort_split) built over the whole circle, if it did;
    /// `spare`, memory a one-leaf index may reuse.
    pub(crate) fn build(
        points: Vec<u64>,
        owners: Vec<u32>,
        bits: u32,
        table: Option<Vec<u32>>,
        spare: Vec<u32>,
    ) -> Circle {
        debug_assert_eq!(points.len(), owners.len());
        debug_assert!(points.windows(2).all(|w| w[0] <= w[1]));
        let len = points.len();
        let leaf_log = leaf_log_for(len, bits);
        let leaf_shift = bits - leaf_log;
        let leaves = if leaf_log == 0 {
            let owners = OwnerVec::from_wide(owners);
            alloc::vec![match table {
                #[cfg(not(feature = "small-sort"))]
                Some(table) => Leaf::with_built_table(points, owners, bits, table),
                _ => Leaf::new(points, owners, bits, table.unwrap_or(spare)),
            }]
        } else {
            let mut leaves = Vec::with_capacity(1 << leaf_log);
            let mut from = 0;
            for j in 0..(1u64 << leaf_log) {
                let to = from + points[from..].partition_point(|&p| p >> leaf_shift <= j);
                leaves.push(Leaf::new(
                    points[from..to].to_vec(),
                    OwnerVec::from_slice(&owners[from..to]),
                    leaf_shift,
                    Vec::new(),
                ));
                from = to;
            }
            leaves
        };
        let mut c = Circle {
            leaves,
            leaf_shift,
            leaf_log,
            bits,
            len,
        };
        c.relink();
        c
    }

    /// The circle over already sorted `points` and their `owners`, in one leaf: for a
    /// circle that is never changed (a fleet profile's), where leaves only cost a copy of
    /// every point (32M points: 384 MiB more, and 0.3 s). `table`, when given, is the
    /// leaf's index already built (as [`Leaf::with_built_table`] takes it).
    #[cfg(feature = "fleet")]
    pub(crate) fn build_whole(
        points: Vec<u64>,
        owners: Vec<u32>,
        bits: u32,
        table: Option<Vec<u32>>,
    ) -> Circle {
        debug_assert_eq!(points.len(), owners.len());
        debug_assert!(points.windows(2).all(|w| w[0] <= w[1]));
        let len = points.len();
        let owners = OwnerVec::from_wide(owners);
        let leaf = match table {
            Some(t) => Leaf::with_built_table(points, owners, bits, t),
            None => Leaf::new(points, owners, bits, Vec::new()),
        };
        let mut c = Circle {
            leaves: alloc::vec![leaf],
            leaf_shift: bits,
            leaf_log: 0,
            bits,
            len,
        };
        c.relink();
        c
    }

    /// Recounts the points, each leaf's start and the leaf after it that holds a point.
    fn relink(&mut self) {
        let mut start = 0;
        for leaf in &mut self.leaves {
            leaf.start = start;
            start += leaf.len();
        }
        self.len = start;
        // Going round backwards: `next` is the nearest later leaf that holds a point.
        let n = self.leaves.len();
        let mut next = (0..n).find(|&j| self.leaves[j].len() > 0).unwrap_or(0) as u32;
        for j in (0..n).rev() {
            self.leaves[j].next = next;
            if self.leaves[j].len() > 0 {
                next = j as u32;
            }
        }
    }

    /// After a change: relinks the leaves, and cuts the circle anew when its length has
    /// left the range its leaves were cut for (a factor of 4 either way, so a ring at a
    /// boundary does not recut on every change).
    fn settle(&mut self) {
        self.relink();
        let want = leaf_log_for(self.len, self.bits);
        let cur = self.leaf_log;
        let recut = if cur == 0 {
            want > 0
        } else {
            self.len < CHUNK_FROM / 2 || want.abs_diff(cur) >= 2
        };
        if recut {
            let mut points = Vec::with_capacity(self.len);
            let mut owners = Vec::with_capacity(self.len);
            for leaf in core::mem::take(&mut self.leaves) {
                points.extend_from_slice(&leaf.points);
                owners.extend(leaf.owners.iter());
            }
            *self = Circle::build(points, owners, self.bits, None, Vec::new());
        }
    }

    /// The leaves, in circle order.
    pub(crate) fn leaves(&self) -> &[Leaf] {
        &self.leaves
    }

    /// The only leaf, if the circle is one.
    pub(crate) fn one_leaf_only(&self) -> Option<&Leaf> {
        match self.leaves.as_slice() {
            [one, ..] if self.leaves.len() == 1 => Some(one),
            _ => None,
        }
    }

    /// The leaf that holds position `p`.
    #[inline(always)]
    fn leaf_of(&self, p: u64) -> usize {
        (p.checked_shr(self.leaf_shift).unwrap_or(0) as usize).min(self.leaves.len() - 1)
    }

    /// Changes the leaves that `changes` (sorted by position) fall in: `edit` gets the
    /// points and owners of each such leaf with its share of `changes`, inserts them
    /// (`inserted`) or removes them, and gives the owners back; each leaf's index is then
    /// brought up to date.
    pub(crate) fn edit<T>(
        &mut self,
        changes: &[(u64, T)],
        inserted: bool,
        mut edit: impl FnMut(&mut Vec<u64>, OwnerVec, &[(u64, T)]) -> OwnerVec,
    ) {
        let span = self.leaf_shift;
        let mut rest = changes;
        while let Some(&(p, _)) = rest.first() {
            let j = self.leaf_of(p);
            let end = rest.partition_point(|e| self.leaf_of(e.0) <= j);
            let (run, tail) = rest.split_at(end);
            let leaf = &mut self.leaves[j];
            let owners = core::mem::take(&mut leaf.owners);
            leaf.owners = edit(&mut leaf.points, owners, run);
            leaf.reindex_after(span, run, inserted);
            rest = tail;
        }
        self.settle();
    }

    /// Changes every leaf: `edit` gets each leaf's points and owners, gives the owners
    /// back with the (point, owner) pairs it removed (sorted), and each leaf's index is
    /// brought up to date.
    pub(crate) fn edit_each(
        &mut self,
        mut edit: impl FnMut(&mut Vec<u64>, OwnerVec) -> (OwnerVec, Vec<(u64, u32)>),
    ) {
        let span = self.leaf_shift;
        for leaf in &mut self.leaves {
            let owners = core::mem::take(&mut leaf.owners);
            let (owners, gone) = edit(&mut leaf.points, owners);
            leaf.owners = owners;
            leaf.reindex_after(span, &gone, false);
        }
        self.settle();
    }

    /// Moves every owner above `index` down by one (node `index` left the ring).
    pub(crate) fn renumber_above(&mut self, index: u32) {
        for leaf in &mut self.leaves {
            match &mut leaf.owners {
                OwnerVec::Narrow(v, _) => v.iter_mut().for_each(|o| {
                    *o -= u16::from(u32::from(*o) > index);
                }),
                OwnerVec::Wide(v) => v.iter_mut().for_each(|o| *o -= u32::from(*o > index)),
            }
        }
    }

    /// The index memory of a one-leaf circle, for a rebuild to reuse.
    pub(crate) fn take_table(&mut self) -> Option<Vec<u32>> {
        match self.leaves.as_mut_slice() {
            [one] => Some(one.take_table()),
            _ => None,
        }
    }

    /// Heap bytes held: the leaves with their points, owners and bucket tables.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.leaves.capacity() * core::mem::size_of::<Leaf>()
            + self.leaves.iter().map(Leaf::heap_bytes).sum::<usize>()
    }

    /// The number of points.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The leaf and index in it of the first point `>= target` (`> target` with `above`),
    /// going round past the last point to the first; `None` on an empty circle. Out of
    /// line in the size-minded build (`small-sort`): each lookup of the JavaScript
    /// package's .wasm inlines only the one-leaf path and calls this for larger circles
    /// (0.75 KB gzipped less).
    #[cfg_attr(not(feature = "small-sort"), inline(always))]
    #[cfg_attr(feature = "small-sort", inline(never))]
    pub(crate) fn seek(&self, target: u64, above: bool) -> Option<(&Leaf, usize)> {
        if self.len == 0 {
            return None;
        }
        let leaves: &[Leaf] = &self.leaves;
        let target = if above {
            match target.checked_add(1) {
                Some(t) if self.bits == 64 || t >> 32 == 0 => t,
                _ => return self.first(),
            }
        } else {
            target
        };
        let Some(leaf) = leaves.get(target.checked_shr(self.leaf_shift).unwrap_or(0) as usize)
        else {
            return self.first();
        };
        let i = leaf.lower_bound(target);
        if i < leaf.len() {
            Some((leaf, i))
        } else {
            leaves.get(leaf.next as usize).map(|l| (l, 0))
        }
    }

    /// The first point's leaf.
    fn first(&self) -> Option<(&Leaf, usize)> {
        let last = self.leaves.last()?;
        self.leaves.get(last.next as usize).map(|l| (l, 0))
    }

    /// The owner of the first point `>= target` (`> target` with `above`).
    #[inline(always)]
    pub(crate) fn owner_at(&self, target: u64, above: bool) -> Option<u32> {
        let (leaf, i) = match self.leaves.as_slice() {
            [one, ..] if self.leaves.len() == 1 => {
                let i = match above {
                    false => one.lower_bound(target),
                    true => match target.checked_add(1) {
                        Some(t) if self.bits == 64 || t >> 32 == 0 => one.lower_bound(t),
                        _ => 0,
                    },
                };
                (one, if i < one.len() { i } else { 0 })
            }
            _ => self.seek(target, above)?,
        };
        leaf.owners.get(i)
    }

    /// The owner of the first point `>= hashes[k]` (`>` with `above`) into `out[k]`,
    /// `none` on an empty circle. A one-leaf circle matches its owners' width once, not
    /// per key (a batch of 4,096 native keys: 5% faster, side by side).
    #[inline(always)]
    pub(crate) fn owners_into(&self, hashes: &[u64], above: bool, out: &mut [u32], none: u32) {
        match self.leaves.as_slice() {
            [one, ..] if self.leaves.len() == 1 => match &one.owners {
                OwnerVec::Narrow(v, _) => self.one_leaf(one, v, hashes, above, out, none),
                OwnerVec::Wide(v) => self.one_leaf(one, v, hashes, above, out, none),
            },
            _ => {
                for (o, &h) in out.iter_mut().zip(hashes) {
                    *o = self.owner_at(h, above).unwrap_or(none);
                }
            }
        }
    }

    #[inline(always)]
    fn one_leaf<O: OwnerInt>(
        &self,
        leaf: &Leaf,
        owners: &[O],
        hashes: &[u64],
        above: bool,
        out: &mut [u32],
        none: u32,
    ) {
        for (o, &h) in out.iter_mut().zip(hashes) {
            let i = match above {
                false => leaf.lower_bound(h),
                true => match h.checked_add(1) {
                    Some(t) if self.bits == 64 || t >> 32 == 0 => leaf.lower_bound(t),
                    _ => 0,
                },
            };
            let i = if i < owners.len() { i } else { 0 };
            *o = owners.get(i).map_or(none, |&x| x.into());
        }
    }

    /// Index of the first point `>= target` (`> target` with `above`), going round past
    /// the last point to 0; `None` on an empty circle.
    #[inline(always)]
    pub(crate) fn lower_bound(&self, target: u64, above: bool) -> Option<usize> {
        self.seek(target, above).map(|(leaf, i)| leaf.start + i)
    }

    /// The index of the leaf holding point `i` and `i`'s index in it.
    #[inline]
    fn locate_leaf(&self, i: usize) -> Option<(usize, usize)> {
        let leaves = self.leaves.as_slice();
        let j = match leaves {
            [_, ..] if leaves.len() == 1 => 0,
            _ => leaves.partition_point(|l| l.start <= i).checked_sub(1)?,
        };
        let k = i - leaves[j].start;
        (k < leaves[j].len()).then_some((j, k))
    }

    /// The leaf holding point `i` and `i`'s index in it.
    #[inline]
    pub(crate) fn locate(&self, i: usize) -> Option<(&Leaf, usize)> {
        self.locate_leaf(i).map(|(j, k)| (&self.leaves[j], k))
    }

    /// The position of point `i`.
    #[inline]
    pub(crate) fn point(&self, i: usize) -> Option<u64> {
        self.locate(i).map(|(leaf, k)| leaf.points[k])
    }

    /// The owner of point `i`.
    #[inline]
    pub(crate) fn owner(&self, i: usize) -> Option<u32> {
        self.locate(i).and_then(|(leaf, k)| leaf.owners.get(k))
    }

    /// The owners of every point from `i` on, going round: `len` of them.
    pub(crate) fn owners_from(&self, i: usize) -> OwnersFrom<'_> {
        let (leaf, at) = self.locate_leaf(i).unwrap_or((0, 0));
        OwnersFrom {
            circle: self,
            leaf,
            at,
            left: self.len,
        }
    }
}

/// The iterator of [`Circle::owners_from`].
#[derive(Debug)]
pub(crate) struct OwnersFrom<'a> {
    circle: &'a Circle,
    leaf: usize,
    at: usize,
    left: usize,
}

impl Iterator for OwnersFrom<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        let leaves = self.circle.leaves.as_slice();
        loop {
            let leaf = leaves.get(self.leaf)?;
            if self.at < leaf.len() {
                self.at += 1;
                self.left -= 1;
                return leaf.owners.get(self.at - 1);
            }
            self.leaf = (self.leaf + 1) % leaves.len();
            self.at = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn circle(points: &[u64], bits: u32) -> Circle {
        let owners = (0..points.len() as u32).collect();
        Circle::build(points.to_vec(), owners, bits, None, Vec::new())
    }

    #[test]
    fn matches_a_plain_binary_search() {
        let pts: Vec<u64> = vec![5, 5, 9, 1000, 1 << 31, (1 << 32) - 1];
        let c = circle(&pts, 32);
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
        assert_eq!(Circle::empty(64).lower_bound(3, false), None);
        let c64 = circle(&[7, u64::MAX], 64);
        assert_eq!(c64.lower_bound(u64::MAX, false), Some(1));
        assert_eq!(c64.lower_bound(u64::MAX, true), Some(0));
    }

    #[test]
    fn large_circles_are_cut_into_leaves_and_walk_round() {
        // Points bunched into the top half: the lower leaves are empty, and a lookup in
        // them goes on to the first leaf that holds a point.
        let pts: Vec<u64> = (0..1000u64).map(|i| (1 << 63) + i * (1 << 52)).collect();
        let c = circle(&pts, 64);
        assert!(c.leaves().len() > 1);
        assert!(c.leaves().iter().any(|l| l.len() == 0));
        assert_eq!(c.lower_bound(0, false), Some(0));
        assert_eq!(c.lower_bound(u64::MAX, false), Some(0));
        for (i, &p) in pts.iter().enumerate() {
            assert_eq!(c.point(i), Some(p));
            assert_eq!(c.owner(i), Some(i as u32));
            assert_eq!(c.lower_bound(p, false), Some(i));
            assert_eq!(c.lower_bound(p, true), Some((i + 1) % pts.len()));
        }
        assert_eq!(c.point(pts.len()), None);
        let walk: Vec<u32> = c.owners_from(998).collect();
        assert_eq!(walk.len(), 1000);
        assert_eq!(walk[..3], [998, 999, 0]);
        assert_eq!(walk[999], 997);
    }

    proptest::proptest! {
        // Crowded buckets (more than SCAN points: the partition_point path), sparse
        // ones (the branch-free scan), duplicates, both circle widths, one leaf and many.
        #[test]
        fn equals_a_plain_binary_search(
            mut pts in proptest::collection::vec(0u64..(1 << 32), 1..400),
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
            let c = circle(&pts, bits);
            for t in targets.iter().map(|t| t * scale).chain(pts.iter().copied()) {
                let want = pts.partition_point(|&p| p < t) % pts.len();
                proptest::prop_assert_eq!(c.lower_bound(t, false), Some(want));
                proptest::prop_assert_eq!(c.owner_at(t, false), Some(want as u32));
                let want_above = pts.partition_point(|&p| p <= t) % pts.len();
                proptest::prop_assert_eq!(c.lower_bound(t, true), Some(want_above));
            }
            let walk: Vec<u32> = c.owners_from(pts.len() / 2).collect();
            let want: Vec<u32> = (0..pts.len()).map(|s| ((pts.len() / 2 + s) % pts.len()) as u32).collect();
            proptest::prop_assert_eq!(walk, want);
        }
    }
}
