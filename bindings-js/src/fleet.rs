//! Raw exports of the fleet module (`keyroute/fleet`): every engine and fleet profile of
//! `keyroute::engine` and proxy configurations read by `keyroute::config`. The public
//! `Router` class in `js/fleet.mjs` wraps [`RawRouter`].
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::config::{read_config_with, ReadOptions};
use keyroute::engine::{Engine, Router, NAMES};
use keyroute::error::{ErrorCode, Int};
use keyroute::ring::{checked_weight, NodeSpec, MAX_POINTS};
use wasm_bindgen::prelude::*;

use crate::error::{for_each_packed, int, room, text, unpack_str, JsError, Live};

/// The most options (resolved hosts, included files) one call takes: `TOO_LARGE` above.
const MAX_OPTIONS: usize = 64;

/// Bytes a build may need per point at its peak (as rings: sort entries and scratch).
const BUILD_BYTES_PER_POINT: u64 = 36;

fn pairs<'a>(data: &'a [u8], ends: &[u32], what: &str) -> Result<Vec<(&'a str, &'a str)>, JsError> {
    if ends.len() > 2 * MAX_OPTIONS {
        let mut m = String::from(what);
        m.push_str(&text(format_args!(": more than {MAX_OPTIONS} given")));
        return Err(JsError::new(ErrorCode::TooLarge, m));
    }
    let items = unpack_str(data, ends)?;
    Ok(items.chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

/// An upper bound of the points (or table slots) a build makes, for the memory probe:
/// the total weight times the largest per-node count an option gives (160 when none
/// does), or a table or ring size an option gives; capped just above core's limit.
fn points_bound(total_weight: u64, options: &[(&str, &str)]) -> u64 {
    let mut per = 160u64;
    let mut size = 0u64;
    for (k, v) in options {
        let Ok(n) = v.parse::<u64>() else { continue };
        match *k {
            "replicas" | "vnodes" | "hash_nodes" | "points" => per = per.max(n),
            "table_size" | "max_ring_size" | "min_ring_size" => size = size.max(n),
            _ => {}
        }
    }
    total_weight
        .saturating_mul(per)
        .max(size)
        .min(MAX_POINTS + 1)
}

/// An engine, fleet profile or proxy pool owned by Rust; node indexes refer to
/// [`RawRouter::names`].
#[wasm_bindgen]
#[derive(Debug)]
pub struct RawRouter {
    router: Router,
    /// From a configuration: format, key, and each node's address.
    config: Option<(String, String, Vec<String>)>,
    /// The options it was built with (for the memory probe of an `add`).
    options: Vec<(String, String)>,
    _live: Live,
}

#[wasm_bindgen]
impl RawRouter {
    /// Builds `engine` over the packed node names with `weights`, and the options packed
    /// as name, value, name, value, ...
    #[wasm_bindgen(constructor)]
    pub fn new(
        engine: &str,
        names: &[u8],
        ends: &[u32],
        weights: &[f64],
        options: &[u8],
        option_ends: &[u32],
    ) -> Result<RawRouter, JsError> {
        let names = unpack_str(names, ends)?;
        let options = pairs(options, option_ends, "options")?;
        let mut nodes = Vec::with_capacity(names.len());
        let mut total = 0u64;
        for (&name, &w) in names.iter().zip(weights) {
            let weight = checked_weight(name, int(w)?)?;
            total = total.saturating_add(weight.into());
            nodes.push(NodeSpec {
                name: name.into(),
                weight,
                address: None,
            });
        }
        room(
            points_bound(total, &options).saturating_mul(BUILD_BYTES_PER_POINT),
            "building this engine",
        )?;
        Ok(RawRouter {
            router: Router::build(engine, &nodes, &options)?,
            config: None,
            options: options
                .iter()
                .map(|(k, v)| (String::from(*k), String::from(*v)))
                .collect(),
            _live: Live::default(),
        })
    }

    /// Reads `pool` (empty: the only one) of the configuration `config`; `resolved` packs
    /// host, count, host, count, ...; `includes` packs name, text, name, text, ...
    #[wasm_bindgen(js_name = fromConfig)]
    #[allow(clippy::too_many_arguments)]
    pub fn from_config(
        config: &str,
        pool: &str,
        file: &str,
        allow_down: bool,
        resolved: &[u8],
        resolved_ends: &[u32],
        includes: &[u8],
        include_ends: &[u32],
    ) -> Result<RawRouter, JsError> {
        let mut addresses = Vec::new();
        for (host, n) in pairs(resolved, resolved_ends, "resolved")? {
            let count = n.parse::<u32>().map_err(|_| {
                JsError::new(
                    ErrorCode::OutOfRange,
                    text(format_args!(
                        "resolved: the address count of {host} must be 1 to 4294967295, got {n}"
                    )),
                )
            })?;
            addresses.push((String::from(host), count));
        }
        let includes = pairs(includes, include_ends, "includes")?;
        let mut resolve = |name: &str| -> Option<String> {
            includes
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| String::from(*v))
        };
        let cfg = read_config_with(
            config,
            file,
            (!pool.is_empty()).then_some(pool),
            &mut ReadOptions {
                resolve: &mut resolve,
                addresses: &addresses,
                allow_down,
            },
        )?;
        let router = cfg.router;
        let addrs = (0..router.len())
            .map(|i| {
                let name = router.node_name(i);
                cfg.servers
                    .iter()
                    .find(|s| s.name == name)
                    .map_or_else(String::new, |s| s.address.clone())
            })
            .collect();
        Ok(RawRouter {
            config: Some((String::from(cfg.format.as_str()), cfg.key, addrs)),
            router,
            options: Vec::new(),
            _live: Live::default(),
        })
    }

    /// The engine or profile name.
    pub fn engine(&self) -> String {
        String::from(self.router.name())
    }

    /// The node names, in list (or configuration) order.
    pub fn names(&self) -> Vec<String> {
        (0..self.router.len())
            .map(|i| String::from(self.router.node_name(i)))
            .collect()
    }

    /// Adds a node last (`weight` 1 or more), as the engine's peer does at run time.
    pub fn add(&mut self, name: &str, weight: f64) -> Result<(), JsError> {
        let weight = checked_weight(name, int(weight)?)?;
        let total = (0..self.router.len())
            .map(|i| u64::from(self.router.node_weight(i)))
            .fold(u64::from(weight), u64::saturating_add);
        let options: Vec<(&str, &str)> = self
            .options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        room(
            points_bound(total, &options).saturating_mul(BUILD_BYTES_PER_POINT),
            "adding this node",
        )?;
        Ok(self.router.add(NodeSpec {
            name: name.into(),
            weight,
            address: None,
        })?)
    }

    /// Removes a node by its own name, as the engine's peer does at run time.
    pub fn remove(&mut self, name: &str) -> Result<(), JsError> {
        self.router.remove(name)?;
        Ok(())
    }

    /// The node weights.
    pub fn weights(&self) -> Vec<u32> {
        (0..self.router.len())
            .map(|i| self.router.node_weight(i))
            .collect()
    }

    /// From a configuration: [format, key, address 0, address 1, ...]; else empty.
    #[wasm_bindgen(js_name = configInfo)]
    pub fn config_info(&self) -> Vec<String> {
        match &self.config {
            Some((f, k, a)) => {
                let mut out = Vec::with_capacity(a.len() + 2);
                out.push(f.clone());
                out.push(k.clone());
                out.extend(a.iter().cloned());
                out
            }
            None => Vec::new(),
        }
    }

    /// Owner index of a string key, `-1` without nodes.
    #[wasm_bindgen(js_name = getStr)]
    pub fn get_str(&self, key: &str) -> i32 {
        self.get_bytes(key.as_bytes())
    }

    /// Owner index of a byte key, `-1` without nodes.
    #[wasm_bindgen(js_name = getBytes)]
    pub fn get_bytes(&self, key: &[u8]) -> i32 {
        self.router.get_index(key).map_or(-1, |i| i as i32)
    }

    /// Up to `n` distinct candidate indexes, the owner first.
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
        self.router
            .get_n_into(key, usize::try_from(n).unwrap_or(usize::MAX), &mut out);
        Ok(out.into_iter().map(|i| i as u32).collect())
    }

    /// Owner index of every key of a packed batch (`-1` without nodes).
    #[wasm_bindgen(js_name = getManyPacked)]
    pub fn get_many_packed(&self, data: &[u8], ends: &[u32]) -> Result<Vec<i32>, JsError> {
        let mut out = Vec::new();
        out.try_reserve_exact(ends.len()).map_err(|_| {
            JsError::new(
                ErrorCode::TooLarge,
                "the answer does not fit in the WebAssembly memory; ask for fewer keys at a time",
            )
        })?;
        out.resize(ends.len(), -1i32);
        for_each_packed(data, ends, |i, k| {
            out[i] = self.router.get_index(k).map_or(-1, |i| i as i32);
        })?;
        Ok(out)
    }
}

