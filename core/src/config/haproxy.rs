//! HAProxy 2.6: a `backend` or `listen` section (with what it inherits from `defaults`),
//! `balance`, `hash-type`, servers with their ids and weights.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{bad, choose, unsupported, ConfigServer, Format, ProxyConfig};
use crate::engine::fleet::{haproxy_consistent, haproxy_map};
use crate::engine::{EngineError, KeyHash, Kind, Router};
use crate::hashes::HaproxyHash;
use crate::ring::NodeSpec;

const SECTIONS: &[&str] = &[
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "peers",
    "resolvers",
    "userlist",
    "mailers",
    "program",
    "http-errors",
    "ring",
    "cache",
    "fcgi-app",
    "crt-store",
    "traces",
];

struct Line<'a> {
    n: usize,
    words: Vec<&'a str>,
}

struct Section<'a> {
    kind: &'a str,
    name: String,
    from: Option<String>,
    line: usize,
    lines: Vec<Line<'a>>,
}

fn words(l: &str) -> Vec<&str> {
    let l = match l.find('#') {
        Some(i) if i == 0 || l.as_bytes()[i - 1].is_ascii_whitespace() => &l[..i],
        _ => l,
    };
    l.split_whitespace()
        .map(|w| w.trim_matches('"').trim_matches('\''))
        .collect()
}

fn sections(text: &str) -> Vec<Section<'_>> {
    let mut out: Vec<Section<'_>> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let w = words(l);
        if w.is_empty() {
            continue;
        }
        if SECTIONS.contains(&w[0]) {
            let name = w
                .get(1)
                .filter(|n| **n != "from")
                .unwrap_or(&"")
                .to_string();
            let from = w
                .iter()
                .position(|x| *x == "from")
                .and_then(|p| w.get(p + 1))
                .map(|s| s.to_string());
            out.push(Section {
                kind: w[0],
                name,
                from,
                line: i + 1,
                lines: Vec::new(),
            });
        } else if let Some(s) = out.last_mut() {
            s.lines.push(Line { n: i + 1, words: w });
        }
    }
    out
}

/// How `balance` selects the key.
#[derive(Debug, Clone)]
struct Balance {
    key: String,
    source: bool,
}

