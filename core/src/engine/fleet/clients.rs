//! The Go, Ruby, PHP and Dubbo rings: go-redis, groupcache, Dubbo, redis-rb, Predis.

use alloc::vec::Vec;

use super::super::{
    concat, push_decimal, Dedup, EngineError, KeyHash, KeyTag, Kind, NodePoints, Options,
    PointRing, PointRules, Rendezvous, Seek,
};
use crate::hashes::{crc32, md5, php_round};
use crate::ring::NodeSpec;

/// The `go-redis` entry of the registry: its `Ring`, rendezvous over XXH64 of the key's
/// `{tag}`, without weights.
pub(crate) fn build_go_redis(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    _: &mut Options,
) -> Result<Kind, EngineError> {
    super::super::error::unweighted(name, &nodes)?;
    let r = Rendezvous::new(KeyHash::Xxh64(0), KeyTag::Braces, nodes)?;
    Ok(Kind::Rendezvous(r))
}

/// The `groupcache` entry: `replicas` points per node (50).
pub(crate) fn build_groupcache(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    super::super::error::unweighted(name, &nodes)?;
    let r = o.int("replicas", 1, 65536)?.unwrap_or(50) as u32;
    Ok(Kind::Points(groupcache(nodes, r)?))
}

/// The `dubbo` entry: `replicas` (`hash.nodes`, 160).
pub(crate) fn build_dubbo(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    super::super::error::unweighted(name, &nodes)?;
    let r = o.int("replicas", 4, 65536)?.unwrap_or(160) as u32;
    Ok(Kind::Points(dubbo(nodes, r)?))
}

/// The `redis-rb` entry: `replicas` (160), `hash_tag` (true).
pub(crate) fn build_redis_rb(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    super::super::error::unweighted(name, &nodes)?;
    let r = o.int("replicas", 1, 65536)?.unwrap_or(160) as u32;
    let tag = o.flag("hash_tag")?.unwrap_or(true);
    Ok(Kind::Points(redis_rb(nodes, r, tag)?))
}

/// The `predis` entry: `replicas` (128), `hash_tag` (true).
pub(crate) fn build_predis(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let r = o.int("replicas", 1, 65536)?.unwrap_or(128) as u32;
    let tag = o.flag("hash_tag")?.unwrap_or(true);
    Ok(Kind::Points(predis(nodes, r, tag)?))
}

/// The `predis-ketama` entry: `hash_tag` (true).
pub(crate) fn build_predis_ketama(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let tag = o.flag("hash_tag")?.unwrap_or(true);
    Ok(Kind::Points(predis_ketama(nodes, tag)?))
}

fn rules(name: &'static str, key_hash: KeyHash, tag: KeyTag, seek: Seek) -> PointRules {
    PointRules {
        name,
        key_hash,
        tag,
        seek,
        dedup: Dedup::KeepLast,
    }
}

/// groupcache's `consistenthash`: `crc32(itoa(i) + peer)` for `i < replicas`, a later
/// `Add` overwriting a shared point; keys by CRC32, the first point `>=`, wrapping.
pub(crate) fn groupcache(nodes: Vec<NodeSpec>, replicas: u32) -> Result<PointRing, EngineError> {
    let mut pts = Vec::new();
    let mut buf = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        for k in 0..replicas {
            buf.clear();
            push_decimal(&mut buf, u64::from(k));
            buf.extend_from_slice(n.name.as_bytes());
            pts.push((u64::from(crc32(&buf)), i as u32));
        }
    }
    let r = rules("groupcache", KeyHash::Crc32, KeyTag::Whole, Seek::Ceiling);
    PointRing::from_points(r, nodes, pts)
}

/// Dubbo's `ConsistentHashLoadBalance`: `md5(address + i)` for `i < replicas / 4`, four
/// little-endian points each, `TreeMap.put` (the later invoker wins); keys by the first
/// four MD5 bytes, `ceilingEntry`, else the first entry.
pub(crate) fn dubbo(nodes: Vec<NodeSpec>, replicas: u32) -> Result<PointRing, EngineError> {
    let mut pts = Vec::new();
    let mut buf = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        for k in 0..replicas / 4 {
            buf.clear();
            buf.extend_from_slice(n.name.as_bytes());
            push_decimal(&mut buf, u64::from(k));
            let d = md5(&buf);
            for h in 0..4 {
                let p = u32::from_le_bytes([d[4 * h], d[4 * h + 1], d[4 * h + 2], d[4 * h + 3]]);
                pts.push((u64::from(p), i as u32));
            }
        }
    }
    let r = rules("dubbo", KeyHash::Md5, KeyTag::Whole, Seek::Ceiling);
    PointRing::from_points(r, nodes, pts)
}

