//! pymemcache's `RendezvousHash` (the default hasher of `HashClient`).

use alloc::vec::Vec;

use super::super::{Engine, EngineError, Kind, Options};
use crate::hashes::murmur3_32;
use crate::ring::NodeSpec;

/// The `pymemcache` entry of the registry: `seed` (0), `bytes_keys` (false).
pub(crate) fn build(
    _: &'static str,
    nodes: Vec<NodeSpec>,
    o: &mut Options,
) -> Result<Kind, EngineError> {
    let seed = o.int("seed", 0, u64::from(u32::MAX))?.unwrap_or(0) as u32;
    let bytes = o.flag("bytes_keys")?.unwrap_or(false);
    Ok(Kind::Pymemcache(Pymemcache::with_options(
        nodes, seed, bytes,
    )?))
}

/// pymemcache's `RendezvousHash`: node `"host:port"` scores
/// `murmur3_32(f"{node}-{key}", seed 0)`, the highest wins, a tie going to the greater
/// name. Its pure-Python `murmur3_32` reads each character's code point `& 0xff` (not
/// UTF-8), so keys and names are taken as text (UTF-8; bytes that are not UTF-8 count as
/// U+FFFD, as Python decodes them with `errors="replace"`).
///
/// ```
/// use keyroute::engine::{Engine, Router};
/// use keyroute::ring::parse_nodes;
/// let r = Router::build("pymemcache", &parse_nodes("10.0.0.1:11211,10.0.0.2:11211")?, &[])?;
/// assert!(r.get(b"user:1").is_some());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Pymemcache {
    nodes: Vec<NodeSpec>,
    seed: u32,
    bytes_keys: bool,
    /// Each name as code points `& 0xff`, with the `-` after it.
    prefixes: Vec<Vec<u8>>,
}

/// The low bytes of the code points of `text`.
fn low_bytes(text: &[u8], out: &mut Vec<u8>) {
    for chunk in text.utf8_chunks() {
        out.extend(chunk.valid().chars().map(|c| c as u32 as u8));
        if !chunk.invalid().is_empty() {
            out.push(0xfd);
        }
    }
}

/// Python's `repr(bytes)`: `b'...'` (or `b"..."` when the bytes hold `'` and no `"`),
/// with `\\t`, `\\n`, `\\r`, `\\\\`, the quote escaped and other bytes outside
/// 0x20..0x7f as `\\xhh`.
fn python_bytes_repr(key: &[u8], out: &mut Vec<u8>) {
    let q = if key.contains(&b'\'') && !key.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    out.push(b'b');
    out.push(q);
    for &c in key {
        match c {
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\\' => out.extend_from_slice(b"\\\\"),
            c if c == q => {
                out.push(b'\\');
                out.push(c);
            }
            0x20..=0x7e => out.push(c),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(&[
                    b'\\',
                    b'x',
                    HEX[usize::from(c >> 4)],
                    HEX[usize::from(c & 15)],
                ]);
            }
        }
    }
    out.push(q);
}

impl Pymemcache {
    /// The hasher over `nodes` (weights must be 1: pymemcache has none).
    ///
    /// # Errors
    /// Node errors; [`EngineError::BadOption`] for a weight other than 1.
    pub fn new(nodes: Vec<NodeSpec>) -> Result<Pymemcache, EngineError> {
        Pymemcache::with_options(nodes, 0, false)
    }

    /// The hasher with `RendezvousHash(seed=...)`, and keys given to pymemcache as
    /// `bytes` (formatted into the hashed string as Python's `repr`, `b'...'`) when
    /// `bytes_keys`.
    ///
    /// # Errors
    /// As [`Pymemcache::new`].
    pub fn with_options(
        nodes: Vec<NodeSpec>,
        seed: u32,
        bytes_keys: bool,
    ) -> Result<Pymemcache, EngineError> {
        super::super::check_nodes(&nodes)?;
        super::super::error::unweighted("pymemcache", &nodes)?;
        let prefixes = nodes
            .iter()
            .map(|n| {
                let mut v = Vec::new();
                low_bytes(n.name.as_bytes(), &mut v);
                v.push(b'-');
                v
            })
            .collect();
        Ok(Pymemcache {
            nodes,
            seed,
            bytes_keys,
            prefixes,
        })
    }

    fn scores(&self, key: &[u8]) -> Vec<(u32, usize)> {
        let mut k = Vec::new();
        if self.bytes_keys {
            python_bytes_repr(key, &mut k);
        } else {
            low_bytes(key, &mut k);
        }
        let mut buf = Vec::new();
        self.prefixes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                buf.clear();
                buf.extend_from_slice(p);
                buf.extend_from_slice(&k);
                (murmur3_32(&buf, self.seed), i)
            })
            .collect()
    }
}

impl Engine for Pymemcache {
    fn len(&self) -> usize {
        self.nodes.len()
    }
    fn node_name(&self, i: usize) -> &str {
        &self.nodes[i].name
    }
    fn node_weight(&self, i: usize) -> u32 {
        self.nodes[i].weight
    }
    fn node_address(&self, i: usize) -> Option<&str> {
        self.nodes[i].address.as_deref()
    }
    fn get_index(&self, key: &[u8]) -> Option<usize> {
        let mut best: Option<(u32, usize)> = None;
        for (s, i) in self.scores(key) {
            best = match best {
                None => Some((s, i)),
                Some((bs, _)) if s > bs => Some((s, i)),
                // A tie: max(str(node), str(winner)).
                Some((bs, bi)) if s == bs && self.nodes[i].name > self.nodes[bi].name => {
                    Some((s, i))
                }
                b => b,
            };
        }
        best.map(|b| b.1)
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        out.clear();
        let mut s = self.scores(key);
        s.sort_unstable_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| self.nodes[b.1].name.cmp(&self.nodes[a.1].name))
        });
        out.extend(s.iter().take(n).map(|x| x.1));
    }
}
