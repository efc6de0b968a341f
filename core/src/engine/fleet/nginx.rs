//! nginx's `hash $key consistent` (ngx_http_upstream_hash_module.c, 1.7.11+; the stream
//! module is identical).

use alloc::vec::Vec;

use super::super::{
    Dedup, EngineError, KeyHash, KeyTag, Kind, Modulo, Options, PointRing, PointRules, Seek,
};
use crate::ring::NodeSpec;

/// The `nginx` entry of the registry: `hash $key consistent`.
pub(crate) fn build_consistent(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    _: &mut Options,
) -> Result<Kind, EngineError> {
    Ok(Kind::Points(build(nodes)?))
}

/// The `nginx-hash` entry: plain `hash $key`.
pub(crate) fn build_plain(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    _: &mut Options,
) -> Result<Kind, EngineError> {
    Ok(Kind::Modulo(Modulo::nginx(nodes)?))
}

/// The host and port nginx hashes for a `server` string as written: `unix:PATH` is host
/// `PATH` and no port; otherwise the digits after the last `:` are the port (as text)
/// when only digits follow it; else the whole string is the host and the port is empty.
///
pub(crate) fn host_port(server: &str) -> (&str, &str) {
    let b = server.as_bytes();
    if b.len() >= 5 && b[..5].eq_ignore_ascii_case(b"unix:") {
        return (&server[5..], "");
    }
    for j in 0..b.len() {
        let c = b[b.len() - j - 1];
        if c == b':' {
            return (&server[..b.len() - j - 1], &server[b.len() - j..]);
        }
        if !c.is_ascii_digit() {
            break;
        }
    }
    (server, "")
}

/// nginx's chash points of one server: `crc32(host ‖ 0 ‖ port ‖ LE32(prev))`, chained.
pub(crate) fn points(server: &str, weight: u32, mut push: impl FnMut(u32)) {
    let (host, port) = host_port(server);
    let mut base = crc32fast::Hasher::new();
    base.update(host.as_bytes());
    base.update(&[0]);
    base.update(port.as_bytes());
    let mut prev = 0u32;
    for _ in 0..u64::from(weight) * 160 {
        let mut h = base.clone();
        h.update(&prev.to_le_bytes());
        prev = h.finalize();
        push(prev);
    }
}

pub(crate) fn build(nodes: Vec<NodeSpec>) -> Result<PointRing, EngineError> {
    let total: u64 = nodes.iter().map(|n| u64::from(n.weight) * 160).sum();
    if total > crate::ring::MAX_POINTS {
        return Err(crate::ring::RingError::TooManyPoints(total).into());
    }
    // Each point as one key, its position above its node (see `PointRing::from_keys`).
    let counts: Vec<usize> = nodes.iter().map(|n| n.weight as usize * 160).collect();
    let keys = super::fill::fill_keys(&counts, |i, out| {
        let mut at = 0;
        points(&nodes[i].name, nodes[i].weight, |p| {
            out[at] = u64::from(p) << 32 | i as u64;
            at += 1;
        });
    });
    PointRing::from_keys(
        PointRules {
            name: "nginx",
            key_hash: KeyHash::Crc32,
            tag: KeyTag::Whole,
            seek: Seek::Ceiling,
            dedup: Dedup::KeepFirst,
        },
        nodes,
        keys,
    )
}
