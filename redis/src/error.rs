//! [`Error`]: the one error type of this crate, with a stable [`code`](Error::code).
//!
//! An empty pool is not an error: picks return `Ok(None)`.

use std::fmt;
use std::time::Duration;

use keyroute::cache::{InputError, ReplyError};
use keyroute::error::ErrorCode;
use keyroute::ring::RingError;
use keyroute::select::affinity_script::AffinityError;
use keyroute::select::{KeyError, PoolError};
use keyroute::slot::{AddressError, MapError, PlanError};
use redis::{ErrorKind, RedisError, ServerErrorKind};

/// What went wrong, with what was being done at the time. Messages never contain a
/// password: URLs are shown with their credentials replaced by `***`.
///
/// ```
/// use keyroute_redis::Error;
/// use keyroute::select::KeyError;
/// let err = Error::from(KeyError::EmptyPoolKey);
/// assert_eq!(err.code().as_str(), "BAD_POOL_KEY");
/// assert!(err.to_string().contains("pool key"));
/// assert!(!err.is_timeout());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// A URL or address that cannot be used; nothing was sent.
    BadUrl {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The server refused the connection, or cannot be reached.
    Connect {
        /// What was being done (and where).
        context: String,
        /// What the system said.
        detail: String,
    },
    /// The server refused the credentials.
    Auth {
        /// What was being done (and where).
        context: String,
        /// What the server said.
        detail: String,
    },
    /// The TLS handshake failed: the server's certificate is not trusted (or names
    /// another host), a client certificate is missing or refused, or the port is plain.
    Tls {
        /// What was being done (and where).
        context: String,
        /// What TLS said.
        detail: String,
    },
    /// Connecting, or waiting for a reply, took longer than allowed.
    Timeout {
        /// What was being done (and where).
        context: String,
        /// The bound that was reached, when known.
        after: Option<Duration>,
    },
    /// An open connection broke during the call: the command may or may not have run.
    ConnectionLost {
        /// What was being done.
        context: String,
        /// What the system said.
        detail: String,
    },
    /// A key holds another type; the script changed nothing.
    WrongType {
        /// What was being done.
        context: String,
        /// The server's message.
        detail: String,
    },
    /// The server answered another error.
    Server {
        /// What was being done.
        context: String,
        /// The error code (`ERR`, `NOSCRIPT`, `READONLY`, ...).
        code: String,
        /// The rest of the message.
        detail: String,
    },
    /// The reply does not have the shape the command gives, or the peer does not speak
    /// the Redis protocol.
    Protocol {
        /// What was being done.
        context: String,
        /// What was wrong with the reply.
        detail: String,
    },
    /// A pool key that cannot be used; nothing was sent.
    Key(KeyError),
    /// A pool argument that was refused; nothing was sent.
    Pool(PoolError),
    /// An affinity take that was refused; nothing was sent.
    Affinity(AffinityError),
    /// A topology that does not fit the slot model.
    Map(MapError),
    /// A resharding plan that cannot be made or applied.
    Plan(PlanError),
    /// A ring change that was refused.
    Ring(RingError),
    /// An address that is not `host:port`.
    Address(AddressError),
    /// No cluster node serves the slot, even after a refresh.
    NoOwner {
        /// The slot.
        slot: u16,
    },
    /// The command was tried as often as allowed.
    TooManyAttempts {
        /// The slot routed on.
        slot: u16,
        /// The last error seen.
        last: String,
    },
    /// No node of the seed list or of the current map answered with a topology.
    NoReachableNode(String),
    /// Another operation must finish first.
    Busy(&'static str),
    /// A node name that is not known.
    UnknownNode(String),
    /// A TTL outside 1 ms ..= 2^53 ms; nothing was sent.
    BadTtl(Duration),
    /// A smart-cache argument that was refused; nothing was sent.
    Input(InputError),
    /// A smart-cache script reply of an unexpected shape.
    Reply(ReplyError),
    /// The deadline of a smart-cache call passed before a value was served.
    CacheTimeout {
        /// What was being waited for.
        context: String,
        /// The time the call was given.
        after: Duration,
    },
    /// The loader failed, or its failure is still cached (for the negative TTL).
    Backend {
        /// The loader's error code.
        code: String,
        /// The loader's message.
        message: String,
        /// Whether the error came from the cache (another caller's load), not from this
        /// call's loader.
        cached: bool,
    },
    /// The session a call ran under is not live (idle past its TTL, past its maximum age,
    /// destroyed, or never made): nothing was read or written. Log in again.
    SessionExpired,
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Classifies an error of the `redis` crate met while doing `context` (on `addr`,
    /// when known), with `timeout` the bound that applied.
    pub(crate) fn from_redis(context: &str, err: &RedisError, timeout: Option<Duration>) -> Self {
        let context = context.to_string();
        let detail = || describe(err);
        if err.is_timeout() {
            return Error::Timeout {
                context,
                after: timeout.or_else(|| deadline_of(err)),
            };
        }
        if let Some(code) = err.code() {
            let code = code.to_string();
            return match code.as_str() {
                "WRONGTYPE" => Error::WrongType {
                    context,
                    detail: err.detail().unwrap_or("").to_string(),
                },
                "WRONGPASS" | "NOAUTH" | "NOPERM" => Error::Auth {
                    context,
                    detail: format!("{code} {}", err.detail().unwrap_or("")),
                },
                _ => Error::Server {
                    context,
                    code,
                    detail: err.detail().unwrap_or("").to_string(),
                },
            };
        }
        match err.kind() {
            ErrorKind::AuthenticationFailed => Error::Auth {
                context,
                detail: detail(),
            },
            ErrorKind::InvalidClientConfig => Error::BadUrl {
                url: context,
                reason: detail(),
            },
            ErrorKind::Parse | ErrorKind::UnexpectedReturnType | ErrorKind::RESP3NotSupported => {
                Error::Protocol {
                    context,
                    detail: format!(
                        "{}; is the peer a Redis server? (non-Redis endpoints answer like this)",
                        detail()
                    ),
                }
            }
            _ if err.is_connection_refusal() => Error::Connect {
                context,
                detail: detail(),
            },
            _ if err.is_io_error() || err.is_connection_dropped() => Error::ConnectionLost {
                context,
                detail: detail(),
            },
            _ => Error::Server {
                context,
                code: String::new(),
                detail: detail(),
            },
        }
    }

    /// A reply of an unexpected shape.
    pub(crate) fn protocol(context: impl Into<String>, detail: impl Into<String>) -> Self {
        Error::Protocol {
            context: context.into(),
            detail: detail.into(),
        }
    }

    /// The stable code of the error, the same in every binding.
    ///
    /// ```
    /// use keyroute_redis::Error;
    /// let err = Error::NoOwner { slot: 7 };
    /// assert_eq!(err.code().as_str(), "CLUSTER_NO_OWNER");
    /// ```
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::BadUrl { .. } => ErrorCode::RedisBadUrl,
            Error::Connect { .. } => ErrorCode::RedisConnect,
            Error::Auth { .. } => ErrorCode::RedisAuth,
            Error::Tls { .. } => ErrorCode::RedisTls,
            Error::Server { code, .. } if code == "READONLY" => ErrorCode::RedisReadonly,
            Error::Timeout { .. } => ErrorCode::RedisTimeout,
            Error::ConnectionLost { .. } => ErrorCode::RedisConnectionLost,
            Error::WrongType { .. } => ErrorCode::RedisWrongType,
            Error::Server { .. } => ErrorCode::RedisServer,
            Error::Protocol { .. } => ErrorCode::RedisProtocol,
            Error::Key(e) => e.code(),
            Error::Pool(e) => e.code(),
            Error::Affinity(e) => e.code(),
            Error::Map(e) => e.code(),
            Error::Plan(e) => e.code(),
            Error::Ring(e) => e.code(),
            Error::Address(e) => e.code(),
            Error::NoOwner { .. } => ErrorCode::ClusterNoOwner,
            Error::TooManyAttempts { .. } => ErrorCode::ClusterRetriesExhausted,
            Error::NoReachableNode(_) => ErrorCode::ClusterUnreachable,
            Error::Busy(_) => ErrorCode::Busy,
            Error::UnknownNode(_) => ErrorCode::UnknownNode,
            Error::BadTtl(_) => ErrorCode::BadTtl,
            Error::Input(e) => e.code(),
            Error::Reply(e) => e.code(),
            Error::CacheTimeout { .. } => ErrorCode::CacheTimeout,
            Error::Backend { .. } => ErrorCode::BackendError,
            Error::SessionExpired => ErrorCode::SessionExpired,
        }
    }

    /// Whether a connect, read or write timed out.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    /// Whether the connection is unusable (refused, reset, closed, timed out): the next
    /// call reconnects.
    pub fn is_connection_error(&self) -> bool {
        matches!(
            self,
            Error::Connect { .. } | Error::Timeout { .. } | Error::ConnectionLost { .. }
        )
    }
}

