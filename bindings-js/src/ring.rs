//! Raw ring exports; the public `Ring` class in `js/api.mjs` wraps [`RawRing`].
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::ring::{checked_weight, diff, Profile, ProfileName, ProfileOptions, Ring};
use wasm_bindgen::prelude::*;

use crate::error::{for_each_packed, is_integer, JsError};

/// `-1` in an `i32` option means "the profile's default".
const DEFAULT: i32 = -1;
/// `-2` for the default port means "no default port" (JS `null`).
const NO_PORT: i32 = -2;

fn weight(name: &str, w: f64) -> Result<u32, JsError> {
    if !w.is_finite() || !is_integer(w) {
        return Err(JsError {
            code: "BAD_WEIGHT",
            message: alloc::format!("node {name:?} has a weight that is not an integer"),
        });
    }
    // Out-of-range floats saturate, and checked_weight then rejects them.
    Ok(checked_weight(name, w as i128)?)
}

fn profile(name: &str, vnodes: i32, default_port: i32, ppd: i32) -> Result<Profile, JsError> {
    let given = |v: i32| (v != DEFAULT).then_some(i128::from(v));
    let options = ProfileOptions {
        vnodes: given(vnodes),
        points_per_digest: given(ppd),
        default_port: match default_port {
            NO_PORT => Some(0),
            port => given(port),
        },
    };
    Ok(Profile::from_options(name, &options)?)
}

fn index(i: Option<usize>) -> i32 {
    i.map_or(-1, |i| i as i32)
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
}

#[wasm_bindgen]
impl RawRing {
    /// Builds a ring; `names[i]` has weight `weights[i]`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        profile_name: &str,
        vnodes: i32,
        default_port: i32,
        points_per_digest: i32,
        names: Vec<String>,
        weights: &[f64],
    ) -> Result<RawRing, JsError> {
        let p = profile(profile_name, vnodes, default_port, points_per_digest)?;
        let mut nodes = Vec::with_capacity(names.len());
        for (name, &w) in names.iter().zip(weights) {
            nodes.push((name.as_str(), weight(name, w)?));
        }
        Ok(RawRing {
            ring: Ring::with_nodes(p, nodes)?,
        })
    }

    /// A copy of this ring (to compare before and after a change).
    #[wasm_bindgen(js_name = clone)]
    pub fn duplicate(&self) -> RawRing {
        self.clone()
    }

    /// Adds a node.
    pub fn add(&mut self, name: &str, w: f64) -> Result<(), JsError> {
        let w = weight(name, w)?;
        Ok(self.ring.add(name, w)?)
    }

    /// Removes a node.
    pub fn remove(&mut self, name: &str) -> Result<(), JsError> {
        self.ring.remove(name)?;
        Ok(())
    }

    /// Changes a node's weight.
    #[wasm_bindgen(js_name = setWeight)]
    pub fn set_weight(&mut self, name: &str, w: f64) -> Result<(), JsError> {
        let w = weight(name, w)?;
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

    /// The profile's name (`native`, `libketama`, …).
    pub fn profile(&self) -> String {
        String::from(self.ring.profile().name().as_str())
    }

    /// Bits of the circle: 32 for the ketama family, 64 for native.
    pub fn bits(&self) -> u32 {
        self.ring.profile().hash().bits()
    }

    /// Number of points.
    #[wasm_bindgen(js_name = pointCount)]
    pub fn point_count(&self) -> usize {
        self.ring.point_count()
    }

    /// Owner index of a string key, `-1` on an empty ring.
    #[wasm_bindgen(js_name = getStr)]
    pub fn get_str(&self, key: &str) -> i32 {
        owner(&self.ring, key.as_bytes())
    }

    /// Owner index of a byte key, `-1` on an empty ring.
    #[wasm_bindgen(js_name = getBytes)]
    pub fn get_bytes(&self, key: &[u8]) -> i32 {
        owner(&self.ring, key)
    }

    /// Up to `n` distinct owner indexes, clockwise from the key's point.
    #[wasm_bindgen(js_name = getNBytes)]
    pub fn get_n_bytes(&self, key: &[u8], n: u32) -> Vec<u32> {
        let mut out = Vec::new();
        self.ring.get_n_into(key, n as usize, &mut out);
        out.into_iter().map(|i| i as u32).collect()
    }

    /// Owner index of every key of a packed batch (`-1` on an empty ring).
    #[wasm_bindgen(js_name = getManyPacked)]
    pub fn get_many_packed(&self, data: &[u8], ends: &[u32]) -> Result<Vec<i32>, JsError> {
        let mut out = alloc::vec![-1i32; ends.len()];
        for_each_packed(data, ends, |i, k| out[i] = owner(&self.ring, k))?;
        Ok(out)
    }

    /// Where a key hashes on the circle.
    #[wasm_bindgen(js_name = hashKey)]
    pub fn hash_key(&self, key: &[u8]) -> u64 {
        self.ring.hash_key(key)
    }

    /// Sorted point positions.
    pub fn positions(&self) -> Vec<u64> {
        self.ring.positions().to_vec()
    }

    /// Owner index of each point.
    pub fn owners(&self) -> Vec<u32> {
        self.ring.owners().to_vec()
    }

    /// Exact share of the circle per node, in index order.
    pub fn shares(&self) -> Vec<f64> {
        self.ring.shares()
    }

    /// The arcs of the circle, one per distinct point, clockwise (fractions of the
    /// circle are computed on the JS side).
    pub fn arcs(&self) -> RawArcs {
        let arcs = self.ring.arcs();
        RawArcs {
            starts: arcs.iter().map(|a| a.start).collect(),
            ends: arcs.iter().map(|a| a.end).collect(),
            owners: arcs.iter().map(|a| a.owner as u32).collect(),
        }
    }
}

