//! [`CacheConfig`]: leases, TTLs, stale serving, XFetch and limits of a
//! [`SmartCache`](super::SmartCache).

use std::time::Duration;

use keyroute::cache::{checked_max_value_len, checked_ms, TokenKey, DEFAULT_MAX_VALUE_LEN};

use crate::error::{Error, Result};

/// How a [`SmartCache`](super::SmartCache) caches (every instance sharing a store should
/// use the same values; the token key must be the same).
///
/// ```
/// use std::time::Duration;
/// use keyroute_redis::cache::CacheConfig;
/// let config = CacheConfig { lease: Duration::from_secs(1), ..CacheConfig::default() };
/// assert_eq!(config.soft_ttl, Duration::from_secs(60));
/// ```
#[derive(Clone, Debug)]
pub struct CacheConfig {
    /// How long a loader holds a key before someone else may take over; extended every
    /// third of it while the loader runs (server time). Default 2 s; make it at least the
    /// backend's timeout.
    pub lease: Duration,
    /// How long a value is fresh. Default 60 s.
    pub soft_ttl: Duration,
    /// How long a value is kept (served stale between the soft and the hard TTL while one
    /// caller refreshes it, when [`serve_stale`](Self::serve_stale)). Default 10 min.
    pub hard_ttl: Duration,
    /// How long a backend error is cached, so waiters fail fast instead of calling the
    /// backend again. Default 1 s; zero caches nothing.
    pub neg_ttl: Duration,
    /// Serve a stale value while one caller refreshes it (else callers wait for the
    /// fresh one). Default true.
    pub serve_stale: bool,
    /// XFetch β: refresh early with a probability that grows near the soft expiry (one
    /// caller, under a lease). 0 turns it off. Default 1.
    pub xfetch_beta: f64,
    /// The largest value a loader may return (larger ones are refused with
    /// `VALUE_TOO_LARGE`, and not stored). Default 1 MiB.
    pub max_value_len: usize,
    /// The key of the client-id hash in key names. Default [`TokenKey::DEFAULT`].
    pub token_key: TokenKey,
    /// Serve warm hits with one plain `HMGET` decided on this host's clock
    /// ([`keyroute::cache::Peek`]), asking `sc-get` only when that is not a fresh hit: a
    /// plain read runs at about twice the rate of a script call on the server. A host
    /// whose clock runs δ behind Redis's serves a value up to δ past its soft TTL (never
    /// past the hard TTL). False decides every read with `sc-get` on the server's clock.
    /// Default true.
    pub fast_hits: bool,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            lease: Duration::from_secs(2),
            soft_ttl: Duration::from_secs(60),
            hard_ttl: Duration::from_secs(600),
            neg_ttl: Duration::from_secs(1),
            serve_stale: true,
            xfetch_beta: 1.0,
            max_value_len: DEFAULT_MAX_VALUE_LEN,
            token_key: TokenKey::DEFAULT,
            fast_hits: true,
        }
    }
}

/// The configuration in script units, checked.
#[derive(Clone, Debug)]
pub(crate) struct Checked {
    pub(crate) lease_ms: u64,
    pub(crate) soft_ms: u64,
    pub(crate) hard_ms: u64,
    pub(crate) neg_ms: u64,
    pub(crate) tombstone_ms: u64,
    pub(crate) beta: f64,
}

pub(crate) fn ms(what: &'static str, d: Duration, min: u64) -> Result<u64> {
    let n = i128::try_from(d.as_millis()).unwrap_or(i128::MAX);
    Ok(checked_ms(what, n, min)?)
}

impl CacheConfig {
    pub(crate) fn check(&self) -> Result<Checked> {
        checked_max_value_len(self.max_value_len)?;
        if !(self.xfetch_beta.is_finite() && self.xfetch_beta >= 0.0) {
            return Err(Error::Input(keyroute::cache::InputError::BadMs {
                what: "xfetch_beta (a finite number >= 0)",
                value: 0,
                min: 0,
            }));
        }
        let lease_ms = ms("lease", self.lease, 1)?;
        let soft_ms = ms("soft_ttl", self.soft_ttl, 1)?;
        // A value is kept until the hard TTL and fresh until the soft one: soft after
        // hard would keep nothing fresh past the hard TTL while claiming to.
        let hard_ms = ms("hard_ttl (at least soft_ttl)", self.hard_ttl, soft_ms)?;
        Ok(Checked {
            lease_ms,
            soft_ms,
            hard_ms,
            neg_ms: ms("neg_ttl", self.neg_ttl, 0)?,
            tombstone_ms: (2 * lease_ms).max(1000),
            beta: self.xfetch_beta,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `soft_ttl` past `hard_ttl` (soft 1000 ms, hard 10 ms) was accepted; it is BAD_TTL
    /// (every binding's SmartCache is checked here). Equal TTLs are allowed.
    #[test]
    fn soft_ttl_past_hard_ttl_is_refused() {
        let config = CacheConfig {
            soft_ttl: Duration::from_millis(1000),
            hard_ttl: Duration::from_millis(10),
            ..CacheConfig::default()
        };
        let err = config.check().expect_err("soft > hard");
        assert_eq!(err.code().as_str(), "BAD_TTL");
        assert!(
            err.to_string()
                .contains("hard_ttl (at least soft_ttl) is 10 ms"),
            "{err}"
        );
        let equal = CacheConfig {
            soft_ttl: Duration::from_millis(10),
            hard_ttl: Duration::from_millis(10),
            ..CacheConfig::default()
        };
        assert!(equal.check().is_ok());
    }
}
