//! [`HeaderError`]: a header frame that cannot be read or written.

use core::fmt;

use crate::error::ErrorCode;

/// Why a header was refused (the service answers transport error 4, bad header; a header
/// whose only fault is its system gets 12, unknown system).
///
/// ```
/// use keyroute::frame::HeaderError;
/// assert_eq!(HeaderError::TooShort(3).to_string(), "header of 3 bytes is shorter than its 29 fixed bytes plus the session id");
/// assert_eq!(HeaderError::BadVersion(9).code().as_str(), "OUT_OF_RANGE");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HeaderError {
    /// Fewer bytes than the fixed part plus the session id length (shown: the length).
    TooShort(usize),
    /// More than [`MAX_HEADER_LEN`](super::MAX_HEADER_LEN) bytes (shown: the length).
    TooLong(usize),
    /// A protocol version other than 1.
    BadVersion(u8),
    /// A system other than 0.
    BadSystem(u8),
    /// A session id over 255 bytes (writing).
    SessionIdTooLong(usize),
    /// The output buffer is shorter than the header (writing; shown: its length).
    BufferTooSmall(usize),
}

impl HeaderError {
    /// The stable code (the service answers every one with transport error 4,
    /// `BAD_HEADER`, except a foreign system in an otherwise good header: 12,
    /// `UNKNOWN_SYSTEM`): `OUT_OF_RANGE` for a length, version or system the protocol does
    /// not take, `TOO_LARGE` for a header or session id over its limit,
    /// `BUFFER_TOO_SMALL` when writing into too short a buffer.
    ///
    /// ```
    /// use keyroute::frame::HeaderError;
    /// assert_eq!(HeaderError::SessionIdTooLong(300).code().as_str(), "TOO_LARGE");
    /// assert_eq!(HeaderError::TooShort(3).code().as_str(), "OUT_OF_RANGE");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            HeaderError::SessionIdTooLong(_) | HeaderError::TooLong(_) => ErrorCode::TooLarge,
            HeaderError::BufferTooSmall(_) => ErrorCode::BufferTooSmall,
            HeaderError::TooShort(_) | HeaderError::BadVersion(_) | HeaderError::BadSystem(_) => {
                ErrorCode::OutOfRange
            }
        }
    }
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::TooShort(n) => write!(
                f,
                "header of {n} bytes is shorter than its 29 fixed bytes plus the session id"
            ),
            HeaderError::TooLong(n) => write!(
                f,
                "header of {n} bytes is longer than {}",
                super::MAX_HEADER_LEN
            ),
            HeaderError::BadVersion(v) => write!(f, "protocol version {v} (this service speaks 1)"),
            HeaderError::BadSystem(s) => write!(f, "system {s} (this service is system 0)"),
            HeaderError::SessionIdTooLong(n) => {
                write!(f, "session id of {n} bytes (at most 255)")
            }
            HeaderError::BufferTooSmall(n) => write!(f, "output buffer of {n} bytes is too small"),
        }
    }
}

impl core::error::Error for HeaderError {}