/// The `redis` crate's description of an error, without repeating its kind.
fn describe(err: &RedisError) -> String {
    let text = err.to_string();
    // An I/O error that is a timeout reads "Resource temporarily unavailable (os error
    // 11)"; those are classified as timeouts before this is reached.
    text.trim().to_string()
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadUrl { url, reason } => {
                write!(f, "cannot use Redis URL {url}: {reason}")
            }
            Error::Connect { context, detail } => write!(f, "redis: {context}: {detail}"),
            Error::Auth { context, detail } => {
                write!(f, "redis: {context}: the server refused the credentials: {detail}")
            }
            Error::Tls { context, detail } => write!(
                f,
                "redis: {context}: the TLS handshake failed ({detail}); check ssl_ca_certs (the CA that signed the server's certificate), ssl_certfile/ssl_keyfile if the server asks for a client certificate, and that the port speaks TLS"
            ),
            Error::Timeout { context, after } => {
                write!(f, "redis: {context}: timed out")?;
                if let Some(after) = after {
                    write!(f, " after {} ms", after.as_millis())?;
                }
                f.write_str("; check that the server is up and not busy, or raise the timeout")
            }
            Error::ConnectionLost { context, detail } => write!(
                f,
                "redis: {context}: the connection broke ({detail}); the command may or may not have run, and the next call reconnects"
            ),
            Error::WrongType { context, detail } => {
                write!(f, "redis: {context}: WRONGTYPE {detail}")
            }
            Error::Server {
                context,
                code,
                detail,
            } => {
                if code.is_empty() {
                    write!(f, "redis: {context}: {detail}")
                } else {
                    write!(f, "redis: {context}: {code} {detail}")
                }
            }
            Error::Protocol { context, detail } => {
                write!(f, "redis: {context}: unexpected reply: {detail}")
            }
            Error::Key(e) => e.fmt(f),
            Error::Pool(e) => e.fmt(f),
            Error::Affinity(e) => e.fmt(f),
            Error::Map(e) => write!(f, "slot map: {e}"),
            Error::Plan(e) => write!(f, "resharding plan: {e}"),
            Error::Ring(e) => e.fmt(f),
            Error::Address(e) => e.fmt(f),
            Error::NoOwner { slot } => write!(f, "no cluster node serves slot {slot}"),
            Error::TooManyAttempts { slot, last } => {
                write!(f, "slot {slot}: gave up after retries; last error: {last}")
            }
            Error::NoReachableNode(s) => write!(f, "no cluster node reachable: {s}"),
            Error::Busy(s) => write!(f, "busy: {s}"),
            Error::UnknownNode(s) => write!(f, "unknown node {s:?}"),
            Error::BadTtl(d) => write!(
                f,
                "a lease TTL must be between 1 ms and 2^53 ms, got {} ms",
                d.as_millis()
            ),
            Error::Input(e) => e.fmt(f),
            Error::Reply(e) => write!(f, "redis: {e}"),
            Error::CacheTimeout { context, after } => write!(
                f,
                "{context}: no value within {} ms (another instance may still be loading it)",
                after.as_millis()
            ),
            Error::Backend {
                code,
                message,
                cached,
            } => {
                write!(f, "backend error {code}: {message}")?;
                if *cached {
                    f.write_str(" (cached from a recent load; retried after the negative TTL)")?;
                }
                Ok(())
            }
            Error::SessionExpired => f.write_str(ErrorCode::SessionExpired.summary()),
        }
    }
}

