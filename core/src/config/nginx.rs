//! nginx: `upstream` blocks (http and stream) with `hash $key consistent` or `hash $key`.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::limits::Budget;
use super::{bad, choose, unsupported, ConfigServer, Format, ProxyConfig};
use crate::engine::{EngineError, Kind, Router};
use crate::ring::NodeSpec;

/// A directive: its words, where it is, and its block.
#[derive(Debug)]
struct Directive {
    words: Vec<String>,
    file: String,
    line: usize,
    block: Option<Vec<Directive>>,
}

struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
    line: usize,
}

#[derive(Debug, PartialEq)]
enum Tok {
    Word(String),
    Semi,
    Open,
    Close,
    End,
}

impl Lexer<'_> {
    fn next(&mut self, file: &str) -> Result<(Tok, usize), EngineError> {
        loop {
            while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
                if self.b[self.i] == b'\n' {
                    self.line += 1;
                }
                self.i += 1;
            }
            if self.i < self.b.len() && self.b[self.i] == b'#' {
                while self.i < self.b.len() && self.b[self.i] != b'\n' {
                    self.i += 1;
                }
                continue;
            }
            break;
        }
        let line = self.line;
        let Some(&c) = self.b.get(self.i) else {
            return Ok((Tok::End, line));
        };
        self.i += 1;
        match c {
            b';' => return Ok((Tok::Semi, line)),
            b'{' => return Ok((Tok::Open, line)),
            b'}' => return Ok((Tok::Close, line)),
            _ => {}
        }
        let mut w = Vec::new();
        if c == b'"' || c == b'\'' {
            loop {
                let Some(&d) = self.b.get(self.i) else {
                    return Err(bad(file, line, "a quoted string is not closed"));
                };
                self.i += 1;
                if d == c {
                    break;
                }
                if d == b'\\' {
                    if let Some(&e) = self.b.get(self.i) {
                        self.i += 1;
                        match e {
                            b'"' | b'\'' | b'\\' => w.push(e),
                            b'n' => w.push(b'\n'),
                            b't' => w.push(b'\t'),
                            b'r' => w.push(b'\r'),
                            _ => w.extend_from_slice(&[b'\\', e]),
                        }
                        continue;
                    }
                }
                if d == b'\n' {
                    self.line += 1;
                }
                w.push(d);
            }
        } else {
            w.push(c);
            while let Some(&d) = self.b.get(self.i) {
                if d.is_ascii_whitespace() || d == b';' || d == b'{' || d == b'}' {
                    break;
                }
                self.i += 1;
                w.push(d);
            }
        }
        Ok((Tok::Word(String::from_utf8_lossy(&w).into_owned()), line))
    }
}

/// A block being read: its directives so far, and its own words and line.
type Frame = (Vec<Directive>, Option<(Vec<String>, usize)>);

type Resolve<'r> = &'r mut dyn FnMut(&str) -> Option<String>;