pub(super) fn read(text: &str, file: &str, want: Option<&str>) -> Result<ProxyConfig, EngineError> {
    let secs = sections(text);
    let proxies: Vec<(String, usize)> = secs
        .iter()
        .filter(|s| s.kind == "backend" || s.kind == "listen")
        .map(|s| (s.name.clone(), s.line))
        .collect();
    let (name, line) = choose(file, "backend", &proxies, want)?.clone();
    let idx = secs
        .iter()
        .position(|s| {
            (s.kind == "backend" || s.kind == "listen") && s.name == name && s.line == line
        })
        .ok_or_else(|| bad(file, line, "backend not found"))?;
    let sec = &secs[idx];
    // The defaults it inherits: `from NAME`, else the last defaults section before it.
    let defaults = match &sec.from {
        Some(f) => Some(
            secs[..idx]
                .iter()
                .rev()
                .find(|s| s.kind == "defaults" && &s.name == f)
                .ok_or_else(|| {
                    bad(
                        file,
                        sec.line,
                        format!("no defaults section named {f:?} before it"),
                    )
                })?,
        ),
        None => secs[..idx].iter().rev().find(|s| s.kind == "defaults"),
    };

    let mut balance: Option<(Balance, usize)> = None;
    let mut consistent = false;
    let mut func = HaproxyHash::Sdbm;
    let mut avalanche = false;
    let mut default_weight = 1u32;
    let mut notes = Vec::new();
    let mut servers: Vec<ConfigServer> = Vec::new();
    let mut ids: Vec<Option<u32>> = Vec::new();

    let inherited = defaults.map(|d| d.lines.as_slice()).unwrap_or(&[]);
    for (own, l) in inherited
        .iter()
        .map(|l| (false, l))
        .chain(sec.lines.iter().map(|l| (true, l)))
    {
        let w = &l.words;
        match w[0] {
            "balance" => balance = Some((parse_balance(file, l)?, l.n)),
            "hash-type" => {
                (consistent, func, avalanche) = parse_hash_type(file, l)?;
            }
            "hash-balance-factor" if w.get(1).is_some_and(|v| *v != "0") => {
                return Err(unsupported(
                    file,
                    l.n,
                    "hash-balance-factor moves keys off loaded servers (bounded loads depend on live load)",
                ));
            }
            "hash-key" => {
                return Err(unsupported(file, l.n, "hash-key is HAProxy 3.0+; keyroute reproduces 2.6, whose points are keyed by server id"));
            }
            "hash-preserve-affinity" => {
                return Err(unsupported(file, l.n, "hash-preserve-affinity is HAProxy 3.2+ and depends on live load"));
            }
            "default-server" => {
                if let Some(v) = param(w, "weight") {
                    default_weight = parse_weight(file, l.n, v)?;
                }
            }
            "server-template" if own => {
                return Err(unsupported(file, l.n, "server-template makes its servers from DNS answers at run time"));
            }
            "server" if own => {
                let (Some(sname), Some(addr)) = (w.get(1), w.get(2)) else {
                    return Err(bad(file, l.n, "server needs a name and an address"));
                };
                if w.contains(&"backup") {
                    return Err(unsupported(file, l.n, format!("server {sname} is a backup: it takes keys only when every active server is down (keyroute refuses backup servers)")));
                }
                if w.contains(&"disabled") {
                    return Err(unsupported(file, l.n, format!("server {sname} is disabled (down): keyroute refuses down servers")));
                }
                let weight = match param(w, "weight") {
                    Some(v) => parse_weight(file, l.n, v)?,
                    None => default_weight,
                };
                let id = match param(w, "id") {
                    Some(v) => match v.parse::<u32>() {
                        Ok(i) if i > 0 => Some(i),
                        _ => return Err(bad(file, l.n, format!("server {sname}: invalid id {v:?}"))),
                    },
                    None => None,
                };
                servers.push(ConfigServer {
                    name: sname.to_string(),
                    address: addr.to_string(),
                    weight,
                    line: l.n,
                });
                ids.push(id);
            }
            "cookie" | "use-server" | "force-persist" | "stick" | "stick-table" if own => notes.push(format!(
                "line {}: {}: persistence can send a request elsewhere than its hash; keyroute answers for the hash",
                l.n, w[0]
            )),
            _ => {}
        }
    }
    let Some((bal, _bline)) = balance else {
        return Err(unsupported(file, sec.line, format!("{} {name} balances round-robin (no balance line): the server does not depend on the key", sec.kind)));
    };
    if servers.is_empty() {
        return Err(bad(
            file,
            sec.line,
            format!("{} {name} has no server", sec.kind),
        ));
    }
    // Server ids: explicit ones first, then the first free id from the position.
    let mut used: BTreeSet<u32> = BTreeSet::new();
    for (i, id) in ids.iter().enumerate() {
        if let Some(id) = id {
            if !used.insert(*id) {
                return Err(bad(
                    file,
                    servers[i].line,
                    format!("server {}: id {id} is already used", servers[i].name),
                ));
            }
        }
    }
    let mut puids = Vec::with_capacity(ids.len());
    let mut next_id = 1u32;
    for id in &ids {
        let puid = match id {
            Some(id) => *id,
            None => {
                while used.contains(&next_id) {
                    next_id += 1;
                }
                used.insert(next_id);
                next_id
            }
        };
        puids.push(puid);
        next_id += 1;
    }
    super::refuse_control(file, &servers)?;
    let unnumbered = servers.iter().zip(&ids).filter(|(_, id)| id.is_none());
    if let Some((prev, s)) = super::first_repeat(unnumbered.map(|(s, _)| s)) {
        return Err(bad(
            file,
            s.line,
            format!(
                "server name {:?} is already used on line {}",
                s.name, prev.line
            ),
        ));
    }
    // Weight-0 servers take no key: left out of the engine (their ids stay taken).
    let mut specs = Vec::new();
    let mut live_ids = Vec::new();
    for (s, &puid) in servers.iter().zip(&puids) {
        if s.weight > 0 {
            specs.push(NodeSpec {
                name: s.name.clone(),
                weight: s.weight,
                address: Some(s.address.clone()),
            });
            live_ids.push(puid);
        }
    }
    if specs.is_empty() {
        return Err(unsupported(
            file,
            sec.line,
            "every server has weight 0: HAProxy has no server to pick",
        ));
    }
    let key_hash = if bal.source {
        KeyHash::HaproxySource(avalanche)
    } else {
        KeyHash::Haproxy(func, avalanche)
    };
    let router = if consistent {
        Router::from_engine(
            "haproxy",
            Kind::Points(haproxy_consistent(specs, &live_ids, key_hash)?),
        )
    } else {
        Router::from_engine("haproxy-map", Kind::Table(haproxy_map(specs, key_hash)?))
    };
    notes.push(format!(
        "hash-type {} {}{}; HAProxy 3.0 to 3.2 before the fix of 3.3-dev10 key consistent points by full_hash(full_hash(id) + j), not 2.6's full_hash(id * 4096 + j)",
        if consistent { "consistent" } else { "map-based" },
        if bal.source { "(source: XOR of the address words)" } else { func.as_str() },
        if avalanche { " avalanche" } else { "" },
    ));
    Ok(ProxyConfig {
        format: Format::Haproxy,
        pool: name,
        key: bal.key,
        servers,
        router,
        notes,
    })
}

