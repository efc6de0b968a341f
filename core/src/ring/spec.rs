//! The node-list grammar: one way to write nodes and weights, used by the CLI (`--nodes`,
//! `--nodes-file`, `--weights`), `Ring.from_spec` in every binding, and nodes files.
//!
//! A list is entries separated by commas or line breaks; `#` starts a comment that runs to
//! the end of the line; blank entries are skipped. An entry is one of:
//!
//! | entry | node | weight |
//! |---|---|---|
//! | `cache-a`, `10.0.0.1`, `::1`, `2001:db8::1` | as written | 1 |
//! | `10.0.0.1:11211`, `cache.local:6379`, `[::1]:6379` | `host:port` as written | 1 |
//! | `NAME=WEIGHT` (`10.0.0.1:11211=3`, `cache-a=2`) | `NAME` | `WEIGHT` |
//! | `NAME WEIGHT` (libketama's `ketama.servers`: `10.0.1.1:11211 600`) | `NAME` | `WEIGHT` |
//! | `host:port:weight` (twemproxy: `10.0.0.1:11211:2`, `[::1]:6379:2`) | `host:port` | `weight` |
//! | `host:port:weight alias` (twemproxy: `10.0.0.1:11211:2 cache-a`) | `alias` (the address is kept in [`NodeSpec::address`]) | `weight` |
//!
//! `NAME:WEIGHT` is not part of the grammar: `a:2` could be the node `a:2` (a host and a
//! port) or the node `a` with weight 2. keyroute reads `X:N` as `host:port` when `X` looks
//! like a host (it has a `.`, is `localhost`, or is a bracketed IPv6 address) and refuses
//! it otherwise with [`RingError::AmbiguousNodeSpec`], whose message shows both readings
//! and how to write each (`a:2=1` or `a=2`).
//!
//! Weights are integers from 1 to 2³² − 1 (0 is allowed by [`parse_weights`], where it
//! means "drain this node"). Node names cannot contain `,`, `#`, `=`, whitespace or
//! control characters (NUL, escape: refused, and shown escaped in the error).

use alloc::string::String;
use alloc::vec::Vec;

use super::error::{checked_weight, RingError};
use super::profile::{Profile, ProfileName, ProfileOptions};
use super::ring::Ring;

/// One parsed entry of a node list.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeSpec {
    /// The node's name: what the ring hashes (the alias when one is given).
    pub name: String,
    /// The node's weight.
    pub weight: u32,
    /// The server address when the entry named the node by an alias
    /// (`host:port:weight alias`), else `None`.
    pub address: Option<String>,
}

impl NodeSpec {
    fn new(name: &str, weight: u32) -> Self {
        NodeSpec {
            name: name.into(),
            weight,
            address: None,
        }
    }
}

/// A ring as data: its profile, the profile's options and its nodes in order. It is
/// what a [`Ring`] serializes to with the `serde` feature, and [`build`](Self::build)
/// makes the same ring again (the same points, so the same answer for every key).
///
/// ```
/// use keyroute::ring::{Profile, Ring};
/// let ring = Ring::with_nodes(Profile::libmemcached().with_vnodes(20)?, [("a", 1), ("b", 3)])?;
/// let spec = ring.spec();
/// assert_eq!(spec.nodes[1].weight, 3);
/// let again = spec.build()?;
/// assert_eq!(again.positions(), ring.positions());
/// assert_eq!(again.get(b"user:42"), ring.get(b"user:42"));
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingSpec {
    /// The profile's name.
    pub profile: ProfileName,
    /// The profile's options, each `None` for the profile's default (checked by
    /// [`Profile::from_options`] in [`build`](Self::build)).
    pub options: ProfileOptions,
    /// The nodes, in ring order (the order decides ties in the ketama family).
    pub nodes: Vec<NodeSpec>,
}

