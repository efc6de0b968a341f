//! What a ring looks like and what a change moves: arcs, shares and diffs.

use alloc::string::String;
use alloc::vec::Vec;

use super::error::RingError;
use super::profile::Lookup;
use super::ring::Ring;

/// One arc of the circle: every position from `start` to `end` (inclusive) belongs to
/// `owner` (an index into [`Ring::nodes`]). An arc may wrap past the top of the circle
/// (`start > end`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arc {
    /// First position of the arc.
    pub start: u64,
    /// Last position of the arc (inclusive).
    pub end: u64,
    /// Owner index.
    pub owner: usize,
}

fn width(bits: u32) -> u128 {
    1u128 << bits
}

impl Ring {
    /// The arcs of the circle, one per point, clockwise (zero-length arcs of duplicate
    /// points are left out). Empty on an empty ring.
    pub fn arcs(&self) -> Vec<Arc> {
        let pts = self.positions();
        let Some(last) = pts.len().checked_sub(1).and_then(|l| pts.get(l)) else {
            return Vec::new();
        };
        let bits = self.profile().hash().bits();
        let top = (width(bits) - 1) as u64;
        let above = self.profile().lookup() == Lookup::Above;
        let mut out = Vec::with_capacity(pts.len());
        // Each point with the one before it (going round: the last before the first).
        let mut prev = last;
        for (i, (p, o)) in pts.iter().zip(self.owners()).enumerate() {
            let before = prev;
            prev = p;
            if i > 0 && before == p {
                continue;
            }
            // `>=`: the arc is (prev, p]; `>`: it is [prev, p). When every point is equal,
            // the first arc covers the circle.
            let (start, end) = if above {
                (before, p.wrapping_sub(1) & top)
            } else {
                (before.wrapping_add(1) & top, p)
            };
            out.push(Arc {
                start,
                end,
                owner: o as usize,
            });
        }
        out
    }

    /// The exact fraction of the circle (and so of uniformly hashed keys) each node owns,
    /// indexed like [`Ring::nodes`]. Sums to 1 on a non-empty ring.
    ///
    /// ```
    /// use keyroute::ring::{Profile, Ring};
    /// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 3)])?;
    /// let s = ring.shares();
    /// assert!((s[0] + s[1] - 1.0).abs() < 1e-12);
    /// assert!(s[1] > s[0]);
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub fn shares(&self) -> Vec<f64> {
        let mut acc = alloc::vec![0u128; self.len()];
        let pts = self.positions();
        let Some(last) = pts.len().checked_sub(1).and_then(|l| pts.get(l)) else {
            return alloc::vec![0.0; self.len()];
        };
        let w = width(self.profile().hash().bits());
        // The first point's arc wraps past the top, from the last point.
        let mut prev: Option<u64> = None;
        for (p, o) in pts.iter().zip(self.owners()) {
            let len = match prev {
                None => w - last as u128 + p as u128,
                Some(q) => (p - q) as u128,
            };
            prev = Some(p);
            if let Some(a) = acc.get_mut(o as usize) {
                *a += len;
            }
        }
        // Duplicated single point: the wrap arc counted the whole circle once.
        acc.into_iter().map(|a| a as f64 / w as f64).collect()
    }
}

/// A stretch of the circle whose owner changed between two rings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedArc {
    /// First position (inclusive).
    pub start: u64,
    /// Last position (inclusive).
    pub end: u64,
    /// The owner in the old ring (`None` if the old ring was empty).
    pub from: Option<String>,
    /// The owner in the new ring (`None` if the new ring is empty).
    pub to: Option<String>,
}

/// What changes between two rings whose keys hash the same way.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    /// The moved stretches, clockwise, adjacent ones with the same owners merged.
    pub moved: Vec<MovedArc>,
    /// The fraction of the key space that changes owner.
    pub moved_fraction: f64,
    /// The least any ring could move for the same change of shares: the sum over nodes of
    /// the share each gains (total variation distance between the share vectors).
    pub ideal_fraction: f64,
}

/// Compares two rings position by position.
///
/// ```
/// use keyroute::ring::{diff, Profile, Ring};
/// let old = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1), ("c", 1)])?;
/// let mut new = old.clone();
/// new.add("d", 1)?;
/// let d = diff(&old, &new)?;
/// assert!(d.moved.iter().all(|m| m.to.as_deref() == Some("d")));
/// assert!((d.moved_fraction - d.ideal_fraction).abs() < 1e-12);
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
///
/// # Errors
/// [`RingError::IncompatibleRings`] when the rings hash keys differently.
pub fn diff(old: &Ring, new: &Ring) -> Result<Diff, RingError> {
    if old.profile().hash() != new.profile().hash() {
        return Err(RingError::IncompatibleRings);
    }
    let bits = old.profile().hash().bits();
    let w = width(bits);
    let top = (w - 1) as u64;
    // Positions where an owner may change: just after a `>=` point, at a `>` point. Each
    // ring's are in order already: merged, without repeats (no sort).
    fn cuts_of(r: &Ring, top: u64) -> impl Iterator<Item = u64> + '_ {
        let above = r.profile().lookup() == Lookup::Above;
        r.positions().iter().filter_map(move |p| match p {
            p if above => Some(p),
            p if p < top => Some(p + 1),
            _ => None,
        })
    }
    let (mut a, mut b) = (cuts_of(old, top).peekable(), cuts_of(new, top).peekable());
    let mut cuts: Vec<u64> = Vec::with_capacity(old.point_count() + new.point_count() + 1);
    cuts.push(0);
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_), None) => a.next(),
            _ => b.next(),
        };
        let Some(x) = next else { break };
        if cuts.last() != Some(&x) {
            cuts.push(x);
        }
    }
    let owner = |r: &Ring, x: u64| r.owner_for_hash(x);
    let name = |r: &Ring, o: Option<usize>| o.map(|i| String::from(r.nodes()[i].name()));
    let mut moved: Vec<MovedArc> = Vec::new();
    let mut moved_len: u128 = 0;
    for (k, &s) in cuts.iter().enumerate() {
        let end = cuts.get(k + 1).map_or(top, |&n| n - 1);
        let (a, b) = (owner(old, s), owner(new, s));
        let (an, bn) = (
            a.map(|i| old.nodes()[i].name()),
            b.map(|i| new.nodes()[i].name()),
        );
        if an == bn {
            continue;
        }
        moved_len += (end - s) as u128 + 1;
        if let Some(last) = moved.last_mut() {
            if last.end.wrapping_add(1) == s
                && last.from.as_deref() == an
                && last.to.as_deref() == bn
            {
                last.end = end;
                continue;
            }
        }
        moved.push(MovedArc {
            start: s,
            end,
            from: name(old, a),
            to: name(new, b),
        });
    }
    let (so, sn) = (old.shares(), new.shares());
    let mut ideal = 0.0;
    for (i, node) in new.nodes().iter().enumerate() {
        let before = old.node_index(node.name()).map_or(0.0, |j| so[j]);
        if sn[i] > before {
            ideal += sn[i] - before;
        }
    }
    if new.is_empty() && !old.is_empty() {
        ideal = 1.0;
    }
    Ok(Diff {
        moved,
        moved_fraction: moved_len as f64 / w as f64,
        ideal_fraction: ideal,
    })
}