fn param<'a>(w: &[&'a str], key: &str) -> Option<&'a str> {
    w.iter()
        .position(|x| *x == key)
        .and_then(|p| w.get(p + 1))
        .copied()
}

fn parse_weight(file: &str, n: usize, v: &str) -> Result<u32, EngineError> {
    match v.parse::<u32>() {
        Ok(w) if w <= 256 => Ok(w),
        _ => Err(bad(
            file,
            n,
            format!("invalid weight {v:?}: HAProxy weights are 0 to 256"),
        )),
    }
}

fn parse_hash_type(file: &str, l: &Line<'_>) -> Result<(bool, HaproxyHash, bool), EngineError> {
    let w = &l.words;
    let consistent = match w.get(1).copied() {
        Some("consistent") => true,
        Some("map-based") => false,
        other => {
            return Err(bad(
                file,
                l.n,
                format!("hash-type takes map-based or consistent, got {other:?}"),
            ))
        }
    };
    match w.get(2).copied() {
        None => Ok((consistent, HaproxyHash::Sdbm, consistent)),
        Some(f) => {
            let Some(func) = HaproxyHash::from_name(f) else {
                if f == "none" {
                    return Err(unsupported(file, l.n, "hash function none is HAProxy 2.9+"));
                }
                return Err(bad(file, l.n, format!("unknown hash function {f:?}")));
            };
            let aval = match w.get(3).copied() {
                None => false,
                Some("avalanche") => true,
                Some(m) => return Err(bad(file, l.n, format!("unknown hash modifier {m:?}"))),
            };
            Ok((consistent, func, aval))
        }
    }
}

fn parse_balance(file: &str, l: &Line<'_>) -> Result<Balance, EngineError> {
    let w = &l.words;
    let Some(algo) = w.get(1).copied() else {
        return Err(bad(file, l.n, "balance needs an algorithm"));
    };
    let plain = |key: String| Ok(Balance { key, source: false });
    match algo {
        "roundrobin" | "static-rr" | "leastconn" | "first" => Err(unsupported(
            file,
            l.n,
            format!("balance {algo} does not depend on the key"),
        )),
        a if a.starts_with("random") => {
            Err(unsupported(file, l.n, "balance random picks at random"))
        }
        "source" => Ok(Balance {
            key: "source (the client's IP address as text)".into(),
            source: true,
        }),
        "uri" => {
            check_uri_options(file, l)?;
            let rest = w[2..].join(" ");
            plain(if rest.is_empty() {
                "uri".into()
            } else {
                format!("uri {rest}")
            })
        }
        "url_param" => match w.get(2) {
            Some(p) => plain(format!("url_param {p}")),
            None => Err(bad(file, l.n, "url_param needs a parameter name")),
        },
        "hash" => match w.get(2) {
            Some(_) => plain(format!("hash {}", w[2..].join(" "))),
            None => Err(bad(file, l.n, "balance hash needs an expression")),
        },
        a if a.starts_with("hdr(") && a.ends_with(')') => {
            let rest = w[2..].join(" ");
            plain(if rest.is_empty() {
                a.into()
            } else {
                format!("{a} {rest}")
            })
        }
        a if a.starts_with("rdp-cookie") => plain(a.into()),
        other => Err(unsupported(
            file,
            l.n,
            format!("balance {other} is not one keyroute reproduces"),
        )),
    }
}