/// The positions of redis-rb node `id`: `crc32("#{id}:#{i}")` for `i < replicas`.
fn redis_rb_points(id: &[u8], replicas: u32, out: &mut Vec<u64>) {
    let mut buf = Vec::new();
    for k in 0..replicas {
        buf.clear();
        buf.extend_from_slice(&concat(&[id, b":"]));
        push_decimal(&mut buf, u64::from(k));
        out.push(u64::from(crc32(&buf)));
    }
}

/// redis-rb's `Redis::HashRing`: each node's points ([`redis_rb_points`]) put into
/// `@ring` in order (the last node added wins a shared point); keys (after
/// `Redis::Distributed`'s `/^\{(.+?)\}/` tag) by CRC32, the last point `<=`, wrapping to
/// the last. Changed in place as `@ring` is: `add_node` puts the node's points over the
/// others, `remove_node` deletes the positions its points hash to, whoever holds them.
pub(crate) fn redis_rb(
    nodes: Vec<NodeSpec>,
    replicas: u32,
    tag: bool,
) -> Result<PointRing, EngineError> {
    let make = NodePoints {
        make: redis_rb_points,
        count: replicas,
    };
    let pts = make.all(&nodes);
    let tag = if tag {
        KeyTag::RubyBraces
    } else {
        KeyTag::Whole
    };
    let r = rules("redis-rb", KeyHash::Crc32, tag, Seek::Floor);
    Ok(PointRing::from_points(r, nodes, pts)?.changed_in_place(make))
}

/// Predis' `HashRing`: `(int) round(w / Σw × n × replicas)` points `crc32("$node:$i")` per
/// node (PHP 8.0–8.3 `round`), the later node winning a shared point; keys (after the
/// `{tag}` rule of `PredisStrategy`) by CRC32, the last point `<=`, wrapping to the last.
pub(crate) fn predis(
    nodes: Vec<NodeSpec>,
    replicas: u32,
    tag: bool,
) -> Result<PointRing, EngineError> {
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight)).sum();
    let count = nodes.len() as f64;
    let mut pts = Vec::new();
    let mut buf = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let ratio = f64::from(n.weight) / total as f64;
        let reps = php_round(ratio * count * f64::from(replicas)) as u64;
        for k in 0..reps {
            buf.clear();
            buf.extend_from_slice(&concat(&[n.name.as_bytes(), b":"]));
            push_decimal(&mut buf, k);
            pts.push((u64::from(crc32(&buf)), i as u32));
        }
    }
    let tag = if tag { KeyTag::Braces } else { KeyTag::Whole };
    let r = rules("predis", KeyHash::Crc32, tag, Seek::Floor);
    PointRing::from_points(r, nodes, pts)
}

/// Predis' `KetamaRing`: `floor(w / Σw × n × 40)` MD5 digests of `"$node-$i"`, four
/// little-endian points each (the later node winning a shared point); keys (after the
/// `{tag}` rule) by the first four MD5 bytes, the first point `>=`, wrapping to the first.
pub(crate) fn predis_ketama(nodes: Vec<NodeSpec>, tag: bool) -> Result<PointRing, EngineError> {
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight)).sum();
    let count = nodes.len() as f64;
    let mut pts = Vec::new();
    let mut buf = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let ratio = f64::from(n.weight) / total as f64;
        // (int) floor($weightRatio * $totalNodes * ($replicas / 4)), replicas = 160.
        let reps = (ratio * count * 40.0) as u64;
        for k in 0..reps {
            buf.clear();
            buf.extend_from_slice(&concat(&[n.name.as_bytes(), b"-"]));
            push_decimal(&mut buf, k);
            let d = md5(&buf);
            for h in 0..4 {
                let p = u32::from_le_bytes([d[4 * h], d[4 * h + 1], d[4 * h + 2], d[4 * h + 3]]);
                pts.push((u64::from(p), i as u32));
            }
        }
    }
    let tag = if tag { KeyTag::Braces } else { KeyTag::Whole };
    let r = rules("predis-ketama", KeyHash::Md5, tag, Seek::Ceiling);
    PointRing::from_points(r, nodes, pts)
}
