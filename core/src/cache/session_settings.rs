//! [`SessionSettings`]: the defaults of client sessions, for every runtime.

use super::limits::DEFAULT_MAX_VALUE_LEN;

/// How sessions live, in ms: the one source of the defaults of the Rust
/// `SessionConfig`, Python's and JavaScript's `Sessions`, C's and `keyroute serve`'s.
///
/// ```
/// use keyroute::cache::SessionSettings;
/// assert_eq!(SessionSettings::DEFAULT.ttl_ms, 30 * 60 * 1000);
/// assert_eq!(SessionSettings::DEFAULT.max_age_ms, None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SessionSettings {
    /// The sliding lifetime: a session expires this long after its last touch. Default
    /// 30 min.
    pub ttl_ms: u64,
    /// The longest a session lives however often it is touched. Default none.
    pub max_age_ms: Option<u64>,
    /// The largest session data. Default 1 MiB.
    pub max_data_len: usize,
}

impl SessionSettings {
    /// The defaults (see each field).
    ///
    /// ```
    /// use keyroute::cache::SessionSettings;
    /// assert_eq!(SessionSettings::default(), SessionSettings::DEFAULT);
    /// ```
    pub const DEFAULT: SessionSettings = SessionSettings {
        ttl_ms: 1_800_000,
        max_age_ms: None,
        max_data_len: DEFAULT_MAX_VALUE_LEN,
    };
}

impl Default for SessionSettings {
    fn default() -> Self {
        SessionSettings::DEFAULT
    }
}