/// `balance uri` options as HAProxy 2.6 takes them (`whole`, `path-only`, `len N`,
/// `depth N` with N a positive integer); anything else HAProxy refuses.
fn check_uri_options(file: &str, l: &Line<'_>) -> Result<(), EngineError> {
    let mut opts = l.words[2..].iter();
    while let Some(&o) = opts.next() {
        match o {
            "whole" | "path-only" => {}
            "len" | "depth" => match opts.next() {
                Some(v) if v.parse::<u32>().is_ok_and(|n| n > 0) && !v.starts_with('+') => {}
                v => {
                    return Err(bad(
                        file,
                        l.n,
                        format!("balance uri {o} takes a positive integer, got {v:?} (HAProxy refuses it)"),
                    ))
                }
            },
            other => {
                return Err(bad(
                    file,
                    l.n,
                    format!("balance uri: unknown option {other:?} (HAProxy takes len N, depth N, whole, path-only)"),
                ))
            }
        }
    }
    Ok(())
}

/// `balance uri` options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UriOptions {
    /// `whole`: keep the query string.
    pub whole: bool,
    /// `len N`: at most this many bytes.
    pub len: Option<usize>,
    /// `depth N`: stop before the (N+1)-th `/`.
    pub depth: Option<usize>,
}

/// The part of a request URI HAProxy 2.6's `balance uri` hashes (`get_server_uh`): up to
/// the first `?` unless `whole`, at most `len` bytes, stopping before the `depth+1`-th `/`.
/// (HTTP/2 requests carry an absolute URI unless `path-only` is set: pass what HAProxy
/// sees.)
///
/// ```
/// use keyroute::config::{uri_key, UriOptions};
/// assert_eq!(uri_key(b"/a/b/c?x=1", UriOptions::default()), b"/a/b/c");
/// assert_eq!(uri_key(b"/a/b/c?x=1", UriOptions { whole: true, ..Default::default() }), b"/a/b/c?x=1");
/// assert_eq!(uri_key(b"/a/b/c", UriOptions { depth: Some(2), ..Default::default() }), b"/a/b");
/// assert_eq!(uri_key(b"/a/b/c", UriOptions { len: Some(3), ..Default::default() }), b"/a/");
/// ```
pub fn uri_key(uri: &[u8], opts: UriOptions) -> &[u8] {
    let mut end = uri.len();
    if let Some(l) = opts.len {
        end = end.min(l);
    }
    let mut slashes = 0usize;
    for (i, &c) in uri[..end].iter().enumerate() {
        if c == b'?' && !opts.whole {
            return &uri[..i];
        }
        if c == b'/' {
            slashes += 1;
            if let Some(d) = opts.depth {
                if slashes == d + 1 {
                    return &uri[..i];
                }
            }
        }
    }
    &uri[..end]
}

/// The value of URL parameter `name` in a request URI, as `balance url_param` hashes it:
/// after the first `?`, the first `name=` at the start of a parameter, up to the next `&`
/// (no percent-decoding). `None` when absent (HAProxy then balances round-robin).
///
/// ```
/// use keyroute::config::url_param;
/// assert_eq!(url_param(b"/p?a=1&userid=42&b=2", b"userid"), Some(&b"42"[..]));
/// assert_eq!(url_param(b"/p?xuserid=42", b"userid"), None);
/// ```
pub fn url_param<'a>(uri: &'a [u8], name: &[u8]) -> Option<&'a [u8]> {
    let q = uri.iter().position(|&c| c == b'?')?;
    for part in uri[q + 1..].split(|&c| c == b'&') {
        if part.len() > name.len() && part.starts_with(name) && part[name.len()] == b'=' {
            return Some(&part[name.len() + 1..]);
        }
    }
    None
}
