//! [`InputError`]: a cache argument refused before anything is sent.

use core::fmt;

use crate::error::ErrorCode;

/// A cache, session or device argument that keyroute refuses; nothing was sent or
/// stored. Every language refuses the same inputs with the same [code](Self::code).
///
/// ```
/// use keyroute::cache::{check_kind, InputError};
/// assert_eq!(check_kind(b"a{b"), Err(InputError::BadKindByte(b'{')));
/// assert_eq!(InputError::EmptyKind.code().as_str(), "BAD_KIND");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputError {
    /// The client id is empty.
    EmptyClientId,
    /// The client id is longer than [`MAX_CLIENT_ID_LEN`](super::MAX_CLIENT_ID_LEN).
    ClientIdTooLong(usize),
    /// The kind is empty.
    EmptyKind,
    /// The kind is longer than [`MAX_KIND_LEN`](super::MAX_KIND_LEN).
    KindTooLong(usize),
    /// The kind contains `{`, `}` or a control byte (shown).
    BadKindByte(u8),
    /// The device id is empty.
    EmptyDeviceId,
    /// The device id is longer than [`MAX_DEVICE_ID_LEN`](super::MAX_DEVICE_ID_LEN).
    DeviceIdTooLong(usize),
    /// The device id contains `{`, `}` or a control byte (shown).
    BadDeviceIdByte(u8),
    /// A value (or session data) of `len` bytes is above the configured `max`.
    ValueTooLarge {
        /// Its length.
        len: usize,
        /// The configured maximum.
        max: usize,
    },
    /// A session id that keyroute did not make.
    BadSessionId,
    /// A service version longer than [`MAX_VERSION_LEN`](super::MAX_VERSION_LEN).
    VersionTooLong(usize),
    /// A duration in ms outside its range (shown as given).
    BadMs {
        /// Which setting.
        what: &'static str,
        /// The value given.
        value: i128,
        /// The smallest value allowed.
        min: u64,
    },
    /// More kinds in one warm-up than [`MAX_WARM_KINDS`](super::MAX_WARM_KINDS).
    TooManyKinds(usize),
    /// A maximum value size above [`MAX_VALUE_LEN_LIMIT`](super::MAX_VALUE_LEN_LIMIT) or 0.
    BadMaxValueLen(usize),
    /// A call under a session touches keys of another client than the session's (on
    /// Redis Cluster they would be in another slot): see
    /// [`Call::in_session`](super::Call::in_session).
    SessionClientMismatch,
    /// A script that `sess-guard` does not run under a session (see
    /// [`Call::in_session`](super::Call::in_session)).
    NotGuardable,
}

impl InputError {
    /// The stable code of the error.
    ///
    /// ```
    /// use keyroute::cache::InputError;
    /// assert_eq!(InputError::ValueTooLarge { len: 9, max: 8 }.code().as_str(), "VALUE_TOO_LARGE");
    /// assert_eq!(InputError::TooManyKinds(100).code().as_str(), "TOO_LARGE");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            InputError::EmptyClientId | InputError::ClientIdTooLong(_) => ErrorCode::BadClientId,
            InputError::EmptyKind | InputError::KindTooLong(_) | InputError::BadKindByte(_) => {
                ErrorCode::BadKind
            }
            InputError::EmptyDeviceId
            | InputError::DeviceIdTooLong(_)
            | InputError::BadDeviceIdByte(_) => ErrorCode::BadDeviceId,
            InputError::ValueTooLarge { .. } => ErrorCode::ValueTooLarge,
            InputError::BadSessionId => ErrorCode::BadSessionId,
            InputError::VersionTooLong(_) => ErrorCode::BadVersion,
            InputError::BadMs { .. } => ErrorCode::BadTtl,
            InputError::TooManyKinds(_) | InputError::BadMaxValueLen(_) => ErrorCode::TooLarge,
            InputError::SessionClientMismatch => ErrorCode::SessionClientMismatch,
            InputError::NotGuardable => ErrorCode::BadType,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use super::limits::{
            MAX_CLIENT_ID_LEN, MAX_DEVICE_ID_LEN, MAX_KIND_LEN, MAX_MS, MAX_VALUE_LEN_LIMIT,
            MAX_VERSION_LEN, MAX_WARM_KINDS,
        };
        match self {
            InputError::EmptyClientId => f.write_str("the client id is empty"),
            InputError::ClientIdTooLong(n) => write!(
                f,
                "the client id has {n} bytes; at most {MAX_CLIENT_ID_LEN} are allowed"
            ),
            InputError::EmptyKind => f.write_str("the cache kind is empty"),
            InputError::KindTooLong(n) => {
                write!(f, "the cache kind has {n} bytes; at most {MAX_KIND_LEN} are allowed")
            }
            InputError::BadKindByte(b) => write!(
                f,
                "the cache kind contains byte 0x{b:02x}; '{{', '}}' and control bytes are not allowed (the kind is part of a key whose hash tag must stay the client's)"
            ),
            InputError::EmptyDeviceId => f.write_str("the device id is empty"),
            InputError::DeviceIdTooLong(n) => write!(
                f,
                "the device id has {n} bytes; at most {MAX_DEVICE_ID_LEN} are allowed"
            ),
            InputError::BadDeviceIdByte(b) => write!(
                f,
                "the device id contains byte 0x{b:02x}; '{{', '}}' and control bytes are not allowed"
            ),
            InputError::ValueTooLarge { len, max } => write!(
                f,
                "the value has {len} bytes; the configured maximum is {max}; nothing was stored"
            ),
            InputError::BadSessionId => f.write_str(
                "not a session id keyroute gave: expected <26 base32 chars>.<26 base32 chars>",
            ),
            InputError::VersionTooLong(n) => write!(
                f,
                "the service version has {n} bytes; at most {MAX_VERSION_LEN} are allowed"
            ),
            InputError::BadMs { what, value, min } => write!(
                f,
                "{what} is {value} ms; it must be between {min} and {MAX_MS} ms"
            ),
            InputError::TooManyKinds(n) => write!(
                f,
                "{n} kinds in one warm-up; at most {MAX_WARM_KINDS} are allowed"
            ),
            InputError::BadMaxValueLen(n) => write!(
                f,
                "a maximum value size of {n} bytes; it must be between 1 and {MAX_VALUE_LEN_LIMIT}"
            ),
            InputError::SessionClientMismatch => f.write_str(
                "the session is another client's: a session guards only its own client's data (nothing was run)",
            ),
            InputError::NotGuardable => f.write_str(
                "this script does not run under a session (sess-guard runs sc-get, sc-read, sc-put, sc-invalidate, warm-begin and the session scripts)",
            ),
        }
    }
}

impl core::error::Error for InputError {}
