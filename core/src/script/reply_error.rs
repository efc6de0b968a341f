//! [`ReplyError`]: a script reply that does not have the shape the script gives.

use core::fmt;

use crate::error::ErrorCode;

/// A script reply that does not have the shape the script gives (another script ran under
/// that SHA1, or the peer is not Redis). Code `REDIS_PROTOCOL`.
///
/// ```
/// use keyroute::cache::{GetReply, ReplyError, Value};
/// let err = GetReply::decode(Value::Int(7)).unwrap_err();
/// assert_eq!(err.code().as_str(), "REDIS_PROTOCOL");
/// assert!(err.to_string().contains("sc-get"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReplyError {
    /// The script whose reply it was.
    pub script: &'static str,
    /// What was expected.
    pub expected: &'static str,
}

impl ReplyError {
    pub(crate) const fn new(script: &'static str, expected: &'static str) -> Self {
        ReplyError { script, expected }
    }

    /// The stable code: `REDIS_PROTOCOL`.
    ///
    /// ```
    /// # use keyroute::cache::{FillReply, Value};
    /// assert_eq!(FillReply::decode(Value::Nil).unwrap_err().code().as_str(), "REDIS_PROTOCOL");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        ErrorCode::RedisProtocol
    }
}

impl fmt::Display for ReplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unexpected reply to {}: expected {}",
            self.script, self.expected
        )
    }
}

impl core::error::Error for ReplyError {}
