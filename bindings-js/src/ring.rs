//! Raw ring exports; the public `Ring` class in `js/ring.mjs` wraps [`RawRing`].
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::error::{ErrorCode, Int};
use keyroute::ring::{
    checked_weight, diff, PointHash, Profile, ProfileName, ProfileOptions, Ring, MAX_POINTS,
};
use wasm_bindgen::prelude::*;

use crate::error::{given, int, room, text, unpack_str, JsError, Live};
use crate::keys::RawKeys;

fn weight(name: &str, w: i128) -> Result<u32, JsError> {
    Ok(checked_weight(name, w)?)
}

fn index(i: Option<usize>) -> i32 {
    i.map_or(-1, |i| i as i32)
}

/// Bytes a ring build may need at its peak per point: the sort entries and the radix
/// sort's scratch copy of them (32 bytes for native, 16 for MD5), then the entries beside
/// the points and owners (28 for native), then those and the lookup table (up to 20).
const BUILD_BYTES_PER_POINT: u64 = 36;
/// Bytes a built ring holds per point (points, owners, lookup table).
const RING_BYTES_PER_POINT: u64 = 20;

/// An upper bound of the points a ring of `profile` with these weights holds (the ketama
/// family divides `vnodes` digests per server among the servers by weight; native gives
/// `vnodes` points per unit of weight), capped just above [`MAX_POINTS`] (core refuses
/// more). It sizes the memory probe that keeps a large build from trapping.
fn points_bound(profile: &Profile, weights: impl Iterator<Item = u32>) -> u64 {
    let vnodes = u64::from(profile.vnodes());
    let (mut n, mut total) = (0u64, 0u64);
    for w in weights {
        n += 1;
        total += u64::from(w);
    }
    let points = match profile.hash() {
        PointHash::SipHash13 => total.saturating_mul(vnodes),
        PointHash::Md5 => (n + 1)
            .saturating_mul(vnodes)
            .saturating_mul(u64::from(profile.points_per_digest())),
    };
    points.min(MAX_POINTS + 1)
}

/// Checks that a build of up to `points` points fits in memory.
fn build_room(points: u64) -> Result<(), JsError> {
    room(points * BUILD_BYTES_PER_POINT, "building this ring")
}

/// Owner index of `key`, `-1` on an empty ring: the lookup (hash and search) in one
/// place rather than inlined into each export that needs it (.wasm bytes).
#[inline(never)]
fn owner(ring: &Ring, key: &[u8]) -> i32 {
    index(ring.get_index(key))
}

/// A ring owned by Rust. Node indexes refer to [`RawRing::names`].
#[wasm_bindgen]
#[derive(Debug, Clone)]
pub struct RawRing {
    ring: Ring,
    _live: Live,
}

#[wasm_bindgen]
impl RawRing {
    /// Builds a ring: node `i` is the `i`th name of the packed batch `names`/`ends`, with
    /// weight `weights[i]`. Options are `i128::MIN` when not given; `default_port` 0 is
    /// "none".
    #[wasm_bindgen(constructor)]
    pub fn new(
        profile: &str,
        vnodes: i128,
        default_port: i128,
        points_per_digest: i128,
        names: &[u8],
        ends: &[u32],
        weights: &[f64],
    ) -> Result<RawRing, JsError> {
        let options = ProfileOptions {
            vnodes: given(vnodes),
            points_per_digest: given(points_per_digest),
            default_port: given(default_port),
        };
        let p = Profile::from_options(profile, &options)?;
        let names = unpack_str(names, ends)?;
        let mut nodes = Vec::with_capacity(names.len());
        for (&name, &w) in names.iter().zip(weights) {
            nodes.push((name, weight(name, int(w)?)?));
        }
        build_room(points_bound(&p, nodes.iter().map(|n| n.1)))?;
        Ok(RawRing {
            ring: Ring::with_nodes(p, nodes)?,
            _live: Live::default(),
        })
    }

    /// A copy of this ring (to compare before and after a change).
    #[wasm_bindgen(js_name = clone)]
    pub fn duplicate(&self) -> Result<RawRing, JsError> {
        let names: usize = self.ring.nodes().iter().map(|n| n.name().len() + 32).sum();
        room(
            self.ring.point_count() as u64 * RING_BYTES_PER_POINT + names as u64,
            "copying this ring",
        )?;
        Ok(self.clone())
    }

