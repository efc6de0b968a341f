//! [`PointRing`]: a sorted circle of points built by a fleet profile, with the peer's key
//! hash, lookup rule and tie rule.

use alloc::vec::Vec;

use super::error::EngineError;
use super::keyhash::{KeyHash, KeyTag};
use crate::ring::index::Circle;
use crate::ring::leaf::log_buckets;
use crate::ring::sort::{sort_points, sort_split};
use crate::ring::{NodeSpec, Owners, Positions, RingError, MAX_POINTS};

/// Which point owns a key's hash `h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Seek {
    /// The first point `>= h`, wrapping to the first point (nginx, Envoy, Jedis' `tailMap`,
    /// groupcache, Dubbo's `ceilingEntry`, spymemcached, twemproxy).
    Ceiling,
    /// The last point `<= h`, wrapping to the last point (redis-rb, Predis).
    Floor,
    /// The nearest point in either direction on a 32-bit circle, an exact tie in distance
    /// going to the point before (HAProxy's `chash_get_server_hash`).
    Closest,
}

/// Which owner keeps a position that several points share.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dedup {
    /// The point put first (nginx on glibc: a stable sort, then the first of each run).
    KeepFirst,
    /// The point put last (a Java `TreeMap.put`, a Ruby or PHP hash, a Go map).
    KeepLast,
    /// Every point stays; a lookup lands on the first of a run (Envoy's sorted vector).
    KeepAll,
}

/// The rules of one point ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PointRules {
    /// The profile's name (`"nginx"`, `"jedis"`, ...).
    pub name: &'static str,
    /// How keys are hashed.
    pub key_hash: KeyHash,
    /// Which part of a key is hashed.
    pub tag: KeyTag,
    /// The lookup rule.
    pub seek: Seek,
    /// The tie rule.
    pub dedup: Dedup,
}

/// A sorted circle of points, as a fleet profile builds it (see
/// [`FleetProfile`](super::FleetProfile)).
///
/// ```
/// use keyroute::engine::{Engine, FleetProfile};
/// use keyroute::ring::parse_nodes;
///
/// let nodes = parse_nodes("10.0.0.1:80,10.0.0.2:80=2")?;
/// let ring = FleetProfile::from_name("nginx")?.build(&nodes, &[])?;
/// assert!(ring.get(b"/index.html").is_some());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PointRing {
    rules: PointRules,
    nodes: Vec<NodeSpec>,
    circle: Circle,
    /// Nodes that keep their points but are skipped (nginx `down`): empty when none.
    down: Vec<bool>,
}

impl PointRing {
    /// A ring of `nodes` whose points `points` yields as `(position, node index)`, in the
    /// order the peer puts them (the order decides ties under [`Dedup`]).
    ///
    /// # Errors
    /// [`RingError::TooManyPoints`] above [`MAX_POINTS`]; node errors of
    /// [`check_nodes`](super::check_nodes).
    pub fn from_points(
        rules: PointRules,
        nodes: Vec<NodeSpec>,
        points: impl IntoIterator<Item = (u64, u32)>,
    ) -> Result<PointRing, EngineError> {
        super::check_nodes(&nodes)?;
        let bits = rules.key_hash.bits();
        // At most one point past the limit is taken, to tell that it was passed.
        let limit = MAX_POINTS as usize + 1;
        let (points, owners) = if bits <= 32 {
            // A 32-bit position and its order fit one sort key: the position in the top
            // bits (where the bucket sort looks), the order below it. A Vec given is
            // rewritten in place (no copy), and the two-pass bucket sort is linear on
            // hashed points: 200k nginx servers (32M points) read and built in 2.2-2.6 s,
            // from 4.7 s with a comparison sort of (position, order, owner) triples.
            let shift = 64 - bits;
            let entries: Vec<(u64, u32)> = points
                .into_iter()
                .take(limit)
                .enumerate()
                .map(|(seq, (p, owner))| {
                    debug_assert!(p >> bits == 0, "a {bits}-bit position");
                    ((p << shift) | seq as u64, owner)
                })
                .collect();
            if entries.len() == limit {
                return Err(RingError::TooManyPoints(MAX_POINTS + 1).into());
            }
            // Sorted straight into the circle's two arrays, then deduplicated in place.
            let log = log_buckets(entries.len(), 64).saturating_sub(2);
            let (mut points, mut owners, _) = sort_split(entries, |e| e, log, 64);
            let len = dedup_in_place(&mut points, &mut owners, rules.dedup, shift);
            points.truncate(len);
            owners.truncate(len);
            (points, owners)
        } else {
            let mut entries: Vec<(u64, u32, u32)> = points
                .into_iter()
                .take(limit)
                .enumerate()
                .map(|(seq, (p, owner))| (p, seq as u32, owner))
                .collect();
            if entries.len() == limit {
                return Err(RingError::TooManyPoints(MAX_POINTS + 1).into());
            }
            // By position, then by the order they were put.
            sort_points(&mut entries);
            let (mut points, mut owners): (Vec<u64>, Vec<u32>) =
                entries.into_iter().map(|(p, _, o)| (p, o)).unzip();
            let len = dedup_in_place(&mut points, &mut owners, rules.dedup, 0);
            points.truncate(len);
            owners.truncate(len);
            (points, owners)
        };
        debug_assert!(owners.iter().all(|&o| (o as usize) < nodes.len()));
        let circle = Circle::build_whole(points, owners, bits);
        Ok(PointRing {
            rules,
            nodes,
            circle,
            down: Vec::new(),
        })
    }

