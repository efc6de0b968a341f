//! Wake-ups: a waiter subscribes to its client's channel (`SUBSCRIBE` standalone,
//! `SSUBSCRIBE` on Cluster, on the node owning the slot) *before* re-checking the entry,
//! then sleeps until a message names its entry or the poll timer fires. Pub/sub is
//! at-most-once, so the poll timer is the safety net; a subscription that cannot be made
//! (node down, slot moving) just leaves the waiter polling.
//!
//! Subscriber connections are pooled per node and reused (one per waiting key at a time:
//! the in-process single flight makes that one per key per process). They are made here
//! (the `redis` crate's sync pub/sub cannot wait with a deadline), with the URL's
//! transport: TCP, TLS (its certificates and checks) or its Unix socket.

use std::collections::HashMap;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use keyroute::slot::Address;

use super::resp::Frame;
use super::resp_conn::{Link, RespConn};
use crate::conn::{tls, Endpoint, Place};

/// How subscriber connections reach a node.
#[derive(Debug)]
enum Transport {
    Tcp,
    Tls(Arc<rustls::ClientConfig>),
    /// The URL's socket (the one node of a standalone server).
    #[cfg(unix)]
    Unix(std::path::PathBuf),
    /// TLS settings rustls refused (the `redis` crate would have refused them first):
    /// waiters poll.
    Poll,
}

/// Idle subscriber connections kept per node.
const MAX_IDLE_PER_NODE: usize = 16;
/// How long a subscribe or unsubscribe waits for its confirmation.
const CONFIRM: Duration = Duration::from_millis(500);

#[derive(Debug)]
pub(crate) struct Wakeups {
    /// The standalone server, if not a cluster (the master a Sentinel named last).
    standalone: Mutex<Option<Address>>,
    /// `AUTH` arguments (user, password), the URL's (the first seed's on a cluster).
    auth: Option<(Option<String>, String)>,
    transport: Transport,
    connect_timeout: Duration,
    idle: Mutex<HashMap<Address, Vec<RespConn>>>,
}

impl Wakeups {
    /// Wake-ups for `endpoint`: a standalone server at `standalone`, or a cluster (none).
    pub(crate) fn new(
        endpoint: &Endpoint,
        standalone: Option<Address>,
        connect_timeout: Duration,
    ) -> Wakeups {
        let mut standalone = standalone;
        let transport = match (endpoint.place(), endpoint.tls_config()) {
            // A Unix socket has no address: its path names the one node in the pool.
            #[cfg(unix)]
            (Place::Unix(path), _) => {
                standalone = Some(Address::new(path.display().to_string(), 0));
                Transport::Unix(path.clone())
            }
            #[cfg(not(unix))]
            (Place::Unix(_), _) => Transport::Poll,
            (_, None) => Transport::Tcp,
            (_, Some(Ok(config))) => Transport::Tls(Arc::new(config)),
            (_, Some(Err(_))) => Transport::Poll,
        };
        Wakeups {
            standalone: Mutex::new(standalone),
            auth: endpoint
                .password()
                .map(|p| (endpoint.user().map(str::to_string), p.to_string())),
            transport,
            connect_timeout,
            idle: Mutex::new(HashMap::new()),
        }
    }

