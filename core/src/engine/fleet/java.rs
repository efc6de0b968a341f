//! The Java rings: the `java-hashcode` skip-list ring, spymemcached's
//! `KetamaNodeLocator` and Jedis' `Sharded`.

use alloc::string::String;
use alloc::vec::Vec;

use super::super::{
    concat, push_decimal, Dedup, EngineError, KeyHash, KeyTag, Kind, NodePoints, Options,
    PointRing, PointRules, Seek, SpyHash,
};
use crate::hashes::{java_abs, java_string_hash, md5, murmur64a};
use crate::ring::profile::{digests_for, WeightRule};
use crate::ring::NodeSpec;

/// The `java-hashcode` entry of the registry: `vnodes` points per node (150), `node`
/// (`name`: a key's owner is the node; `prefix`: the part of its name before the first
/// `-`, the reference's `vnode.split("-")[0]`).
pub(crate) fn build_hashcode(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    super::super::error::unweighted(name, &nodes)?;
    let v = o.int("vnodes", 1, 65536)?.unwrap_or(150) as u32;
    let prefix = o.choice("node", &["name", "prefix"])? == Some("prefix");
    let ring = hashcode(nodes, v)?;
    Ok(Kind::Points(if prefix {
        ring.shown_before_dash()
    } else {
        ring
    }))
}

/// The `spymemcached` entry: `KetamaNodeLocator` without weights.
pub(crate) fn build_spymemcached(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    build_spy(name, nodes, o, false)
}

/// The `spymemcached-weighted` entry: `KetamaNodeLocator` with weights.
pub(crate) fn build_spymemcached_weighted(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    build_spy(name, nodes, o, true)
}

fn build_spy(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
    weighted: bool,
) -> Result<Kind, EngineError> {
    let lib = o.choice("format", &["spymemcached", "libmemcached"])? == Some("libmemcached");
    let alg = match o.text("hash") {
        None => SpyHash::Ketama,
        Some(h) => SpyHash::from_name(h.trim()).ok_or_else(|| EngineError::BadOption {
            engine: name,
            option: "hash".into(),
            reason: alloc::format!(
                "{h:?} is not one of ketama, native, crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32 (or KETAMA_HASH, ...)"
            ),
        })?,
    };
    if !weighted {
        super::super::error::unweighted(name, &nodes)?;
    }
    Ok(Kind::Points(spymemcached(nodes, alg, lib, weighted)?))
}

/// The `jedis` entry: `version` (3), `naming` (unnamed), `hash` (murmur).
pub(crate) fn build_jedis(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let v = match o.choice("version", &["2", "3", "4"])?.unwrap_or("3") {
        "2" => JedisVersion::V2,
        "4" => JedisVersion::V4,
        _ => JedisVersion::V3,
    };
    let named = o.choice("naming", &["unnamed", "named"])? == Some("named");
    let md5 = o.choice("hash", &["murmur", "md5"])? == Some("md5");
    Ok(Kind::Points(jedis(nodes, v, named, md5)?))
}

fn rules(name: &'static str, key_hash: KeyHash) -> PointRules {
    PointRules {
        name,
        key_hash,
        tag: KeyTag::Whole,
        seek: Seek::Ceiling,
        dedup: Dedup::KeepLast,
    }
}

/// The positions of node `name`: `Math.abs((name + "-N" + i).hashCode())` for
/// `i < vnodes`, the sign bit flipped (the circle's order is the signed order of the map's
/// `Integer` keys).
fn hashcode_points(name: &[u8], vnodes: u32, out: &mut Vec<u64>) {
    let mut buf = Vec::new();
    for k in 0..vnodes {
        buf.clear();
        buf.extend_from_slice(&concat(&[name, b"-N"]));
        push_decimal(&mut buf, u64::from(k));
        let h = java_abs(java_string_hash(&buf)) as u32 ^ (1 << 31);
        out.push(u64::from(h));
    }
}

/// The `java-hashcode` ring: each node's points ([`hashcode_points`]) put in node order
/// into a `ConcurrentSkipListMap<Integer, String>` (a later put wins a shared point); keys
/// by `Math.abs(key.hashCode())`, `tailMap`, wrapping to the first entry. Changed in
/// place as the map is: an added node's points are put over the others, a removed node's
/// positions are removed whoever holds them.
pub(crate) fn hashcode(nodes: Vec<NodeSpec>, vnodes: u32) -> Result<PointRing, EngineError> {
    let make = NodePoints {
        make: hashcode_points,
        count: vnodes,
    };
    let pts = make.all(&nodes);
    let ring =
        PointRing::from_points(rules("java-hashcode", KeyHash::JavaAbsHashCode), nodes, pts)?;
    Ok(ring.changed_in_place(make))
}

