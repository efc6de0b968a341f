//! The ring: nodes, weights and the circle built from them under one [`Profile`].

use alloc::string::String;
use alloc::vec::Vec;

use super::error::RingError;
use super::hash::{ketama_point, key_hash, md5};
use super::index::Circle;
use super::leaf::log_buckets;
use super::md5_many::{self, Md5Path};
use super::owner_vec::{with_width, OwnerInt, OwnerVec};
use super::owners::Owners;
use super::positions::Positions;
use super::profile::{digests_for, Lookup, PointHash, Profile, Ties, WeightRule};
use super::sip_many;
use super::sort::{sort_by_less, sort_points, sort_split};

/// Keys hashed together before their lookups in a batch (see `Ring::for_each_owner`).
const GROUP: usize = md5_many::LANES;

/// How a batch hashes its keys.
#[derive(Clone, Copy)]
enum Hashing {
    /// MD5 profiles: a group's short keys together (md5_many.rs).
    Md5Many,
    /// SipHash-1-3 sixteen keys at a time with AVX-512F (sip_many::simd::keys16).
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    Sip16,
    /// One key after another.
    OneByOne,
}

/// The node index [`Ring::get_many_to_slice`] writes for a key on an empty ring.
pub const NO_NODE: u32 = u32::MAX;

/// The most points one ring may hold (33,554,432: about 400 MiB of circle).
pub const MAX_POINTS: u64 = 1 << 25;

/// A node on the ring: its name (the hashed server string is derived from it) and weight.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Node {
    name: String,
    weight: u32,
}

impl Node {
    /// The node's name as given.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The node's weight (at least 1).
    pub fn weight(&self) -> u32 {
        self.weight
    }
}

/// A consistent-hash ring.
///
/// ```
/// use keyroute::ring::{Profile, Ring};
///
/// let mut ring = Ring::with_nodes(Profile::libketama(), [
///     ("127.0.0.1:11211", 600),
///     ("127.0.0.1:11212", 400),
/// ])?;
/// assert_eq!(ring.point_count(), 320);
/// assert_eq!(ring.get(b"test"), Some("127.0.0.1:11211"));
///
/// ring.add("127.0.0.1:11213", 500)?;
/// let replicas = ring.get_n(b"test", 2);
/// assert_eq!(replicas.len(), 2);
/// assert_eq!(Some(replicas[0]), ring.get(b"test"));
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Ring {
    profile: Profile,
    nodes: Vec<Node>,
    /// Indexes into `nodes`, sorted by name: name lookups are a binary search.
    by_name: Vec<u32>,
    circle: Circle,
}

impl Ring {
    /// An empty ring: every lookup answers `None` until a node is added.
    pub fn new(profile: Profile) -> Ring {
        Ring {
            profile,
            nodes: Vec::new(),
            by_name: Vec::new(),
            circle: Circle::empty(profile.hash().bits()),
        }
    }

    /// A ring of `nodes` (name, weight), in the given order (the order decides ties in
    /// the ketama family, as it does in the peers).
    ///
    /// # Errors
    /// Empty name, zero weight, duplicate name, or more than [`MAX_POINTS`] points.
    pub fn with_nodes<I, S>(profile: Profile, nodes: I) -> Result<Ring, RingError>
    where
        I: IntoIterator<Item = (S, u32)>,
        S: Into<String>,
    {
        let mut ring = Ring::new(profile);
        // Names are checked for duplicates once, by sorting (not one scan per node); the
        // error is still the first in input order, as a node-by-node check would give.
        let mut bad = None;
        for (name, weight) in nodes {
            let name = name.into();
            if name.is_empty() {
                bad = Some(RingError::EmptyNodeName);
                break;
            }
            if weight == 0 {
                bad = Some(RingError::ZeroWeight(name));
                break;
            }
            ring.nodes.push(Node { name, weight });
        }
        ring.by_name = name_index(&ring.nodes)
            .map_err(|dup| RingError::DuplicateNode(ring.nodes[dup].name.clone()))?;
        if let Some(e) = bad {
            return Err(e);
        }
        ring.rebuild()?;
        Ok(ring)
    }

    /// Checks a new node and where its name goes in `by_name`.
    fn check_new(&self, name: &str, weight: u32) -> Result<usize, RingError> {
        if name.is_empty() {
            return Err(RingError::EmptyNodeName);
        }
        if weight == 0 {
            return Err(RingError::ZeroWeight(name.into()));
        }
        match self.name_slot(name) {
            Ok(_) => Err(RingError::DuplicateNode(name.into())),
            Err(at) => Ok(at),
        }
    }

    /// `Ok(position in by_name)` of `name`, or `Err(where it would go)`.
    fn name_slot(&self, name: &str) -> Result<usize, usize> {
        self.by_name
            .binary_search_by(|&i| self.nodes[i as usize].name.as_str().cmp(name))
    }

    /// Whether one node's change leaves every other node's points as they are (the
    /// points of a node depend on its own weight only) and the arrays can be updated in
    /// place: true for `native`. The ketama family spreads a fixed total over all nodes
    /// (every share changes), and a `LastNode` tie rule forgets which nodes shared a point.
    fn incremental(&self) -> bool {
        self.profile.weight_rule() == WeightRule::PerWeight && self.profile.ties() != Ties::LastNode
    }

    /// Whether a change can update the arrays in place although every node's share is
    /// recomputed (the ketama family): only the digests whose count changed come and go
    /// ([`Ring::retune`]). Not with a `LastNode` tie rule, nor in the size-minded build
    /// (`small-sort`, the JavaScript package's .wasm), where the ketama family's changes
    /// rebuild: the retune's code would take its .wasm over its 45 KB budget.
    fn retunable(&self) -> bool {
        cfg!(not(feature = "small-sort"))
            && self.profile.weight_rule() != WeightRule::PerWeight
            && self.profile.ties() != Ties::LastNode
    }

