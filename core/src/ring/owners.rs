//! The owners of a ring's points, read through its leaves (stored as `owner_vec.rs`
//! keeps them).

use alloc::vec::Vec;

use super::index::Circle;
use super::leaf::{Leaf, Walk};
use super::owner_vec::LeafIter;

/// The owners of a ring's points, clockwise: [`Owners::get`]`(i)` is the index (into
/// [`Ring::nodes`](super::Ring::nodes)) of the node owning point `i`. Rings of up to
/// 65,536 nodes store them in 16 bits.
///
/// ```
/// use keyroute::ring::{Profile, Ring};
/// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1)])?;
/// let owners = ring.owners();
/// assert_eq!(owners.len(), ring.point_count());
/// assert!(owners.iter().all(|o| o < 2));
/// assert_eq!(owners.get(0), owners.to_vec().first().copied());
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Owners<'a>(&'a Circle);

impl<'a> Owners<'a> {
    pub(crate) fn new(circle: &'a Circle) -> Owners<'a> {
        Owners(circle)
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the ring has no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The owner of point `i`; `None` past the last point.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        self.0.owner(i)
    }

    /// The owners in point order.
    pub fn iter(&self) -> OwnersIter<'a> {
        let open: fn(&'a Leaf) -> _ = |leaf| leaf.owners.iter();
        OwnersIter(Walk::new(self.0.leaves(), self.0.len(), open))
    }

    /// The owners as a vector of `u32`.
    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }
}

impl PartialEq for Owners<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Owners<'_> {}

impl<'a> IntoIterator for Owners<'a> {
    type Item = u32;
    type IntoIter = OwnersIter<'a>;

    fn into_iter(self) -> OwnersIter<'a> {
        self.iter()
    }
}

/// The iterator of [`Owners::iter`].
#[derive(Debug, Clone)]
pub struct OwnersIter<'a>(Walk<'a, LeafIter<'a>>);

impl Iterator for OwnersIter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        self.0.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for OwnersIter<'_> {}
