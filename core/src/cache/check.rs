//! Input checks: what every entrance refuses, with which code, before anything is sent
//! (the limits are in `limits.rs`).

use super::error::InputError;
use super::limits::{
    MAX_CLIENT_ID_LEN, MAX_DEVICE_ID_LEN, MAX_ERROR_MESSAGE_LEN, MAX_KIND_LEN, MAX_MS,
    MAX_VALUE_LEN_LIMIT, MAX_VERSION_LEN, MAX_WARM_KINDS,
};

/// Checks a client id: 1 to [`MAX_CLIENT_ID_LEN`] bytes.
///
/// # Errors
/// [`InputError::EmptyClientId`], [`InputError::ClientIdTooLong`] (`BAD_CLIENT_ID`).
///
/// ```
/// use keyroute::cache::{check_client_id, InputError};
/// assert!(check_client_id(b"client-42").is_ok());
/// assert_eq!(check_client_id(b""), Err(InputError::EmptyClientId));
/// ```
pub const fn check_client_id(id: &[u8]) -> Result<(), InputError> {
    if id.is_empty() {
        Err(InputError::EmptyClientId)
    } else if id.len() > MAX_CLIENT_ID_LEN {
        Err(InputError::ClientIdTooLong(id.len()))
    } else {
        Ok(())
    }
}

/// The first byte that may not appear in a name inside a key: `{`, `}`, or a control
/// byte (below 0x20, or 0x7f).
const fn bad_byte(name: &[u8]) -> Option<u8> {
    let mut i = 0;
    while i < name.len() {
        let b = name[i];
        if b == b'{' || b == b'}' || b < 0x20 || b == 0x7f {
            return Some(b);
        }
        i += 1;
    }
    None
}

/// Checks a cache kind (`accounts`, `cards`, ...): 1 to [`MAX_KIND_LEN`] bytes, no `{`,
/// `}` or control byte.
///
/// # Errors
/// [`InputError::EmptyKind`], [`InputError::KindTooLong`], [`InputError::BadKindByte`]
/// (`BAD_KIND`).
///
/// ```
/// use keyroute::cache::check_kind;
/// assert!(check_kind(b"accounts").is_ok());
/// assert!(check_kind(b"x}").is_err());
/// assert!(check_kind(b"").is_err());
/// ```
pub const fn check_kind(kind: &[u8]) -> Result<(), InputError> {
    if kind.is_empty() {
        return Err(InputError::EmptyKind);
    }
    if kind.len() > MAX_KIND_LEN {
        return Err(InputError::KindTooLong(kind.len()));
    }
    match bad_byte(kind) {
        Some(b) => Err(InputError::BadKindByte(b)),
        None => Ok(()),
    }
}

/// Checks a device id: 1 to [`MAX_DEVICE_ID_LEN`] bytes, no `{`, `}` or control byte.
///
/// # Errors
/// [`InputError::EmptyDeviceId`], [`InputError::DeviceIdTooLong`],
/// [`InputError::BadDeviceIdByte`] (`BAD_DEVICE_ID`).
///
/// ```
/// use keyroute::cache::check_device_id;
/// assert!(check_device_id(b"ios-7F3A").is_ok());
/// assert!(check_device_id(b"{x}").is_err());
/// ```
pub const fn check_device_id(device: &[u8]) -> Result<(), InputError> {
    if device.is_empty() {
        return Err(InputError::EmptyDeviceId);
    }
    if device.len() > MAX_DEVICE_ID_LEN {
        return Err(InputError::DeviceIdTooLong(device.len()));
    }
    match bad_byte(device) {
        Some(b) => Err(InputError::BadDeviceIdByte(b)),
        None => Ok(()),
    }
}

