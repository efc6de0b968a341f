//! Connections: the one place where this crate opens sockets. [`Timeouts`] bound every
//! wait, [`connect`] opens a standalone connection ([`Direct`]) from a URL,
//! [`Reconnecting`] reopens after a connection error, and [`open_addr`] opens a
//! connection to a cluster node. A deadline is per call, never per reply: on each of them
//! a call (a command, a script, a pipeline) ends within one I/O timeout.
//!
//! URLs may carry a password (`redis://:secret@host:port`); [`redact`] replaces it with
//! `***` in everything this crate prints.

use std::time::{Duration, Instant};

use keyroute::slot::Address;
use redis::{Client, Connection, ConnectionLike, RedisResult, Value};

use crate::error::{is_broken, Error, Result};

mod direct;
mod endpoint;
mod redact;
mod sentinel;
pub(crate) mod tls;

pub use direct::Direct;
pub(crate) use direct::{exchange, Armed};
pub use endpoint::{split_seeds, with_tls_files, Endpoint, Place};
pub use redact::redact;
pub(crate) use sentinel::{ask_one, MasterCheck};

/// Bounds on how long a call waits. A call that has to (re)connect first never waits
/// longer in all than the larger of the two.
///
/// ```
/// use std::time::Duration;
/// use keyroute_redis::Timeouts;
/// let t = Timeouts::default();
/// assert_eq!(t.connect, Duration::from_secs(2));
/// assert_eq!(Timeouts::uniform(Duration::from_millis(300)).io, Duration::from_millis(300));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Timeouts {
    /// Establishing the TCP connection and the handshake (AUTH, SELECT).
    pub connect: Duration,
    /// The deadline of each call on an established connection: all its replies (one
    /// command's, or every one of a pipeline's) are read within it.
    pub io: Duration,
}

impl Timeouts {
    /// The same bound for connecting and for replies.
    pub const fn uniform(timeout: Duration) -> Self {
        Timeouts {
            connect: timeout,
            io: timeout,
        }
    }
}

impl Default for Timeouts {
    /// Two seconds each.
    fn default() -> Self {
        Timeouts::uniform(Duration::from_secs(2))
    }
}

pub(crate) fn nonzero(d: Duration) -> Duration {
    d.max(Duration::from_millis(1))
}

/// `message` with every secret of `endpoint` replaced by `***` (the `redis` crate may
/// quote what it was given).
pub(crate) fn scrub_secrets(message: &str, endpoint: &Endpoint) -> String {
    let mut out = message.to_string();
    for secret in endpoint.secrets() {
        out = out.replace(secret, "***");
    }
    out
}

/// Whether a failed TLS connect failed in the handshake (an untrusted or missing
/// certificate, a TLS client on a plain port), by the words rustls and the `redis` crate
/// use.
fn is_tls_failure(detail: &str) -> bool {
    let d = detail.to_ascii_lowercase();
    [
        "certificate",
        "handshake",
        "tls",
        "alert",
        "corrupt message",
        "peer sent no",
    ]
    .iter()
    .any(|w| d.contains(w))
}

/// The error of a failed connect to `place` (a server of `endpoint`), secrets removed: a
/// TLS handshake failure is [`Error::Tls`], a refused password [`Error::Auth`].
pub(crate) fn connect_error(
    place: &str,
    endpoint: &Endpoint,
    timeouts: Timeouts,
    e: &redis::RedisError,
) -> Error {
    match Error::from_redis(&format!("connect to {place}"), e, Some(timeouts.connect)) {
        Error::Connect { context, detail } | Error::ConnectionLost { context, detail }
            if endpoint.is_tls() && is_tls_failure(&detail) =>
        {
            Error::Tls {
                context,
                detail: scrub_secrets(&detail, endpoint),
            }
        }
        Error::Connect { context, detail } => Error::Connect {
            context,
            detail: format!(
                "cannot reach the server: {}",
                scrub_secrets(&detail, endpoint)
            ),
        },
        Error::Auth { context, detail } => Error::Auth {
            context,
            detail: scrub_secrets(&detail, endpoint),
        },
        other => other,
    }
}

/// Opens a connection with `client` and `timeouts`: `connect` bounds the TCP connect and
/// handshake (TLS, AUTH, SELECT). `place` names the server in errors.
fn open(
    client: &Client,
    place: &str,
    endpoint: &Endpoint,
    timeouts: Timeouts,
) -> Result<Connection> {
    let fail = |e: redis::RedisError| connect_error(place, endpoint, timeouts, &e);
    let mut con = client
        .get_connection_with_timeout(nonzero(timeouts.connect))
        .map_err(fail)?;
    if endpoint.is_tls() {
        // rustls shakes hands on the first write: with no AUTH or SELECT to send, an
        // untrusted certificate would only show at the first command, as some other
        // error. A PING within the connect bound settles it here.
        set_io_timeout(&con, timeouts.connect).map_err(fail)?;
        redis::cmd("PING").query::<()>(&mut con).map_err(fail)?;
    }
    set_io_timeout(&con, timeouts.io).map_err(fail)?;
    Ok(con)
}