    /// The number of digests each node has on the circle (as [`Ring::rebuild`] counts).
    fn digest_counts(&self) -> Vec<u64> {
        let p = self.profile;
        let n = self.nodes.len();
        let total: u64 = self.nodes.iter().map(|x| u64::from(x.weight)).sum();
        self.nodes
            .iter()
            .map(|x| digests_for(p.weight_rule(), p.vnodes(), n, x.weight, total))
            .collect()
    }

    /// Adds a node. In the ketama family every node's share is recomputed from the new
    /// total weight, exactly as the peers do; in native only the new node's points appear.
    ///
    /// # Errors
    /// As [`Ring::with_nodes`]; the ring is unchanged on error.
    pub fn add(&mut self, name: &str, weight: u32) -> Result<(), RingError> {
        let at = self.check_new(name, weight)?;
        let index = self.nodes.len() as u32;
        // The digests each node has now (the new one none), for an in-place retune.
        let before = if self.retunable() {
            let mut b = self.digest_counts();
            b.push(0);
            b
        } else {
            Vec::new()
        };
        self.nodes.push(Node {
            name: name.into(),
            weight,
        });
        // The new node had no digests.
        if let Err(e) = self.reshape(index as usize, 0, &before) {
            self.nodes.pop();
            return Err(e);
        }
        self.by_name.insert(at, index);
        Ok(())
    }

    /// Brings the circle to the nodes' weights after node `i` changed (added, or given a
    /// new weight): in `native` only its digests between `was` (what it had; unused by
    /// the other profiles) and what its weight gives now are hashed; in the ketama family
    /// those of every node whose count moved from `before` (each node's count before the
    /// change, for a retune); else a rebuild. The caller undoes its change on error.
    fn reshape(&mut self, i: usize, was: u64, before: &[u64]) -> Result<(), RingError> {
        if self.incremental() {
            let now = self.digest_count(self.nodes[i].weight);
            self.move_digests(&[(i, was, now)])
        } else if self.retunable() {
            let after = self.digest_counts();
            self.retune(before, &after)
        } else {
            self.rebuild()
        }
    }

    /// Removes a node and returns it.
    ///
    /// # Errors
    /// [`RingError::UnknownNode`].
    pub fn remove(&mut self, name: &str) -> Result<Node, RingError> {
        let i = self
            .node_index(name)
            .ok_or_else(|| RingError::UnknownNode(name.into()))?;
        let mut before = if self.retunable() {
            self.digest_counts()
        } else {
            Vec::new()
        };
        if self.incremental() || self.retunable() {
            let digests = match before.get(i) {
                Some(&d) => d,
                None => self.digest_count(self.nodes[i].weight),
            };
            self.remove_points(i as u32, digests);
        }
        let node = self.nodes.remove(i);
        self.drop_name(i);
        if self.retunable() {
            before.remove(i);
            // Fewer nodes never means more points than before.
            let after = self.digest_counts();
            self.retune(&before, &after)?;
        } else if !self.incremental() {
            // Fewer nodes never means more points than before.
            self.rebuild()?;
        }
        Ok(node)
    }

    /// Changes a node's weight.
    ///
    /// # Errors
    /// [`RingError::UnknownNode`], [`RingError::ZeroWeight`], [`RingError::TooManyPoints`];
    /// the ring is unchanged on error.
    pub fn set_weight(&mut self, name: &str, weight: u32) -> Result<(), RingError> {
        let i = self
            .node_index(name)
            .ok_or_else(|| RingError::UnknownNode(name.into()))?;
        if weight == 0 {
            return Err(RingError::ZeroWeight(name.into()));
        }
        let before = if self.retunable() {
            self.digest_counts()
        } else {
            Vec::new()
        };
        let old = core::mem::replace(&mut self.nodes[i].weight, weight);
        // What node `i` had (incremental profiles: its own weight's count).
        let was = if self.incremental() {
            self.digest_count(old)
        } else {
            0
        };
        if let Err(e) = self.reshape(i, was, &before) {
            self.nodes[i].weight = old;
            return Err(e);
        }
        Ok(())
    }

    /// The ring's profile.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The nodes, in the order they were added.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the ring has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether a node of that name is on the ring.
    pub fn contains(&self, name: &str) -> bool {
        self.node_index(name).is_some()
    }

