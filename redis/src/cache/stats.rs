//! [`Stats`]: what a [`SmartCache`](super::SmartCache) did, counted in this process.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters of a [`SmartCache`](super::SmartCache) since it was made (this process only).
///
/// ```
/// let stats = keyroute_redis::cache::Stats::default();
/// assert_eq!(stats.backend_calls, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Stats {
    /// Values served from Redis without loading (fresh, or stale while refreshed).
    pub hits: u64,
    /// Values served, then refreshed by this caller (soft TTL passed, or XFetch).
    pub refreshes: u64,
    /// Leases granted to this process (loads it did), warm-ups included.
    pub leases: u64,
    /// Calls that waited for another instance's load.
    pub waits: u64,
    /// Leases that took over an expired lease (its holder died or stalled).
    pub takeovers: u64,
    /// Fills rejected because the fence was no longer current.
    pub fenced_fills: u64,
    /// Loader calls.
    pub backend_calls: u64,
    /// Loader calls that failed.
    pub backend_errors: u64,
    /// Calls answered with a cached backend error.
    pub cached_errors: u64,
    /// Calls served by another thread's flight in this process (no Redis round trip).
    pub coalesced: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) hits: AtomicU64,
    pub(crate) refreshes: AtomicU64,
    pub(crate) leases: AtomicU64,
    pub(crate) waits: AtomicU64,
    pub(crate) takeovers: AtomicU64,
    pub(crate) fenced_fills: AtomicU64,
    pub(crate) backend_calls: AtomicU64,
    pub(crate) backend_errors: AtomicU64,
    pub(crate) cached_errors: AtomicU64,
    pub(crate) coalesced: AtomicU64,
}

pub(crate) fn bump(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    /// Adds what a driver of core counted.
    pub(crate) fn add(&self, c: &keyroute::cache::Counts) {
        let add = |counter: &AtomicU64, n: u64| {
            if n > 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        };
        add(&self.hits, c.hits);
        add(&self.refreshes, c.refreshes);
        add(&self.leases, c.leases);
        add(&self.waits, c.waits);
        add(&self.takeovers, c.takeovers);
        add(&self.fenced_fills, c.fenced_fills);
        add(&self.backend_calls, c.backend_calls);
        add(&self.backend_errors, c.backend_errors);
        add(&self.cached_errors, c.cached_errors);
    }

    pub(crate) fn snapshot(&self) -> Stats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Stats {
            hits: get(&self.hits),
            refreshes: get(&self.refreshes),
            leases: get(&self.leases),
            waits: get(&self.waits),
            takeovers: get(&self.takeovers),
            fenced_fills: get(&self.fenced_fills),
            backend_calls: get(&self.backend_calls),
            backend_errors: get(&self.backend_errors),
            cached_errors: get(&self.cached_errors),
            coalesced: get(&self.coalesced),
        }
    }
}