fn set_io_timeout(con: &Connection, io: Duration) -> RedisResult<()> {
    con.set_read_timeout(Some(nonzero(io)))?;
    con.set_write_timeout(Some(nonzero(io)))
}

impl Endpoint {
    /// Opens a connection to this endpoint's server; for a Sentinel URL, to the master the
    /// Sentinels name now, checked with `ROLE` (a replica is never written to).
    ///
    /// ```
    /// use keyroute_redis::{Endpoint, Timeouts};
    /// let e = Endpoint::parse("redis://127.0.0.1:1")?;
    /// let err = e.open(Timeouts::default()).err().expect("nobody listens on port 1");
    /// assert_eq!(err.code().as_str(), "REDIS_CONNECT");
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Connect`], [`Error::Auth`], [`Error::Timeout`], [`Error::Tls`]; for a
    /// Sentinel URL, [`Error::Connect`] naming what each Sentinel answered.
    pub fn open(&self, timeouts: Timeouts) -> Result<Direct> {
        self.open_located(timeouts)
            .map(|(_, con)| Direct::new(con, nonzero(timeouts.io)))
    }

    /// As [`open`](Self::open), with the TCP address connected to (none for a Unix
    /// socket).
    pub(crate) fn open_located(&self, timeouts: Timeouts) -> Result<(Option<Address>, Connection)> {
        match self.place() {
            Place::Sentinel { sentinels, service } => {
                sentinel::open_master(self, sentinels, service, timeouts)
                    .map(|(addr, con)| (Some(addr), con))
            }
            Place::Tcp(addr) => Ok((Some(addr.clone()), self.open_node_raw(addr, timeouts)?)),
            Place::Unix(path) => {
                let con = open(&self.client()?, &path.display().to_string(), self, timeouts)?;
                Ok((None, con))
            }
        }
    }

    /// Opens a connection to the node at `addr` with this endpoint's credentials, database
    /// and TLS settings (a cluster node the topology names, a master a Sentinel names).
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_node(&self, addr: &Address, timeouts: Timeouts) -> Result<Direct> {
        self.open_node_raw(addr, timeouts)
            .map(|con| Direct::new(con, nonzero(timeouts.io)))
    }

    /// As [`open_node`](Self::open_node), the `redis` crate's connection, its read and
    /// write timeouts `timeouts.io` (callers bound their calls themselves).
    pub(crate) fn open_node_raw(&self, addr: &Address, timeouts: Timeouts) -> Result<Connection> {
        open(
            &self.client_for(&addr.host, addr.port)?,
            &addr.to_string(),
            self,
            timeouts,
        )
    }
}

/// Opens a connection from a URL of the [grammar](Endpoint) (a Sentinel URL connects to
/// the master it names now; [`Reconnecting`] follows a failover).
///
/// # Errors
/// [`Error::BadUrl`], [`Error::Connect`], [`Error::Auth`], [`Error::Timeout`],
/// [`Error::Tls`].
pub fn connect(url: &str, timeouts: Timeouts) -> Result<Direct> {
    Endpoint::parse(url)?.open(timeouts)
}

/// Opens a plain connection (no credentials, no TLS) to a node; to reach a node with
/// credentials or TLS, use [`Endpoint::open_node`].
///
/// # Errors
/// As [`connect`].
pub fn open_addr(addr: &Address, timeouts: Timeouts) -> Result<Direct> {
    Endpoint::plain(addr).open_node(addr, timeouts)
}

/// The address of a cluster seed (`redis://[user:password@]host:port`, `rediss://...`
/// or `host:port`).
///
/// ```
/// use keyroute_redis::parse_seed;
/// assert_eq!(parse_seed("redis://:pw@127.0.0.1:7000")?.port, 7000);
/// assert_eq!(parse_seed("[::1]:7000")?.host, "::1");
/// assert_eq!(parse_seed("127.0.0.1")?.port, 6379);
/// assert!(parse_seed("redis://127.0.0.1:7000/3").is_err());
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
///
/// # Errors
/// [`Error::BadUrl`] for anything else: a Unix socket or Sentinel URL, a database other
/// than 0 (a cluster has only database 0).
pub fn parse_seed(seed: &str) -> Result<Address> {
    Endpoint::parse(seed)?.check_cluster_seed().cloned()
}

/// A standalone connection that reconnects on the next request after a connection error
/// (refused, reset, timed out). It never resends a request on its own: a pick whose reply
/// was lost may or may not have been counted, and the caller decides.
///
/// Connects lazily: [`new`](Self::new) only checks the URL; [`ensure_connected`]
/// (Self::ensure_connected) connects now.
pub struct Reconnecting {
    endpoint: Endpoint,
    timeouts: Timeouts,
    con: Option<Direct>,
    /// The address `con` leads to (none for a Unix socket).
    at: Option<Address>,
    /// Behind Sentinel: whether the master is still the one `con` leads to.
    check: MasterCheck,
    last_error: Option<Error>,
}

impl std::fmt::Debug for Reconnecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnecting")
            .field("url", &self.endpoint.shown())
            .field("timeouts", &self.timeouts)
            .field("connected", &self.con.is_some())
            .finish()
    }
}