impl RingSpec {
    /// The ring this spec describes.
    ///
    /// # Errors
    /// The errors of [`Profile::from_options`] and [`Ring::with_nodes`].
    pub fn build(&self) -> Result<Ring, RingError> {
        let profile = Profile::from_options(self.profile.as_str(), &self.options)?;
        Ring::with_nodes(
            profile,
            self.nodes.iter().map(|n| (n.name.as_str(), n.weight)),
        )
    }
}

impl Ring {
    /// This ring as a [`RingSpec`]: profile, options (all of them, explicitly) and nodes.
    ///
    /// ```
    /// use keyroute::ring::{Profile, Ring};
    /// let ring = Ring::with_nodes(Profile::native(), [("cache-a", 2)])?;
    /// let spec = ring.spec();
    /// assert_eq!(spec.profile.as_str(), "native");
    /// assert_eq!(spec.options.vnodes, Some(160));
    /// assert_eq!((spec.nodes[0].name.as_str(), spec.nodes[0].weight), ("cache-a", 2));
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub fn spec(&self) -> RingSpec {
        RingSpec {
            profile: self.profile().name(),
            options: self.profile().options(),
            nodes: self
                .nodes()
                .iter()
                .map(|n| NodeSpec::new(n.name(), n.weight()))
                .collect(),
        }
    }
}

/// Parses one entry of a node list (see the [module docs](self)).
///
/// ```
/// use keyroute::ring::{parse_node, NodeSpec};
/// assert_eq!(parse_node("10.0.0.1:11211")?.name, "10.0.0.1:11211");
/// assert_eq!(parse_node("10.0.0.1:11211")?.weight, 1);
/// assert_eq!(parse_node("10.0.0.1:11211=3")?.weight, 3);
/// assert_eq!(parse_node("10.0.0.1:11211:3")?.weight, 3);
/// assert_eq!(parse_node("[::1]:6379")?.name, "[::1]:6379");
/// assert_eq!(parse_node("2001:db8::1")?.name, "2001:db8::1");
/// let aliased = parse_node("10.0.0.1:11211:2 cache-a")?;
/// assert_eq!((aliased.name.as_str(), aliased.weight), ("cache-a", 2));
/// assert_eq!(aliased.address.as_deref(), Some("10.0.0.1:11211"));
/// assert_eq!(parse_node("cache-a:2").unwrap_err().code().as_str(), "AMBIGUOUS_NODE_SPEC");
/// assert_eq!(parse_node("cache-a=0").unwrap_err().code().as_str(), "ZERO_WEIGHT");
/// let esc = parse_node("cache\x1b[31m").unwrap_err();
/// assert_eq!(esc.code().as_str(), "BAD_NODE_SPEC");
/// assert!(!esc.to_string().contains('\x1b'));
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
///
/// # Errors
/// [`RingError::BadNodeSpec`], [`RingError::AmbiguousNodeSpec`], and the weight errors of
/// [`checked_weight`] (which also refuses 0).
pub fn parse_node(entry: &str) -> Result<NodeSpec, RingError> {
    let (spec, weight) = parse_entry(entry)?;
    Ok(NodeSpec {
        weight: checked_weight(&spec.name, weight)?,
        ..spec
    })
}

/// Parses a node list (entries separated by commas or line breaks, `#` comments; see the
/// [module docs](self)). The same text gives the same nodes whether it comes from a
/// command line or a file.
///
/// ```
/// use keyroute::ring::parse_nodes;
/// let nodes = parse_nodes("10.0.0.1:11211, 10.0.0.2:11211=2")?;
/// assert_eq!(nodes[0].name, "10.0.0.1:11211");
/// assert_eq!(nodes[1].weight, 2);
/// let file = parse_nodes("# fleet\n10.0.1.1:11211\t600\n10.0.1.2:11211\t300\n")?;
/// assert_eq!((file[1].name.as_str(), file[1].weight), ("10.0.1.2:11211", 300));
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
///
/// # Errors
/// As [`parse_node`], for the first bad entry; [`RingError::BadNodeSpec`] for a list with
/// no entry.
pub fn parse_nodes(text: &str) -> Result<Vec<NodeSpec>, RingError> {
    let mut out = Vec::new();
    for entry in entries(text) {
        out.push(parse_node(entry)?);
    }
    if out.is_empty() {
        return Err(RingError::BadNodeSpec {
            entry: String::new(),
            reason: "the node list is empty",
        });
    }
    Ok(out)
}