    /// The index of a node in [`Ring::nodes`].
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.name_slot(name).ok().map(|k| self.by_name[k] as usize)
    }

    /// Removes node `i` from `by_name` (after it left `nodes`): later indexes move down.
    fn drop_name(&mut self, i: usize) {
        let i = i as u32;
        self.by_name.retain(|&k| k != i);
        for k in &mut self.by_name {
            if *k > i {
                *k -= 1;
            }
        }
    }

    /// The number of digests a node of `weight` has (incremental profiles).
    fn digest_count(&self, weight: u32) -> u64 {
        let p = self.profile;
        digests_for(p.weight_rule(), p.vnodes(), 0, weight, 0)
    }

    /// Merges `new` (sorted (point, owner) pairs) into the leaves they fall in, in place,
    /// and orders the runs of equal points they join by the profile's tie rule.
    fn merge_into_circle(&mut self, new: &[(u64, u32)]) {
        let (ties, nodes) = (self.profile.ties(), &self.nodes);
        self.circle.edit(new, true, |points, owners, run| {
            let top = run.iter().map(|e| e.1).max().unwrap_or(0);
            with_width!(owners.holding(top), o => {
                merge_points(points, &mut o, run);
                order_ties_at(points, &mut o, ties, nodes, run);
            })
            .0
        });
    }

    /// Brings the circle from `before[i]` digests of node `i` (what it holds now) to the
    /// counts the nodes' weights give now (the ketama family): the digests a node lost
    /// leave, those it gained are merged in, one pass over the arrays each, and the result
    /// is what a rebuild gives (`tests/ring_change.rs`). One add to a 1000-node libketama
    /// ring hashes the new node's 40 digests and the few whose count moved, instead of all
    /// 40,000. The ring is unchanged on error.
    fn retune(&mut self, before: &[u64], after: &[u64]) -> Result<(), RingError> {
        let moves: Vec<(usize, u64, u64)> = after
            .iter()
            .enumerate()
            .map(|(i, &a)| (i, before.get(i).copied().unwrap_or(0), a))
            .filter(|&(_, b, a)| a != b)
            .collect();
        self.move_digests(&moves)
    }

    /// Brings node `i` from `b` digests to `a` for each `(i, b, a)` of `moves`: the
    /// digests it lost leave the circle and those it gained are merged in. The ring is
    /// unchanged on error.
    fn move_digests(&mut self, moves: &[(usize, u64, u64)]) -> Result<(), RingError> {
        let p = self.profile;
        let per_digest = p.points_per_digest().max(1) as u64;
        let (up, down) = moves.iter().fold((0u64, 0u64), |(u, d), &(_, b, a)| {
            (u + a.saturating_sub(b), d + b.saturating_sub(a))
        });
        let count = (self.circle.len() as u64 + up * per_digest).saturating_sub(down * per_digest);
        if count > MAX_POINTS {
            return Err(RingError::TooManyPoints(count));
        }
        let mut gone: Vec<(u64, u32)> = Vec::new();
        let mut new: Vec<(u64, u32)> = Vec::new();
        let mut buf = Vec::with_capacity(64);
        for &(i, b, a) in moves {
            let node = &self.nodes[i];
            let (out, from) = if a < b { (&mut gone, a) } else { (&mut new, b) };
            // The points of digests from..max(a, b): the first `from` are kept.
            node_points_from(
                p,
                &node.name,
                i as u32,
                from,
                a.max(b),
                &mut buf,
                |pt, r| out.push((pt, r)),
            );
        }
        if gone.is_empty() && new.is_empty() {
            return Ok(());
        }
        if !gone.is_empty() {
            sort_points(&mut gone);
            self.circle.edit(&gone, false, |points, owners, run| {
                with_width!(owners, o => drop_pairs(points, &mut o, run)).0
            });
        }
        if !new.is_empty() {
            sort_points(&mut new);
            self.merge_into_circle(&new);
        }
        Ok(())
    }

    /// Drops the points of node `index` (of `digests` digests) from the leaves they are
    /// in, and moves later nodes' indexes down by one (the node is about to leave
    /// `nodes`): the points are hashed again rather than searched for, so only the
    /// owners are read everywhere, not the positions.
    fn remove_points(&mut self, index: u32, digests: u64) {
        if cfg!(not(feature = "small-sort")) && self.circle.leaves().len() == 1 {
            // One leaf (under 262,144 points): one pass over it drops and renumbers.
            self.circle.edit_each(
                |points, owners| with_width!(owners, o => drop_points(points, &mut o, index)),
            );
            return;
        }
        // Fewer points: never an error.
        let _ = self.move_digests(&[(index as usize, digests, 0)]);
        if (index as usize) + 1 < self.nodes.len() {
            self.circle.renumber_above(index);
        }
    }

    /// The number of points on the circle.
    pub fn point_count(&self) -> usize {
        self.circle.len()
    }

    /// Heap bytes the circle holds (point positions, owners and the lookup index), for
    /// memory reports: divide by [`Ring::point_count`] for bytes per point. Per point: 8
    /// bytes of position, 2 of owner (4 on rings of more than 65,536 nodes) and 1–2 of
    /// index. Node names are not counted.
    ///
    /// ```
    /// use keyroute::ring::{Profile, Ring};
    /// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1)])?;
    /// assert!(ring.circle_bytes() >= ring.point_count() * 10);
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub fn circle_bytes(&self) -> usize {
        self.circle.heap_bytes()
    }

    /// Sorted point positions (32-bit profiles use values below 2³²).
    pub fn positions(&self) -> Positions<'_> {
        Positions::new(&self.circle)
    }

    /// `owners().get(i)` is the index (into [`Ring::nodes`]) of the node owning
    /// `positions()[i]`.
    pub fn owners(&self) -> Owners<'_> {
        Owners::new(&self.circle)
    }

    /// `(position, node name)` of every point, clockwise from 0.
    pub fn points(&self) -> impl ExactSizeIterator<Item = (u64, &str)> + '_ {
        self.positions()
            .iter()
            .zip(self.owners())
            .map(|(p, o)| (p, self.nodes[o as usize].name.as_str()))
    }

    /// Where `key` hashes on this ring's circle.
    #[inline(always)]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        key_hash(self.profile.hash(), key)
    }

    /// The index of the point that owns circle position `hash`, if the ring has points.
    #[inline(always)]
    pub fn point_for_hash(&self, hash: u64) -> Option<usize> {
        self.circle
            .lower_bound(hash, self.profile.lookup() == Lookup::Above)
    }

    /// The index (into [`Ring::nodes`]) of the node owning circle position `hash` (what
    /// [`Ring::get_index`] answers for a key that hashes there); `None` on an empty ring.
    ///
    /// ```
    /// use keyroute::ring::{Profile, Ring};
    /// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1)])?;
    /// let h = ring.hash_key(b"user:1");
    /// assert_eq!(ring.owner_for_hash(h), ring.get_index(b"user:1"));
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    #[inline(always)]
    pub fn owner_for_hash(&self, hash: u64) -> Option<usize> {
        let above = self.profile.lookup() == Lookup::Above;
        self.circle.owner_at(hash, above).map(|o| o as usize)
    }

    /// The index (into [`Ring::nodes`]) of the node owning `key`.
    #[inline(always)]
    pub fn get_index(&self, key: &[u8]) -> Option<usize> {
        if self.circle.len() == 0 {
            return None;
        }
        self.owner_for_hash(self.hash_key(key))
    }

    /// The node owning `key`; `None` on an empty ring.
    #[inline]
    pub fn get(&self, key: &[u8]) -> Option<&str> {
        self.get_index(key).map(|i| self.nodes[i].name.as_str())
    }

    /// Looks up every key, appending one owner index per key to `out` (reuse `out` across
    /// calls and no allocation happens per key).
    pub fn get_many_into<I, K>(&self, keys: I, out: &mut Vec<Option<usize>>)
    where
        I: IntoIterator<Item = K>,
        K: AsRef<[u8]>,
    {
        let keys = keys.into_iter();
        out.reserve(keys.size_hint().0);
        self.for_each_owner(keys, |o| out.push(o.map(|i| i as usize)));
    }

    /// Looks up `keys[i]` into `out[i]` as a node index, or [`NO_NODE`] on an empty ring;
    /// returns how many it wrote (the shorter of the two lengths). For bindings that hand
    /// a typed array across (4 bytes per key, no allocation).
    ///
    /// ```
    /// use keyroute::ring::{Profile, Ring, NO_NODE};
    /// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1)])?;
    /// let mut out = [NO_NODE; 2];
    /// assert_eq!(ring.get_many_to_slice(&["x", "y"], &mut out), 2);
    /// assert!(out.iter().all(|&i| i < 2));
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub fn get_many_to_slice<I, K>(&self, keys: I, out: &mut [u32]) -> usize
    where
        I: IntoIterator<Item = K>,
        K: AsRef<[u8]>,
    {
        // A group at a time (see `for_each_owner`), the owners written straight into `out`
        // (no per-key call through a closure: 2-3 ns per key in the .wasm, measured).
        let mut keys = keys.into_iter();
        let mut hashes = [0u64; GROUP];
        let how = self.hashing();
        let mut written = 0;
        while let Some(room) = out.get_mut(written..) {
            let want = room.len().min(GROUP);
            if want == 0 {
                break;
            }
            let n = self.hash_group(&mut keys, &mut hashes[..want], how);
            if let Some(dst) = room.get_mut(..n) {
                self.owners_of(&hashes[..n], dst);
            }
            written += n;
            if n < want {
                break;
            }
        }
        written
    }

    /// The owner of each of `hashes` into `out` (`NO_NODE` on an empty ring).
    #[inline(always)]
    fn owners_of(&self, hashes: &[u64], out: &mut [u32]) {
        let above = self.profile.lookup() == Lookup::Above;
        self.circle.owners_into(hashes, above, out, NO_NODE);
    }

    /// How this ring's batches hash their keys (chosen once per batch).
    #[inline]
    fn hashing(&self) -> Hashing {
        // MD5 profiles hash a group's short keys together (md5_many.rs).
        if self.profile.hash() == PointHash::Md5 && Md5Path::selected() != Md5Path::Scalar {
            return Hashing::Md5Many;
        }
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if self.profile.hash() == PointHash::SipHash13 && sip_many::simd::available() {
            return Hashing::Sip16;
        }
        Hashing::OneByOne
    }

    /// Hashes the next keys into `hashes`, as many as it holds (at most [`GROUP`]) or as
    /// the keys last; returns how many.
    #[inline]
    fn hash_group<I, K>(&self, keys: &mut I, hashes: &mut [u64], how: Hashing) -> usize
    where
        I: Iterator<Item = K>,
        K: AsRef<[u8]>,
    {
        let mut n = 0;
        match how {
            Hashing::Md5Many => {
                let mut batch = md5_many::Batch::new();
                for (h, k) in hashes.iter_mut().zip(keys.by_ref()) {
                    let k = k.as_ref();
                    if !batch.push(n, k) {
                        *h = u64::from(md5_many::scalar(k));
                    }
                    n += 1;
                }
                batch.finish(|i, a| {
                    if let Some(h) = hashes.get_mut(i) {
                        *h = u64::from(a);
                    }
                });
            }
            #[cfg(all(target_arch = "x86_64", not(miri)))]
            Hashing::Sip16 => {
                // Native keys sixteen at a time (sip_many::simd::keys16).
                while n < hashes.len() {
                    let want = (hashes.len() - n).min(16);
                    let mut held: [Option<K>; 16] = [const { None }; 16];
                    let mut m = 0;
                    for (slot, k) in held[..want].iter_mut().zip(keys.by_ref()) {
                        *slot = Some(k);
                        m += 1;
                    }
                    if m == 0 {
                        break;
                    }
                    let ks: [&[u8]; 16] = held
                        .each_ref()
                        .map(|k| k.as_ref().map_or(&[][..], K::as_ref));
                    let mut h16 = [0u64; 16];
                    // SAFETY: `Hashing::Sip16` is chosen only where the CPU has AVX-512F.
                    unsafe { sip_many::simd::keys16(&ks, &mut h16) };
                    hashes[n..n + m].copy_from_slice(&h16[..m]);
                    n += m;
                    if m < want {
                        break;
                    }
                }
            }
            Hashing::OneByOne => {
                for (h, k) in hashes.iter_mut().zip(keys.by_ref()) {
                    *h = self.hash_key(k.as_ref());
                    n += 1;
                }
            }
        }
        n
    }

    /// Calls `f` with the owner of each key, in order. Keys are hashed a group at a time
    /// and then looked up: the hashing is long arithmetic and the lookup a short chain of
    /// dependent loads, and separating them lets the processor overlap the loads of many
    /// keys instead of waiting for each (5-15% faster on short keys, measured).
    #[inline]
    fn for_each_owner<I, K>(&self, keys: I, mut f: impl FnMut(Option<u32>))
    where
        I: IntoIterator<Item = K>,
        K: AsRef<[u8]>,
    {
        let mut keys = keys.into_iter();
        loop {
            let mut owners = [NO_NODE; GROUP];
            let n = self.get_many_to_slice(keys.by_ref(), &mut owners);
            for &o in &owners[..n] {
                f((o != NO_NODE).then_some(o));
            }
            if n < GROUP {
                return;
            }
        }
    }

    /// The weight of a node, if it is on the ring.
    pub fn weight(&self, name: &str) -> Option<u32> {
        self.node_index(name).map(|i| self.nodes[i].weight)
    }

    /// Up to `n` distinct nodes for `key`, walking clockwise from its point: the owner
    /// first, then the next distinct nodes (replicas). Fewer than `n` when the ring has
    /// fewer nodes. Indexes into [`Ring::nodes`] are written to `out` (cleared first).
    pub fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        out.clear();
        self.walk_distinct(key, n, |o| {
            out.push(o);
            out.len()
        });
    }

    /// As [`Ring::get_n_into`], into a caller's slice: fills up to `out.len()` distinct
    /// owners and returns how many it wrote. Allocates nothing for `out.len() <= 16`.
    ///
    /// ```
    /// use keyroute::ring::{Profile, Ring};
    /// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1), ("c", 1)])?;
    /// let mut buf = [0usize; 8];
    /// let got = ring.get_n_to_slice(b"user:1", &mut buf);
    /// assert_eq!(got, 3);
    /// assert_eq!(ring.get_index(b"user:1"), Some(buf[0]));
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub fn get_n_to_slice(&self, key: &[u8], out: &mut [usize]) -> usize {
        let mut len = 0;
        self.walk_distinct(key, out.len(), |o| {
            out[len] = o;
            len += 1;
            len
        });
        len
    }

    /// Calls `push` with up to `n` distinct owners clockwise from `key`'s point; `push`
    /// returns how many it holds so far.
    fn walk_distinct(&self, key: &[u8], n: usize, mut push: impl FnMut(usize) -> usize) {
        let want = n.min(self.nodes.len());
        if want == 0 || self.circle.len() == 0 {
            return;
        }
        let Some(start) = self.point_for_hash(self.hash_key(key)) else {
            return;
        };
        // Small n: a stack list; large n: a bitset over node indexes.
        let mut small = [0u32; 16];
        let mut count = 0usize;
        let mut seen = if want > small.len() {
            alloc::vec![0u64; self.nodes.len().div_ceil(64)]
        } else {
            Vec::new()
        };
        for o in self.circle.owners_from(start) {
            let fresh = if seen.is_empty() {
                !small[..count].contains(&o)
            } else {
                let (w, b) = (o as usize / 64, 1u64 << (o % 64));
                let fresh = seen[w] & b == 0;
                seen[w] |= b;
                fresh
            };
            if fresh {
                if count < small.len() {
                    small[count] = o;
                }
                count += 1;
                if push(o as usize) >= want {
                    break;
                }
            }
        }
    }

    /// Up to `n` distinct node names for `key` (see [`Ring::get_n_into`]).
    pub fn get_n(&self, key: &[u8], n: usize) -> Vec<&str> {
        let mut idx = Vec::new();
        self.get_n_into(key, n, &mut idx);
        idx.into_iter()
            .map(|i| self.nodes[i].name.as_str())
            .collect()
    }

    /// The string hashed for a node's digests: its name, without `:port` when the port is
    /// the profile's default port.
    pub fn server_string<'a>(&self, name: &'a str) -> &'a str {
        server_string(name, self.profile.default_port())
    }

    fn rebuild(&mut self) -> Result<(), RingError> {
        let p = self.profile;
        let n = self.nodes.len();
        let total: u64 = self.nodes.iter().map(|x| x.weight as u64).sum();
        let per_digest = p.points_per_digest().max(1) as u64;
        let digests: Vec<u64> = self
            .nodes
            .iter()
            .map(|x| digests_for(p.weight_rule(), p.vnodes(), n, x.weight, total))
            .collect();
        let count: u64 = digests.iter().map(|d| d * per_digest).sum();
        if count > MAX_POINTS {
            return Err(RingError::TooManyPoints(count));
        }
        // Each point carries its node's index (MD5: in the low 32 bits of one u64), so the
        // sort orders equal points by index; `order_ties` then applies the profile's rule
        // to those few runs (no sort of the names).
        let mut entries: Vec<u64> = Vec::new();
        let mut wide: Vec<(u64, u32)> = Vec::new();
        match p.hash() {
            PointHash::Md5 => entries.reserve(count as usize),
            PointHash::SipHash13 => wide.reserve(count as usize),
        }
        let mut buf: Vec<u8> = Vec::with_capacity(64);
        for (i, node) in self.nodes.iter().enumerate() {
            let r = i as u32;
            match p.hash() {
                // 32-bit point above, index below: one u64 sorts both.
                PointHash::Md5 => node_points(p, &node.name, r, digests[i], &mut buf, |pt, r| {
                    entries.push((pt << 32) | r as u64)
                }),
                PointHash::SipHash13 => {
                    node_points(p, &node.name, r, digests[i], &mut buf, |pt, r| {
                        wide.push((pt, r))
                    })
                }
            }
        }
        // The sort buckets by the index's buckets and hands back the index too.
        let log = log_buckets(count as usize, p.hash().bits());
        let (points, mut owners, table) = if p.hash() == PointHash::Md5 {
            sort_split(entries, |e| (e >> 32, e as u32), log, p.hash().bits())
        } else {
            sort_split(wide, |e| e, log, p.hash().bits())
        };
        order_ties(&points, &mut owners, p.ties(), &self.nodes);
        let spare = self.circle.take_table().unwrap_or_default();
        self.circle = Circle::build(points, owners, p.hash().bits(), table, spare);
        Ok(())
    }
}

