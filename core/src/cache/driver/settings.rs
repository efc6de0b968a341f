//! [`CacheSettings`]: the smart cache's settings in script units (ms), their defaults and
//! their checks: the one source every runtime's `SmartCache` reads its defaults from.

use crate::cache::check::checked_max_value_len;
use crate::cache::error::InputError;
use crate::cache::limits::{DEFAULT_MAX_VALUE_LEN, MAX_MS};

/// How a smart cache caches, in ms. Every instance sharing a store should use the same
/// values. The Rust `CacheConfig`, Python's `SmartCache(...)` keywords, JavaScript's
/// `SmartCache` options, C's `keyroute_cache_options` and `keyroute serve`'s flags all
/// start from [`CacheSettings::DEFAULT`].
///
/// ```
/// use keyroute::cache::CacheSettings;
/// let s = CacheSettings { lease_ms: 500, ..CacheSettings::DEFAULT };
/// assert_eq!(s.check(), Ok(()));
/// assert_eq!(s.heartbeat_ms(), 166);
/// assert_eq!(s.tombstone_ms(), 1000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheSettings {
    /// How long a loader holds a key before someone else may take over; extended every
    /// third of it while the loader runs. Default 2,000 ms: make it at least the
    /// backend's timeout.
    pub lease_ms: u64,
    /// How long a value is fresh. Default 60,000 ms.
    pub soft_ttl_ms: u64,
    /// How long a value is kept (served stale between the soft and the hard TTL while one
    /// caller refreshes it, when [`serve_stale`](Self::serve_stale)). Default 600,000 ms.
    pub hard_ttl_ms: u64,
    /// How long a backend error is cached, so waiters fail fast. Default 1,000 ms; 0
    /// caches nothing.
    pub neg_ttl_ms: u64,
    /// Serve a stale value while one caller refreshes it. Default true.
    pub serve_stale: bool,
    /// Serve warm hits with a plain `HMGET` decided on this host's clock
    /// ([`Peek`](crate::cache::Peek)). Default true.
    pub fast_hits: bool,
    /// XFetch β: refresh early with a probability that grows near the soft expiry. 0
    /// turns it off. Default 1.
    pub xfetch_beta: f64,
    /// The largest value a loader may return. Default 1 MiB.
    pub max_value_len: usize,
}

impl CacheSettings {
    /// The defaults (see each field).
    ///
    /// ```
    /// use keyroute::cache::CacheSettings;
    /// assert_eq!(CacheSettings::DEFAULT.lease_ms, 2000);
    /// assert_eq!(CacheSettings::default(), CacheSettings::DEFAULT);
    /// ```
    pub const DEFAULT: CacheSettings = CacheSettings {
        lease_ms: 2000,
        soft_ttl_ms: 60_000,
        hard_ttl_ms: 600_000,
        neg_ttl_ms: 1000,
        serve_stale: true,
        fast_hits: true,
        xfetch_beta: 1.0,
        max_value_len: DEFAULT_MAX_VALUE_LEN,
    };

    /// The default I/O timeout of a cache's Redis calls, in ms (connect and each reply).
    ///
    /// ```
    /// assert_eq!(keyroute::cache::CacheSettings::DEFAULT_IO_TIMEOUT_MS, 2000);
    /// ```
    pub const DEFAULT_IO_TIMEOUT_MS: u64 = 2000;

    /// The default time one read waits for its value, in ms.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::CacheSettings::DEFAULT_TIMEOUT_MS, 5000);
    /// ```
    pub const DEFAULT_TIMEOUT_MS: u64 = 5000;

    /// Checks the settings together: every duration within `1..=MAX_MS` (the negative
    /// TTL from 0), the hard TTL at least the soft one, β finite and at least 0, the
    /// maximum value size within its limits. Each runtime converts its own types first
    /// (naming the option as its users write it); this is the rule they share.
    ///
    /// # Errors
    /// `BAD_TTL` ([`InputError::BadMs`]) or `TOO_LARGE` ([`InputError::BadMaxValueLen`]).
    ///
    /// ```
    /// use keyroute::cache::CacheSettings;
    /// let s = CacheSettings { soft_ttl_ms: 1000, hard_ttl_ms: 10, ..CacheSettings::DEFAULT };
    /// let err = s.check().unwrap_err();
    /// assert_eq!(err.code().as_str(), "BAD_TTL");
    /// assert!(err.to_string().contains("hard_ttl (at least soft_ttl) is 10 ms"), "{err}");
    /// ```
    pub fn check(&self) -> Result<(), InputError> {
        checked_max_value_len(self.max_value_len)?;
        if !(self.xfetch_beta.is_finite() && self.xfetch_beta >= 0.0) {
            return Err(InputError::BadMs {
                what: "xfetch_beta (a finite number >= 0)",
                value: 0,
                min: 0,
            });
        }
        let within = |what: &'static str, value: u64, min: u64| {
            if value < min || value > MAX_MS {
                Err(InputError::BadMs {
                    what,
                    value: i128::from(value),
                    min,
                })
            } else {
                Ok(())
            }
        };
        within("lease", self.lease_ms, 1)?;
        within("soft_ttl", self.soft_ttl_ms, 1)?;
        // A value is kept until the hard TTL and fresh until the soft one: soft after
        // hard would keep nothing fresh past the hard TTL while claiming to.
        within(
            "hard_ttl (at least soft_ttl)",
            self.hard_ttl_ms,
            self.soft_ttl_ms,
        )?;
        within("neg_ttl", self.neg_ttl_ms, 0)
    }

    /// How often a loader's lease is extended while it runs: a third of the lease (at
    /// least 1 ms).
    ///
    /// ```
    /// assert_eq!(keyroute::cache::CacheSettings::DEFAULT.heartbeat_ms(), 666);
    /// ```
    pub const fn heartbeat_ms(&self) -> u64 {
        let third = self.lease_ms / 3;
        if third == 0 {
            1
        } else {
            third
        }
    }

    /// How long an invalidation's tombstone is kept: twice the lease, at least 1 s (a
    /// load in flight when it was invalidated is fenced until then).
    ///
    /// ```
    /// assert_eq!(keyroute::cache::CacheSettings::DEFAULT.tombstone_ms(), 4000);
    /// ```
    pub const fn tombstone_ms(&self) -> u64 {
        let twice = self.lease_ms.saturating_mul(2);
        if twice < 1000 {
            1000
        } else {
            twice
        }
    }
}

impl Default for CacheSettings {
    fn default() -> Self {
        CacheSettings::DEFAULT
    }
}