fn parse(
    text: &str,
    file: &str,
    resolve: Resolve<'_>,
    depth: usize,
    budget: &mut Budget,
) -> Result<Vec<Directive>, EngineError> {
    let mut lx = Lexer {
        b: text.as_bytes(),
        i: 0,
        line: 1,
    };
    let mut stack: Vec<Frame> = alloc::vec![(Vec::new(), None)];
    let mut words: Vec<String> = Vec::new();
    let mut first_line = 0;
    loop {
        let (tok, line) = lx.next(file)?;
        match tok {
            Tok::Word(w) => {
                if words.is_empty() {
                    first_line = line;
                }
                words.push(w);
            }
            Tok::Semi => {
                if words.is_empty() {
                    return Err(bad(file, line, "unexpected ';'"));
                }
                let d = core::mem::take(&mut words);
                if d[0] == "include" {
                    let Some(target) = d.get(1) else {
                        return Err(bad(file, first_line, "include needs a file"));
                    };
                    if depth > 16 {
                        return Err(bad(file, first_line, "includes nest more than 16 deep"));
                    }
                    budget.include(file, first_line, target)?;
                    let Some(inc) = resolve(target) else {
                        return Err(unsupported(
                            file,
                            first_line,
                            format!("include {target}: the file cannot be read (give its contents, or the configuration without it)"),
                        ));
                    };
                    budget.included(target, &inc)?;
                    let sub = parse(&inc, target, resolve, depth + 1, budget)?;
                    if let Some(s) = stack.last_mut() {
                        s.0.extend(sub);
                    }
                } else {
                    let dir = Directive {
                        words: d,
                        file: file.into(),
                        line: first_line,
                        block: None,
                    };
                    if let Some(s) = stack.last_mut() {
                        s.0.push(dir);
                    }
                }
            }
            Tok::Open => {
                if words.is_empty() {
                    return Err(bad(file, line, "a block without a directive"));
                }
                stack.push((Vec::new(), Some((core::mem::take(&mut words), first_line))));
            }
            Tok::Close => {
                if !words.is_empty() {
                    return Err(bad(
                        file,
                        line,
                        "a directive is not closed with ';' before '}'",
                    ));
                }
                let Some((children, Some((w, l)))) =
                    (stack.len() > 1).then(|| stack.pop()).flatten()
                else {
                    return Err(bad(file, line, "unexpected '}'"));
                };
                let dir = Directive {
                    words: w,
                    file: file.into(),
                    line: l,
                    block: Some(children),
                };
                if let Some(s) = stack.last_mut() {
                    s.0.push(dir);
                }
            }
            Tok::End => {
                if !words.is_empty() {
                    return Err(bad(
                        file,
                        line,
                        "unexpected end of file: a directive is not closed with ';'",
                    ));
                }
                if stack.len() != 1 {
                    return Err(bad(
                        file,
                        line,
                        "unexpected end of file: a block is not closed with '}'",
                    ));
                }
                return Ok(stack.pop().map(|s| s.0).unwrap_or_default());
            }
        }
    }
}

fn upstreams<'a>(dirs: &'a [Directive], out: &mut Vec<&'a Directive>) {
    for d in dirs {
        if d.words[0] == "upstream" && d.block.is_some() {
            out.push(d);
        } else if let Some(b) = &d.block {
            upstreams(b, out);
        }
    }
}

pub(super) fn read(
    text: &str,
    file: &str,
    want: Option<&str>,
    options: &mut super::ReadOptions<'_>,
    budget: &mut Budget,
) -> Result<ProxyConfig, EngineError> {
    let dirs = parse(text, file, options.resolve, 0, budget)?;
    let mut ups = Vec::new();
    upstreams(&dirs, &mut ups);
    let names: Vec<(String, usize)> = ups
        .iter()
        .map(|u| (u.words.get(1).cloned().unwrap_or_default(), u.line))
        .collect();
    let (name, line) = choose(file, "upstream", &names, want)?;
    if names.iter().filter(|(n, _)| n == name).count() > 1 {
        return Err(bad(
            file,
            *line,
            format!("two upstream blocks are named {name:?}"),
        ));
    }
    let Some(up) = ups.iter().find(|u| u.words.get(1) == Some(name)) else {
        return Err(bad(file, *line, "upstream not found"));
    };
    let body = up.block.as_deref().unwrap_or(&[]);
    let mut hash: Option<(&Directive, bool)> = None;
    let mut servers = Vec::new();
    let mut specs = Vec::new();
    let mut notes = Vec::new();
    let mut down: Vec<usize> = Vec::new();
    for d in body {
        let w = &d.words;
        match w[0].as_str() {
            "hash" => {
                let consistent = match w.len() {
                    2 => false,
                    3 if w[2] == "consistent" => true,
                    _ => {
                        return Err(bad(
                            &d.file,
                            d.line,
                            "hash takes a key and, optionally, consistent",
                        ))
                    }
                };
                hash = Some((d, consistent));
            }
            "ip_hash" | "least_conn" | "random" | "least_time" | "sticky" | "ntlm" => {
                return Err(unsupported(
                    &d.file,
                    d.line,
                    format!(
                        "upstream {name}: {} is not the hash method keyroute reproduces",
                        w[0]
                    ),
                ))
            }
            "server" => {
                let (s, spec, is_down) = server(d, &mut notes, options.allow_down)?;
                if is_down {
                    down.push(specs.len());
                }
                servers.push(s);
                specs.push(spec);
            }
            _ => {}
        }
    }
    let Some((hd, consistent)) = hash else {
        return Err(unsupported(
            file,
            up.line,
            format!(
                "upstream {name} has no hash directive: round-robin does not depend on the key"
            ),
        ));
    };
    if specs.is_empty() {
        return Err(bad(file, up.line, format!("upstream {name} has no server")));
    }
    super::refuse_control(file, &servers)?;
    if let Some((prev, s)) = super::first_repeat(&servers) {
        return Err(unsupported(
            file,
            s.line,
            format!("server {} is listed twice (also line {}): nginx merges their points and picks by load", s.name, prev.line),
        ));
    }
    if !consistent {
        if let Some(&d) = down.first() {
            return Err(unsupported(
                file,
                servers[d].line,
                format!(
                    "server {} is down: with plain hash nginx rehashes the key (not reproduced)",
                    servers[d].name
                ),
            ));
        }
        for (s, spec) in servers.iter().zip(specs.iter_mut()) {
            if is_address_literal(&s.name) {
                continue;
            }
            let (host, _) = crate::engine::fleet::nginx::host_port(&s.name);
            match options.addresses.iter().find(|(h, _)| h == host) {
                // k peers of the server's weight, one after the other.
                Some(&(_, k)) if k > 0 => spec.weight = spec.weight.saturating_mul(k),
                _ => {
                    return Err(unsupported(
                        file,
                        s.line,
                        format!("server {}: plain hash walks one peer per resolved address, and the hostname {host} may resolve to several; say how many (--resolved {host}=N) or write the addresses", s.name),
                    ))
                }
            }
        }
    }
    let router = if consistent {
        let ring = crate::engine::fleet::nginx::build(specs)?.with_down(&down);
        if !down.is_empty() {
            notes.push("down servers keep their points; a key on one goes on to the next point's server (nginx tries 21 points, then round-robin: no answer)".into());
        }
        Router::from_engine("nginx", Kind::Points(ring))
    } else {
        Router::build("nginx-hash", &specs, &[])?
    };
    if consistent {
        notes.push("hash ... consistent: CRC32 points (160 per weight) of host and port as written; an empty key or a single server falls back to round-robin in nginx".into());
    } else {
        notes.push("plain hash (Cache::Memcached): ((crc32(key) >> 16) & 0x7fff) % total weight over the servers in order".into());
    }
    Ok(ProxyConfig {
        format: Format::Nginx,
        pool: name.clone(),
        key: hd.words[1].clone(),
        servers,
        router,
        notes,
    })
}