/// Calls `push(point, index)` for each of the `digests` digests' points of node `index`
/// named `name` under profile `p` (MD5 points are below 2³²).
#[inline]
fn node_points(
    p: Profile,
    name: &str,
    index: u32,
    digests: u64,
    buf: &mut Vec<u8>,
    push: impl FnMut(u64, u32),
) {
    node_points_from(p, name, index, 0, digests, buf, push);
}

/// [`node_points`] of digests `first..digests` only (MD5: those digests are the only
/// ones hashed).
fn node_points_from(
    p: Profile,
    name: &str,
    index: u32,
    first: u64,
    digests: u64,
    buf: &mut Vec<u8>,
    mut push: impl FnMut(u64, u32),
) {
    match p.hash() {
        PointHash::Md5 => {
            let server = server_string(name, p.default_port()).as_bytes();
            let per_digest = p.points_per_digest().max(1) as usize;
            let mut k = Decimal::zero();
            for _ in 0..first {
                k.increment();
            }
            buf.clear();
            buf.extend_from_slice(server);
            buf.push(b'-');
            let head = buf.len();
            for _ in first..digests {
                buf.truncate(head);
                buf.extend_from_slice(k.as_bytes());
                let d = md5(buf);
                for h in 0..per_digest {
                    push(u64::from(ketama_point(&d, h)), index);
                }
                k.increment();
            }
        }
        PointHash::SipHash13 => {
            let server = server_string(name, p.default_port()).as_bytes();
            buf.clear();
            buf.extend_from_slice(server);
            buf.push(b'-');
            // Callers check the count first: at most MAX_POINTS (< 10^8) digests. One
            // point per digest.
            let mut k = 0u64;
            sip_many::points(buf, digests.min(MAX_POINTS), |pt| {
                if k >= first {
                    push(pt, index);
                }
                k += 1;
            });
        }
    }
}

