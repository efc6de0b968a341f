//! Envoy's `RING_HASH` and `MAGLEV` load balancers (a single priority and locality).

use alloc::vec::Vec;

use super::super::{
    maglev_table, next_prime, push_decimal, Dedup, EngineError, KeyHash, KeyTag, Kind, Options,
    PointRing, PointRules, Seek, Table,
};
use crate::hashes::{murmur64a, xxh64};
use crate::ring::NodeSpec;

/// The `envoy-ring` entry of the registry.
pub(crate) fn build_ring(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let murmur = o.choice("hash", &["xx_hash", "murmur_hash_2"])? == Some("murmur_hash_2");
    let min = o.int("min_ring_size", 1, 8_388_608)?.unwrap_or(1024);
    let max = o.int("max_ring_size", 1, 8_388_608)?.unwrap_or(8_388_608);
    if min > max {
        return Err(EngineError::BadOption {
            engine: "envoy-ring",
            option: "min_ring_size".into(),
            reason: alloc::format!("{min} is above max_ring_size {max}"),
        });
    }
    Ok(Kind::Points(ring(nodes, murmur, min, max)?))
}

/// The `envoy-maglev` entry: Envoy's default table of 65537 slots.
pub(crate) fn build_maglev(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    build_table(name, nodes, o, 65537)
}

/// A Maglev table of `table_size` slots (`default` when not given): a prime above the
/// number of nodes.
pub(crate) fn build_table(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
    default: u64,
) -> Result<Kind, EngineError> {
    let m = o.int("table_size", 2, 5_000_011)?.unwrap_or(default);
    if next_prime(m) != m || (m as usize) <= nodes.len() {
        return Err(EngineError::BadOption {
            engine: name,
            option: "table_size".into(),
            reason: alloc::format!(
                "{m} is not a prime above the number of nodes (Maglev needs one; e.g. {})",
                next_prime(100 * nodes.len().max(1) as u64)
            ),
        });
    }
    Ok(Kind::Table(maglev(name, nodes, m)?))
}

/// `MurmurHash::STD_HASH_SEED`.
const STD_HASH_SEED: u64 = 0xc70f_6907;

/// Envoy's normalized weights `w / Σw` (doubles) and their minimum and maximum.
fn normalized(nodes: &[NodeSpec]) -> (Vec<f64>, f64, f64) {
    let sum: u64 = nodes.iter().map(|n| u64::from(n.weight)).sum();
    let nw: Vec<f64> = nodes
        .iter()
        .map(|n| f64::from(n.weight) * 1.0 / sum as f64)
        .collect();
    let min = nw.iter().copied().fold(1.0f64, f64::min);
    let max = nw.iter().copied().fold(0.0f64, f64::max);
    (nw, min, max)
}

fn ceil(x: f64) -> f64 {
    let t = x as u64 as f64;
    if t < x {
        t + 1.0
    } else {
        t
    }
}

/// `Ring::Ring`: `scale = min(ceil(min_w × min_ring) / min_w, max_ring)`; hosts in order,
/// running double sums `target += scale × w`, `while current < target` push
/// `hash(key + "_" + i)`; `std::sort` by hash (duplicates kept: the first of a run wins
/// here, in host order); keys by XXH64, the first point `>=`, wrapping.
pub(crate) fn ring(
    nodes: Vec<NodeSpec>,
    murmur: bool,
    min_ring: u64,
    max_ring: u64,
) -> Result<PointRing, EngineError> {
    let (nw, min_nw, _) = normalized(&nodes);
    let scale = if nodes.is_empty() {
        0.0
    } else {
        (ceil(min_nw * min_ring as f64) / min_nw).min(max_ring as f64)
    };
    let mut pts = Vec::with_capacity(ceil(scale) as usize);
    let (mut current, mut target) = (0.0f64, 0.0f64);
    let mut buf = Vec::new();
    for (i, (n, &w)) in nodes.iter().zip(&nw).enumerate() {
        target += scale * w;
        let mut k = 0u64;
        while current < target {
            buf.clear();
            buf.extend_from_slice(n.name.as_bytes());
            buf.push(b'_');
            push_decimal(&mut buf, k);
            let h = if murmur {
                murmur64a(&buf, STD_HASH_SEED)
            } else {
                xxh64(&buf, 0)
            };
            pts.push((h, i as u32));
            k += 1;
            current += 1.0;
        }
    }
    PointRing::from_points(
        PointRules {
            name: "envoy-ring",
            key_hash: KeyHash::Xxh64(0),
            tag: KeyTag::Whole,
            seek: Seek::Ceiling,
            dedup: Dedup::KeepAll,
        },
        nodes,
        pts,
    )
}

/// Envoy's Maglev (≥ 1.27: hosts sorted by their hash key): see
/// [`maglev_table`](super::super::maglev_table). Keys by XXH64, `table[h % M]`.
pub(crate) fn maglev(
    name: &'static str,
    nodes: Vec<NodeSpec>,
    table_size: u64,
) -> Result<Table, EngineError> {
    super::super::check_nodes(&nodes)?;
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| nodes[a].name.as_bytes().cmp(nodes[b].name.as_bytes()));
    let keys: Vec<&str> = order.iter().map(|&i| nodes[i].name.as_str()).collect();
    let weights: Vec<u32> = order.iter().map(|&i| nodes[i].weight).collect();
    let slots = maglev_table(&keys, &weights, table_size)
        .into_iter()
        .map(|s| order[s as usize] as u32)
        .collect();
    Table::new(name, KeyHash::Xxh64(0), KeyTag::Whole, nodes, slots)
}
