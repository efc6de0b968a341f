//! Node lists as people type them: `a:1,b:2` on a command line, `name weight` in a file.

use alloc::string::String;
use alloc::vec::Vec;

use super::error::{checked_weight, RingError};

/// Parses one entry: `NAME`, `NAME=WEIGHT` or `NAME:WEIGHT`.
///
/// With `=`, the weight follows the `=`. Otherwise a weight follows the last `:`; an
/// entry with two or more `:` is `host:port:weight` (twemproxy's server syntax), so a
/// `host:port` node is written `host:port=W` or `host:port:W`. No weight means 1.
///
/// ```
/// use keyroute::ring::parse_node;
/// assert_eq!(parse_node("a:2")?, ("a".to_string(), 2));
/// assert_eq!(parse_node("10.0.0.1:11211:3")?, ("10.0.0.1:11211".to_string(), 3));
/// assert_eq!(parse_node("10.0.0.1:11211=3")?, ("10.0.0.1:11211".to_string(), 3));
/// assert_eq!(parse_node("cache-a")?, ("cache-a".to_string(), 1));
/// assert!(parse_node("a:0").is_err());
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
///
/// # Errors
/// [`RingError::BadNodeSpec`] for an empty name or a weight that is not an integer, and
/// the weight errors of [`checked_weight`].
pub fn parse_node(entry: &str) -> Result<(String, u32), RingError> {
    let entry = entry.trim();
    let bad = || RingError::BadNodeSpec(entry.into());
    let (name, weight) = if let Some((n, w)) = entry.rsplit_once('=') {
        (n, Some(w))
    } else if let Some((n, w)) = entry.rsplit_once(':') {
        (n, Some(w))
    } else {
        (entry, None)
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(bad());
    }
    let weight = match weight {
        None => 1,
        Some(w) => {
            let w: i64 = w.trim().parse().map_err(|_| bad())?;
            checked_weight(name, w)?
        }
    };
    Ok((name.into(), weight))
}

/// Parses a comma-separated list of [`parse_node`] entries.
///
/// ```
/// use keyroute::ring::parse_nodes;
/// let nodes = parse_nodes("a:1, b:2")?;
/// assert_eq!(nodes, vec![("a".to_string(), 1), ("b".to_string(), 2)]);
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
///
/// # Errors
/// As [`parse_node`]; an empty list is an error too.
pub fn parse_nodes(list: &str) -> Result<Vec<(String, u32)>, RingError> {
    let out: Result<Vec<_>, _> = list
        .split(',')
        .filter(|e| !e.trim().is_empty())
        .map(parse_node)
        .collect();
    let out = out?;
    if out.is_empty() {
        return Err(RingError::BadNodeSpec(list.into()));
    }
    Ok(out)
}

/// Parses a nodes file: one `NAME [WEIGHT]` per line (whitespace between), `#` comments
/// and blank lines ignored.
///
/// ```
/// use keyroute::ring::parse_nodes_file;
/// let nodes = parse_nodes_file("# cache fleet\n10.0.0.1:11211 600\n10.0.0.2:11211\n")?;
/// assert_eq!(nodes[0], ("10.0.0.1:11211".to_string(), 600));
/// assert_eq!(nodes[1].1, 1);
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
///
/// # Errors
/// [`RingError::BadNodeSpec`] naming the offending line.
pub fn parse_nodes_file(text: &str) -> Result<Vec<(String, u32)>, RingError> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split_whitespace();
        let (Some(name), w, None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(RingError::BadNodeSpec(line.into()));
        };
        let weight = match w {
            None => 1,
            Some(w) => {
                let w: i64 = w.parse().map_err(|_| RingError::BadNodeSpec(line.into()))?;
                checked_weight(name, w)?
            }
        };
        out.push((name.into(), weight));
    }
    Ok(out)
}