/// The arcs of a ring as parallel arrays.
#[wasm_bindgen]
#[derive(Debug)]
pub struct RawArcs {
    starts: Vec<u64>,
    ends: Vec<u64>,
    owners: Vec<u32>,
}

#[wasm_bindgen]
impl RawArcs {
    /// First position of each arc.
    #[wasm_bindgen(getter)]
    pub fn starts(&self) -> Vec<u64> {
        self.starts.clone()
    }
    /// Last position (inclusive) of each arc.
    #[wasm_bindgen(getter)]
    pub fn ends(&self) -> Vec<u64> {
        self.ends.clone()
    }
    /// Owner index of each arc.
    #[wasm_bindgen(getter)]
    pub fn owners(&self) -> Vec<u32> {
        self.owners.clone()
    }
}

/// What moved between two rings.
#[wasm_bindgen]
#[derive(Debug)]
pub struct RawDiff {
    moved_fraction: f64,
    ideal_fraction: f64,
    starts: Vec<u64>,
    ends: Vec<u64>,
    from: Vec<String>,
    to: Vec<String>,
    bits: u32,
}

#[wasm_bindgen]
impl RawDiff {
    /// Fraction of the key space that changes owner.
    #[wasm_bindgen(getter, js_name = movedFraction)]
    pub fn moved_fraction(&self) -> f64 {
        self.moved_fraction
    }
    /// The least any ring could move for the same change of shares.
    #[wasm_bindgen(getter, js_name = idealFraction)]
    pub fn ideal_fraction(&self) -> f64 {
        self.ideal_fraction
    }
    /// First position of each moved arc.
    #[wasm_bindgen(getter)]
    pub fn starts(&self) -> Vec<u64> {
        self.starts.clone()
    }
    /// Last position (inclusive) of each moved arc.
    #[wasm_bindgen(getter)]
    pub fn ends(&self) -> Vec<u64> {
        self.ends.clone()
    }
    /// Old owner of each moved arc (`""`: none; node names are never empty).
    #[wasm_bindgen(getter)]
    pub fn from(&self) -> Vec<String> {
        self.from.clone()
    }
    /// New owner of each moved arc (`""`: none).
    #[wasm_bindgen(getter)]
    pub fn to(&self) -> Vec<String> {
        self.to.clone()
    }
    /// Bits of the circle.
    #[wasm_bindgen(getter)]
    pub fn bits(&self) -> u32 {
        self.bits
    }
}

/// Compares two rings (see `keyroute::ring::diff`).
#[wasm_bindgen(js_name = rawDiff)]
pub fn raw_diff(old: &RawRing, new: &RawRing) -> Result<RawDiff, JsError> {
    let d = diff(&old.ring, &new.ring)?;
    let name = |o: &Option<String>| o.clone().unwrap_or_default();
    Ok(RawDiff {
        moved_fraction: d.moved_fraction,
        ideal_fraction: d.ideal_fraction,
        starts: d.moved.iter().map(|m| m.start).collect(),
        ends: d.moved.iter().map(|m| m.end).collect(),
        from: d.moved.iter().map(|m| name(&m.from)).collect(),
        to: d.moved.iter().map(|m| name(&m.to)).collect(),
        bits: old.bits(),
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
