//! twemproxy's `nutcracker.yml` (the YAML subset nutcracker writes and reads: pools at
//! the top level, `key: value` settings, a `servers:` list).

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::{bad, choose, unsupported, ConfigServer, Format, ProxyConfig};
use crate::engine::fleet::{twemproxy_ketama, twemproxy_modula};
use crate::engine::{EngineError, KeyTag, Kind, Router};
use crate::hashes::TwemproxyHash;
use crate::ring::NodeSpec;

/// The settings nutcracker 0.5.0 knows (`conf_commands`).
const KNOWN: &[&str] = &[
    "listen",
    "hash",
    "hash_tag",
    "distribution",
    "timeout",
    "backlog",
    "client_connections",
    "tcpkeepalive",
    "reuseport",
    "redis",
    "redis_auth",
    "redis_db",
    "preconnect",
    "auto_eject_hosts",
    "server_connections",
    "server_retry_timeout",
    "server_failure_limit",
    "servers",
];

fn unquote(v: &str) -> &str {
    let v = v.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return &v[1..v.len() - 1];
        }
    }
    v
}

/// `v` without a trailing ` # comment` (a `#` at the start or after a space).
fn strip_comment(line: &str) -> &str {
    let b = line.as_bytes();
    let mut quote = None;
    for (i, &c) in b.iter().enumerate() {
        match (quote, c) {
            (None, b'"' | b'\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, b'#') if i == 0 || b[i - 1] == b' ' || b[i - 1] == b'\t' => return &line[..i],
            _ => {}
        }
    }
    line
}

pub(super) fn read(text: &str, file: &str, want: Option<&str>) -> Result<ProxyConfig, EngineError> {
    // Pools: unindented `name:` lines.
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, strip_comment(l).trim_end()))
        .filter(|(_, l)| !l.trim().is_empty() && l.trim() != "---")
        .collect();
    let mut pools: Vec<(String, usize)> = Vec::new();
    for &(n, l) in &lines {
        if !l.starts_with(' ') && !l.starts_with('\t') {
            let Some(name) = l.strip_suffix(':') else {
                return Err(bad(
                    file,
                    n,
                    format!("expected a pool name followed by ':', got {l:?}"),
                ));
            };
            pools.push((unquote(name).into(), n));
        }
    }
    let (pool, start) = choose(file, "pool", &pools, want)?.clone();
    let body: Vec<(usize, &str)> = lines
        .iter()
        .copied()
        .skip_while(|&(n, _)| n <= start)
        .take_while(|(_, l)| l.starts_with(' ') || l.starts_with('\t'))
        .collect();

    let mut hash = TwemproxyHash::Md5;
    let mut hash_line = 0;
    let mut dist = "ketama";
    let mut tag = KeyTag::Whole;
    let mut redis = false;
    let mut notes = Vec::new();
    let mut servers: Vec<ConfigServer> = Vec::new();
    let mut specs: Vec<NodeSpec> = Vec::new();
    let mut hashed: Vec<String> = Vec::new();
    let mut in_servers = false;
    for &(n, l) in &body {
        let t = l.trim();
        if let Some(entry) = t.strip_prefix('-') {
            if !in_servers {
                return Err(bad(file, n, "a list entry outside `servers:`"));
            }
            let (server, spec, h) = server_entry(file, n, unquote(entry))?;
            hashed.push(h);
            servers.push(server);
            specs.push(spec);
            continue;
        }
        in_servers = false;
        let Some((key, value)) = t.split_once(':') else {
            return Err(bad(file, n, format!("expected `key: value`, got {t:?}")));
        };
        let (key, value) = (key.trim(), unquote(value));
        if !KNOWN.contains(&key) {
            return Err(bad(
                file,
                n,
                format!("unknown setting {key:?} (nutcracker refuses it)"),
            ));
        }
        match key {
            "servers" => {
                if !value.is_empty() {
                    return Err(bad(file, n, "servers: takes a list of `- host:port:weight [name]` lines"));
                }
                in_servers = true;
            }
            "hash" => {
                hash = TwemproxyHash::from_name(value)
                    .ok_or_else(|| bad(file, n, format!("unknown hash {value:?}")))?;
                hash_line = n;
            }
            "distribution" => match value {
                "ketama" | "modula" => dist = if value == "ketama" { "ketama" } else { "modula" },
                "random" => {
                    return Err(unsupported(file, n, "distribution: random picks a server at random for each request"))
                }
                _ => return Err(bad(file, n, format!("unknown distribution {value:?}"))),
            },
            "hash_tag" => {
                let b = value.as_bytes();
                if b.len() != 2 {
                    return Err(bad(file, n, format!("hash_tag must be two characters, got {value:?}")));
                }
                tag = KeyTag::Pair(b[0], b[1]);
            }
            "redis" => redis = value == "true",
            "auto_eject_hosts" if value == "true" => notes.push(
                "auto_eject_hosts: true: the answers assume every server is live (an ejected server's keys move until it returns)".to_string(),
            ),
            _ => {}
        }
    }
    if specs.is_empty() {
        return Err(bad(file, start, format!("pool {pool:?} has no servers")));
    }
    super::refuse_control(file, &servers)?;
    if let Some((prev, s)) = super::first_repeat(&servers) {
        return Err(bad(
            file,
            s.line,
            format!(
                "server name {:?} is already used on line {} (nutcracker refuses the pool)",
                s.name, prev.line
            ),
        ));
    }
    let _ = hash_line;
    let router = if dist == "modula" {
        Router::from_engine(
            "twemproxy",
            Kind::Modulo(twemproxy_modula(specs, hash, tag)?),
        )
    } else {
        Router::from_engine(
            "twemproxy",
            Kind::Points(twemproxy_ketama(specs, &hashed, hash, tag)?),
        )
    };
    notes.push(format!(
        "distribution: {dist}, hash: {}{}; continuum points are MD5 of the alias (else host, or host:port when the port is not 11211), cut to 272 bytes",
        hash.as_str(),
        if tag == KeyTag::Whole { "" } else { ", hash_tag applied to keys" }
    ));
    Ok(ProxyConfig {
        format: Format::Twemproxy,
        pool,
        key: if redis {
            "the redis key".into()
        } else {
            "the memcached key".into()
        },
        servers,
        router,
        notes,
    })
}