/// Parses a list of target weights for a resharding plan: the grammar of
/// [`parse_nodes`], where a weight may also be 0 (drain the node). Returns
/// `(name, weight)` pairs.
///
/// ```
/// use keyroute::ring::parse_weights;
/// let w = parse_weights("10.0.0.1:7000=1,10.0.0.2:7000=0,10.0.0.3:7000")?;
/// assert_eq!(w[1], ("10.0.0.2:7000".to_string(), 0));
/// assert_eq!(w[2].1, 1);
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
///
/// # Errors
/// As [`parse_nodes`], except that weight 0 is accepted.
pub fn parse_weights(text: &str) -> Result<Vec<(String, u32)>, RingError> {
    let mut out = Vec::new();
    for entry in entries(text) {
        let (spec, weight) = parse_entry(entry)?;
        let weight = if weight == 0 {
            0
        } else {
            checked_weight(&spec.name, weight)?
        };
        out.push((spec.name, weight));
    }
    if out.is_empty() {
        return Err(RingError::BadNodeSpec {
            entry: String::new(),
            reason: "the weight list is empty",
        });
    }
    Ok(out)
}

/// The non-blank entries of a list, comments removed.
fn entries(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or(""))
        .flat_map(|line| line.split(','))
        .map(str::trim)
        .filter(|e| !e.is_empty())
}

/// An entry's node (weight not yet checked) and its weight as given (1 when none).
fn parse_entry(entry: &str) -> Result<(NodeSpec, i128), RingError> {
    let entry = entry.trim();
    if entry.chars().any(is_control) {
        // Shown escaped: the raw bytes would reach a terminal.
        return Err(RingError::BadNodeSpec {
            entry: escaped(entry),
            reason: "a node name cannot contain control characters (NUL, escape, ...)",
        });
    }
    let bad = |reason| RingError::BadNodeSpec {
        entry: entry.into(),
        reason,
    };
    let mut tokens = entry.split_whitespace();
    let first = tokens.next().ok_or_else(|| bad("the entry is empty"))?;
    let second = tokens.next();
    if tokens.next().is_some() {
        return Err(bad("an entry has at most two parts separated by spaces"));
    }

    // NAME=WEIGHT
    if let Some((name, weight)) = first.split_once('=') {
        if second.is_some() {
            return Err(bad("NAME=WEIGHT takes nothing after it"));
        }
        check_name(entry, name)?;
        return Ok((NodeSpec::new(name, 0), weight_of(entry, name, weight)?));
    }

    // twemproxy: host:port:weight [alias]
    if let Some((address, weight)) = twemproxy(first) {
        let weight = weight_of(entry, address, weight)?;
        return Ok(match second {
            None => (NodeSpec::new(address, 0), weight),
            Some(alias) => {
                check_name(entry, alias)?;
                let spec = NodeSpec {
                    name: alias.into(),
                    weight: 0,
                    address: Some(address.into()),
                };
                (spec, weight)
            }
        });
    }

    check_name(entry, first)?;
    // NAME WEIGHT (ketama.servers)
    if let Some(weight) = second {
        return Ok((NodeSpec::new(first, 0), weight_of(entry, first, weight)?));
    }
    // X:N without a weight: host:port, unless X does not look like a host.
    if let Some((host, port)) = first.rsplit_once(':') {
        let bare_v6 = host.contains(':') && !host.starts_with('[');
        if !bare_v6 && is_digits(port) {
            if !looks_like_host(host) {
                return Err(RingError::AmbiguousNodeSpec {
                    entry: entry.into(),
                    host: host.into(),
                    number: port.into(),
                });
            }
            if !is_port(port) {
                return Err(bad("the port of host:port must be between 1 and 65535"));
            }
        }
    }
    Ok((NodeSpec::new(first, 0), 1))
}