/// Every engine and profile name (`ENGINES`).
#[wasm_bindgen(js_name = rawEngines)]
pub fn raw_engines() -> Vec<String> {
    NAMES.iter().map(|n| String::from(*n)).collect()
}

/// Consistent hashing with bounded loads over a router (`Bounded` in js/fleet.mjs): no
/// node above ⌈c·m/n⌉ of the m assigned keys. The last release's moves are kept for
/// [`RawBounded::moved_keys`], [`RawBounded::moved_from`] and [`RawBounded::moved_to`].
#[wasm_bindgen]
#[derive(Debug)]
pub struct RawBounded {
    inner: keyroute::engine::Bounded<Router>,
    moved: Vec<keyroute::engine::Load>,
    _live: Live,
}

#[wasm_bindgen]
impl RawBounded {
    /// The overlay over a copy of `router` with balance factor `c` (at least 1).
    #[wasm_bindgen(constructor)]
    pub fn new(router: &RawRouter, c: f64) -> Result<RawBounded, JsError> {
        Ok(RawBounded {
            inner: keyroute::engine::Bounded::new(router.router.clone(), c)?,
            moved: Vec::new(),
            _live: Live::default(),
        })
    }

    /// Assigns a key: its node's index, `-1` without nodes.
    pub fn assign(&mut self, key: &[u8]) -> i32 {
        self.inner.assign(key).map_or(-1, |i| i as i32)
    }