/// `host:port:weight [name]` or `/path/unix_socket:weight [name]`, parsed from the end as
/// `conf_add_server` does.
fn server_entry(
    file: &str,
    line: usize,
    v: &str,
) -> Result<(ConfigServer, NodeSpec, String), EngineError> {
    let v = v.trim();
    let invalid = || {
        bad(file, line, format!("{v:?} is not \"hostname:port:weight [name]\" or \"/path/unix_socket:weight [name]\""))
    };
    let (pname, alias) = match v.rsplit_once(' ') {
        Some((p, a)) if !a.is_empty() => (p.trim_end(), Some(a)),
        _ => (v, None),
    };
    let (rest, weight) = pname.rsplit_once(':').ok_or_else(invalid)?;
    let weight: u32 = match weight.parse::<u32>() {
        Ok(0) => return Err(bad(file, line, "a server has weight 0")),
        Ok(w) => w,
        Err(_) => return Err(invalid()),
    };
    let unix = v.starts_with('/');
    let (addr, port) = if unix {
        (rest, None)
    } else {
        let (a, p) = rest.rsplit_once(':').ok_or_else(invalid)?;
        match p.parse::<u32>() {
            Ok(pn) if (1..=65535).contains(&pn) => {}
            _ => return Err(bad(file, line, format!("{v:?} has an invalid port"))),
        }
        (a, Some(p))
    };
    if addr.is_empty() {
        return Err(invalid());
    }
    let address = match port {
        Some(p) => format!("{addr}:{p}"),
        None => addr.to_string(),
    };
    // What nutcracker hashes: the alias; else the address, with the port unless it is
    // 11211 (a unix socket keeps the ':' before its weight).
    let (name, spec_address) = match alias {
        Some(a) => (a.to_string(), Some(address.clone())),
        None => (address.clone(), None),
    };
    let hashed = match (alias, port) {
        (Some(a), _) => a.to_string(),
        (None, None) => format!("{addr}:"),
        (None, Some(p)) if p.parse::<u32>() == Ok(11211) => addr.to_string(),
        (None, Some(_)) => address.clone(),
    };
    let server = ConfigServer {
        name: name.clone(),
        address,
        weight,
        line,
    };
    Ok((
        server,
        NodeSpec {
            name,
            weight,
            address: spec_address,
        },
        hashed,
    ))
}
