//! Proxy configurations read as they are: a twemproxy `nutcracker.yml` pool, an nginx
//! `upstream` block, an HAProxy `backend` (or `listen`) section. Pure: text in, a
//! [`ProxyConfig`] out, whose [`Router`] answers which server the proxy sends a key to.
//!
//! A configuration keyroute cannot reproduce exactly is refused with
//! [`EngineError::UnsupportedConfig`] (file, line, reason): a balance mode or hash that
//! depends on load or chance, an `include` the caller's resolver cannot provide, a
//! `backup` or `down` server, a name that resolves to several addresses where that
//! changes the answer. Text that is not valid for its format is
//! [`EngineError::BadConfig`].
//!
//! The proxy hashes a part of the request, not the request: that part is the caller's to
//! supply (the evaluated nginx `hash` expression, the URI HAProxy's `balance uri` takes,
//! a header's value). [`ProxyConfig::key`] says what it is, and [`uri_key`] and
//! [`url_param`] derive HAProxy's.
//!
//! ```
//! use keyroute::config::{read_config, Format};
//! use keyroute::engine::Engine;
//!
//! let text = "http {\n upstream app {\n  hash $request_uri consistent;\n  server 10.0.0.1:80;\n  server 10.0.0.2:80 weight=2;\n }\n}\n";
//! let cfg = read_config(text, "nginx.conf", Some("app"), &mut |_| None)?;
//! assert_eq!(cfg.format, Format::Nginx);
//! assert_eq!(cfg.key, "$request_uri");
//! let owner = cfg.router.get(b"/index.html").expect("a server");
//! assert!(owner == "10.0.0.1:80" || owner == "10.0.0.2:80");
//! # Ok::<(), keyroute::engine::EngineError>(())
//! ```

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::engine::{ConfigSite, EngineError, Router};

mod haproxy;
mod limits;
mod nginx;
mod twemproxy;

pub use haproxy::{uri_key, url_param, UriOptions};
pub use limits::{MAX_CONFIG_BYTES, MAX_INCLUDES};

/// A configuration format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// twemproxy's `nutcracker.yml`.
    Twemproxy,
    /// nginx (`upstream` blocks).
    Nginx,
    /// HAProxy (`backend` / `listen` sections).
    Haproxy,
}

impl Format {
    /// The format's name.
    ///
    /// ```
    /// assert_eq!(keyroute::config::Format::Haproxy.as_str(), "haproxy");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::Twemproxy => "twemproxy",
            Format::Nginx => "nginx",
            Format::Haproxy => "haproxy",
        }
    }
}

/// One server of a pool, as the configuration writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigServer {
    /// The name keyroute answers with: the twemproxy alias (else `host:port`), the nginx
    /// server as written, the HAProxy server name.
    pub name: String,
    /// The address as written.
    pub address: String,
    /// The weight.
    pub weight: u32,
    /// The line it is on (1-based).
    pub line: usize,
}

/// A pool read from a configuration.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// The format.
    pub format: Format,
    /// The pool, upstream or backend name.
    pub pool: String,
    /// What the proxy hashes, for the caller to supply as the key: the nginx `hash`
    /// expression (`$request_uri`), the HAProxy balance mode (`uri`, `url_param userid`,
    /// `hdr(host)`, `source`, ...), twemproxy's `key` (the memcached/redis key).
    pub key: String,
    /// The servers in configuration order (servers the proxy never picks, such as
    /// HAProxy weight-0 servers, included).
    pub servers: Vec<ConfigServer>,
    /// The engine that answers as the proxy does.
    pub router: Router,
    /// Facts worth knowing about this pool (assumptions keyroute makes, the proxy
    /// version differences that apply).
    pub notes: Vec<String>,
}

/// Reads `pool` (the only one when `None` and there is a single one) from `text`,
/// detecting the format. `resolve` returns the text of an included file (nginx `include`)
/// or `None` when it cannot be read.
///
/// # Errors
/// [`EngineError::BadConfig`] (also for text over [`MAX_CONFIG_BYTES`] with its includes),
/// [`EngineError::UnsupportedConfig`], node errors.
pub fn read_config(
    text: &str,
    file: &str,
    pool: Option<&str>,
    resolve: &mut dyn FnMut(&str) -> Option<String>,
) -> Result<ProxyConfig, EngineError> {
    read_config_with(
        text,
        file,
        pool,
        &mut ReadOptions {
            resolve,
            addresses: &[],
            allow_down: false,
        },
    )
}

/// What the caller knows that the configuration does not say, for
/// [`read_config_with`].
pub struct ReadOptions<'a> {
    /// The text of an included file (nginx `include`), or `None` when it cannot be read.
    pub resolve: &'a mut dyn FnMut(&str) -> Option<String>,
    /// How many addresses a server's hostname resolves to, where that changes the answer
    /// (nginx plain `hash` walks one peer per address): `("cache.local", 2)`.
    pub addresses: &'a [(String, u32)],
    /// Accept `down` servers where the proxy's rule for them is deterministic (nginx
    /// `hash ... consistent`: a down server keeps its points and a key on them goes on
    /// to the next point's server). Refused otherwise.
    pub allow_down: bool,
}

impl core::fmt::Debug for ReadOptions<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ReadOptions")
            .field("addresses", &self.addresses)
            .field("allow_down", &self.allow_down)
            .finish_non_exhaustive()
    }
}

