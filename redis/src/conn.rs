//! Connections: the one place where this crate opens sockets. [`Timeouts`] bound every
//! wait, [`connect`] opens a standalone connection from a URL, [`Reconnecting`] reopens
//! after a connection error, and [`open_addr`] opens a connection to a cluster node.
//!
//! URLs may carry a password (`redis://:secret@host:port`); [`redact`] replaces it with
//! `***` in everything this crate prints.

use std::time::{Duration, Instant};

use keyroute::slot::Address;
use redis::{
    Client, Connection, ConnectionAddr, ConnectionLike, IntoConnectionInfo, RedisResult, Value,
};

use crate::error::{is_broken, Error, Result};

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
    /// Waiting for each reply on an established connection.
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

fn nonzero(d: Duration) -> Duration {
    d.max(Duration::from_millis(1))
}

/// `url` with the password (and a user name given with it) replaced by `***`.
///
/// ```
/// use keyroute_redis::redact;
/// assert_eq!(redact("redis://:s3cret@10.0.0.1:6379/0"), "redis://:***@10.0.0.1:6379/0");
/// assert_eq!(redact("redis://app:s3cret@h:6379"), "redis://app:***@h:6379");
/// assert_eq!(redact("redis://h:6379"), "redis://h:6379");
/// ```
pub fn redact(url: &str) -> String {
    let scheme_end = match url.find("://") {
        Some(i) => i + 3,
        // `user:password@host:port` without a scheme (a seed).
        None if !url.contains(char::is_whitespace) => 0,
        None => return url.to_string(),
    };
    let rest = &url[scheme_end..];
    // The credentials end at the last '@': a password that was not percent-encoded may
    // hold '/', '?', '#' or '@', and is then hidden whole.
    let Some(at) = rest.rfind('@') else {
        return url.to_string();
    };
    let userinfo = &rest[..at];
    let hidden = match userinfo.split_once(':') {
        Some((user, _)) if !user.contains(['/', '?', '#']) => format!("{user}:***"),
        _ => "***".to_string(),
    };
    format!("{}{hidden}{}", &url[..scheme_end], &rest[at..])
}

/// A URL the `redis` crate accepts, checked: `redis://[user:password@]host:port[/db]`,
/// or `host:port`.
fn client(url: &str) -> Result<Client> {
    let shown = redact(url);
    let bad = |reason: String| Error::BadUrl {
        url: shown.clone(),
        reason,
    };
    let full = if url.contains("://") {
        url.to_string()
    } else {
        // host:port, as `keyroute cluster --redis` has always accepted.
        let addr = Address::parse(url.trim_start_matches('[').replace(']', "").as_str())
            .map_err(|e| bad(e.to_string()))?;
        format!("redis://{}:{}", bracket(&addr.host), addr.port)
    };
    let info = full
        .as_str()
        .into_connection_info()
        .map_err(|e| bad(scrub(&e.to_string(), url)))?;
    Client::open(without_lib_name(info)).map_err(|e| bad(scrub(&e.to_string(), url)))
}

/// No `CLIENT SETINFO` in the handshake: the `redis` crate sends two and waits for each
/// reply with the whole connect timeout, so a peer that never answers took twice the
/// timeout to fail (measured: 1.02 s for 500 ms).
fn without_lib_name(info: redis::ConnectionInfo) -> redis::ConnectionInfo {
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    info.set_redis_settings(settings)
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// Removes the password of `url` from a message (the `redis` crate may quote the URL).
fn scrub(message: &str, url: &str) -> String {
    let shown = redact(url);
    let mut out = message.replace(url, &shown);
    if let Some(password) = password_of(url) {
        if !password.is_empty() {
            out = out.replace(password, "***");
        }
    }
    out
}

fn password_of(url: &str) -> Option<&str> {
    let rest = &url[url.find("://")? + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    let userinfo = &authority[..authority.rfind('@')?];
    userinfo.split_once(':').map(|(_, p)| p)
}

fn where_of(client: &Client) -> String {
    client.get_connection_info().addr().to_string()
}

/// Opens a connection with `timeouts`: `connect` bounds the TCP connect and handshake.
fn open(client: &Client, timeouts: Timeouts) -> Result<Connection> {
    let place = where_of(client);
    let fail = |e: redis::RedisError| match Error::from_redis(
        &format!("connect to {place}"),
        &e,
        Some(timeouts.connect),
    ) {
        Error::Connect { context, detail } => Error::Connect {
            context,
            detail: format!("cannot reach the server: {detail}"),
        },
        other => other,
    };
    let con = client
        .get_connection_with_timeout(nonzero(timeouts.connect))
        .map_err(fail)?;
    set_io_timeout(&con, timeouts.io).map_err(fail)?;
    Ok(con)
}

fn set_io_timeout(con: &Connection, io: Duration) -> RedisResult<()> {
    con.set_read_timeout(Some(nonzero(io)))?;
    con.set_write_timeout(Some(nonzero(io)))
}

/// Opens a standalone connection (`redis://[:password@]host:port[/db]`, or `host:port`)
/// with the given timeouts.
///
/// # Errors
/// [`Error::BadUrl`], [`Error::Connect`], [`Error::Auth`], [`Error::Timeout`].
pub fn connect(url: &str, timeouts: Timeouts) -> Result<Connection> {
    open(&client(url)?, timeouts)
}

/// Opens a connection to a cluster node.
///
/// # Errors
/// As [`connect`].
pub fn open_addr(addr: &Address, timeouts: Timeouts) -> Result<Connection> {
    let info = ConnectionAddr::Tcp(addr.host.clone(), addr.port)
        .into_connection_info()
        .map_err(|e| Error::BadUrl {
            url: addr.to_string(),
            reason: e.to_string(),
        })?;
    let client = Client::open(without_lib_name(info)).map_err(|e| Error::BadUrl {
        url: addr.to_string(),
        reason: e.to_string(),
    })?;
    open(&client, timeouts)
}

/// Parses a seed `redis://host:port[/...]` or `host:port` into an [`Address`].
///
/// ```
/// use keyroute_redis::parse_seed;
/// assert_eq!(parse_seed("redis://:pw@127.0.0.1:7000")?.port, 7000);
/// assert_eq!(parse_seed("[::1]:7000")?.host, "::1");
/// assert!(parse_seed("127.0.0.1").is_err());
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
///
/// # Errors
/// [`Error::BadUrl`] for anything else (Unix sockets and TLS are not routed).
pub fn parse_seed(seed: &str) -> Result<Address> {
    let rest = seed.strip_prefix("redis://").unwrap_or(seed);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let hostport = rest.split('/').next().unwrap_or(rest);
    let hostport = hostport.replace(['[', ']'], "");
    Address::parse(&hostport).map_err(|e| Error::BadUrl {
        url: redact(seed),
        reason: e.to_string(),
    })
}

/// A standalone connection that reconnects on the next request after a connection error
/// (refused, reset, timed out). It never resends a request on its own: a pick whose reply
/// was lost may or may not have been counted, and the caller decides.
///
/// Connects lazily: [`new`](Self::new) only checks the URL; [`ensure_connected`]
/// (Self::ensure_connected) connects now.
pub struct Reconnecting {
    client: Client,
    shown: String,
    timeouts: Timeouts,
    con: Option<Connection>,
    last_error: Option<Error>,
}

impl std::fmt::Debug for Reconnecting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconnecting")
            .field("url", &self.shown)
            .field("timeouts", &self.timeouts)
            .field("connected", &self.con.is_some())
            .finish()
    }
}