/// A decimal counter kept as its ASCII digits (a build numbers a node's digests 0, 1,
/// 2, ...: incrementing the text is cheaper than formatting each number).
struct Decimal {
    digits: [u8; 20],
    start: usize,
}

impl Decimal {
    fn zero() -> Decimal {
        let mut digits = [b'0'; 20];
        digits[19] = b'0';
        Decimal { digits, start: 19 }
    }

    #[inline]
    fn as_bytes(&self) -> &[u8] {
        &self.digits[self.start..]
    }

    #[inline]
    fn increment(&mut self) {
        let mut i = self.digits.len();
        loop {
            i -= 1;
            if self.digits[i] == b'9' {
                self.digits[i] = b'0';
                if i == 0 {
                    return; // past u64::MAX digits: never reached (digests < 2^25)
                }
            } else {
                self.digits[i] += 1;
                break;
            }
        }
        self.start = self.start.min(i);
    }
}

/// Node indexes sorted by name (stable: equal names in input order), or `Err(i)` with
/// `i` the first node (in input order) whose name an earlier node already has.
fn name_index(nodes: &[Node]) -> Result<Vec<u32>, usize> {
    let mut idx: Vec<u32> = (0..nodes.len() as u32).collect();
    // By name, then index (unique keys: the order is the same whatever the sort).
    sort_by_less(&mut idx, |&a, &b| {
        (nodes[a as usize].name.as_str(), a) < (nodes[b as usize].name.as_str(), b)
    });
    let mut first_dup: Option<usize> = None;
    for w in idx.windows(2) {
        if nodes[w[0] as usize].name == nodes[w[1] as usize].name {
            let later = w[1] as usize;
            first_dup = Some(first_dup.map_or(later, |d| d.min(later)));
        }
    }
    match first_dup {
        Some(d) => Err(d),
        None => Ok(idx),
    }
}