    /// Frees a key: the number of keys moved to keep the cap, `-1` when it was not
    /// assigned.
    pub fn release(&mut self, key: &[u8]) -> i32 {
        match self.inner.release(key) {
            Some(m) => {
                let n = m.len() as i32;
                self.moved = m;
                n
            }
            None => {
                self.moved.clear();
                -1
            }
        }
    }

    /// The keys the last release moved.
    #[wasm_bindgen(js_name = movedKeys)]
    pub fn moved_keys(&self) -> crate::batch::RawBatch {
        crate::batch::RawBatch::from_iter(self.moved.iter().map(|l| l.key.as_slice()))
    }

    /// The nodes they left.
    #[wasm_bindgen(js_name = movedFrom)]
    pub fn moved_from(&self) -> Vec<u32> {
        self.moved.iter().map(|l| l.from as u32).collect()
    }

    /// The nodes they went to.
    #[wasm_bindgen(js_name = movedTo)]
    pub fn moved_to(&self) -> Vec<u32> {
        self.moved.iter().map(|l| l.to as u32).collect()
    }

    /// The index of the node holding a key, `-1` when it is not assigned.
    #[wasm_bindgen(js_name = ownerOf)]
    pub fn owner_of(&self, key: &[u8]) -> i32 {
        self.inner.owner_of(key).map_or(-1, |i| i as i32)
    }

    /// Each node's load.
    pub fn loads(&self) -> Vec<f64> {
        self.inner.loads().iter().map(|&l| l as f64).collect()
    }

    /// The cap now.
    pub fn cap(&self) -> f64 {
        self.inner.cap() as f64
    }

    /// The number of assigned keys.
    pub fn assigned(&self) -> f64 {
        self.inner.assigned() as f64
    }
}
