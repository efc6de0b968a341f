//! [`Counts`]: what one driver did, for the executor's statistics.

/// What a driver did, added by the executor to its cache's statistics when the driver
/// ends (in-process coalescing is the executor's own count).
///
/// ```
/// use keyroute::cache::Counts;
/// let mut a = Counts { hits: 1, ..Counts::default() };
/// a.add(&Counts { hits: 2, leases: 1, ..Counts::default() });
/// assert_eq!((a.hits, a.leases), (3, 1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    /// Values served from Redis (fresh, or stale while someone refreshes).
    pub hits: u64,
    /// Stale values served while this caller refreshed them.
    pub refreshes: u64,
    /// Leases granted to this caller.
    pub leases: u64,
    /// Of those, leases taken over from an expired one.
    pub takeovers: u64,
    /// Reads that waited for someone else's load.
    pub waits: u64,
    /// Fills refused because the lease was fenced (invalidated or taken over).
    pub fenced_fills: u64,
    /// Loader runs.
    pub backend_calls: u64,
    /// Loader runs that failed.
    pub backend_errors: u64,
    /// Cached backend errors served.
    pub cached_errors: u64,
}

impl Counts {
    /// Adds `other` to these counts.
    ///
    /// ```
    /// let mut c = keyroute::cache::Counts::default();
    /// c.add(&keyroute::cache::Counts { waits: 1, ..Default::default() });
    /// assert_eq!(c.waits, 1);
    /// ```
    pub fn add(&mut self, other: &Counts) {
        self.hits += other.hits;
        self.refreshes += other.refreshes;
        self.leases += other.leases;
        self.takeovers += other.takeovers;
        self.waits += other.waits;
        self.fenced_fills += other.fenced_fills;
        self.backend_calls += other.backend_calls;
        self.backend_errors += other.backend_errors;
        self.cached_errors += other.cached_errors;
    }

    /// The counts in a fixed order (the order of the fields), for bindings that pass them
    /// as an array.
    ///
    /// ```
    /// let c = keyroute::cache::Counts { hits: 4, cached_errors: 1, ..Default::default() };
    /// assert_eq!(c.to_array(), [4, 0, 0, 0, 0, 0, 0, 0, 1]);
    /// ```
    pub const fn to_array(&self) -> [u64; 9] {
        [
            self.hits,
            self.refreshes,
            self.leases,
            self.takeovers,
            self.waits,
            self.fenced_fills,
            self.backend_calls,
            self.backend_errors,
            self.cached_errors,
        ]
    }
}
