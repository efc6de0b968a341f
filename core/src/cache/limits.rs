//! The limits of the cache's inputs, which the checks (`check.rs`) enforce and the errors
//! (`error.rs`) name; the scripts refuse the same bounds.

/// The longest client id, in bytes. Client ids are hashed into [tokens](super::ClientToken),
/// so any bytes are allowed.
///
/// ```
/// assert_eq!(keyroute::cache::MAX_CLIENT_ID_LEN, 512);
/// ```
pub const MAX_CLIENT_ID_LEN: usize = 512;
/// The longest cache kind, in bytes.
///
/// ```
/// assert_eq!(keyroute::cache::MAX_KIND_LEN, 128);
/// ```
pub const MAX_KIND_LEN: usize = 128;
/// The longest device id, in bytes.
///
/// ```
/// assert_eq!(keyroute::cache::MAX_DEVICE_ID_LEN, 256);
/// ```
pub const MAX_DEVICE_ID_LEN: usize = 256;
/// The longest service version, in bytes.
///
/// ```
/// assert_eq!(keyroute::cache::MAX_VERSION_LEN, 128);
/// ```
pub const MAX_VERSION_LEN: usize = 128;
/// The most kinds one warm-up takes (one script call, one slot).
///
/// ```
/// assert_eq!(keyroute::cache::MAX_WARM_KINDS, 64);
/// ```
pub const MAX_WARM_KINDS: usize = 64;
/// The default maximum size of a value or of session data: 1 MiB.
///
/// ```
/// assert_eq!(keyroute::cache::DEFAULT_MAX_VALUE_LEN, 1 << 20);
/// ```
pub const DEFAULT_MAX_VALUE_LEN: usize = 1 << 20;
/// The largest maximum value size one may configure: 512 MiB (Redis's bulk limit).
///
/// ```
/// assert_eq!(keyroute::cache::MAX_VALUE_LEN_LIMIT, 512 << 20);
/// ```
pub const MAX_VALUE_LEN_LIMIT: usize = 512 << 20;
/// The largest duration or time in ms the scripts take: 2^48 ms (about 8,900 years), so
/// that sums of times and durations stay exact in Lua's doubles.
///
/// ```
/// assert_eq!(keyroute::cache::MAX_MS, 1 << 48);
/// ```
pub const MAX_MS: u64 = 1 << 48;
/// The longest lease owner the scripts store, in bytes.
///
/// ```
/// assert_eq!(keyroute::cache::MAX_OWNER_LEN, 256);
/// ```
pub const MAX_OWNER_LEN: usize = 256;
/// The longest backend error code the scripts cache, in bytes.
///
/// ```
/// assert_eq!(keyroute::cache::MAX_ERROR_CODE_LEN, 64);
/// ```
pub const MAX_ERROR_CODE_LEN: usize = 64;
/// The longest backend error message the scripts cache, in bytes (longer messages are cut
/// by the client at a character boundary, see [`truncate_message`](super::truncate_message)).
///
/// ```
/// assert_eq!(keyroute::cache::MAX_ERROR_MESSAGE_LEN, 1024);
/// ```
pub const MAX_ERROR_MESSAGE_LEN: usize = 1024;
