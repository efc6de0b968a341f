//! [`Endpoint`]: one Redis URL, parsed once, by the one grammar every entrance reads
//! (Rust, the CLI, `keyroute serve`, Python and C):
//!
//! | form | what |
//! |---|---|
//! | `redis://[user:password@]host[:port][/db][?options]` | a server over TCP (port 6379 by default) |
//! | `rediss://…` | the same over TLS |
//! | `redis+unix:///path[?db=N&user=U&pass=P]` (also `unix://`) | a Unix socket |
//! | `redis+sentinel://[user:password@]host[:port][,host[:port]…]/SERVICE[/db][?options]` | the master of `SERVICE`, found through these Sentinels (port 26379 by default); `rediss+sentinel://` over TLS |
//! | `host:port` | `redis://host:port` |
//!
//! Options, named as redis-py's `from_url` names them: `db`, `user` (`username`), `pass`
//! (`password`), `ssl_ca_certs`, `ssl_certfile`, `ssl_keyfile`, `ssl_cert_reqs`
//! (`required`, the default, or `none`), `sentinel_username`, `sentinel_password` (the
//! Sentinels' own credentials; the URL's are the master's). Any other option, and a form
//! an entrance cannot use, is refused with [`Error::BadUrl`], never ignored. Values are
//! percent-decoded.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use keyroute::slot::Address;
use redis::{
    Client, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, ProtocolVersion,
    RedisConnectionInfo,
};

use super::redact::redact;
use crate::error::{Error, Result};

/// The largest certificate or key file read (a PEM chain is a few KiB).
const MAX_PEM_BYTES: u64 = 1 << 20;

/// The forms, for messages that say which ones an entrance takes.
pub(crate) const FORMS: &str = "redis://[user:password@]host:port[/db][?options], rediss://... (TLS), redis+unix:///path[?db=N&user=U&pass=P], redis+sentinel://[user:password@]host:port[,host:port...]/SERVICE[/db][?options]";

/// Where an [`Endpoint`] leads.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Place {
    /// A server over TCP (or TLS).
    Tcp(Address),
    /// A server on a Unix socket.
    Unix(PathBuf),
    /// The master of `service`, as the Sentinels report it.
    Sentinel {
        /// The Sentinels, in the order given.
        sentinels: Vec<Address>,
        /// The master's service name.
        service: String,
    },
}

/// TLS settings: the certificates are read once, when the URL is parsed.
#[derive(Clone)]
struct Tls {
    verify: bool,
    ca: Option<Vec<u8>>,
    client: Option<(Vec<u8>, Vec<u8>)>,
}

/// A parsed Redis URL: where to connect, the credentials, the database and TLS. Every
/// connection this crate opens is made from one, so the credentials and TLS settings of
/// a cluster's first seed reach every node the cluster reports, and a Sentinel URL finds
/// its master anew after a failover. Its `Debug` and [`shown`](Self::shown) forms never
/// hold a secret.
///
/// ```
/// use keyroute_redis::{Endpoint, Place};
/// let e = Endpoint::parse("redis://app:s3cret@10.0.0.5:6380/2")?;
/// assert_eq!(e.db(), 2);
/// assert_eq!(e.user(), Some("app"));
/// assert_eq!(e.shown(), "redis://app:***@10.0.0.5:6380/2");
/// assert!(!format!("{e:?}").contains("s3cret"));
/// let s = Endpoint::parse("redis+sentinel://:pw@127.0.0.1:26379,127.0.0.1:26380/mymaster?sentinel_password=sp")?;
/// assert!(matches!(s.place(), Place::Sentinel { sentinels, service } if sentinels.len() == 2 && service == "mymaster"));
/// assert!(!s.shown().contains("sp"));
/// assert_eq!(Endpoint::parse("redis://h:1?colour=red").unwrap_err().code().as_str(), "REDIS_BAD_URL");
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone)]
pub struct Endpoint {
    place: Place,
    user: Option<String>,
    password: Option<String>,
    db: i64,
    tls: Option<Arc<Tls>>,
    sentinel_user: Option<String>,
    sentinel_password: Option<String>,
    shown: String,
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Endpoint").field(&self.shown).finish()
    }
}

