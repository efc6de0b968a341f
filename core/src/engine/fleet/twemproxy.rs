//! twemproxy (nutcracker 0.5.0): `distribution: ketama` and `modula`, with every `hash:`.

use alloc::string::String;
use alloc::vec::Vec;

use super::super::{
    push_decimal, Dedup, EngineError, KeyHash, KeyTag, Kind, Modulo, Options, PointRing,
    PointRules, Seek,
};
use crate::hashes::{md5, TwemproxyHash};
use crate::ring::md5_many::{Batch, LANES};
use crate::ring::profile::{digests_for, WeightRule};
use crate::ring::NodeSpec;

/// `KETAMA_MAX_HOSTLEN - 1`: twemproxy cuts each point string (`name-i`) to this many
/// bytes.
pub(crate) const MAX_POINT_STRING: usize = 272;

/// The string twemproxy hashes for a server: its alias verbatim when it has one (the
/// node's `address` is then the server), else `host:port`, without `:11211`.
pub(crate) fn server_name(n: &NodeSpec) -> &str {
    if n.address.is_some() {
        return &n.name;
    }
    match n.name.rsplit_once(':') {
        Some((host, "11211")) => host,
        _ => &n.name,
    }
}

/// The `twemproxy` entry of the registry: a pool's `hash:`, `distribution:` and
/// `hash_tag:`.
pub(crate) fn build(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let names: Vec<&'static str> = TwemproxyHash::ALL.iter().map(|h| h.as_str()).collect();
    let h = o.choice("hash", &names)?.and_then(TwemproxyHash::from_name);
    let h = h.unwrap_or(TwemproxyHash::Md5);
    let dist = o
        .choice("distribution", &["ketama", "modula"])?
        .unwrap_or("ketama");
    let tag = match o.text("hash_tag") {
        None => KeyTag::Whole,
        Some(t) if t.len() == 2 => KeyTag::Pair(t.as_bytes()[0], t.as_bytes()[1]),
        Some(t) => {
            return Err(EngineError::BadOption {
                engine: "twemproxy",
                option: "hash_tag".into(),
                reason: alloc::format!(
                    "{t:?}: twemproxy's hash_tag is two characters, e.g. \"{{}}\""
                ),
            })
        }
    };
    Ok(if dist == "modula" {
        Kind::Modulo(modula(nodes, h, tag)?)
    } else {
        Kind::Points(ketama(nodes, h, tag)?)
    })
}

pub(crate) fn ketama(
    nodes: Vec<NodeSpec>,
    hash: TwemproxyHash,
    tag: KeyTag,
) -> Result<PointRing, EngineError> {
    let hashed: Vec<String> = nodes.iter().map(|n| server_name(n).into()).collect();
    ketama_hashed(nodes, &hashed, hash, tag)
}

/// As [`ketama`], with the strings nutcracker hashes given (`hashed[i]` for node `i`).
pub(crate) fn ketama_hashed(
    nodes: Vec<NodeSpec>,
    hashed: &[String],
    hash: TwemproxyHash,
    tag: KeyTag,
) -> Result<PointRing, EngineError> {
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight)).sum();
    let digests: Vec<u64> = nodes
        .iter()
        .map(|n| digests_for(WeightRule::MemcachedF32, 40, nodes.len(), n.weight, total))
        .collect();
    let points: u64 = digests.iter().map(|d| d.saturating_mul(4)).sum();
    if points > crate::ring::MAX_POINTS {
        return Err(crate::ring::RingError::TooManyPoints(points).into());
    }
    // Each point as one key, its position above its node (see `PointRing::from_keys`).
    let counts: Vec<usize> = digests.iter().map(|&d| d as usize * 4).collect();
    // Digests 32 at a time (`Batch`: over AVX-512 where the CPU has it); a name too long
    // for one MD5 block is hashed alone.
    let keys = super::fill::fill_keys(&counts, |i, out| {
        let name = hashed[i].as_bytes();
        let owner = i as u64;
        let mut buf = Vec::with_capacity(name.len() + 21);
        for (c, chunk) in out.chunks_mut(4 * LANES).enumerate() {
            let mut batch = Batch::new();
            for (j, four) in chunk.chunks_exact_mut(4).enumerate() {
                buf.clear();
                buf.extend_from_slice(name);
                buf.push(b'-');
                push_decimal(&mut buf, (c * LANES + j) as u64);
                buf.truncate(MAX_POINT_STRING);
                if !batch.push(j, &buf) {
                    let d = md5(&buf);
                    for (h, key) in four.iter_mut().enumerate() {
                        let p = u32::from_le_bytes([
                            d[4 * h],
                            d[4 * h + 1],
                            d[4 * h + 2],
                            d[4 * h + 3],
                        ]);
                        *key = u64::from(p) << 32 | owner;
                    }
                }
            }
            batch.finish_digests(|j, words| {
                for (key, p) in chunk[4 * j..4 * j + 4].iter_mut().zip(words) {
                    *key = u64::from(p) << 32 | owner;
                }
            });
        }
    });
    PointRing::from_keys(
        PointRules {
            name: "twemproxy",
            key_hash: KeyHash::Twemproxy(hash),
            tag,
            seek: Seek::Ceiling,
            dedup: Dedup::KeepFirst,
        },
        nodes,
        keys,
    )
}

pub(crate) fn modula(
    nodes: Vec<NodeSpec>,
    hash: TwemproxyHash,
    tag: KeyTag,
) -> Result<Modulo, EngineError> {
    Modulo::new("twemproxy", KeyHash::Twemproxy(hash), tag, nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;

    /// The points hashed 32 at a time (names that fit one MD5 block, and names too long
    /// for it, hashed alone) are those of a plain reading of nutcracker's loop: each
    /// digest of `name-k`, sorted, the first point kept at a repeated position.
    #[test]
    fn batched_points_are_nutcrackers() {
        let names: Vec<String> = (0..7)
            .map(|i| format!("10.0.0.{i}:11211{}", "x".repeat(i * 9)))
            .collect();
        let nodes: Vec<NodeSpec> = names
            .iter()
            .enumerate()
            .map(|(i, n)| NodeSpec {
                name: n.clone(),
                weight: 1 + i as u32 % 3,
                address: None,
            })
            .collect();
        let ring =
            ketama_hashed(nodes.clone(), &names, TwemproxyHash::Md5, KeyTag::Whole).expect("ring");
        let total: u64 = nodes.iter().map(|n| u64::from(n.weight)).sum();
        let mut want: Vec<(u64, u32)> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let digests = digests_for(WeightRule::MemcachedF32, 40, nodes.len(), n.weight, total);
            for k in 0..digests {
                let mut buf = format!("{}-{k}", names[i]).into_bytes();
                buf.truncate(MAX_POINT_STRING);
                let d = md5(&buf);
                for h in 0..4 {
                    let p =
                        u32::from_le_bytes([d[4 * h], d[4 * h + 1], d[4 * h + 2], d[4 * h + 3]]);
                    want.push((u64::from(p), i as u32));
                }
            }
        }
        want.sort_by_key(|e| e.0);
        want.dedup_by_key(|e| e.0);
        let got: Vec<(u64, u32)> = ring.positions().iter().zip(ring.owners().iter()).collect();
        assert!(names.iter().any(|n| n.len() > 55) && names.iter().any(|n| n.len() < 40));
        assert_eq!(got, want);
    }
}
