//! The error type of the [`redis`](super) module.
//!
//! An empty pool is not an error: picks return `Ok(None)`.

#[allow(unused_imports)]
use std::prelude::rust_2021::*;

use std::fmt;

use crate::select::{KeyError, PoolError};

/// What went wrong talking to Redis, with what we were doing at the time.
///
/// ```
/// use keyroute::redis::Error;
/// use keyroute::select::KeyError;
/// let err = Error::from(KeyError::EmptyPoolKey);
/// assert!(err.to_string().contains("pool key"));
/// assert!(!err.is_timeout());
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The `redis` crate reported an error (connection, timeout, protocol, or an error
    /// reply from the server) while doing `context`.
    Redis {
        /// What the client was doing, e.g. `"pick from {proxies}:pool"`.
        context: String,
        /// The error from the `redis` crate.
        source: ::redis::RedisError,
    },
    /// The pool key cannot be used (see [`SideKey`](crate::select::SideKey)).
    Key(KeyError),
    /// An argument was refused before anything was sent (e.g. an initial count above
    /// [`MAX_EXACT_COUNT`](crate::select::MAX_EXACT_COUNT)).
    Pool(PoolError),
    /// The server answered with a reply of an unexpected shape.
    UnexpectedReply {
        /// What the client was doing.
        context: String,
        /// The reply, as the `redis` crate prints it.
        reply: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Wraps an error of the `redis` crate with what we were doing.
    pub fn redis(context: impl Into<String>, source: ::redis::RedisError) -> Self {
        Error::Redis {
            context: context.into(),
            source,
        }
    }

    /// The error of the `redis` crate, if this is one.
    pub fn as_redis(&self) -> Option<&::redis::RedisError> {
        match self {
            Error::Redis { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Whether a connect, read or write timed out.
    pub fn is_timeout(&self) -> bool {
        self.as_redis().is_some_and(::redis::RedisError::is_timeout)
    }

    /// Whether the connection is unusable (refused, reset, closed, timed out, I/O error):
    /// reconnect before the next request.
    pub fn is_connection_error(&self) -> bool {
        self.as_redis().is_some_and(|err| {
            err.is_io_error()
                || err.is_timeout()
                || err.is_connection_dropped()
                || err.is_connection_refusal()
                || err.is_unrecoverable_error()
        })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Redis { context, source } => write!(f, "redis: {context}: {source}"),
            Error::Key(err) => write!(f, "{err}"),
            Error::Pool(err) => write!(f, "{err}"),
            Error::UnexpectedReply { context, reply } => {
                write!(f, "redis: {context}: unexpected reply {reply}")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Redis { source, .. } => Some(source),
            Error::Key(err) => Some(err),
            Error::Pool(err) => Some(err),
            Error::UnexpectedReply { .. } => None,
        }
    }
}

impl From<KeyError> for Error {
    fn from(err: KeyError) -> Self {
        Error::Key(err)
    }
}

impl From<PoolError> for Error {
    fn from(err: PoolError) -> Self {
        Error::Pool(err)
    }
}