impl Endpoint {
    /// Parses `url` (see the module docs for the grammar).
    ///
    /// # Errors
    /// [`Error::BadUrl`] (the URL redacted) for anything outside the grammar, an unknown
    /// option, a TLS option on a plain URL, or a certificate file that cannot be read.
    pub fn parse(url: &str) -> Result<Endpoint> {
        let shown = redact(url);
        let bad = |reason: String| Error::BadUrl {
            url: shown.clone(),
            reason,
        };
        let (scheme, rest) = match url.split_once("://") {
            Some((s, r)) => (s.to_ascii_lowercase(), r),
            None => ("redis".to_string(), url),
        };
        let (tls, kind) = match scheme.as_str() {
            "redis" => (false, Kind::Tcp),
            "rediss" => (true, Kind::Tcp),
            "redis+unix" | "unix" => (false, Kind::Unix),
            "redis+sentinel" => (false, Kind::Sentinel),
            "rediss+sentinel" => (true, Kind::Sentinel),
            other => {
                return Err(bad(format!(
                    "unknown scheme {:?}; the forms are: {FORMS}",
                    printable(other)
                )))
            }
        };
        // The credentials end at the last '@' (as `redact` reads them).
        let (userinfo, rest) = match rest.rfind('@') {
            Some(at) if kind != Kind::Unix => (Some(&rest[..at]), &rest[at + 1..]),
            _ => (None, rest),
        };
        if rest.contains('#') {
            return Err(bad(
                "a URL fragment (#...) is not used; write ssl_cert_reqs=none to skip certificate checks".into(),
            ));
        }
        let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
        let (hosts, path) = match kind {
            Kind::Unix => ("", before_query),
            _ => before_query
                .split_once('/')
                .map_or((before_query, ""), |(h, p)| (h, p)),
        };
        let mut e = Endpoint::bare(Place::Unix(PathBuf::new()), shown.clone());
        if let Some(info) = userinfo {
            let (u, p) = match info.split_once(':') {
                Some((u, p)) => (u, Some(p)),
                None => (info, None),
            };
            e.user = Some(decode(u).map_err(&bad)?).filter(|u| !u.is_empty());
            e.password = p.map(decode).transpose().map_err(&bad)?;
        }
        let mut db_from_path = None;
        e.place = match kind {
            Kind::Tcp => {
                let db = path.trim_end_matches('/');
                if !db.is_empty() {
                    db_from_path = Some(parse_db(db).map_err(&bad)?);
                }
                Place::Tcp(host_port(hosts, 6379).map_err(&bad)?)
            }
            Kind::Unix => {
                let path = decode(path).map_err(&bad)?;
                if path.is_empty() {
                    return Err(bad(
                        "no socket path: write redis+unix:///path/to/redis.sock".into(),
                    ));
                }
                Place::Unix(PathBuf::from(path))
            }
            Kind::Sentinel => {
                let sentinels = hosts
                    .split(',')
                    .map(|h| host_port(h, 26379))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(&bad)?;
                let mut parts = path.trim_end_matches('/').splitn(2, '/');
                let service = decode(parts.next().unwrap_or_default()).map_err(&bad)?;
                if service.is_empty() {
                    return Err(bad(
                        "no service name: write redis+sentinel://host:port[,host:port...]/SERVICE[/db]".into(),
                    ));
                }
                if let Some(db) = parts.next() {
                    db_from_path = Some(parse_db(db).map_err(&bad)?);
                }
                Place::Sentinel { sentinels, service }
            }
        };
        let mut tls_opts = TlsFiles::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = decode(v).map_err(&bad)?;
            match k {
                "db" => {
                    if db_from_path.is_some() {
                        return Err(bad("the database is given twice (path and db=)".into()));
                    }
                    db_from_path = Some(parse_db(&v).map_err(&bad)?);
                }
                "user" | "username" => e.user = Some(v).filter(|u| !u.is_empty()),
                "pass" | "password" => e.password = Some(v),
                "sentinel_username" => e.sentinel_user = Some(v).filter(|u| !u.is_empty()),
                "sentinel_password" => e.sentinel_password = Some(v),
                "ssl_ca_certs" => tls_opts.ca = Some(PathBuf::from(v)),
                "ssl_certfile" => tls_opts.cert = Some(PathBuf::from(v)),
                "ssl_keyfile" => tls_opts.key = Some(PathBuf::from(v)),
                "ssl_cert_reqs" => {
                    tls_opts.verify = Some(match v.to_ascii_lowercase().as_str() {
                        "required" => true,
                        "none" => false,
                        other => {
                            return Err(bad(format!(
                                "ssl_cert_reqs={:?}: write required (the default) or none",
                                printable(other)
                            )))
                        }
                    });
                }
                other => {
                    return Err(bad(format!(
                        "unknown option {:?}; the options are db, user, pass, ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_cert_reqs, sentinel_username, sentinel_password",
                        printable(other)
                    )))
                }
            }
        }
        if kind != Kind::Sentinel && (e.sentinel_user.is_some() || e.sentinel_password.is_some()) {
            return Err(bad(
                "sentinel_username and sentinel_password need redis+sentinel://".into(),
            ));
        }
        e.db = db_from_path.unwrap_or(0);
        if tls {
            e.tls = Some(Arc::new(tls_opts.read().map_err(&bad)?));
        } else if !tls_opts.is_empty() {
            return Err(bad(
                "ssl_* options need a TLS URL (rediss:// or rediss+sentinel://)".into(),
            ));
        }
        Ok(e)
    }

    /// A plain TCP endpoint: no credentials, no TLS, database 0.
    pub(crate) fn plain(addr: &Address) -> Endpoint {
        Endpoint::bare(Place::Tcp(addr.clone()), addr.to_string())
    }

    /// `place` with no credentials, no TLS, database 0.
    fn bare(place: Place, shown: String) -> Endpoint {
        Endpoint {
            place,
            user: None,
            password: None,
            db: 0,
            tls: None,
            sentinel_user: None,
            sentinel_password: None,
            shown,
        }
    }

    /// Where it leads.
    #[must_use]
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// The URL as it may be shown: every secret replaced by `***`.
    #[must_use]
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The user name (ACL), if one is given.
    #[must_use]
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The database number.
    #[must_use]
    pub fn db(&self) -> i64 {
        self.db
    }

    /// Whether connections use TLS.
    #[must_use]
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    pub(crate) fn password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The address of a TCP endpoint.
    pub(crate) fn tcp_addr(&self) -> Option<&Address> {
        match &self.place {
            Place::Tcp(a) => Some(a),
            _ => None,
        }
    }

    /// This endpoint as a Redis Cluster seed: TCP, database 0.
    ///
    /// # Errors
    /// [`Error::BadUrl`] for a Unix socket, a Sentinel URL or a database other than 0
    /// (Redis Cluster has only database 0).
    pub(crate) fn check_cluster_seed(&self) -> Result<&Address> {
        let bad = |reason: &str| Error::BadUrl {
            url: self.shown.clone(),
            reason: reason.to_string(),
        };
        if self.db != 0 {
            return Err(bad("a Redis Cluster has only database 0: drop the /db"));
        }
        self.tcp_addr().ok_or_else(|| {
            bad("a cluster seed is redis://[user:password@]host:port or rediss://... (TLS); a Unix socket or a Sentinel URL cannot name a cluster node")
        })
    }

    /// A client for the node at `host:port` with this endpoint's credentials, database
    /// and TLS settings.
    pub(crate) fn client_for(&self, host: &str, port: u16) -> Result<Client> {
        let addr = match &self.tls {
            Some(t) => ConnectionAddr::TcpTls {
                host: host.to_string(),
                port,
                insecure: !t.verify,
                tls_params: None,
            },
            None => ConnectionAddr::Tcp(host.to_string(), port),
        };
        self.client_at(
            addr,
            self.settings(self.user.as_deref(), self.password.as_deref(), self.db),
        )
    }

    /// A client for this endpoint's own server (TCP or Unix; not a Sentinel URL).
    pub(crate) fn client(&self) -> Result<Client> {
        match &self.place {
            Place::Tcp(a) => self.client_for(&a.host, a.port),
            Place::Unix(path) => self.client_at(
                ConnectionAddr::Unix(path.clone()),
                self.settings(self.user.as_deref(), self.password.as_deref(), self.db),
            ),
            Place::Sentinel { .. } => Err(Error::BadUrl {
                url: self.shown.clone(),
                reason: "a Sentinel URL names no server of its own".into(),
            }),
        }
    }

    /// A client for a Sentinel, with the Sentinels' own credentials.
    pub(crate) fn sentinel_client(&self, addr: &Address) -> Result<Client> {
        let tcp = match &self.tls {
            Some(t) => ConnectionAddr::TcpTls {
                host: addr.host.clone(),
                port: addr.port,
                insecure: !t.verify,
                tls_params: None,
            },
            None => ConnectionAddr::Tcp(addr.host.clone(), addr.port),
        };
        self.client_at(
            tcp,
            self.settings(
                self.sentinel_user.as_deref(),
                self.sentinel_password.as_deref(),
                0,
            ),
        )
    }

    fn settings(&self, user: Option<&str>, password: Option<&str>, db: i64) -> RedisConnectionInfo {
        // No `CLIENT SETINFO` in the handshake: the `redis` crate sends two and waits for
        // each reply with the whole connect timeout, so a peer that never answers took
        // twice the timeout to fail (measured: 1.02 s for 500 ms).
        let mut s = RedisConnectionInfo::default()
            .set_db(db)
            .set_protocol(ProtocolVersion::RESP2)
            .set_skip_set_lib_name();
        if let Some(u) = user {
            s = s.set_username(u);
        }
        if let Some(p) = password {
            s = s.set_password(p);
        }
        s
    }

    fn client_at(&self, addr: ConnectionAddr, settings: RedisConnectionInfo) -> Result<Client> {
        let bad = |e: redis::RedisError| Error::BadUrl {
            url: self.shown.clone(),
            reason: super::scrub_secrets(&e.to_string(), self),
        };
        let info: ConnectionInfo = addr.into_connection_info().map_err(bad)?;
        let info = info.set_redis_settings(settings);
        match &self.tls {
            Some(t) if t.ca.is_some() || t.client.is_some() => {
                let certs = redis::TlsCertificates {
                    client_tls: t.client.as_ref().map(|(cert, key)| redis::ClientTlsConfig {
                        client_cert: cert.clone(),
                        client_key: key.clone(),
                    }),
                    root_cert: t.ca.clone(),
                };
                Client::build_with_tls(info, certs).map_err(bad)
            }
            _ => Client::open(info).map_err(bad),
        }
    }

    /// A rustls configuration with this endpoint's TLS settings (none for a plain URL),
    /// for the connections this crate makes without the `redis` crate.
    pub(crate) fn tls_config(&self) -> Option<std::result::Result<rustls::ClientConfig, String>> {
        let t = self.tls.as_ref()?;
        Some(super::tls::client_config(
            t.verify,
            t.ca.as_deref(),
            t.client.as_ref().map(|(c, k)| (c.as_slice(), k.as_slice())),
        ))
    }

    /// Adds this endpoint's credentials to a `MIGRATE` (before its `KEYS`): `AUTH2 user
    /// password` with a user name, `AUTH password` without, nothing without a password.
    /// The target node is reached by the source node, which has no credentials of its
    /// own for it.
    pub(crate) fn migrate_auth(&self, cmd: &mut redis::Cmd) {
        match (&self.user, &self.password) {
            (Some(u), Some(p)) => {
                cmd.arg("AUTH2").arg(u).arg(p);
            }
            (None, Some(p)) => {
                cmd.arg("AUTH").arg(p);
            }
            _ => {}
        }
    }

    /// The secrets of this endpoint, to scrub from any message.
    pub(crate) fn secrets(&self) -> impl Iterator<Item = &str> {
        [self.password.as_deref(), self.sentinel_password.as_deref()]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
    }
}

