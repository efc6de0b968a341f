//! [`LoadError`]: what a loader returns when the backend fails.

use std::fmt;

use keyroute::cache::{truncate_message, MAX_ERROR_CODE_LEN};

/// A backend failure, as a loader reports it: a short code and a message. It is cached
/// for the negative TTL, and every caller waiting for the load gets it as
/// [`Error::Backend`](crate::Error::Backend) (code `BACKEND_ERROR`).
///
/// ```
/// use keyroute_redis::cache::LoadError;
/// let err = LoadError::new("E_TIMEOUT", "core banking did not answer in 30 s");
/// assert_eq!(err.code(), "E_TIMEOUT");
/// assert_eq!(LoadError::new("", "x").code(), "BACKEND_ERROR");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LoadError {
    // Boxed: a LoadError travels in Err variants, kept small (clippy::result_large_err).
    code: Box<str>,
    message: Box<str>,
    cached: bool,
}

impl LoadError {
    /// A failure with `code` (1 to 64 bytes; empty becomes `BACKEND_ERROR`, longer is cut)
    /// and `message` (cut to 1024 bytes).
    ///
    /// ```
    /// let err = keyroute_redis::cache::LoadError::new("E_CORE", "x".repeat(5000));
    /// assert_eq!(err.message().len(), 1024);
    /// ```
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        let mut code = code.into();
        if code.is_empty() {
            code = "BACKEND_ERROR".into();
        }
        if code.len() > MAX_ERROR_CODE_LEN {
            let mut end = MAX_ERROR_CODE_LEN;
            while !code.is_char_boundary(end) {
                end -= 1;
            }
            code.truncate(end);
        }
        let message = truncate_message(&message.into()).to_string();
        LoadError {
            code: code.into_boxed_str(),
            message: message.into_boxed_str(),
            cached: true,
        }
    }

    /// A failure that says nothing of the backend (the caller was interrupted: a Python
    /// `KeyboardInterrupt` or `SystemExit`): not cached, the lease is released at once and
    /// the next caller, here or in another instance, loads.
    ///
    /// ```
    /// use keyroute_redis::cache::LoadError;
    /// let err = LoadError::new("E1", "m").uncached();
    /// assert!(!err.is_cached());
    /// assert!(LoadError::new("E1", "m").is_cached());
    /// ```
    pub fn uncached(mut self) -> Self {
        self.cached = false;
        self
    }

    /// Whether the failure is cached for the negative TTL (all but
    /// [`uncached`](Self::uncached) ones).
    ///
    /// ```
    /// assert!(keyroute_redis::cache::LoadError::new("E1", "m").is_cached());
    /// ```
    pub fn is_cached(&self) -> bool {
        self.cached
    }

    /// A failure from any error: code `BACKEND_ERROR`, its text as the message.
    ///
    /// ```
    /// use keyroute_redis::cache::LoadError;
    /// let io = std::io::Error::other("reset by peer");
    /// assert_eq!(LoadError::from_error(&io).message(), "reset by peer");
    /// ```
    pub fn from_error(err: &dyn std::error::Error) -> Self {
        LoadError::new("BACKEND_ERROR", err.to_string())
    }

    /// The code.
    ///
    /// ```
    /// assert_eq!(keyroute_redis::cache::LoadError::new("E1", "m").code(), "E1");
    /// ```
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The message.
    ///
    /// ```
    /// assert_eq!(keyroute_redis::cache::LoadError::new("E1", "m").message(), "m");
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for LoadError {}