/// `host:port:weight` with a port and a weight of digits (the host may be a bracketed
/// IPv6 address): the address and the weight.
fn twemproxy(token: &str) -> Option<(&str, &str)> {
    let (address, weight) = token.rsplit_once(':')?;
    let (host, port) = address.rsplit_once(':')?;
    let host_ok =
        !host.is_empty() && (!host.contains(':') || (host.starts_with('[') && host.ends_with(']')));
    (host_ok && is_digits(port) && is_digits(weight.trim_start_matches('-')))
        .then_some((address, weight))
}

/// A control character that is not a separator (tabs and spaces separate the parts of an
/// entry): NUL, escape, DEL, the C1 controls.
pub(crate) fn is_control(c: char) -> bool {
    // `char::is_control() && !char::is_whitespace()`, written out: the Unicode tables
    // behind those cost the JavaScript .wasm files kilobytes.
    matches!(c, '\0'..='\u{8}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{84}' | '\u{86}'..='\u{9f}')
}

/// `s` with its control characters written `\u{XX}` (no Unicode tables, as above).
fn escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_control(c) {
            out.push_str(&alloc::format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_port(s: &str) -> bool {
    s.parse::<u32>().is_ok_and(|p| (1..=65535).contains(&p))
}

/// A host: a dotted name or IPv4 address, `localhost`, or a bracketed IPv6 address.
fn looks_like_host(host: &str) -> bool {
    host.contains('.')
        || host.eq_ignore_ascii_case("localhost")
        || (host.starts_with('[') && host.ends_with(']'))
}

fn check_name(entry: &str, name: &str) -> Result<(), RingError> {
    if name.is_empty() {
        return Err(RingError::BadNodeSpec {
            entry: entry.into(),
            reason: "the node name is empty",
        });
    }
    if name.contains('=') {
        return Err(RingError::BadNodeSpec {
            entry: entry.into(),
            reason: "a node name cannot contain '='",
        });
    }
    Ok(())
}

fn weight_of(entry: &str, name: &str, weight: &str) -> Result<i128, RingError> {
    let weight = weight.trim();
    let digits = weight.strip_prefix(['-', '+']).unwrap_or(weight);
    if !is_digits(digits) {
        return Err(RingError::BadWeight {
            node: name.into(),
            given: weight.into(),
            entry: entry.into(),
        });
    }
    // The value, saturated to i128's range: digits beyond it are still too large (or
    // negative), as reported. (Not `parse::<i128>`: its checked 128-bit multiplications
    // are code the .wasm need not carry.)
    const BIG: u128 = 1 << 127; // the magnitude of i128::MIN
    let mut m = 0u128;
    for d in digits.bytes() {
        m = if m > BIG / 10 {
            BIG
        } else {
            (m << 3) + (m << 1) + u128::from(d - b'0')
        };
    }
    Ok(match (weight.starts_with('-'), i128::try_from(m)) {
        (true, Ok(v)) => -v,
        (true, Err(_)) => i128::MIN,
        (false, Ok(v)) => v,
        (false, Err(_)) => i128::MAX,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    fn one(e: &str) -> (String, u32) {
        let s = parse_node(e).expect(e);
        (s.name, s.weight)
    }

    fn code(e: &str) -> &'static str {
        parse_node(e).expect_err(e).code().as_str()
    }

    #[test]
    fn names_keep_their_ports() {
        assert_eq!(one("10.0.0.1:11211"), ("10.0.0.1:11211".to_string(), 1));
        assert_eq!(one("localhost:6379"), ("localhost:6379".to_string(), 1));
        assert_eq!(one("[::1]:6379"), ("[::1]:6379".to_string(), 1));
        assert_eq!(one("::1"), ("::1".to_string(), 1));
        assert_eq!(one("2001:db8::1"), ("2001:db8::1".to_string(), 1));
        assert_eq!(one("cache-a"), ("cache-a".to_string(), 1));
    }

    #[test]
    fn weights() {
        assert_eq!(one("10.0.0.1:11211=3"), ("10.0.0.1:11211".to_string(), 3));
        assert_eq!(one("10.0.0.1:11211:3"), ("10.0.0.1:11211".to_string(), 3));
        assert_eq!(one("[::1]:6379:2"), ("[::1]:6379".to_string(), 2));
        assert_eq!(
            one("10.0.1.1:11211\t600"),
            ("10.0.1.1:11211".to_string(), 600)
        );
        assert_eq!(one("a=2"), ("a".to_string(), 2));
        assert_eq!(one("::1=2"), ("::1".to_string(), 2));
        assert_eq!(one("a:2=1"), ("a:2".to_string(), 1));
    }

    #[test]
    fn refusals() {
        assert_eq!(code("a:2"), "AMBIGUOUS_NODE_SPEC");
        assert_eq!(code("redis-1:6379"), "AMBIGUOUS_NODE_SPEC");
        assert_eq!(code("a=0"), "ZERO_WEIGHT");
        assert_eq!(code("a=-2"), "NEGATIVE_WEIGHT");
        assert_eq!(code("a=-18446744073709551616"), "NEGATIVE_WEIGHT");
        assert_eq!(code("a=-0"), "ZERO_WEIGHT");
        assert_eq!(code("a=4294967296"), "WEIGHT_TOO_LARGE");
        assert_eq!(code("a=1.5"), "BAD_WEIGHT");
        assert_eq!(code("a 1.5"), "BAD_WEIGHT");
        assert_eq!(code("=3"), "BAD_NODE_SPEC");
        assert_eq!(code("10.0.0.1:99999"), "BAD_NODE_SPEC");
        assert_eq!(code("a b c"), "BAD_NODE_SPEC");
        assert_eq!(code("a=1 b"), "BAD_NODE_SPEC");
        let msg = parse_node("a:2").expect_err("ambiguous").to_string();
        assert!(
            msg.contains("\"a:2\"") && msg.contains("a=2") && msg.contains("a:2=1"),
            "{msg}"
        );
    }

    #[test]
    fn weights_saturate_as_parse_does() {
        let mut texts: Vec<String> = Vec::new();
        for digits in [
            "0",
            "7",
            "0004294967295",
            "4294967296",
            "18446744073709551616",
            "170141183460469231731687303715884105727",
            "170141183460469231731687303715884105728",
            "170141183460469231731687303715884105729",
            "170141183460469231731687303715884105730",
            "999999999999999999999999999999999999999",
            "1701411834604692317316873037158841057280",
            "99999999999999999999999999999999999999999999999999",
        ] {
            for sign in ["", "+", "-"] {
                texts.push(alloc::format!("{sign}{digits}"));
            }
        }
        for t in texts {
            let want = t.parse::<i128>().unwrap_or(if t.starts_with('-') {
                i128::MIN
            } else {
                i128::MAX
            });
            assert_eq!(weight_of("e", "n", &t), Ok(want), "{t}");
        }
    }

    #[test]
    fn lists_and_files_agree() {
        let list = parse_nodes("10.0.0.1:11211,10.0.0.2:11211").expect("list");
        let file = parse_nodes("10.0.0.1:11211\n10.0.0.2:11211\n").expect("file");
        assert_eq!(list, file);
        assert_eq!(list[1].name, "10.0.0.2:11211");
        assert!(parse_nodes(" , # nothing\n").is_err());
        let two = parse_nodes("[::1]:6379,[::2]:6379").expect("v6");
        assert_eq!(two[0].name, "[::1]:6379");
        assert_eq!(two[1].name, "[::2]:6379");
        let bare = parse_nodes("2001:db8::1,2001:db8::2").expect("bare v6");
        assert_eq!(bare.len(), 2);
    }
}