impl Reconnecting {
    /// A reconnecting connection to `url`, any form of the [grammar](Endpoint): on a
    /// Sentinel URL each reconnect asks the Sentinels for the master again, and a
    /// `READONLY` reply (a master demoted by a failover) closes the connection, so the
    /// next call reaches the new master; and at most once a second a call first asks the
    /// Sentinels whether the master is still the one connected to (after a `SENTINEL
    /// FAILOVER` the old master takes writes for seconds before it is demoted, and loses
    /// them), and if not, is made on the new master.
    ///
    /// # Errors
    /// [`Error::BadUrl`].
    pub fn new(url: &str, timeouts: Timeouts) -> Result<Self> {
        Ok(Self::to(Endpoint::parse(url)?, timeouts))
    }

    /// A reconnecting connection to `endpoint`.
    #[must_use]
    pub fn to(endpoint: Endpoint, timeouts: Timeouts) -> Self {
        Reconnecting {
            endpoint,
            timeouts,
            con: None,
            at: None,
            check: MasterCheck::default(),
            last_error: None,
        }
    }

    /// The URL, password redacted.
    pub fn url(&self) -> &str {
        self.endpoint.shown()
    }

    /// What it connects to.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// The timeouts of every connection it opens.
    pub fn timeouts(&self) -> Timeouts {
        self.timeouts
    }

    /// Opens the connection now unless one is open, so that an unreachable server is
    /// reported before the first request.
    ///
    /// # Errors
    /// As [`connect`].
    pub fn ensure_connected(&mut self) -> Result<()> {
        if self.con.is_none() {
            self.connect()?;
        }
        Ok(())
    }

    fn connect(&mut self) -> Result<()> {
        let (at, con) = self.endpoint.open_located(self.timeouts)?;
        if matches!(self.endpoint.place(), Place::Sentinel { .. }) {
            self.check.connected(at.clone());
        }
        self.at = at;
        self.con = Some(Direct::new(con, nonzero(self.timeouts.io)));
        Ok(())
    }

    /// Whether a connection is currently open (none before the first request and after a
    /// connection error).
    pub fn is_connected(&self) -> bool {
        self.con.is_some()
    }

    /// `err` from a call made on this connection, or, when that call failed because the
    /// connect made on its behalf failed, that connect's own error (with its code: the
    /// `ConnectionLike` calls can only return the `redis` crate's error type, so a
    /// refused password would otherwise read as a lost connection).
    ///
    /// ```
    /// use keyroute_redis::{LeastUsed, Reconnecting, Timeouts};
    /// let mut con = Reconnecting::new("redis://127.0.0.1:1", Timeouts::default())?;
    /// let pool = LeastUsed::new("{p}:pool")?;
    /// let err = pool.pick(&mut con).map_err(|e| con.explain(e)).unwrap_err();
    /// assert_eq!(err.code().as_str(), "REDIS_CONNECT");
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn explain(&mut self, err: Error) -> Error {
        match self.last_error.take() {
            Some(connect)
                if err.is_connection_error() || matches!(err, Error::ConnectionLost { .. }) =>
            {
                connect
            }
            _ => err,
        }
    }