/// Applies the profile's tie rule to each run of equal points, whose owners come in
/// node-index order (as the sort leaves them).
fn order_ties(points: &[u64], owners: &mut [u32], ties: Ties, nodes: &[Node]) {
    if ties == Ties::FirstNode {
        return;
    }
    let mut start = 0;
    while start < points.len() {
        let mut end = start + 1;
        while end < points.len() && points[end] == points[start] {
            end += 1;
        }
        // Runs of one point (nearly all of them) have nothing to order.
        if end - start > 1 {
            order_run(&mut owners[start..end], ties, nodes);
        }
        start = end;
    }
}

/// [`order_ties`] for the runs of equal points that hold one of `changed` (sorted): after
/// an incremental change only those can be out of order.
fn order_ties_at<O: OwnerInt>(
    points: &[u64],
    owners: &mut [O],
    ties: Ties,
    nodes: &[Node],
    changed: &[(u64, u32)],
) {
    if ties == Ties::FirstNode {
        return;
    }
    let mut last = None;
    for &(p, _) in changed {
        if last == Some(p) {
            continue;
        }
        last = Some(p);
        let lo = points.partition_point(|&q| q < p);
        let mut hi = lo;
        while hi < points.len() && points[hi] == p {
            hi += 1;
        }
        if hi - lo > 1 {
            order_run(&mut owners[lo..hi], ties, nodes);
        }
    }
}

/// Merges `new` (sorted (point, owner) pairs) into the sorted arrays, from the back and in
/// place: (point, node index) order, as a build sorts. Every owner of `new` fits in `O`.
fn merge_points<O: OwnerInt>(points: &mut Vec<u64>, owners: &mut Vec<O>, new: &[(u64, u32)]) {
    let old = points.len();
    // By a sixteenth at least, not by doubling (a leaf grown by doubling would hold up to
    // twice the memory it needs), nor exactly (1000 adds to one array then copied it 1000
    // times: 142 -> 225 ms from an empty ring to 1000 x 160).
    let grow = new.len().max(old / 16);
    if points.capacity() - old < new.len() {
        points.reserve_exact(grow);
    }
    if owners.capacity() - owners.len() < new.len() {
        owners.reserve_exact(grow);
    }
    points.resize(old + new.len(), 0);
    owners.resize(old + new.len(), O::default());
    // From the last new point back: the old points after it move up by the new points
    // not yet placed, one block copy each (not one element at a time: a point merged into
    // a leaf of 600 moved 300 elements by a loop, 4x slower in WebAssembly).
    let mut a = old;
    for (k, &(np, no)) in new.iter().enumerate().rev() {
        let lo = points[..a].partition_point(|&p| p < np);
        let mut at = lo + points[lo..a].partition_point(|&p| p <= np);
        // Equal points (rare): after the last whose owner is not above `no`, as a merge
        // from the back that compares (point, owner) places it.
        while at > lo && owners[at - 1].into() > no {
            at -= 1;
        }
        points.copy_within(at..a, at + k + 1);
        owners.copy_within(at..a, at + k + 1);
        points[at + k] = np;
        owners[at + k] = O::from_index(no);
        a = at;
    }
}