/// [`read_config`] with [`ReadOptions`].
///
/// ```
/// use keyroute::config::{read_config_with, ReadOptions};
/// use keyroute::engine::Engine;
/// let text = "upstream u {\n hash $uri;\n server cache.local:80;\n server 10.0.0.9:80;\n}\n";
/// let addresses = [("cache.local".to_string(), 2)];
/// let cfg = read_config_with(text, "n.conf", None, &mut ReadOptions {
///     resolve: &mut |_| None,
///     addresses: &addresses,
///     allow_down: false,
/// })?;
/// assert_eq!(cfg.router.node_weight(0), 2); // two peers of weight 1
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
///
/// # Errors
/// As [`read_config`]; [`EngineError::BadConfig`] naming the file when the text, with
/// every include each time it is included, is over [`MAX_CONFIG_BYTES`], or the includes
/// over [`MAX_INCLUDES`].
pub fn read_config_with(
    text: &str,
    file: &str,
    pool: Option<&str>,
    options: &mut ReadOptions<'_>,
) -> Result<ProxyConfig, EngineError> {
    let mut budget = limits::Budget::new(file, text)?;
    let mut cfg = match detect_format(text) {
        Some(Format::Twemproxy) => twemproxy::read(text, file, pool),
        Some(Format::Nginx) => nginx::read(text, file, pool, options, &mut budget),
        Some(Format::Haproxy) => haproxy::read(text, file, pool),
        None => Err(bad(
            file,
            0,
            "not a twemproxy, nginx or HAProxy configuration (no pool with servers:, no upstream block, no backend or listen section)",
        )),
    }?;
    // It changes with the configuration (`Router::add` refuses it).
    cfg.router = cfg.router.read_from_config();
    Ok(cfg)
}

/// The format of a configuration text, if it looks like one keyroute reads.
///
/// ```
/// use keyroute::config::{detect_format, Format};
/// assert_eq!(detect_format("pool:\n  servers:\n   - 10.0.0.1:11211:1\n"), Some(Format::Twemproxy));
/// assert_eq!(detect_format("upstream u { server a; }"), Some(Format::Nginx));
/// assert_eq!(detect_format("backend b\n  server s1 10.0.0.1:80\n"), Some(Format::Haproxy));
/// assert_eq!(detect_format("hello"), None);
/// ```
pub fn detect_format(text: &str) -> Option<Format> {
    let lines = || {
        text.lines()
            .map(|l| l.split('#').next().unwrap_or("").trim_end())
            .filter(|l| !l.trim().is_empty())
    };
    if lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("upstream ") && (t.contains('{') || t.split_whitespace().count() == 2)
    }) {
        return Some(Format::Nginx);
    }
    if lines().any(|l| {
        let t = l.trim_start();
        t == "servers:" || t.starts_with("servers:")
    }) {
        return Some(Format::Twemproxy);
    }
    if lines().any(|l| {
        !l.starts_with(' ') && !l.starts_with('\t') && {
            let w = l.split_whitespace().next().unwrap_or("");
            w == "backend" || w == "listen"
        }
    }) {
        return Some(Format::Haproxy);
    }
    None
}

pub(crate) fn site(file: &str, line: usize, reason: impl ToString) -> ConfigSite {
    ConfigSite {
        file: file.into(),
        line,
        reason: reason.to_string(),
    }
}

pub(crate) fn bad(file: &str, line: usize, reason: impl ToString) -> EngineError {
    EngineError::BadConfig(site(file, line, reason))
}

pub(crate) fn unsupported(file: &str, line: usize, reason: impl ToString) -> EngineError {
    EngineError::UnsupportedConfig(site(file, line, reason))
}

/// The first server (in order) whose name an earlier one has, with that earlier one; one
/// pass with an index of the names (a pair-wise search was quadratic: 200,000 nginx
/// servers took over 30 s).
pub(crate) fn first_repeat<'a>(
    servers: impl IntoIterator<Item = &'a ConfigServer>,
) -> Option<(&'a ConfigServer, &'a ConfigServer)> {
    let mut seen: BTreeMap<&str, &ConfigServer> = BTreeMap::new();
    for s in servers {
        if let Some(prev) = seen.insert(&s.name, s) {
            return Some((prev, s));
        }
    }
    None
}

/// Refuses a server whose name or address has a control character (NUL, escape: printed
/// raw they reach a terminal), with its line and the name escaped.
pub(crate) fn refuse_control(file: &str, servers: &[ConfigServer]) -> Result<(), EngineError> {
    let has = |t: &str| t.chars().any(crate::ring::is_control);
    match servers.iter().find(|s| has(&s.name) || has(&s.address)) {
        Some(s) => Err(bad(
            file,
            s.line,
            alloc::format!(
                "server {:?}: a server name or address cannot contain control characters",
                s.name
            ),
        )),
        None => Ok(()),
    }
}

/// Picks the pool named `want` among `(name, line)`, or the only one.
pub(crate) fn choose<'a>(
    file: &str,
    kind: &str,
    pools: &'a [(String, usize)],
    want: Option<&str>,
) -> Result<&'a (String, usize), EngineError> {
    match want {
        Some(w) => pools.iter().find(|p| p.0 == w).ok_or_else(|| {
            let names: Vec<&str> = pools.iter().map(|p| p.0.as_str()).collect();
            bad(
                file,
                0,
                alloc::format!("no {kind} named {w:?} (there are: {})", names.join(", ")),
            )
        }),
        None => match pools {
            [one] => Ok(one),
            [] => Err(bad(file, 0, alloc::format!("no {kind} in the file"))),
            _ => {
                let names: Vec<&str> = pools.iter().map(|p| p.0.as_str()).collect();
                Err(bad(
                    file,
                    0,
                    alloc::format!(
                        "the file has {} {kind}s ({}): name one (--pool NAME)",
                        pools.len(),
                        names.join(", ")
                    ),
                ))
            }
        },
    }
}