    /// Marks nodes `down` (by index): they keep their points, and a key whose point is
    /// theirs goes on to the next point (nginx's `hp->hash++`), at most
    /// [`DOWN_TRIES`] points in all; past that nginx picks round-robin and
    /// [`locate`](Self::locate) answers `None`.
    pub fn with_down(mut self, down: &[usize]) -> PointRing {
        self.down = alloc::vec![false; self.nodes.len()];
        for &d in down {
            if let Some(x) = self.down.get_mut(d) {
                *x = true;
            }
        }
        self
    }

    /// The ring's rules.
    pub fn rules(&self) -> &PointRules {
        &self.rules
    }

    /// The nodes, in the order given.
    pub fn nodes(&self) -> &[NodeSpec] {
        &self.nodes
    }

    /// Sorted positions (distinct unless the rules keep every point). Jedis' signed
    /// positions appear with the sign bit flipped, java-hashcode's too.
    pub fn positions(&self) -> Positions<'_> {
        Positions::new(&self.circle)
    }

    /// `owners().get(i)` owns `positions()[i]`.
    pub fn owners(&self) -> Owners<'_> {
        Owners::new(&self.circle)
    }

    /// The hash of `key` on this circle (after the hash tag).
    #[inline]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.rules.key_hash.hash(self.rules.tag.apply(key))
    }

    /// The index of the point owning position `h`.
    #[inline]
    pub fn point_for_hash(&self, h: u64) -> Option<usize> {
        let c = &self.circle;
        let len = c.len();
        match self.rules.seek {
            Seek::Ceiling => c.lower_bound(h, false),
            Seek::Floor => c.lower_bound(h, true).map(|i| (i + len - 1) % len),
            Seek::Closest => {
                let next = c.lower_bound(h, false)?;
                let prev = (next + len - 1) % len;
                let (n32, p32) = (c.point(next)? as u32, c.point(prev)? as u32);
                let h32 = h as u32;
                let dp = h32.wrapping_sub(p32);
                let dn = n32.wrapping_sub(h32);
                Some(if dp <= dn { prev } else { next })
            }
        }
    }

    /// The owner index of `key`.
    #[inline]
    pub fn locate(&self, key: &[u8]) -> Option<usize> {
        let i = self.point_for_hash(self.hash_key(key))?;
        let o = self.circle.owner(i)? as usize;
        if self.down.is_empty() {
            return Some(o);
        }
        let len = self.circle.len();
        (0..DOWN_TRIES)
            .filter_map(|t| self.circle.owner((i + t) % len))
            .map(|o| o as usize)
            .find(|&o| !self.down[o])
    }

    /// Up to `n` distinct owners walking from `key`'s point in the lookup's direction
    /// (clockwise; counter-clockwise for [`Seek::Floor`]).
    pub fn walk(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        out.clear();
        let want = n.min(self.nodes.len());
        let Some(start) = self.point_for_hash(self.hash_key(key)) else {
            return;
        };
        let len = self.circle.len();
        let back = self.rules.seek == Seek::Floor;
        let mut seen = alloc::vec![false; self.nodes.len()];
        for step in 0..len {
            if out.len() >= want {
                break;
            }
            let i = if back {
                (start + len - step % len) % len
            } else {
                (start + step) % len
            };
            let Some(o) = self.circle.owner(i).map(|o| o as usize) else {
                break;
            };
            if !seen[o] && self.down.get(o) != Some(&true) {
                seen[o] = true;
                out.push(o);
            }
        }
    }

    /// The name of node `i`.
    pub(crate) fn name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }
}

/// Sorted keys `points` (a position above `shift` bits) and their `owners`, runs of one
/// position kept as `rule` says, within the two arrays: the new length, the positions
/// shifted down.
fn dedup_in_place(points: &mut [u64], owners: &mut [u32], rule: Dedup, shift: u32) -> usize {
    let n = points.len();
    let (mut i, mut out) = (0, 0);
    while i < n {
        let at = points[i] >> shift;
        let mut j = i + 1;
        while j < n && points[j] >> shift == at {
            j += 1;
        }
        let run = match rule {
            Dedup::KeepFirst => i..i + 1,
            Dedup::KeepLast => j - 1..j,
            Dedup::KeepAll => i..j,
        };
        for k in run {
            points[out] = at;
            owners[out] = owners[k];
            out += 1;
        }
        i = j;
    }
    out
}

/// How many points nginx tries before it gives up on the hash (its 20 retries after the
/// first point).
pub const DOWN_TRIES: usize = 21;

/// `v` as decimal text appended to `buf`.
pub(crate) fn push_decimal(buf: &mut Vec<u8>, v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let mut v = v;
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// A string made of `parts`.
pub(crate) fn concat(parts: &[&[u8]]) -> Vec<u8> {
    let mut v = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        v.extend_from_slice(p);
    }
    v
}