/// Drops the points of node `index` from the arrays and returns them as (point, owner)
/// pairs; later nodes' indexes move down by one.
fn drop_points<O: OwnerInt>(
    points: &mut Vec<u64>,
    owners: &mut Vec<O>,
    index: u32,
) -> Vec<(u64, u32)> {
    let mut w = 0;
    let mut gone = Vec::new();
    for r in 0..points.len().min(owners.len()) {
        let o: u32 = owners[r].into();
        if o == index {
            gone.push((points[r], o));
        } else {
            points[w] = points[r];
            owners[w] = O::from_index(o - u32::from(o > index));
            w += 1;
        }
    }
    points.truncate(w);
    owners.truncate(w);
    gone
}

/// Drops the (point, owner) pairs of `gone` (sorted; each once per copy) from the arrays.
fn drop_pairs<O: OwnerInt>(points: &mut Vec<u64>, owners: &mut Vec<O>, gone: &[(u64, u32)]) {
    let n = points.len().min(owners.len());
    let mut used = alloc::vec![false; gone.len()];
    // Read and write positions: the points between two dropped ones move down by one block
    // copy (not one element at a time).
    let (mut r, mut w, mut g) = (0, 0, 0);
    while g < gone.len() {
        let p = gone[g].0;
        let g_end = g + gone[g..].partition_point(|e| e.0 <= p);
        let lo = r + points[r..n].partition_point(|&q| q < p);
        let hi = lo + points[lo..n].partition_point(|&q| q <= p);
        points.copy_within(r..lo, w);
        owners.copy_within(r..lo, w);
        w += lo - r;
        // The run of points at `p`: each of `gone` at `p` drops one point of its owner.
        for k in lo..hi {
            let o: u32 = owners[k].into();
            let hit = (g..g_end).find(|&x| !used[x] && gone[x].1 == o);
            match hit {
                Some(x) => used[x] = true,
                None => {
                    points[w] = points[k];
                    owners[w] = owners[k];
                    w += 1;
                }
            }
        }
        (r, g) = (hi, g_end);
    }
    points.copy_within(r..n, w);
    owners.copy_within(r..n, w);
    w += n - r;
    debug_assert!(
        used.iter().all(|&u| u),
        "a point to drop is not on the circle"
    );
    points.truncate(w);
    owners.truncate(w);
}

/// Applies the tie rule to the owners of one run of equal points.
fn order_run<O: OwnerInt>(run: &mut [O], ties: Ties, nodes: &[Node]) {
    {
        match ties {
            // A dict overwritten in insertion order: every copy of a point is the winner's.
            Ties::LastNode => {
                let last = run[run.len() - 1];
                run.fill(last);
            }
            // Byte-wise smallest name first (insertion sort: runs are a few points).
            Ties::Name => {
                for k in 1..run.len() {
                    let mut j = k;
                    let name = |o: O| &nodes[Into::<u32>::into(o) as usize].name;
                    while j > 0 && name(run[j - 1]) > name(run[j]) {
                        run.swap(j - 1, j);
                        j -= 1;
                    }
                }
            }
            Ties::FirstNode => {}
        }
    }
}

/// `name` without a trailing `:port` when `port` is the default port.
fn server_string(name: &str, default_port: Option<u16>) -> &str {
    let Some(port) = default_port else {
        return name;
    };
    match name.rsplit_once(':') {
        Some((host, p))
            if !host.is_empty() && p.parse::<u16>().ok() == Some(port) && !p.starts_with('+') =>
        {
            host
        }
        _ => name,
    }
}

#[cfg(test)]
use crate::util::push_decimal;

#[cfg(test)]
mod tests {
    use super::*;

    /// The element-at-a-time merge and drop that the block-copy versions replaced, as
    /// oracles: the same arrays, equal points and unsorted owner runs included.
    fn merge_oracle(points: &mut Vec<u64>, owners: &mut Vec<u32>, new: &[(u64, u32)]) {
        let old = points.len();
        points.resize(old + new.len(), 0);
        owners.resize(old + new.len(), 0);
        let (mut a, mut b, mut w) = (old, new.len(), old + new.len());
        while b > 0 {
            let (np, no) = new[b - 1];
            if a > 0 && (points[a - 1], owners[a - 1]) > (np, no) {
                points[w - 1] = points[a - 1];
                owners[w - 1] = owners[a - 1];
                a -= 1;
            } else {
                (points[w - 1], owners[w - 1]) = (np, no);
                b -= 1;
            }
            w -= 1;
        }
    }

    fn drop_oracle(points: &mut Vec<u64>, owners: &mut Vec<u32>, gone: &[(u64, u32)]) {
        let mut used = alloc::vec![false; gone.len()];
        let mut w = 0;
        for r in 0..points.len() {
            let (p, o) = (points[r], owners[r]);
            let hit = (0..gone.len()).find(|&k| !used[k] && gone[k] == (p, o));
            match hit {
                Some(k) => used[k] = true,
                None => {
                    (points[w], owners[w]) = (p, o);
                    w += 1;
                }
            }
        }
        points.truncate(w);
        owners.truncate(w);
    }