    /// Checks that the ring after a change to node `name` (added, or given `w`) fits.
    fn change_room(&self, name: &str, w: u32) -> Result<(), JsError> {
        // The node's index by core's name index, then integers: not a name comparison
        // per node (0.2 ms of one change to a 30,000-node ring).
        let at = self.ring.node_index(name);
        let others = (self.ring.nodes().iter().enumerate())
            .filter(|&(i, _)| Some(i) != at)
            .map(|(_, n)| n.weight());
        let bound = points_bound(self.ring.profile(), others.chain([w]));
        build_room(bound)
    }

    /// Adds a node.
    pub fn add(&mut self, name: &str, w: i128) -> Result<(), JsError> {
        let w = weight(name, w)?;
        self.change_room(name, w)?;
        Ok(self.ring.add(name, w)?)
    }

    /// Removes a node; returns the index it had.
    pub fn remove(&mut self, name: &str) -> Result<u32, JsError> {
        let i = self.ring.node_index(name);
        self.ring.remove(name)?;
        // Known: the removal found it.
        Ok(i.unwrap_or(0) as u32)
    }

    /// Changes a node's weight.
    #[wasm_bindgen(js_name = setWeight)]
    pub fn set_weight(&mut self, name: &str, w: i128) -> Result<(), JsError> {
        let w = weight(name, w)?;
        self.change_room(name, w)?;
        Ok(self.ring.set_weight(name, w)?)
    }

    /// Node names in index order.
    pub fn names(&self) -> Vec<String> {
        self.ring
            .nodes()
            .iter()
            .map(|n| String::from(n.name()))
            .collect()
    }

    /// Node weights in index order.
    pub fn weights(&self) -> Vec<u32> {
        self.ring.nodes().iter().map(|n| n.weight()).collect()
    }

    /// `[profile (index into rawProfiles), bits, vnodes, points per digest, default port
    /// (0: none), point count]`.
    pub fn info(&self) -> Vec<u32> {
        let p = self.ring.profile();
        let name = ProfileName::ALL.iter().position(|&n| n == p.name());
        alloc::vec![
            name.unwrap_or(0) as u32,
            p.hash().bits(),
            p.vnodes(),
            u32::from(p.points_per_digest()),
            u32::from(p.default_port().unwrap_or(0)),
            self.ring.point_count() as u32,
        ]
    }

    /// Owner index of the key in the first `len` bytes of `keys` (the glue writes a
    /// string key there, with no allocation per call), `-1` on an empty ring, `-2` when
    /// `len` passes the buffer.
    #[wasm_bindgen(js_name = getKey)]
    pub fn get_key(&self, keys: &RawKeys, len: u32) -> i32 {
        keys.key(len).map_or(-2, |k| owner(&self.ring, k))
    }

    /// Owner index of a byte key, `-1` on an empty ring.
    #[wasm_bindgen(js_name = getBytes)]
    pub fn get_bytes(&self, key: &[u8]) -> i32 {
        owner(&self.ring, key)
    }

    /// Owner index of the point at circle position `hash`, `-1` on an empty ring.
    #[wasm_bindgen(js_name = ownerOfHash)]
    pub fn owner_of_hash(&self, hash: u64) -> i32 {
        index(self.ring.owner_for_hash(hash))
    }

    /// Up to `n` distinct owner indexes, clockwise from the key's point (`n` above the
    /// node count asks for every node).
    #[wasm_bindgen(js_name = getNBytes)]
    pub fn get_n_bytes(&self, key: &[u8], n: i128) -> Result<Vec<u32>, JsError> {
        if n < 0 {
            return Err(JsError::new(
                ErrorCode::OutOfRange,
                text(format_args!(
                    "getN: n is {}; ask for 0 or more nodes",
                    Int(n)
                )),
            ));
        }
        let mut out = Vec::new();
        self.ring
            .get_n_into(key, usize::try_from(n).unwrap_or(usize::MAX), &mut out);
        Ok(out.into_iter().map(|i| i as u32).collect())
    }