    /// Runs `f` on the connection (opened first if none is) with the call's deadline:
    /// the I/O timeout, or, for a call that had to connect first, the larger of the two
    /// timeouts from the call's start.
    fn with<T: Replies>(
        &mut self,
        f: impl FnOnce(&mut Direct, Instant) -> RedisResult<T>,
    ) -> RedisResult<T> {
        let start = Instant::now();
        // Behind Sentinel, a master the Sentinels no longer name is left at once.
        let follow = matches!(self.endpoint.place(), Place::Sentinel { .. });
        if follow
            && self.con.is_some()
            && self
                .check
                .moved(&self.endpoint, self.at.as_ref(), self.timeouts)
        {
            self.con = None;
        }
        let fresh = self.con.is_none();
        if fresh {
            if let Err(e) = self.connect() {
                // The `ConnectionLike` calls return the `redis` crate's error type: an
                // I/O error of the same kind, whose text is ours (password-free).
                let kind = match &e {
                    Error::Timeout { .. } => std::io::ErrorKind::TimedOut,
                    Error::Connect { .. } => std::io::ErrorKind::ConnectionRefused,
                    _ => std::io::ErrorKind::Other,
                };
                let io = std::io::Error::new(kind, e.to_string());
                self.last_error = Some(e);
                return Err(io.into());
            }
        }
        let Some(con) = self.con.as_mut() else {
            unreachable!("opened above")
        };
        // A call that had to connect waits no longer in all than the larger bound.
        let until = if fresh {
            start + self.timeouts.io.max(self.timeouts.connect)
        } else {
            Instant::now() + nonzero(self.timeouts.io)
        };
        let result = f(con, until);
        // Behind Sentinel, a READONLY reply means the master was demoted: the next call
        // asks the Sentinels again.
        let broken = match &result {
            Err(err) => {
                is_broken(err) || !con.is_open() || (follow && err.code() == Some("READONLY"))
            }
            Ok(v) => !con.is_open() || (follow && v.readonly()),
        };
        if broken {
            self.con = None;
        }
        result
    }
}

impl ConnectionLike for Reconnecting {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.with(|con, until| {
            let mut replies = con.call_until(cmd, 0, 1, until)?;
            Ok(replies.pop().unwrap_or(Value::Nil))
        })
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.with(|con, until| con.call_until(cmd, offset, count, until))
    }

    fn get_db(&self) -> i64 {
        self.endpoint.db()
    }

    fn check_connection(&mut self) -> bool {
        self.with(|con, _| Ok(con.check_connection()))
            .unwrap_or(false)
    }

    fn is_open(&self) -> bool {
        self.con.as_ref().is_some_and(Direct::is_open)
    }
}

/// Replies that may carry a `READONLY` error.
trait Replies {
    fn readonly(&self) -> bool;
}

fn is_readonly(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if e.code() == "READONLY")
}

impl Replies for Value {
    fn readonly(&self) -> bool {
        is_readonly(self)
    }
}

impl Replies for Vec<Value> {
    fn readonly(&self) -> bool {
        self.iter().any(is_readonly)
    }
}

impl Replies for bool {
    fn readonly(&self) -> bool {
        false
    }
}

/// The key of a single-key command: its first argument after the name.
#[must_use]
pub fn command_key(cmd: &redis::Cmd) -> Option<&[u8]> {
    match cmd.args_iter().nth(1)? {
        redis::Arg::Simple(b) => Some(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_checked_and_redacted() {
        let err = Reconnecting::new("redis://:hunter2@127.0.0.1:notaport", Timeouts::default())
            .expect_err("bad port");
        assert_eq!(err.code().as_str(), "REDIS_BAD_URL");
        let text = err.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(Reconnecting::new("127.0.0.1:6379", Timeouts::default()).is_ok());
        assert!(Reconnecting::new("[::1]:6379", Timeouts::default()).is_ok());
        assert_eq!(redact("redis://user@h:1"), "redis://***@h:1");
        assert_eq!(redact("h:1"), "h:1");
    }

    /// Found by fuzz/fuzz_targets/cache_inputs.rs: a password holding '?', '/' or '#'
    /// (not percent-encoded) ended the authority early, so no '@' was seen and the URL
    /// was shown as it was, password included; so was `user:password@host:port` without
    /// a scheme.
    #[test]
    fn passwords_with_url_delimiters_are_redacted() {
        let cases = [
            (
                "redis://user:pa?ss@127.0.0.1:6379/0",
                "redis://user:***@127.0.0.1:6379/0",
            ),
            ("redis://:pa/ss@h:1", "redis://:***@h:1"),
            ("redis://:pa#ss@h:1", "redis://:***@h:1"),
            ("redis://:p@ss@h:1", "redis://:***@h:1"),
            ("redis://se/cret@h:1", "redis://***@h:1"),
            ("redis://a/b:secret@h:1", "redis://***@h:1"),
            ("user:secret@h:1", "user:***@h:1"),
            ("redis://h:1/0", "redis://h:1/0"),
            ("no url here", "no url here"),
        ];
        for (url, shown) in cases {
            assert_eq!(redact(url), shown, "{url}");
        }
        // The credentials end at the last '@', as `redact` reads them: such a password
        // is taken whole, and shown nowhere.
        let con = Reconnecting::new("redis://:hunt?er2@127.0.0.1:6379", Timeouts::default())
            .expect("the password ends at the last '@'");
        assert_eq!(con.endpoint().password(), Some("hunt?er2"));
        assert!(
            !format!("{con:?} {}", con.url()).contains("hunt?er2"),
            "{con:?}"
        );
        let err = Reconnecting::new("redis://:hunt?er2@127.0.0.1:notaport", Timeouts::default())
            .expect_err("bad port");
        assert!(!err.to_string().contains("hunt?er2"), "{err}");
    }
}