    pub(crate) fn standalone_addr(&self) -> Option<Address> {
        self.standalone
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The standalone server is now at `addr` (a Sentinel named a new master; a Unix
    /// socket has no address, and keeps its own).
    pub(crate) fn set_standalone_addr(&self, addr: Option<Address>) {
        let Some(addr) = addr else { return };
        let mut current = self.standalone.lock().unwrap_or_else(|e| e.into_inner());
        if current.as_ref().is_some_and(|c| *c != addr) {
            *current = Some(addr);
        }
    }

    /// A new connection to `addr` (TCP, TLS) or the URL's socket, logged in.
    fn connect(&self, addr: &Address) -> Option<Link> {
        let tcp = || -> Option<TcpStream> {
            let sock = (addr.host.as_str(), addr.port)
                .to_socket_addrs()
                .ok()?
                .next()?;
            let stream = TcpStream::connect_timeout(&sock, self.connect_timeout).ok()?;
            let _ = stream.set_nodelay(true);
            Some(stream)
        };
        Some(match &self.transport {
            Transport::Tcp => Link::Tcp(tcp()?),
            Transport::Tls(config) => Link::Tls(Box::new(
                tls::handshake(config, &addr.host, tcp()?, self.connect_timeout).ok()?,
            )),
            #[cfg(unix)]
            Transport::Unix(path) => {
                Link::Unix(std::os::unix::net::UnixStream::connect(path).ok()?)
            }
            Transport::Poll => return None,
        })
    }

    fn open(&self, addr: &Address) -> Option<RespConn> {
        let stream = self.connect(addr)?;
        stream.set_write_timeout(Some(CONFIRM)).ok()?;
        let mut conn = RespConn::new(stream);
        if let Some((user, password)) = &self.auth {
            let mut args: Vec<&[u8]> = vec![b"AUTH"];
            if let Some(user) = user {
                args.push(user.as_bytes());
            }
            args.push(password.as_bytes());
            conn.send(&args).ok()?;
            match conn.read(Instant::now() + CONFIRM).ok()? {
                Some(Frame::Simple(_)) => {}
                _ => return None,
            }
        }
        Some(conn)
    }

    /// Opens one subscriber connection to `addr` ahead of the first wait.
    pub(crate) fn preopen(&self, addr: &Address) {
        if let Some(conn) = self.open(addr) {
            self.put(addr, conn);
        }
    }

    fn take(&self, addr: &Address) -> Option<RespConn> {
        let pooled = self
            .idle
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(addr)
            .and_then(Vec::pop);
        pooled.or_else(|| self.open(addr))
    }

    fn put(&self, addr: &Address, conn: RespConn) {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let list = idle.entry(addr.clone()).or_default();
        if list.len() < MAX_IDLE_PER_NODE {
            list.push(conn);
        }
    }

    /// Subscribes to `channel` on `addr` and waits for the confirmation (at most until
    /// `until`). The returned subscription polls only if that failed.
    pub(crate) fn subscribe<'a>(
        &'a self,
        addr: Option<Address>,
        channel: &[u8],
        shard: bool,
        until: Instant,
    ) -> Subscription<'a> {
        let mut sub = Subscription {
            wakeups: self,
            addr: addr.clone(),
            conn: None,
            channel: channel.to_vec(),
            shard,
        };
        let Some(addr) = addr else { return sub };
        let Some(mut conn) = self.take(&addr) else {
            return sub;
        };
        let verb: &[u8] = if shard { b"SSUBSCRIBE" } else { b"SUBSCRIBE" };
        if conn.send(&[verb, channel]).is_err() {
            return sub;
        }
        let confirm = until.min(Instant::now() + CONFIRM);
        let want: &[u8] = if shard { b"ssubscribe" } else { b"subscribe" };
        loop {
            match conn.read(confirm) {
                Ok(Some(frame)) => match frame.strings() {
                    Some(s) if s.len() == 3 && s[0] == want && s[1] == channel => {
                        sub.conn = Some(conn);
                        return sub;
                    }
                    // A message left from earlier: skip it.
                    Some(_) => {}
                    // An error (MOVED while the slot moves, ...): poll instead.
                    None => return sub,
                },
                _ => return sub,
            }
        }
    }
}

/// A subscription to a client's wake-up channel (see the module docs); unsubscribes and
/// returns its connection to the pool when dropped.
#[derive(Debug)]
pub(crate) struct Subscription<'a> {
    wakeups: &'a Wakeups,
    addr: Option<Address>,
    conn: Option<RespConn>,
    channel: Vec<u8>,
    shard: bool,
}

impl Subscription<'_> {
    /// Sleeps until a message names `key` (true) or until `until` (false).
    pub(crate) fn wait(&mut self, key: &[u8], until: Instant) -> bool {
        let Some(conn) = self.conn.as_mut() else {
            std::thread::sleep(until.saturating_duration_since(Instant::now()));
            return false;
        };
        loop {
            match conn.read(until) {
                Ok(Some(frame)) => match frame.strings() {
                    Some(s) if s.len() == 3 && (s[0] == b"message" || s[0] == b"smessage") => {
                        if s[1] == self.channel.as_slice() && s[2] == key {
                            return true;
                        }
                    }
                    // The slot moved away (Redis unsubscribes shard channels): poll.
                    Some(s) if s.first() == Some(&&b"sunsubscribe"[..]) => {
                        self.conn = None;
                        return false;
                    }
                    Some(_) => {}
                    None => {
                        self.conn = None;
                        return false;
                    }
                },
                Ok(None) => return false,
                Err(_) => {
                    self.conn = None;
                    return false;
                }
            }
        }
    }
}

impl Drop for Subscription<'_> {
    /// Unsubscribes without waiting for the confirmation (a hung server must not hold the
    /// caller) and pools the connection: its next user skips whatever frames come before
    /// its own confirmation, and ignores messages of other channels.
    fn drop(&mut self) {
        let (Some(mut conn), Some(addr)) = (self.conn.take(), self.addr.take()) else {
            return;
        };
        let verb: &[u8] = if self.shard {
            b"SUNSUBSCRIBE"
        } else {
            b"UNSUBSCRIBE"
        };
        if conn.send(&[verb, &self.channel]).is_ok() {
            self.wakeups.put(&addr, conn);
        }
    }
}