/// A comma-separated list of URLs (Cluster seeds) as its items; a Sentinel URL, whose
/// hosts are comma-separated, is one item.
///
/// ```
/// use keyroute_redis::split_seeds;
/// assert_eq!(split_seeds("a:1, redis://b:2"), ["a:1", "redis://b:2"]);
/// assert_eq!(split_seeds("redis+sentinel://s1,s2/m"), ["redis+sentinel://s1,s2/m"]);
/// ```
#[must_use]
pub fn split_seeds(list: &str) -> Vec<&str> {
    let trimmed = list.trim();
    let lower = trimmed.get(..16).unwrap_or(trimmed).to_ascii_lowercase();
    if lower.starts_with("redis+sentinel:/") || lower.starts_with("rediss+sentinel:") {
        return vec![trimmed];
    }
    trimmed
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

/// `url` with TLS files added as options (`--tls-ca`, `--tls-cert`, `--tls-key` of the
/// CLI and serve): giving any of them turns TLS on (`host:port` and `redis://` become
/// `rediss://`).
///
/// ```
/// use keyroute_redis::with_tls_files;
/// assert_eq!(with_tls_files("h:1", Some("/ca.pem"), None, None), "rediss://h:1?ssl_ca_certs=/ca.pem");
/// assert_eq!(with_tls_files("redis://h:1/2?db=3", None, None, None), "redis://h:1/2?db=3");
/// let url = with_tls_files("h:1", Some("/certs/50%&#1.pem"), None, None);
/// assert_eq!(url, "rediss://h:1?ssl_ca_certs=/certs/50%25%26%231.pem");
/// ```
#[must_use]
pub fn with_tls_files(
    url: &str,
    ca: Option<&str>,
    cert: Option<&str>,
    key: Option<&str>,
) -> String {
    let opts: Vec<String> = [
        ("ssl_ca_certs", ca),
        ("ssl_certfile", cert),
        ("ssl_keyfile", key),
    ]
    .into_iter()
    .filter_map(|(k, v)| {
        v.map(|v| {
            // Options are percent-decoded when parsed: '%' itself is encoded first.
            let v = v
                .replace('%', "%25")
                .replace('&', "%26")
                .replace('#', "%23");
            let v: String =
                percent_encoding::utf8_percent_encode(&v, percent_encoding::CONTROLS).collect();
            format!("{k}={v}")
        })
    })
    .collect();
    if opts.is_empty() {
        return url.to_string();
    }
    let mut out = match url.split_once("://") {
        None => format!("rediss://{url}"),
        Some((s, rest)) if s.eq_ignore_ascii_case("redis") => format!("rediss://{rest}"),
        Some((s, rest)) if s.eq_ignore_ascii_case("redis+sentinel") => {
            format!("rediss+sentinel://{rest}")
        }
        Some(_) => url.to_string(),
    };
    out.push(if out.contains('?') { '&' } else { '?' });
    out.push_str(&opts.join("&"));
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tcp,
    Unix,
    Sentinel,
}

#[derive(Default)]
struct TlsFiles {
    ca: Option<PathBuf>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    verify: Option<bool>,
}

impl TlsFiles {
    fn is_empty(&self) -> bool {
        self.ca.is_none() && self.cert.is_none() && self.key.is_none() && self.verify.is_none()
    }

    fn read(self) -> std::result::Result<Tls, String> {
        let client =
            match (&self.cert, &self.key) {
                (Some(c), Some(k)) => Some((pem(c)?, pem(k)?)),
                (None, None) => None,
                _ => return Err(
                    "ssl_certfile and ssl_keyfile go together (a client certificate and its key)"
                        .into(),
                ),
            };
        Ok(Tls {
            verify: self.verify.unwrap_or(true),
            ca: self.ca.as_deref().map(pem).transpose()?,
            client,
        })
    }
}

/// A PEM file, at most [`MAX_PEM_BYTES`].
fn pem(path: &std::path::Path) -> std::result::Result<Vec<u8>, String> {
    use std::io::Read;
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open {shown}: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(format!(
            "{shown} is larger than {MAX_PEM_BYTES} bytes: not a PEM certificate or key"
        ));
    }
    if !bytes.starts_with(b"-----BEGIN") && !bytes.windows(10).any(|w| w == b"-----BEGIN") {
        return Err(format!("{shown} holds no PEM block (-----BEGIN ...)"));
    }
    Ok(bytes)
}