/// Checks a value's (or session data's) length against the configured `max`.
///
/// # Errors
/// [`InputError::ValueTooLarge`] (`VALUE_TOO_LARGE`).
///
/// ```
/// use keyroute::cache::check_value_len;
/// assert!(check_value_len(10, 10).is_ok());
/// assert!(check_value_len(11, 10).is_err());
/// ```
pub const fn check_value_len(len: usize, max: usize) -> Result<(), InputError> {
    if len > max {
        Err(InputError::ValueTooLarge { len, max })
    } else {
        Ok(())
    }
}

/// Checks a configured maximum value size: 1 to [`MAX_VALUE_LEN_LIMIT`].
///
/// # Errors
/// [`InputError::BadMaxValueLen`] (`TOO_LARGE`).
///
/// ```
/// use keyroute::cache::checked_max_value_len;
/// assert_eq!(checked_max_value_len(4096), Ok(4096));
/// assert!(checked_max_value_len(0).is_err());
/// ```
pub const fn checked_max_value_len(max: usize) -> Result<usize, InputError> {
    if max == 0 || max > MAX_VALUE_LEN_LIMIT {
        Err(InputError::BadMaxValueLen(max))
    } else {
        Ok(max)
    }
}

/// Checks a service version: at most [`MAX_VERSION_LEN`] bytes (empty is allowed).
///
/// # Errors
/// [`InputError::VersionTooLong`] (`BAD_VERSION`).
///
/// ```
/// use keyroute::cache::check_version;
/// assert!(check_version(b"app-2.14").is_ok());
/// assert!(check_version(&[b'v'; 200]).is_err());
/// ```
pub const fn check_version(version: &[u8]) -> Result<(), InputError> {
    if version.len() > MAX_VERSION_LEN {
        Err(InputError::VersionTooLong(version.len()))
    } else {
        Ok(())
    }
}

/// Checks the number of kinds of one warm-up: at most [`MAX_WARM_KINDS`], before anything
/// is allocated for them.
///
/// # Errors
/// [`InputError::TooManyKinds`] (`TOO_LARGE`).
///
/// ```
/// use keyroute::cache::check_warm_count;
/// assert!(check_warm_count(4).is_ok());
/// assert!(check_warm_count(65).is_err());
/// ```
pub const fn check_warm_count(count: usize) -> Result<(), InputError> {
    if count > MAX_WARM_KINDS {
        Err(InputError::TooManyKinds(count))
    } else {
        Ok(())
    }
}

/// Checks a duration (or time) in ms given as any integer: `min..=`[`MAX_MS`]. `what`
/// names it in the message (`"lease_ms"`, ...).
///
/// # Errors
/// [`InputError::BadMs`] (`BAD_TTL`).
///
/// ```
/// use keyroute::cache::checked_ms;
/// assert_eq!(checked_ms("lease_ms", 2000, 1), Ok(2000));
/// assert!(checked_ms("lease_ms", 0, 1).is_err());
/// assert!(checked_ms("neg_ttl_ms", -5, 0).is_err());
/// assert!(checked_ms("ttl_ms", 1 << 60, 1).is_err());
/// ```
pub const fn checked_ms(what: &'static str, value: i128, min: u64) -> Result<u64, InputError> {
    if value < min as i128 || value > MAX_MS as i128 {
        Err(InputError::BadMs { what, value, min })
    } else {
        Ok(value as u64)
    }
}

/// `message` cut to at most [`MAX_ERROR_MESSAGE_LEN`] bytes at a UTF-8 character
/// boundary (what clients store as a cached backend error).
///
/// ```
/// use keyroute::cache::{truncate_message, MAX_ERROR_MESSAGE_LEN};
/// let long = "é".repeat(1000);
/// let cut = truncate_message(&long);
/// assert!(cut.len() <= MAX_ERROR_MESSAGE_LEN && long.starts_with(cut));
/// assert_eq!(truncate_message("short"), "short");
/// ```
pub fn truncate_message(message: &str) -> &str {
    if message.len() <= MAX_ERROR_MESSAGE_LEN {
        return message;
    }
    let mut end = MAX_ERROR_MESSAGE_LEN;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    &message[..end]
}