fn is_address_literal(server: &str) -> bool {
    if server.len() >= 5 && server.as_bytes()[..5].eq_ignore_ascii_case(b"unix:") {
        return true;
    }
    let (host, _) = crate::engine::fleet::nginx::host_port(server);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.parse::<core::net::IpAddr>().is_ok()
}

fn server(
    d: &Directive,
    notes: &mut Vec<String>,
    allow_down: bool,
) -> Result<(ConfigServer, NodeSpec, bool), EngineError> {
    let w = &d.words;
    let Some(addr) = w.get(1) else {
        return Err(bad(&d.file, d.line, "server needs an address"));
    };
    let mut weight = 1u32;
    let mut is_down = false;
    for p in &w[2..] {
        let (k, v) = p.split_once('=').unwrap_or((p.as_str(), ""));
        match k {
            "weight" => {
                weight = match v.parse::<u32>() {
                    Ok(n) if n > 0 => n,
                    _ => return Err(bad(&d.file, d.line, format!("invalid weight {v:?}"))),
                }
            }
            "max_fails" | "fail_timeout" | "slow_start" => {}
            "max_conns" => notes.push(format!(
                "server {addr}: max_conns: when it is reached nginx moves the key to the next point (load-dependent)"
            )),
            "down" if allow_down => is_down = true,
            "down" => {
                return Err(unsupported(&d.file, d.line, format!("server {addr} is down: refused unless down servers are allowed (--allow-down: nginx keeps its points and moves its keys to the next point's server)")))
            }
            "backup" => {
                return Err(bad(&d.file, d.line, format!("server {addr}: backup is not allowed with hash (nginx refuses the configuration)")))
            }
            "resolve" | "service" | "route" | "drain" => {
                return Err(unsupported(&d.file, d.line, format!("server {addr}: {k} resolves or changes the servers at run time")))
            }
            _ => return Err(bad(&d.file, d.line, format!("server {addr}: unknown parameter {p:?}"))),
        }
    }
    Ok((
        ConfigServer {
            name: addr.clone(),
            address: addr.clone(),
            weight,
            line: d.line,
        },
        NodeSpec {
            name: addr.clone(),
            weight,
            address: None,
        },
        is_down,
    ))
}