    #[test]
    fn block_merge_and_drop_equal_the_element_loops_on_colliding_points() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..3000 {
            // Few distinct positions: runs of equal points, owners in any order.
            let (n, spread) = (next(40) as usize, 1 + next(12));
            let mut pairs: Vec<(u64, u32)> =
                (0..n).map(|_| (next(spread), next(6) as u32)).collect();
            pairs.sort_by_key(|e| e.0);
            let (points, owners): (Vec<u64>, Vec<u32>) = pairs.iter().copied().unzip();
            let mut new: Vec<(u64, u32)> = (0..next(10))
                .map(|_| (next(spread + 2), next(6) as u32))
                .collect();
            new.sort_unstable();
            let (mut p1, mut o1) = (points.clone(), owners.clone());
            let (mut p2, mut o2) = (points.clone(), owners.clone());
            merge_points(&mut p1, &mut o1, &new);
            merge_oracle(&mut p2, &mut o2, &new);
            assert_eq!((&p1, &o1), (&p2, &o2), "merge of {new:?} into {pairs:?}");
            // Drop a sorted sample of what is there (each point at most once).
            let mut gone: Vec<(u64, u32)> = p1
                .iter()
                .copied()
                .zip(o1.iter().copied())
                .filter(|_| next(3) == 0)
                .collect();
            gone.sort_unstable();
            let (mut p3, mut o3) = (p1.clone(), o1.clone());
            drop_pairs(&mut p1, &mut o1, &gone);
            drop_oracle(&mut p3, &mut o3, &gone);
            assert_eq!((&p1, &o1), (&p3, &o3), "drop of {gone:?}");
        }
    }

    #[test]
    fn decimal_counter_counts() {
        let mut d = Decimal::zero();
        let mut buf = Vec::new();
        for k in 0..100_500u64 {
            buf.clear();
            push_decimal(&mut buf, k);
            assert_eq!(d.as_bytes(), buf.as_slice(), "{k}");
            d.increment();
        }
    }

    #[test]
    fn server_strings() {
        assert_eq!(server_string("h:11211", Some(11211)), "h");
        assert_eq!(server_string("h:11212", Some(11211)), "h:11212");
        assert_eq!(server_string(":11211", Some(11211)), ":11211");
        assert_eq!(server_string("h:11211", None), "h:11211");
        assert_eq!(server_string("h", Some(11211)), "h");
    }

    #[test]
    fn ties_follow_the_profile() {
        let nodes: Vec<Node> = ["b", "c", "a"]
            .iter()
            .map(|n| Node {
                name: (*n).into(),
                weight: 1,
            })
            .collect();
        // Points 5 and 9 are shared; owners in index order, as the sort leaves them.
        let points = [1, 5, 5, 5, 7, 9, 9];
        let owners = [2, 0, 1, 2, 1, 0, 2];
        let run = |ties| {
            let mut o = owners;
            order_ties(&points, &mut o, ties, &nodes);
            o
        };
        assert_eq!(run(Ties::FirstNode), owners);
        assert_eq!(run(Ties::LastNode), [2, 2, 2, 2, 1, 2, 2]);
        assert_eq!(run(Ties::Name), [2, 2, 0, 1, 1, 2, 0]);
    }

    #[test]
    fn decimal() {
        let mut b = Vec::new();
        for v in [0u64, 7, 10, 159, 123456789] {
            b.clear();
            push_decimal(&mut b, v);
            assert_eq!(b, alloc::format!("{v}").into_bytes());
        }
    }

    #[test]
    fn errors_leave_the_ring_unchanged() {
        let mut r = Ring::with_nodes(Profile::native(), [("a", 1)]).expect("ring");
        assert_eq!(r.add("a", 1), Err(RingError::DuplicateNode("a".into())));
        assert_eq!(r.add("", 1), Err(RingError::EmptyNodeName));
        assert_eq!(r.add("b", 0), Err(RingError::ZeroWeight("b".into())));
        assert!(matches!(
            r.add("b", u32::MAX),
            Err(RingError::TooManyPoints(_))
        ));
        assert!(matches!(
            r.set_weight("a", u32::MAX),
            Err(RingError::TooManyPoints(_))
        ));
        assert_eq!(r.remove("zz"), Err(RingError::UnknownNode("zz".into())));
        assert_eq!(r.len(), 1);
        assert_eq!(r.point_count(), 160);
        assert_eq!(r.nodes()[0].weight(), 1);
    }

    #[test]
    fn get_n_beyond_the_stack_list() {
        let nodes: Vec<(String, u32)> = (0..40).map(|i| (alloc::format!("n{i}"), 1)).collect();
        let r = Ring::with_nodes(Profile::libketama(), nodes).expect("ring");
        for n in [17usize, 30, 40, 99] {
            let mut got = r.get_n(b"key", n);
            assert_eq!(got.len(), n.min(40));
            assert_eq!(Some(got[0]), r.get(b"key"));
            got.sort_unstable();
            got.dedup();
            assert_eq!(got.len(), n.min(40));
            let mut buf = alloc::vec![usize::MAX; n];
            assert_eq!(r.get_n_to_slice(b"key", &mut buf), n.min(40));
        }
    }

    #[test]
    fn native_ring_is_pinned() {
        // The native format is ours: these values pin it across platforms and releases.
        let r = Ring::with_nodes(
            Profile::native(),
            [("cache-a", 1), ("cache-b", 2), ("cache-c", 1)],
        )
        .expect("ring");
        assert_eq!(
            r.positions().to_vec()[..4],
            [
                2169973918578042,
                15153389787061318,
                24162714055250059,
                63989850350808265
            ]
        );
        assert_eq!(r.owners().to_vec()[..4], [0, 0, 1, 2]);
        let got: Vec<&str> = (0..8)
            .map(|i| r.get(alloc::format!("user:{i}").as_bytes()).expect("node"))
            .collect();
        assert_eq!(
            got,
            [
                "cache-b", "cache-a", "cache-b", "cache-b", "cache-c", "cache-a", "cache-b",
                "cache-a"
            ]
        );
    }

    #[test]
    fn empty_ring_answers_none() {
        let r = Ring::new(Profile::libketama());
        assert_eq!(r.get(b"k"), None);
        assert!(r.get_n(b"k", 3).is_empty());
        let mut out = Vec::new();
        r.get_many_into([b"a", b"b"], &mut out);
        assert_eq!(out, [None, None]);
    }

    #[test]
    fn design_facts() {
        // docs/design.md: hashed as `addr-k` (libketama's server strings keep the port).
        let r = Ring::with_nodes(
            Profile::libketama(),
            [("127.0.0.1:11211", 600), ("127.0.0.1:11212", 400)],
        )
        .expect("ring");
        assert_eq!(r.point_count(), 320);
        let i = r.point_for_hash(r.hash_key(b"test")).expect("point");
        assert_eq!(r.positions()[i], 3454255383);
        assert_eq!(r.get(b"test"), Some("127.0.0.1:11211"));
    }
}
