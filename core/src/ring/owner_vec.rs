//! The owners of a circle's points: one node index per point, stored in 16 bits while
//! every index fits (circles of up to 65,536 nodes: 2 bytes per point instead of 4) and
//! in 32 bits beyond.

use alloc::vec::Vec;

/// Runs `$body` on the owners in their own width (`$o`: a `Vec<u16>` or a `Vec<u32>`)
/// and gives back `(the owners, what $body returned)`.
macro_rules! with_width {
    ($owners:expr, $o:ident => $body:expr) => {
        match $owners {
            OwnerVec::Narrow(mut $o, w) => {
                let out = $body;
                (OwnerVec::Narrow($o, w), out)
            }
            OwnerVec::Wide(mut $o) => {
                let out = $body;
                (OwnerVec::Wide($o), out)
            }
        }
    };
}
pub(crate) use with_width;

/// A node index as the circle stores it: `u16` or `u32`.
pub(crate) trait OwnerInt: Copy + Ord + Default + Into<u32> + TryFrom<u32> {
    /// `o` in this width; `o` fits (the caller widened the storage first).
    #[inline(always)]
    fn from_index(o: u32) -> Self {
        debug_assert!(Self::try_from(o).is_ok(), "owner {o} does not fit");
        Self::try_from(o).ok().unwrap_or_default()
    }
}

impl OwnerInt for u16 {}
impl OwnerInt for u32 {}

/// The owners of a circle's points, `u16` while every node index fits.
#[derive(Debug, Clone)]
pub(crate) enum OwnerVec {
    /// Every index is at most `u16::MAX` (never in the size-minded build: see [`Narrowed`]).
    #[cfg_attr(feature = "small-sort", allow(dead_code))]
    Narrow(Vec<u16>, Narrowed),
    /// Some index is above `u16::MAX`.
    Wide(Vec<u32>),
}

/// `()`, or in the size-minded build (`small-sort`, the JavaScript package's .wasm)
/// uninhabited: that build stores every owner in 32 bits (2 bytes per point more), and
/// every 16-bit arm of the lookups and in-place changes compiles away (1.0 KB gzipped of
/// its .wasm, which its 45 KB budget needed for changing rings in place).
#[cfg(not(feature = "small-sort"))]
pub(crate) type Narrowed = ();
#[cfg(feature = "small-sort")]
pub(crate) type Narrowed = core::convert::Infallible;

impl Default for OwnerVec {
    fn default() -> Self {
        OwnerVec::Wide(Vec::new())
    }
}

impl OwnerVec {
    /// The owners in the narrowest width that holds them all (`owners` is dropped once
    /// copied into 16 bits).
    pub(crate) fn from_wide(owners: Vec<u32>) -> OwnerVec {
        #[cfg(not(feature = "small-sort"))]
        if owners.iter().all(|&o| o <= u32::from(u16::MAX)) {
            return OwnerVec::Narrow(owners.iter().map(|&o| o as u16).collect(), ());
        }
        OwnerVec::Wide(owners)
    }

    /// [`OwnerVec::from_wide`] of a copy of `owners`.
    pub(crate) fn from_slice(owners: &[u32]) -> OwnerVec {
        #[cfg(not(feature = "small-sort"))]
        if owners.iter().all(|&o| o <= u32::from(u16::MAX)) {
            return OwnerVec::Narrow(owners.iter().map(|&o| o as u16).collect(), ());
        }
        OwnerVec::Wide(owners.to_vec())
    }

    /// The same owners in a width that holds `index` too.
    pub(crate) fn holding(self, index: u32) -> OwnerVec {
        match self {
            OwnerVec::Narrow(v, _) if index > u32::from(u16::MAX) => {
                OwnerVec::Wide(v.into_iter().map(u32::from).collect())
            }
            o => o,
        }
    }

    /// The owner of point `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> Option<u32> {
        // Slices, not the vectors: `Vec` indexing stays a call in size-optimised builds.
        match self {
            OwnerVec::Narrow(v, _) => v.as_slice().get(i).map(|&o| u32::from(o)),
            OwnerVec::Wide(v) => v.as_slice().get(i).copied(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            OwnerVec::Narrow(v, _) => v.len(),
            OwnerVec::Wide(v) => v.len(),
        }
    }

    /// Heap bytes held (capacity).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            OwnerVec::Narrow(v, _) => v.capacity() * core::mem::size_of::<u16>(),
            OwnerVec::Wide(v) => v.capacity() * core::mem::size_of::<u32>(),
        }
    }

    /// The owners in order.
    pub(crate) fn iter(&self) -> LeafIter<'_> {
        match self {
            OwnerVec::Narrow(v, _) => LeafIter::Narrow(v.iter()),
            OwnerVec::Wide(v) => LeafIter::Wide(v.iter()),
        }
    }
}

/// The owners of one leaf, as `u32`.
#[derive(Debug, Clone, Default)]
pub(crate) enum LeafIter<'a> {
    /// Before the first leaf of a walk.
    #[default]
    Done,
    Narrow(core::slice::Iter<'a, u16>),
    Wide(core::slice::Iter<'a, u32>),
}

impl Iterator for LeafIter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            LeafIter::Narrow(it) => it.next().map(|&o| u32::from(o)),
            LeafIter::Wide(it) => it.next().copied(),
            LeafIter::Done => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    #[cfg(feature = "small-sort")]
    fn the_size_minded_build_stores_every_owner_in_32_bits() {
        let w = OwnerVec::from_wide(vec![0, 7, 65535]);
        assert!(matches!(w, OwnerVec::Wide(_)));
        assert_eq!(w.heap_bytes(), 3 * 4);
        assert!(matches!(OwnerVec::from_slice(&[1, 2]), OwnerVec::Wide(_)));
        assert!(matches!(OwnerVec::default(), OwnerVec::Wide(_)));
    }

    #[test]
    #[cfg(not(feature = "small-sort"))]
    fn narrow_while_every_index_fits_and_wide_beyond() {
        let n = OwnerVec::from_wide(vec![0, 7, 65535]);
        assert!(matches!(n, OwnerVec::Narrow(..)));
        assert_eq!(n.iter().collect::<Vec<u32>>(), [0, 7, 65535]);
        assert_eq!(n.heap_bytes(), 3 * 2);
        let w = OwnerVec::from_wide(vec![0, 65536]);
        assert!(matches!(w, OwnerVec::Wide(_)));
        assert_eq!(w.get(1), Some(65536));
        assert_eq!(w.get(2), None);
        // Widening keeps every owner.
        let h = n.clone().holding(65536);
        assert!(matches!(h, OwnerVec::Wide(_)));
        assert!(h.iter().eq(n.iter()));
        assert!(matches!(n.holding(65535), OwnerVec::Narrow(..)));
    }
}
