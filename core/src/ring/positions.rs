//! The sorted positions of a ring's points, read through its leaves.

use alloc::vec::Vec;

use super::index::Circle;
use super::leaf::{Leaf, Walk};

/// The sorted positions of a ring's points, clockwise from 0 (32-bit profiles use values
/// below 2³²). Large rings keep them in leaves of a few thousand points, so this is a
/// view rather than one slice: index it, iterate it or copy it out.
///
/// ```
/// use keyroute::ring::{Profile, Ring};
/// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1)])?;
/// let positions = ring.positions();
/// assert_eq!(positions.len(), ring.point_count());
/// assert!(positions.iter().zip(positions.iter().skip(1)).all(|(a, b)| a <= b));
/// assert_eq!(positions[0], positions.to_vec()[0]);
/// assert_eq!(positions.get(positions.len()), None);
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Positions<'a>(&'a Circle);

impl<'a> Positions<'a> {
    pub(crate) fn new(circle: &'a Circle) -> Positions<'a> {
        Positions(circle)
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the ring has no point.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The position of point `i`; `None` past the last point.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u64> {
        self.0.point(i)
    }

    /// The positions in order.
    pub fn iter(&self) -> PositionsIter<'a> {
        let open: fn(&'a Leaf) -> _ = |leaf| leaf.points.iter().copied();
        PositionsIter(Walk::new(self.0.leaves(), self.0.len(), open))
    }

    /// The positions as a vector.
    pub fn to_vec(&self) -> Vec<u64> {
        match self.0.one_leaf_only() {
            Some(leaf) => leaf.points.clone(),
            None => self.iter().collect(),
        }
    }
}

impl core::ops::Index<usize> for Positions<'_> {
    type Output = u64;

    /// # Panics
    /// Past the last point, as a slice does.
    fn index(&self, i: usize) -> &u64 {
        match self.0.locate(i) {
            Some((leaf, k)) => &leaf.points[k],
            None => panic!("point {i} is past the last of {}", self.len()),
        }
    }
}

impl PartialEq for Positions<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Positions<'_> {}

impl PartialEq<[u64]> for Positions<'_> {
    fn eq(&self, other: &[u64]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl PartialEq<&[u64]> for Positions<'_> {
    fn eq(&self, other: &&[u64]) -> bool {
        *self == **other
    }
}

impl<'a> IntoIterator for Positions<'a> {
    type Item = u64;
    type IntoIter = PositionsIter<'a>;

    fn into_iter(self) -> PositionsIter<'a> {
        self.iter()
    }
}

/// The iterator of [`Positions::iter`].
#[derive(Debug, Clone)]
pub struct PositionsIter<'a>(Walk<'a, core::iter::Copied<core::slice::Iter<'a, u64>>>);

impl Iterator for PositionsIter<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        self.0.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for PositionsIter<'_> {}
