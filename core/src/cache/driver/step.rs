//! What an executor reports to a driver ([`Fault`], [`LoadResult`]) and what a driver
//! ends with ([`Failure`]).

use alloc::string::String;
use alloc::vec::Vec;

use crate::cache::check::truncate_message;
use crate::cache::error::InputError;
use crate::cache::limits::MAX_ERROR_CODE_LEN;
use crate::error::ErrorCode;
use crate::script::ReplyError;

/// How a Redis call failed, as far as a driver needs to know. The executor keeps the
/// error itself (its own type) and gives it back when the driver ends with
/// [`Failure::Io`].
///
/// ```
/// use keyroute::cache::Fault;
/// assert_ne!(Fault::Timeout, Fault::Connection);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fault {
    /// No reply within the call's deadline.
    Timeout,
    /// The connection could not be made, or broke: Redis may come back.
    Connection,
    /// Any other error (refused by the server, authentication, a bad reply).
    Other,
}

/// A loader's failure as the scripts cache it: a code of 1 to
/// [`MAX_ERROR_CODE_LEN`] bytes (empty becomes `BACKEND_ERROR`; longer is cut at a
/// character boundary) and a message cut by [`truncate_message`].
///
/// ```
/// use keyroute::cache::LoadFailure;
/// let f = LoadFailure::new("", &"x".repeat(5000));
/// assert_eq!(f.code, "BACKEND_ERROR");
/// assert_eq!(f.message.len(), 1024);
/// assert!(f.cached);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoadFailure {
    /// The loader's code.
    pub code: String,
    /// The loader's message.
    pub message: String,
    /// Whether the failure is cached for the negative TTL (false: the caller was
    /// interrupted, and says nothing of the backend; the next caller loads at once).
    pub cached: bool,
}

impl LoadFailure {
    /// A cached failure with `code` and `message`, both cut to their limits.
    ///
    /// ```
    /// let f = keyroute::cache::LoadFailure::new("E_CORE", "down");
    /// assert_eq!((f.code.as_str(), f.message.as_str()), ("E_CORE", "down"));
    /// ```
    pub fn new(code: &str, message: &str) -> Self {
        let mut end = code.len().min(MAX_ERROR_CODE_LEN);
        while !code.is_char_boundary(end) {
            end -= 1;
        }
        let code = if end == 0 {
            ErrorCode::BackendError.as_str()
        } else {
            &code[..end]
        };
        LoadFailure {
            code: code.into(),
            message: truncate_message(message).into(),
            cached: true,
        }
    }

    /// The same failure, not cached.
    ///
    /// ```
    /// assert!(!keyroute::cache::LoadFailure::new("E", "m").uncached().cached);
    /// ```
    pub fn uncached(mut self) -> Self {
        self.cached = false;
        self
    }
}

/// What became of a loader's run, as the executor reports it.
///
/// ```
/// use keyroute::cache::{LoadFailure, LoadResult};
/// let ok = LoadResult::Value(b"[]".to_vec());
/// let failed = LoadResult::Failed(LoadFailure::new("E_CORE", "down"));
/// assert_ne!(ok, failed);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LoadResult {
    /// The value it returned.
    Value(Vec<u8>),
    /// It reported a backend failure (or threw).
    Failed(LoadFailure),
    /// It returned something the executor cannot store (not bytes, say): the executor's
    /// own error, cached for the others as this code and message; the driver ends with
    /// [`Failure::Refused`] so the executor raises its error.
    Refused {
        /// The error's code.
        code: String,
        /// The error's message.
        message: String,
    },
    /// It panicked: the lease is released (the failure cached as `LOADER_PANIC`), and the
    /// driver ends with [`Failure::Panicked`] so the executor resumes the panic.
    Panicked,
}

/// Why a driver ended without a value.
///
/// ```
/// use keyroute::cache::Failure;
/// assert_eq!(Failure::Timeout.code().as_str(), "CACHE_TIMEOUT");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The deadline passed first (`CACHE_TIMEOUT`).
    Timeout,
    /// Redis failed: the executor's last reported error (see [`Fault`]).
    Io,
    /// The loader failed, here (`cached` false) or in another instance, cached (`cached`
    /// true): `BACKEND_ERROR` carrying the loader's code and message.
    Backend {
        /// The loader's code.
        code: Vec<u8>,
        /// The loader's message.
        message: Vec<u8>,
        /// Whether it came from the cache.
        cached: bool,
    },
    /// A reply of the wrong shape.
    Reply(ReplyError),
    /// The loaded value was refused (`VALUE_TOO_LARGE`); nothing was stored.
    Input(InputError),
    /// The executor refused the loader's value ([`LoadResult::Refused`]): its own error.
    Refused,
    /// The loader panicked ([`LoadResult::Panicked`]): resume the panic.
    Panicked,
    /// The session the read ran under is not live (`SESSION_EXPIRED`): nothing was read,
    /// leased or loaded ([`GetOrLoad::in_session`](super::GetOrLoad::in_session)).
    SessionExpired,
}

impl Failure {
    /// The code the caller sees (for [`Io`](Self::Io) and [`Refused`](Self::Refused)
    /// the executor's error carries its own; `INTERNAL` stands in here).
    ///
    /// ```
    /// use keyroute::cache::Failure;
    /// let f = Failure::Backend { code: b"E".to_vec(), message: b"m".to_vec(), cached: true };
    /// assert_eq!(f.code().as_str(), "BACKEND_ERROR");
    /// ```
    pub fn code(&self) -> ErrorCode {
        match self {
            Failure::Timeout => ErrorCode::CacheTimeout,
            Failure::Backend { .. } => ErrorCode::BackendError,
            Failure::Reply(e) => e.code(),
            Failure::Input(e) => e.code(),
            Failure::SessionExpired => ErrorCode::SessionExpired,
            Failure::Io | Failure::Refused | Failure::Panicked => ErrorCode::Internal,
        }
    }
}