fn parse_db(s: &str) -> std::result::Result<i64, String> {
    s.parse::<u32>()
        .map(i64::from)
        .map_err(|_| format!("the database {:?} is not a number", printable(s)))
}

/// `host[:port]` or `[v6][:port]`, with `default` as the port when none is given.
fn host_port(s: &str, default: u16) -> std::result::Result<Address, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("no host: write host:port".into());
    }
    let has_port = match s.strip_prefix('[') {
        Some(inner) => inner.contains("]:"),
        None => s.contains(':'),
    };
    let full = if has_port {
        s.to_string()
    } else {
        format!("{s}:{default}")
    };
    let addr = Address::parse(&full).map_err(|e| format!("{:?}: {e}", printable(s)))?;
    if addr.host.is_empty()
        || addr
            .host
            .contains(|c: char| c.is_control() || c.is_whitespace())
    {
        return Err(format!("{:?}: not a host name or address", printable(s)));
    }
    Ok(addr)
}

fn decode(s: &str) -> std::result::Result<String, String> {
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .map(|c| c.into_owned())
        .map_err(|_| "a percent-encoded part is not UTF-8".to_string())
}

/// `s` with control characters escaped, for messages.
fn printable(s: &str) -> String {
    s.chars().flat_map(char::escape_debug).take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammar() {
        let e = Endpoint::parse("127.0.0.1:7000").unwrap();
        assert_eq!(e.place(), &Place::Tcp(Address::new("127.0.0.1", 7000)));
        let e = Endpoint::parse("redis://h").unwrap();
        assert_eq!(e.tcp_addr().unwrap().port, 6379);
        let e = Endpoint::parse("redis://[::1]:7/3").unwrap();
        assert_eq!((e.tcp_addr().unwrap().host.as_str(), e.db()), ("::1", 3));
        let e = Endpoint::parse("redis://u%40x:p%3Aw@h:1?db=4").unwrap();
        assert_eq!(
            (e.user(), e.password(), e.db()),
            (Some("u@x"), Some("p:w"), 4)
        );
        let e = Endpoint::parse("redis+unix:///run/redis.sock?db=2&user=u&pass=secret").unwrap();
        assert_eq!(e.place(), &Place::Unix("/run/redis.sock".into()));
        assert_eq!((e.db(), e.password()), (2, Some("secret")));
        assert!(!e.shown().contains("secret"), "{}", e.shown());
        let e = Endpoint::parse("redis+sentinel://s1,s2:26380/mymaster/5").unwrap();
        match e.place() {
            Place::Sentinel { sentinels, service } => {
                assert_eq!(sentinels[0], Address::new("s1", 26379));
                assert_eq!(sentinels[1], Address::new("s2", 26380));
                assert_eq!(service, "mymaster");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(e.db(), 5);
    }

    #[test]
    fn refusals_name_the_reason_and_hide_the_secret() {
        for (url, why) in [
            ("http://h:1", "unknown scheme"),
            ("redis://:hunter2@h:1?colour=red", "unknown option"),
            ("redis://:hunter2@h:1/x", "not a number"),
            ("redis://:hunter2@h:1/1?db=2", "twice"),
            ("redis://:hunter2@h:1?ssl_ca_certs=/x", "need a TLS URL"),
            ("rediss://:hunter2@h:1?ssl_certfile=/x", "go together"),
            (
                "rediss://:hunter2@h:1?ssl_ca_certs=/nonexistent/ca.pem",
                "cannot open",
            ),
            ("rediss://:hunter2@h:1?ssl_cert_reqs=maybe", "required"),
            ("redis://:hunter2@h:1#insecure", "fragment"),
            ("redis+sentinel://:hunter2@h:1", "no service name"),
            (
                "redis://:hunter2@h:1?sentinel_password=x",
                "need redis+sentinel",
            ),
            ("redis+unix://", "no socket path"),
            ("redis://:hunter2@h:99999", "port"),
        ] {
            let err = Endpoint::parse(url).expect_err(url);
            assert_eq!(err.code().as_str(), "REDIS_BAD_URL", "{url}");
            let text = err.to_string();
            assert!(text.contains(why), "{url}: {text}");
            assert!(!text.contains("hunter2"), "{url}: {text}");
        }
    }

    #[test]
    fn cluster_seeds_are_tcp_on_db_0() {
        assert!(Endpoint::parse("redis://h:1")
            .unwrap()
            .check_cluster_seed()
            .is_ok());
        for url in ["redis://h:1/3", "redis+unix:///s", "redis+sentinel://h/m"] {
            let err = Endpoint::parse(url)
                .unwrap()
                .check_cluster_seed()
                .unwrap_err();
            assert_eq!(err.code().as_str(), "REDIS_BAD_URL", "{url}");
        }
    }

    #[test]
    fn pem_files_are_bounded() {
        let err = Endpoint::parse("rediss://h:1?ssl_ca_certs=/dev/zero").unwrap_err();
        assert!(err.to_string().contains("larger than"), "{err}");
    }
}