impl Reconnecting {
    /// A reconnecting connection to `url` (`redis://[:password@]host:port[/db]`, or
    /// `host:port`).
    ///
    /// # Errors
    /// [`Error::BadUrl`].
    pub fn new(url: &str, timeouts: Timeouts) -> Result<Self> {
        Ok(Reconnecting {
            client: client(url)?,
            shown: redact(url),
            timeouts,
            con: None,
            last_error: None,
        })
    }

    /// The URL, password redacted.
    pub fn url(&self) -> &str {
        &self.shown
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
            self.con = Some(open(&self.client, self.timeouts)?);
        }
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

    fn with<T>(&mut self, f: impl FnOnce(&mut Connection) -> RedisResult<T>) -> RedisResult<T> {
        let start = Instant::now();
        let fresh = self.con.is_none();
        if fresh {
            match open(&self.client, self.timeouts) {
                Ok(con) => self.con = Some(con),
                Err(e) => {
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
        }
        let Some(con) = self.con.as_mut() else {
            unreachable!("opened above")
        };
        // A call that had to connect waits no longer in all than the larger bound.
        let budget = self.timeouts.io.max(self.timeouts.connect);
        if fresh {
            set_io_timeout(
                con,
                budget.saturating_sub(start.elapsed()).min(self.timeouts.io),
            )?;
        }
        let result = f(con);
        let broken = match &result {
            Err(err) => is_broken(err) || !con.is_open(),
            Ok(_) => !con.is_open(),
        };
        if broken {
            self.con = None;
        } else if fresh {
            set_io_timeout(con, self.timeouts.io)?;
        }
        result
    }
}

impl ConnectionLike for Reconnecting {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.with(|con| con.req_packed_command(cmd))
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.with(|con| pipeline(con, cmd, offset, count))
    }

    fn get_db(&self) -> i64 {
        self.client.get_connection_info().redis_settings().db()
    }

    fn check_connection(&mut self) -> bool {
        self.with(|con| Ok(con.check_connection())).unwrap_or(false)
    }

    fn is_open(&self) -> bool {
        self.con.as_ref().is_some_and(Connection::is_open)
    }
}

/// A pipeline on `con`: its replies. The `redis` crate's own pipeline read waits for
/// every reply even after one timed out, each wait up to the read timeout, so a stalled
/// server cost one timeout per command (a 512-pick pipeline, 512 timeouts). This stops
/// at the first transport error instead; the caller then drops the connection, so late
/// replies cannot be taken for the answers of later commands. Server error replies are
/// values, as in the crate. Transactions (`offset > 0`) keep the crate's reading.
pub(crate) fn pipeline(
    con: &mut Connection,
    cmd: &[u8],
    offset: usize,
    count: usize,
) -> RedisResult<Vec<Value>> {
    if offset > 0 {
        return con.req_packed_commands(cmd, offset, count);
    }
    con.send_packed_command(cmd)?;
    let mut replies = Vec::with_capacity(count);
    while replies.len() < count {
        match con.recv_response()? {
            // RESP3 push data between replies is not a reply.
            Value::Push { .. } => {}
            reply => replies.push(reply),
        }
    }
    Ok(replies)
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
        let err = Reconnecting::new("redis://:hunt?er2@127.0.0.1:6379", Timeouts::default())
            .expect_err("not a URL the client takes");
        assert!(!err.to_string().contains("hunt?er2"), "{err}");
    }
}
