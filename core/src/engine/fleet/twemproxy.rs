//! twemproxy (nutcracker 0.5.0): `distribution: ketama` and `modula`, with every `hash:`.

use alloc::string::String;
use alloc::vec::Vec;

use super::super::{
    concat, push_decimal, Dedup, EngineError, KeyHash, KeyTag, Modulo, PointRing, PointRules, Seek,
};
use crate::hashes::{md5, TwemproxyHash};
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
    let mut pts = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        let digests = digests_for(WeightRule::MemcachedF32, 40, nodes.len(), n.weight, total);
        let name = hashed[i].as_bytes();
        let mut buf = Vec::new();
        for k in 0..digests {
            buf.clear();
            buf.extend_from_slice(&concat(&[name, b"-"]));
            push_decimal(&mut buf, k);
            buf.truncate(MAX_POINT_STRING);
            let d = md5(&buf);
            for h in 0..4 {
                let p = u32::from_le_bytes([d[4 * h], d[4 * h + 1], d[4 * h + 2], d[4 * h + 3]]);
                pts.push((u64::from(p), i as u32));
            }
        }
    }
    PointRing::from_points(
        PointRules {
            name: "twemproxy",
            key_hash: KeyHash::Twemproxy(hash),
            tag,
            seek: Seek::Ceiling,
            dedup: Dedup::KeepFirst,
        },
        nodes,
        pts,
    )
}

pub(crate) fn modula(
    nodes: Vec<NodeSpec>,
    hash: TwemproxyHash,
    tag: KeyTag,
) -> Result<Modulo, EngineError> {
    Modulo::new("twemproxy", KeyHash::Twemproxy(hash), tag, nodes)
}