    /// Owner index of each of the first `n` keys of `keys` (of `len` bytes), written
    /// behind their offsets (`-1` on an empty ring): core's batch lookup.
    #[wasm_bindgen(js_name = getManyKeys)]
    pub fn get_many_keys(&self, keys: &mut RawKeys, n: u32, len: u32) -> Result<(), JsError> {
        let (keys, out) = keys.batch(n, len)?;
        // NO_NODE (u32::MAX) reads as -1 on the JS side.
        self.ring.get_many_to_slice(keys, out);
        Ok(())
    }

    /// Where a key hashes on the circle.
    #[wasm_bindgen(js_name = hashKey)]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.ring.hash_key(key)
    }

    /// Sorted point positions.
    pub fn positions(&self) -> Result<Vec<u64>, JsError> {
        room(self.ring.point_count() as u64 * 8, "copying the points")?;
        Ok(self.ring.positions().to_vec())
    }

    /// Owner index of each point.
    pub fn owners(&self) -> Result<Vec<u32>, JsError> {
        room(self.ring.point_count() as u64 * 4, "copying the owners")?;
        Ok(self.ring.owners().to_vec())
    }

    /// Exact share of the circle per node, in index order.
    pub fn shares(&self) -> Vec<f64> {
        self.ring.shares()
    }

    /// The arcs of the circle, one per distinct point, clockwise: their first positions,
    /// then their last (inclusive) positions (fractions of the circle are computed on the
    /// JS side).
    #[wasm_bindgen(js_name = arcBounds)]
    pub fn arc_bounds(&self) -> Result<Vec<u64>, JsError> {
        room(self.ring.point_count() as u64 * 40, "copying the arcs")?;
        let arcs = self.ring.arcs();
        let mut out: Vec<u64> = arcs.iter().map(|a| a.start).collect();
        out.extend(arcs.iter().map(|a| a.end));
        Ok(out)
    }

    /// The owner index of each arc of [`RawRing::arc_bounds`].
    #[wasm_bindgen(js_name = arcOwners)]
    pub fn arc_owners(&self) -> Result<Vec<u32>, JsError> {
        room(self.ring.point_count() as u64 * 28, "copying the arcs")?;
        Ok(self.ring.arcs().iter().map(|a| a.owner as u32).collect())
    }
}

/// What moved between two rings.
#[wasm_bindgen]
#[derive(Debug)]
pub struct RawDiff {
    fractions: Vec<f64>,
    bounds: Vec<u64>,
    names: Vec<String>,
}

#[wasm_bindgen]
impl RawDiff {
    /// `[moved fraction, ideal fraction]`.
    pub fn fractions(&self) -> Vec<f64> {
        self.fractions.clone()
    }
    /// First positions of the moved arcs, then their last (inclusive) positions.
    pub fn bounds(&self) -> Vec<u64> {
        self.bounds.clone()
    }
    /// Old owners of the moved arcs, then their new owners (`""`: none; node names are
    /// never empty).
    pub fn names(&self) -> Vec<String> {
        self.names.clone()
    }
}

/// Compares two rings (see `keyroute::ring::diff`).
#[wasm_bindgen(js_name = rawDiff)]
pub fn raw_diff(old: &RawRing, new: &RawRing) -> Result<RawDiff, JsError> {
    // Its positions of change, sorted (8 bytes per point of both), and room for as many
    // moved arcs again.
    let cuts = (old.ring.point_count() + new.ring.point_count() + 1) as u64;
    room(cuts * 16, "comparing these rings")?;
    let d = diff(&old.ring, &new.ring)?;
    let mut bounds: Vec<u64> = d.moved.iter().map(|m| m.start).collect();
    bounds.extend(d.moved.iter().map(|m| m.end));
    let mut names: Vec<String> = d
        .moved
        .iter()
        .map(|m| m.from.clone().unwrap_or_default())
        .collect();
    names.extend(d.moved.into_iter().map(|m| m.to.unwrap_or_default()));
    Ok(RawDiff {
        fractions: alloc::vec![d.moved_fraction, d.ideal_fraction],
        bounds,
        names,
    })
}

/// The profile names, in documentation order.
#[wasm_bindgen(js_name = rawProfiles)]
pub fn raw_profiles() -> Vec<String> {
    ProfileName::ALL
        .iter()
        .map(|p| String::from(p.as_str()))
        .collect()
}
