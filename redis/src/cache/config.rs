//! [`CacheConfig`]: leases, TTLs, stale serving, XFetch and limits of a
//! [`SmartCache`](super::SmartCache).

use std::time::Duration;

use keyroute::cache::{CacheSettings, TokenKey};

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
    /// Core's [`CacheSettings::DEFAULT`], the defaults of every binding.
    fn default() -> Self {
        let d = CacheSettings::DEFAULT;
        CacheConfig {
            lease: Duration::from_millis(d.lease_ms),
            soft_ttl: Duration::from_millis(d.soft_ttl_ms),
            hard_ttl: Duration::from_millis(d.hard_ttl_ms),
            neg_ttl: Duration::from_millis(d.neg_ttl_ms),
            serve_stale: d.serve_stale,
            xfetch_beta: d.xfetch_beta,
            max_value_len: d.max_value_len,
            token_key: TokenKey::DEFAULT,
            fast_hits: d.fast_hits,
        }
    }
}

fn ms_of(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// `d` in ms, checked as core checks durations (`BAD_TTL` naming `what`).
pub(crate) fn ms(what: &'static str, d: Duration, min: u64) -> Result<u64> {
    let n = i128::try_from(d.as_millis()).unwrap_or(i128::MAX);
    Ok(keyroute::cache::checked_ms(what, n, min)?)
}

impl CacheConfig {
    /// The configuration in ms, checked by core's rule ([`CacheSettings::check`]).
    pub(crate) fn check(&self) -> Result<CacheSettings> {
        let settings = CacheSettings {
            lease_ms: ms_of(self.lease),
            soft_ttl_ms: ms_of(self.soft_ttl),
            hard_ttl_ms: ms_of(self.hard_ttl),
            neg_ttl_ms: ms_of(self.neg_ttl),
            serve_stale: self.serve_stale,
            fast_hits: self.fast_hits,
            xfetch_beta: self.xfetch_beta,
            max_value_len: self.max_value_len,
        };
        settings.check().map_err(Error::Input)?;
        Ok(settings)
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