/// spymemcached's key format: `SPYMEMCACHED` hashes the name as given; `LIBMEMCACHED`
/// drops a `:11211` port.
pub(crate) fn spy_node_key(name: &str, libmemcached: bool) -> &str {
    if libmemcached {
        if let Some(host) = name.strip_suffix(":11211") {
            return host;
        }
    }
    name
}

/// `KetamaNodeLocator` (2.12): unweighted, 40 MD5 digests × 4 points with `KETAMA_HASH`,
/// else 160 points of the algorithm; weighted, libmemcached's float formula and MD5
/// points whatever the algorithm. `TreeMap.put`: the last node wins a shared point.
pub(crate) fn spymemcached(
    nodes: Vec<NodeSpec>,
    alg: SpyHash,
    libmemcached: bool,
    weighted: bool,
) -> Result<PointRing, EngineError> {
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight)).sum();
    let mut pts = Vec::new();
    let mut buf = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let key = spy_node_key(&n.name, libmemcached).as_bytes();
        let md5_points = weighted || alg == SpyHash::Ketama;
        let reps = if weighted {
            digests_for(WeightRule::MemcachedF32, 40, nodes.len(), n.weight, total)
        } else if md5_points {
            40
        } else {
            160
        };
        for k in 0..reps {
            buf.clear();
            buf.extend_from_slice(&concat(&[key, b"-"]));
            push_decimal(&mut buf, k);
            if md5_points {
                let d = md5(&buf);
                for h in 0..4 {
                    let p =
                        u32::from_le_bytes([d[4 * h], d[4 * h + 1], d[4 * h + 2], d[4 * h + 3]]);
                    pts.push((u64::from(p), i as u32));
                }
            } else {
                pts.push((u64::from(alg.hash(&buf)), i as u32));
            }
        }
    }
    let name = if weighted {
        "spymemcached-weighted"
    } else {
        "spymemcached"
    };
    PointRing::from_points(rules(name, KeyHash::Spymemcached(alg)), nodes, pts)
}

/// Jedis' `Sharded` point strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JedisVersion {
    /// ≤ 2.9: named shards hash `name*weight` + n.
    V2,
    /// 2.10+ and 3.x: named shards hash `name*n`.
    V3,
    /// 4.x `JedisSharding`: `SHARD-i-NODE-n`, 160 points, no names, no weights.
    V4,
}

/// Jedis' `Sharded` / `ShardedConnectionProvider`: `160 × weight` points per shard
/// (`SHARD-i-NODE-n` unnamed; named: `name*n`, 2.x `name*weight` + `n`), MurmurHash64A
/// seed 0x1234ABCD as a signed `long` (or `Hashing.MD5`), `TreeMap` signed order, the
/// later shard winning a shared point; keys by `tailMap`, else the first key.
pub(crate) fn jedis(
    nodes: Vec<NodeSpec>,
    version: JedisVersion,
    named: bool,
    md5_hash: bool,
) -> Result<PointRing, EngineError> {
    if version == JedisVersion::V4 {
        if named {
            return Err(EngineError::BadOption {
                engine: "jedis",
                option: "naming".into(),
                reason: "Jedis 4.x shards have no names: use naming=unnamed".into(),
            });
        }
        if let Some(n) = nodes.iter().find(|n| n.weight != 1) {
            return Err(EngineError::BadOption {
                engine: "jedis",
                option: alloc::format!("weight of {}", n.name),
                reason: "Jedis 4.x shards have no weights (always 160 points)".into(),
            });
        }
    }
    let key_hash = if md5_hash {
        KeyHash::JedisMd5
    } else {
        KeyHash::Murmur64aSigned(0x1234_abcd)
    };
    let total: u64 = nodes.iter().map(|n| 160 * u64::from(n.weight)).sum();
    if total > crate::ring::MAX_POINTS {
        return Err(crate::ring::RingError::TooManyPoints(total).into());
    }
    let mut pts = Vec::with_capacity(total as usize);
    let mut s = String::new();
    for (i, n) in nodes.iter().enumerate() {
        for k in 0..160 * u64::from(n.weight) {
            s.clear();
            if named {
                s.push_str(&n.name);
                s.push('*');
                if version == JedisVersion::V2 {
                    s.push_str(&alloc::format!("{}", n.weight));
                }
                s.push_str(&alloc::format!("{k}"));
            } else {
                s.push_str(&alloc::format!("SHARD-{i}-NODE-{k}"));
            }
            let p = if md5_hash {
                KeyHash::JedisMd5.hash(s.as_bytes())
            } else {
                murmur64a(s.as_bytes(), 0x1234_abcd) ^ (1 << 63)
            };
            pts.push((p, i as u32));
        }
    }
    PointRing::from_points(rules("jedis", key_hash), nodes, pts)
}