/// The message carries every detail, so no error is chained: printing the chain never
/// repeats a line.
impl std::error::Error for Error {}

macro_rules! from_core {
    ($($ty:ident => $variant:ident),*) => {$(
        impl From<$ty> for Error {
            fn from(err: $ty) -> Self {
                Error::$variant(err)
            }
        }
    )*};
}

from_core!(KeyError => Key, PoolError => Pool, AffinityError => Affinity, MapError => Map, PlanError => Plan, RingError => Ring, AddressError => Address, InputError => Input, ReplyError => Reply);

/// Whether an error of the `redis` crate leaves the connection unusable (refused, reset,
/// closed, timed out, I/O): the one such check of this crate.
/// The words before the deadline (in ms) in the error of a call that ran past it.
pub(crate) const DEADLINE_OF: &str = "the call's deadline of ";

/// The deadline a timed-out call had, read back from its error (the `redis` crate's error
/// type carries only text).
fn deadline_of(err: &RedisError) -> Option<Duration> {
    let text = err.to_string();
    let rest = text.split_once(DEADLINE_OF)?.1;
    let ms = rest.split_once(" ms")?.0.parse().ok()?;
    Some(Duration::from_millis(ms))
}

pub(crate) fn is_broken(err: &RedisError) -> bool {
    err.is_io_error()
        || err.is_timeout()
        || err.is_connection_dropped()
        || err.is_connection_refusal()
        || err.is_unrecoverable_error()
}

/// The kind of a server error reply, if it is one.
pub(crate) fn server_kind(err: &RedisError) -> Option<ServerErrorKind> {
    match err.kind() {
        ErrorKind::Server(kind) => Some(kind),
        _ => None,
    }
}
