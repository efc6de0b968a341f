//! HAProxy 2.6 `hash-type consistent` (lb_chash.c) and `map-based` (lb_map.c).

use alloc::vec::Vec;

use super::super::{
    Dedup, EngineError, KeyHash, KeyTag, Kind, Options, PointRing, PointRules, Seek, Table,
};
use crate::hashes::{full_hash, HaproxyHash};
use crate::ring::NodeSpec;

/// The `haproxy` entry of the registry: `hash-type consistent`, servers numbered 1, 2, ...
pub(crate) fn build_consistent(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let key_hash = key_hash(o, true)?;
    let ids: Vec<u32> = (1..=nodes.len() as u32).collect();
    Ok(Kind::Points(consistent(nodes, &ids, key_hash)?))
}

/// The `haproxy-map` entry: `hash-type map-based`.
pub(crate) fn build_map(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let key_hash = key_hash(o, false)?;
    Ok(Kind::Table(map_based(nodes, key_hash)?))
}

/// The key hash of the options `hash` and `avalanche` (on by default for `consistent`
/// without a `hash`, as HAProxy's `hash-type consistent` is).
fn key_hash(o: &mut Options, consistent: bool) -> Result<KeyHash, EngineError> {
    let hash = o.choice("hash", &["sdbm", "djb2", "wt6", "crc32", "source"])?;
    let avalanche = o.flag("avalanche")?.unwrap_or(consistent && hash.is_none());
    Ok(match hash {
        Some("source") => KeyHash::HaproxySource(avalanche),
        h => KeyHash::Haproxy(
            h.and_then(HaproxyHash::from_name)
                .unwrap_or(HaproxyHash::Sdbm),
            avalanche,
        ),
    })
}

/// HAProxy's `SRV_EWGHT_RANGE` (256 × 16).
const EWGHT_RANGE: u32 = 4096;

/// The largest server weight HAProxy accepts.
pub(crate) const MAX_WEIGHT: u32 = 256;

pub(crate) fn check_weights(engine: &'static str, nodes: &[NodeSpec]) -> Result<(), EngineError> {
    if let Some(n) = nodes.iter().find(|n| n.weight > MAX_WEIGHT) {
        return Err(EngineError::BadOption {
            engine,
            option: alloc::format!("weight of {}", n.name),
            reason: alloc::format!("HAProxy weights are 0 to 256, got {}", n.weight),
        });
    }
    Ok(())
}

/// `hash-type consistent`: server `puid` (its `id`, or its 1-based position) has
/// `16 × weight` points `full_hash(puid × 4096 + j)` (u32 arithmetic); a key goes to the
/// closest point, an exact tie in distance to the point before.
pub(crate) fn consistent(
    nodes: Vec<NodeSpec>,
    ids: &[u32],
    key_hash: KeyHash,
) -> Result<PointRing, EngineError> {
    check_weights("haproxy", &nodes)?;
    let mut pts = Vec::new();
    for (i, (n, &puid)) in nodes.iter().zip(ids).enumerate() {
        for j in 0..n.weight * 16 {
            let key = puid.wrapping_mul(EWGHT_RANGE).wrapping_add(j);
            pts.push((u64::from(full_hash(key)), i as u32));
        }
    }
    PointRing::from_points(
        PointRules {
            name: "haproxy",
            key_hash,
            tag: KeyTag::Whole,
            seek: Seek::Closest,
            // ebtree keeps duplicates: lookup_ge finds the first inserted of a run, and the
            // walk back from it the last inserted of the run before.
            dedup: Dedup::KeepAll,
        },
        nodes,
        pts,
    )
}

/// `map-based`: weights divided by their GCD, then `recalc_server_map`'s interleaving;
/// a key goes to `map[hash % Σweight]`.
pub(crate) fn map_based(nodes: Vec<NodeSpec>, key_hash: KeyHash) -> Result<Table, EngineError> {
    check_weights("haproxy-map", &nodes)?;
    let mut g = 0u32;
    for n in &nodes {
        g = gcd(g, n.weight);
    }
    let g = g.max(1);
    let ew: Vec<i64> = nodes.iter().map(|n| i64::from(n.weight / g)).collect();
    let tot: i64 = ew.iter().sum();
    let mut wscore = alloc::vec![0i64; nodes.len()];
    let mut slots = Vec::with_capacity(tot as usize);
    for _ in 0..tot {
        let mut best: Option<usize> = None;
        let mut max = 0i64;
        for (i, &e) in ew.iter().enumerate() {
            if tot == 1 {
                best = Some(i);
                break;
            }
            wscore[i] += e;
            let v = (wscore[i] + tot) / tot;
            if best.is_none() || v > max {
                max = v;
                best = Some(i);
            }
        }
        let b = best.unwrap_or(0);
        slots.push(b as u32);
        wscore[b] -= tot;
    }
    Table::new("haproxy-map", key_hash, KeyTag::Whole, nodes, slots)
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
