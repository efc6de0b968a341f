//! [`PointRing`]: a sorted circle of points built by a fleet profile, with the peer's key
//! hash, lookup rule and tie rule.

use alloc::vec::Vec;

use super::error::EngineError;
use super::keyhash::{KeyHash, KeyTag};
use crate::ring::index::Circle;
use crate::ring::leaf::{bucket, layout, log_buckets};
use crate::ring::sort::{cores_for, on_each_core, sort_points, sort_split};
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
    /// How one node's points are made, for a ring its peer changes in place (a map that
    /// later puts overwrite, and a removal that deletes the positions the node hashes
    /// to): `None` where a change is a new build.
    in_place: Option<NodePoints>,
    /// A node is shown by the part of its name before the first `-` (the reference Java
    /// ring's `split("-")[0]`), not by its whole name.
    before_dash: bool,
}

/// How a ring whose peer changes it in place makes the points of one node: `make(name,
/// count, out)` appends the positions of the node `name` (`count`: the profile's points
/// per node), in the order the peer puts them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NodePoints {
    pub(crate) make: fn(&[u8], u32, &mut Vec<u64>),
    pub(crate) count: u32,
}

impl NodePoints {
    /// The points of every node, in node order, as [`PointRing::from_points`] takes them.
    pub(crate) fn all(self, nodes: &[NodeSpec]) -> Vec<(u64, u32)> {
        let (mut pts, mut mine) = (Vec::new(), Vec::new());
        for (i, n) in nodes.iter().enumerate() {
            mine.clear();
            (self.make)(n.name.as_bytes(), self.count, &mut mine);
            pts.extend(mine.iter().map(|&p| (p, i as u32)));
        }
        pts
    }
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
            // Where the owners come in order (each node's points after the one before:
            // every profile but a few), the owner breaks a tie as the order does, and a
            // position and its owner fit one 8-byte key for [`PointRing::from_keys`]. A
            // Vec given is rewritten in place (no copy).
            let mut last = 0u32;
            let mut ordered = true;
            let keys: Vec<u64> = points
                .into_iter()
                .take(limit)
                .map(|(p, owner)| {
                    debug_assert!(p >> bits == 0, "a {bits}-bit position");
                    ordered &= owner >= last;
                    last = owner;
                    (p << 32) | u64::from(owner)
                })
                .collect();
            if keys.len() == limit {
                return Err(RingError::TooManyPoints(MAX_POINTS + 1).into());
            }
            if ordered {
                return PointRing::from_keys(rules, nodes, keys);
            }
            // The order decides ties: it goes below the position in the key.
            let shift = 64 - bits;
            let entries: Vec<(u64, u32)> = keys
                .iter()
                .enumerate()
                .map(|(seq, &k)| (((k >> 32) << shift) | seq as u64, k as u32))
                .collect();
            drop(keys);
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
        let circle = Circle::build_whole(points, owners, bits, None);
        Ok(PointRing {
            rules,
            nodes,
            circle,
            down: Vec::new(),
            in_place: None,
            before_dash: false,
        })
    }

    /// [`PointRing::from_points`] for a profile of 32-bit positions whose points come
    /// node by node (owners never decrease), each given as one key, `position << 32 |
    /// owner`: at equal positions the owner orders them as the order they were put does.
    /// The keys are sorted by a linear bucket sort, become the positions in place, and the
    /// circle's index is built in the same pass that drops repeated positions: 200k nginx
    /// servers (32M points) read and built in 1.9 s from (position, order) pairs, in
    /// 1.29-1.37 s this way on one core (0.92-0.97 s with the cores sharing the hashing,
    /// the sort and this pass: `fleet/fill.rs`, `ring/sort.rs`, [`dedup_keys`]).
    ///
    /// # Errors
    /// [`RingError::TooManyPoints`] above [`MAX_POINTS`]; node errors of
    /// [`check_nodes`](super::check_nodes).
    pub(crate) fn from_keys(
        rules: PointRules,
        nodes: Vec<NodeSpec>,
        mut keys: Vec<u64>,
    ) -> Result<PointRing, EngineError> {
        super::check_nodes(&nodes)?;
        let bits = rules.key_hash.bits();
        debug_assert!(bits <= 32);
        debug_assert!(keys.windows(2).all(|w| w[0] as u32 <= w[1] as u32));
        if keys.len() as u64 > MAX_POINTS {
            return Err(RingError::TooManyPoints(keys.len() as u64).into());
        }
        sort_points(&mut keys);
        let (owners, table) = dedup_keys(&mut keys, rules.dedup, bits);
        debug_assert!(owners.iter().all(|&o| (o as usize) < nodes.len()));
        let circle = Circle::build_whole(keys, owners, bits, table);
        Ok(PointRing {
            rules,
            nodes,
            circle,
            down: Vec::new(),
            in_place: None,
            before_dash: false,
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

    /// A ring its peer changes in place: [`put_node`](Self::put_node) puts a node's
    /// points over the ones there (a later put wins a shared position), and
    /// [`delete_node`](Self::delete_node) deletes every position the node's points hash
    /// to, whoever holds it now (a Java `ConcurrentSkipListMap`'s `put` and `remove`,
    /// redis-rb's `@ring` hash).
    pub(crate) fn changed_in_place(mut self, points: NodePoints) -> PointRing {
        self.in_place = Some(points);
        self
    }

    /// Nodes shown by the part of their names before the first `-` (the whole name when
    /// it has none): `redis-1` is shown as `redis`.
    pub(crate) fn shown_before_dash(mut self) -> PointRing {
        self.before_dash = true;
        self
    }

    /// Whether the ring changes in place (see [`changed_in_place`](Self::changed_in_place)).
    pub(crate) fn changes_in_place(&self) -> bool {
        self.in_place.is_some()
    }

    /// The positions and owners on the circle, in order.
    fn pairs(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        let c = &self.circle;
        (0..c.len()).filter_map(|i| Some((c.point(i)?, c.owner(i)?)))
    }

    /// The ring over `nodes` and `points` (as [`from_points`](Self::from_points) takes
    /// them, a `Vec` as the builds give it: one copy of that function in the fleet's
    /// .wasm), with this one's ways of changing and showing names.
    fn again(
        &self,
        nodes: Vec<NodeSpec>,
        points: Vec<(u64, u32)>,
    ) -> Result<PointRing, EngineError> {
        let mut ring = PointRing::from_points(self.rules, nodes, points)?;
        ring.in_place = self.in_place;
        ring.before_dash = self.before_dash;
        Ok(ring)
    }

    /// Puts the points of `node` (checked by the caller) over the circle, as the peer's
    /// map does: each of its positions becomes its, whoever held it (the circle's points
    /// go first, the node's after them, and the later put wins). Only for a ring that
    /// [`changes_in_place`](Self::changes_in_place): another is left as it is. One pass
    /// over the circle and a sort, as a build makes, without hashing the other nodes.
    ///
    /// # Errors
    /// [`RingError::TooManyPoints`] above [`MAX_POINTS`] (the ring is unchanged).
    pub(crate) fn put_node(&mut self, node: NodeSpec) -> Result<(), EngineError> {
        let Some(make) = self.in_place else {
            return Ok(());
        };
        let mut new = Vec::new();
        (make.make)(node.name.as_bytes(), make.count, &mut new);
        room_for(self.circle.len(), new.len())?;
        let me = self.nodes.len() as u32;
        let mut nodes = self.nodes.clone();
        nodes.push(node);
        let points = self.pairs().chain(new.into_iter().map(|p| (p, me)));
        *self = self.again(nodes, points.collect())?;
        Ok(())
    }

    /// Deletes node `i` and every position its points hash to, whoever holds it now (a
    /// later node that took one of its positions loses it too), as the peer's `remove`
    /// does; the nodes after it move down by one. Only for a ring that
    /// [`changes_in_place`](Self::changes_in_place).
    ///
    /// # Errors
    /// [`RingError::UnknownNode`] for an index past the nodes, or a ring that does not
    /// change in place (left as it is).
    pub(crate) fn delete_node(&mut self, i: usize) -> Result<NodeSpec, EngineError> {
        let (Some(make), Some(_)) = (self.in_place, self.nodes.get(i)) else {
            return Err(RingError::UnknownNode(alloc::format!("#{i}")).into());
        };
        let mut nodes = self.nodes.clone();
        let gone = nodes.remove(i);
        let mut hashed = Vec::new();
        (make.make)(gone.name.as_bytes(), make.count, &mut hashed);
        sort_points(&mut hashed);
        let i = i as u32;
        // Node `i` held only positions it hashes to: none of its points stays.
        let points = self
            .pairs()
            .filter(|(p, _)| hashed.binary_search(p).is_err())
            .map(|(p, w)| (p, w - u32::from(w > i)));
        *self = self.again(nodes, points.collect())?;
        Ok(gone)
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

    /// The name node `i` is shown by: its name, or the part before the first `-` (see
    /// [`shown_before_dash`](Self::shown_before_dash)).
    pub(crate) fn name(&self, i: usize) -> &str {
        let name = &self.nodes[i].name;
        if self.before_dash {
            name.split('-').next().unwrap_or(name)
        } else {
            name
        }
    }
}

/// The most points a circle of `len` points holds after `more` are put: refused above
/// [`MAX_POINTS`], as a build is, before anything is allocated.
fn room_for(len: usize, more: usize) -> Result<usize, EngineError> {
    let most = (len as u64).saturating_add(more as u64);
    if most > MAX_POINTS {
        return Err(RingError::TooManyPoints(most).into());
    }
    Ok(most as usize)
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

/// Sorted keys `keys` (a `bits`-bit position above its 32-bit owner), runs of one
/// position kept as `rule` says: `keys` becomes the positions, in place, and the owners
/// come back, with the circle's index (`Leaf::with_built_table`'s `table`) built in the
/// same pass when dropping the repeats left its layout as it was (nearly always). The
/// cores share the keys, cut between two buckets of the index (so never within a run of
/// one position). 200k nginx servers (32M points) a build, side by side: 1.02-1.04 s with
/// this pass on one core, 0.92-0.98 s on two.
fn dedup_keys(keys: &mut Vec<u64>, rule: Dedup, bits: u32) -> (Vec<u32>, Option<Vec<u32>>) {
    let n = keys.len();
    let (buckets, shift) = layout(n, bits);
    let mask = buckets as u64 - 1;
    let bucket_of = |k: u64| (bucket(k >> 32, shift) & mask) as usize;
    // Cut where the bucket changes, about evenly.
    let cores = cores_for(n);
    let mut cuts = alloc::vec![0usize];
    for c in 1..cores {
        let mut at = (n * c / cores).max(*cuts.last().unwrap_or(&0));
        while at > 0 && at < n && bucket_of(keys[at]) == bucket_of(keys[at - 1]) {
            at += 1;
        }
        if at < n && at > *cuts.last().unwrap_or(&0) {
            cuts.push(at);
        }
    }
    cuts.push(n);
    // Each part: its first bucket, the bucket the next part starts at, its keys.
    let mut parts = Vec::with_capacity(cuts.len() - 1);
    let mut rest = &mut keys[..];
    for w in cuts.windows(2) {
        let (mine, after) = rest.split_at_mut(w[1] - w[0]);
        let first = if w[0] == 0 { 0 } else { bucket_of(mine[0]) };
        let next = after.first().map_or(buckets, |&k| bucket_of(k));
        parts.push((first, next, mine));
        rest = after;
    }
    let done = on_each_core(parts, |(first, next, part)| {
        dedup_part(part, rule, first, next, bucket_of)
    });
    // Joined: the kept positions moved down, the owners and the tables one after another.
    let mut table: Vec<u32> = Vec::with_capacity(buckets + 1);
    let mut owners: Vec<u32> = Vec::new();
    let mut out = 0usize;
    for ((len, part_owners, part_table), w) in done.into_iter().zip(cuts.windows(2)) {
        keys.copy_within(w[0]..w[0] + len, out);
        table.extend(part_table.iter().map(|&t| t + out as u32));
        if owners.is_empty() {
            owners = part_owners;
        } else {
            owners.extend_from_slice(&part_owners);
        }
        out += len;
    }
    keys.truncate(out);
    table.resize(buckets + 1, out as u32);
    let table = (layout(out, bits) == (buckets, shift)).then_some(table);
    (owners, table)
}

/// [`dedup_keys`] of one part, whose buckets are `first..next`: the kept length, the
/// owners and the index over those buckets (relative to the part).
fn dedup_part(
    keys: &mut [u64],
    rule: Dedup,
    first: usize,
    next: usize,
    bucket_of: impl Fn(u64) -> usize,
) -> (usize, Vec<u32>, Vec<u32>) {
    let n = keys.len();
    // table[b - first]: the first point whose bucket is b or later.
    let mut table: Vec<u32> = Vec::with_capacity(next - first);
    let mut owners = Vec::with_capacity(n);
    // `prev`: the position before (none is u64::MAX); `keys[..out]` are already
    // positions, so it is not read back from there.
    let (mut out, mut prev) = (0, u64::MAX);
    for i in 0..n {
        let (k, at) = (keys[i], keys[i] >> 32);
        // Kept: the first, the last or every point at a position.
        let keep = match rule {
            Dedup::KeepFirst => prev != at,
            Dedup::KeepLast => i + 1 == n || keys[i + 1] >> 32 != at,
            Dedup::KeepAll => true,
        };
        if keep {
            let b = bucket_of(k) - first;
            while table.len() <= b {
                table.push(out as u32);
            }
            owners.push(k as u32);
            keys[out] = at;
            out += 1;
        }
        prev = at;
    }
    table.resize(next - first, out as u32);
    (out, owners, table)
}

/// How many points nginx tries before it gives up on the hash (its 20 retries after the
/// first point).
pub const DOWN_TRIES: usize = 21;

/// A string made of `parts`.
pub(crate) fn concat(parts: &[&[u8]]) -> Vec<u8> {
    let mut v = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        v.extend_from_slice(p);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change past the point limit is refused as a build is; up to it, it is not.
    #[test]
    fn room_for_stops_at_the_point_limit() {
        let max = MAX_POINTS as usize;
        assert_eq!(room_for(max - 150, 150).ok(), Some(max));
        let err = room_for(max - 149, 150).unwrap_err();
        assert_eq!(err.code().as_str(), "TOO_MANY_POINTS");
        assert!(room_for(usize::MAX, usize::MAX).is_err());
    }

    /// The positions kept, their owners and the index, as a plain reading of the rule.
    fn naive(keys: &[u64], rule: Dedup) -> (Vec<u64>, Vec<u32>) {
        let (mut points, mut owners) = (Vec::new(), Vec::new());
        for (i, &k) in keys.iter().enumerate() {
            let at = k >> 32;
            let keep = match rule {
                Dedup::KeepFirst => i == 0 || keys[i - 1] >> 32 != at,
                Dedup::KeepLast => i + 1 == keys.len() || keys[i + 1] >> 32 != at,
                Dedup::KeepAll => true,
            };
            if keep {
                points.push(at);
                owners.push(k as u32);
            }
        }
        (points, owners)
    }

    /// Shared among the cores or not, repeated positions are dropped as the rule says and
    /// the index is the one a leaf builds over the positions kept.
    #[test]
    fn dedup_keys_keeps_what_the_rule_says_with_its_index() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for (n, range, bits) in [
            (0usize, 1u64, 32u32),
            (1, 1, 32),
            (7, 3, 32),
            (5_000, 1 << 32, 32),
            (20_000, 4_000, 32),
            (20_000, 1 << 16, 16),
            (3, 1, 16),
        ] {
            let mut keys: Vec<u64> = (0..n)
                .map(|_| (next() % range) << 32 | (next() % 1000))
                .collect();
            keys.sort_unstable();
            for rule in [Dedup::KeepFirst, Dedup::KeepLast, Dedup::KeepAll] {
                let (want_points, want_owners) = naive(&keys, rule);
                let mut got = keys.clone();
                let (owners, table) = dedup_keys(&mut got, rule, bits);
                assert_eq!(
                    (&got, &owners),
                    (&want_points, &want_owners),
                    "n {n} {rule:?}"
                );
                if let Some(table) = table {
                    let (buckets, shift) = layout(got.len(), bits);
                    assert_eq!(table.len(), buckets + 1);
                    for (b, &start) in table.iter().enumerate() {
                        let want = got.partition_point(|&p| (bucket(p, shift) as usize) < b);
                        assert_eq!(start as usize, want, "bucket {b} n {n} {rule:?}");
                    }
                }
            }
        }
    }
}
