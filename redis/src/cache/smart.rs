//! [`SmartCache`]: `get_or_load` with one backend call per cold key across every instance,
//! `invalidate`, and the counters.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use keyroute::cache::{
    check_value_len, decode_flag, Call, ClientKeys, FillReply, GetReply, Peek, PollSchedule,
    PEEK_FIELDS,
};
use keyroute::slot::key_slot;

use super::config::{CacheConfig, Checked};
use super::exec::to_value;
use super::flight::{Flights, Role};
use super::load_error::LoadError;
use super::random;
use super::stats::{bump, Counters, Stats};
use super::store::Store;
use crate::error::{Error, Result};

/// The most times one `get_or_load` call runs its loader when each fill is fenced (the
/// entry invalidated, or the lease taken over, while it loaded): after a fenced fill it
/// asks again after a pause (10 ms, doubling to 200 ms), and the third fenced value is
/// returned to the caller without being stored. (A loader that invalidated its own key
/// was called 3,986 times in 2 s.)
pub const MAX_FENCED_LOADS: u32 = 3;

/// What became of a load.
pub(crate) enum Loaded {
    /// Stored (or already stored by this lease): the value.
    Stored(Vec<u8>),
    /// Loaded, but Redis could not be reached to store it: the value, served anyway.
    Unstored(Vec<u8>),
    /// Loaded, but the fill was fenced (invalidated or taken over): not stored; the
    /// value, for a caller that gives up asking again.
    Fenced(Vec<u8>),
    /// The loader failed (cached for the negative TTL), or returned too large a value.
    Failed(Error),
}

/// A cache on Redis shared by every instance: a cold key is loaded by one caller across
/// all processes and servers while the others wait for its wake-up (see the
/// [module docs](super)).
///
/// `Send + Sync`: share one per process (an `Arc`, or a `static`).
///
/// ```no_run
/// use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
/// use keyroute_redis::cache::{CacheConfig, LoadError, SmartCache, Store};
/// use keyroute_redis::Timeouts;
///
/// let store = Store::standalone("redis://127.0.0.1:6379", Timeouts::default())?;
/// let cache = SmartCache::new(store, CacheConfig::default())?;
/// let deadline = Instant::now() + Duration::from_secs(5);
/// let accounts = cache.get_or_load("client-42", "accounts", deadline, || {
///     // ~200 ms on the backend, once across every front server
///     Ok::<_, LoadError>(b"[{\"iban\":\"...\"}]".to_vec())
/// })?;
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Debug)]
pub struct SmartCache {
    pub(crate) store: Store,
    pub(crate) config: CacheConfig,
    pub(crate) checked: Checked,
    pub(crate) owner: Vec<u8>,
    flights: Flights,
    pub(crate) counters: Counters,
}

impl SmartCache {
    /// A cache on `store` (whose connections are open and scripts loaded already).
    ///
    /// # Errors
    /// A configuration value out of range (`BAD_TTL`, `TOO_LARGE`).
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let config = keyroute_redis::cache::CacheConfig { lease: std::time::Duration::from_secs(5), ..Default::default() };
    /// let cache = keyroute_redis::cache::SmartCache::new(store, config)?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn new(store: Store, config: CacheConfig) -> Result<SmartCache> {
        let checked = config.check()?;
        Ok(SmartCache {
            store,
            config,
            checked,
            owner: random::owner(),
            flights: Flights::default(),
            counters: Counters::default(),
        })
    }

    /// The store.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// assert!(!cache.store().is_cluster());
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The configuration.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// assert!(cache.config().serve_stale);
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// What this cache did so far (this process).
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// let s = cache.stats();
    /// println!("hits {} loads {} waits {}", s.hits, s.backend_calls, s.waits);
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        self.counters.snapshot()
    }

    /// The value of `kind` for `client`: from Redis if it is there, else from `loader`,
    /// called by exactly one caller across every process sharing the store while the
    /// others wait (at most until `deadline`).
    ///
    /// * In this process, concurrent callers of one key share one Redis round trip.
    /// * The loader runs in the calling thread; its lease is extended every lease/3 while
    ///   it runs. Its value is stored only if the lease's fence is still current (not
    ///   invalidated, not taken over), then everyone waiting is woken. A fenced fill is
    ///   asked again after a pause, at most [`MAX_FENCED_LOADS`] loads in all; the last
    ///   fenced value is then returned, not stored.
    /// * A stale value (soft TTL passed) is served while one caller refreshes it, when
    ///   the config says so; the caller that refreshes gets the fresh value.
    /// * Waiters subscribe to the client's wake-up channel before re-checking, and poll
    ///   (10 ms doubling to 200 ms, never past the lease or the deadline) as a safety net.
    ///
    /// # Errors
    /// * [`Error::Input`]: a bad client id (`BAD_CLIENT_ID`) or kind (`BAD_KIND`), a value
    ///   over the maximum (`VALUE_TOO_LARGE`); nothing was stored.
    /// * [`Error::CacheTimeout`] (`CACHE_TIMEOUT`): the deadline passed first.
    /// * [`Error::Backend`] (`BACKEND_ERROR`): the loader failed, here or (cached) in
    ///   another instance.
    /// * a Redis error (`REDIS_CONNECT`, ...): Redis is unavailable. While waiting, a
    ///   broken connection is retried until the deadline.
    ///
    /// A loader that runs past the deadline is not interrupted: the call returns when it
    /// does.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
    /// use keyroute_redis::cache::LoadError;
    /// let deadline = Instant::now() + Duration::from_secs(5);
    /// match cache.get_or_load("client-42", "loans", deadline, || Err(LoadError::new("E_CORE", "down"))) {
    ///     Ok(loans) => { /* serve */ }
    ///     Err(e) if e.code().as_str() == "BACKEND_ERROR" => { /* the backend failed (maybe cached) */ }
    ///     Err(e) => { /* CACHE_TIMEOUT, REDIS_* */ }
    /// }
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn get_or_load<F>(
        &self,
        client: impl AsRef<[u8]>,
        kind: impl AsRef<[u8]>,
        deadline: Instant,
        mut loader: F,
    ) -> Result<Vec<u8>>
    where
        F: FnMut() -> std::result::Result<Vec<u8>, LoadError>,
    {
        let keys = ClientKeys::new(client.as_ref(), &self.config.token_key)?;
        let entry = keys.entry(kind.as_ref())?;
        let started = Instant::now();
        loop {
            if Instant::now() >= deadline {
                return Err(timeout(&entry, started));
            }
            match self.flights.join(&entry) {
                Role::Follower(flight) => match flight.wait(deadline) {
                    None => return Err(timeout(&entry, started)),
                    // The leader gave up at its own (earlier) deadline: try again.
                    Some(Err(Error::CacheTimeout { .. })) if Instant::now() < deadline => {}
                    Some(outcome) => {
                        bump(&self.counters.coalesced);
                        return outcome;
                    }
                },
                Role::Leader(mut leader) => {
                    let mut early = |value: &Vec<u8>| leader.complete(&Ok(value.clone()));
                    let outcome =
                        self.lead(&keys, &entry, deadline, started, &mut loader, &mut early);
                    leader.complete(&outcome);
                    return outcome;
                }
            }
        }
    }

    /// The leader's part of [`get_or_load`](Self::get_or_load). `early` serves the
    /// followers before a refresh.
    fn lead(
        &self,
        keys: &ClientKeys,
        entry: &[u8],
        deadline: Instant,
        started: Instant,
        loader: &mut dyn FnMut() -> std::result::Result<Vec<u8>, LoadError>,
        early: &mut dyn FnMut(&Vec<u8>),
    ) -> Result<Vec<u8>> {
        let c = &self.checked;
        let mut sub = None;
        let mut poll = PollSchedule::new();
        let mut last_error: Option<Error> = None;
        let mut peeked = !self.config.fast_hits;
        let mut fenced = 0u32;
        let mut backoff = PollSchedule::new();
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Err(last_error.unwrap_or_else(|| timeout(entry, started)));
            }
            let xe = if c.beta > 0.0 {
                c.beta * -random::unit().ln()
            } else {
                0.0
            };
            if !peeked {
                peeked = true;
                if let Some(value) = self.peek(entry, xe) {
                    bump(&self.counters.hits);
                    return Ok(value);
                }
            }
            let call = Call::get(
                entry,
                c.lease_ms,
                &self.owner,
                xe,
                self.config.serve_stale,
                None,
            );
            let reply = match self.store.eval(&call, Some(deadline)) {
                Ok(value) => GetReply::decode(value)?,
                // The call was cut at the caller's deadline: the caller's timeout.
                Err(e) if e.is_timeout() && Instant::now() >= deadline => {
                    return Err(timeout(entry, started))
                }
                // Waiting already: Redis may come back before the deadline.
                Err(e) if sub.is_some() && e.is_connection_error() => {
                    last_error = Some(e);
                    let wait = poll.next_wait(u64::MAX, ms_until(deadline));
                    thread::sleep(Duration::from_millis(wait));
                    continue;
                }
                Err(e) => return Err(e),
            };
            last_error = None;
            match reply {
                GetReply::Hit { value, .. } | GetReply::Stale { value, .. } => {
                    bump(&self.counters.hits);
                    return Ok(value);
                }
                GetReply::Error { code, message, .. } => {
                    bump(&self.counters.cached_errors);
                    return Err(Error::Backend {
                        code: String::from_utf8_lossy(&code).into_owned(),
                        message: String::from_utf8_lossy(&message).into_owned(),
                        cached: true,
                    });
                }
                GetReply::Refresh {
                    value,
                    fence,
                    takeover,
                    ..
                } => {
                    bump(&self.counters.refreshes);
                    self.count_lease(takeover);
                    early(&value);
                    drop(sub.take());
                    return Ok(match self.load_and_fill(entry, fence, loader) {
                        Loaded::Stored(fresh) | Loaded::Unstored(fresh) => fresh,
                        // Stale if error: the failure is cached for the others.
                        Loaded::Fenced(_) | Loaded::Failed(_) => value,
                    });
                }
                GetReply::Lease { fence, takeover } => {
                    self.count_lease(takeover);
                    match self.load_and_fill(entry, fence, loader) {
                        Loaded::Stored(value) | Loaded::Unstored(value) => return Ok(value),
                        Loaded::Failed(e) => return Err(e),
                        // Invalidated (or taken over) while loading every time: the last
                        // value, unstored (the loader ran MAX_FENCED_LOADS times).
                        Loaded::Fenced(value) if fenced + 1 >= MAX_FENCED_LOADS => {
                            return Ok(value)
                        }
                        // Invalidated (or taken over) while loading: ask again after a
                        // pause (10 ms doubling, as a waiter polls).
                        Loaded::Fenced(_) => {
                            fenced += 1;
                            let wait = backoff.next_wait(u64::MAX, ms_until(deadline));
                            thread::sleep(Duration::from_millis(wait));
                        }
                    }
                }
                GetReply::Wait { remaining_ms, .. } => match sub.as_mut() {
                    None => {
                        bump(&self.counters.waits);
                        // Subscribe first, then re-check at once: a fill between the
                        // two is seen by the re-check, one after it wakes us.
                        let slot = key_slot(entry);
                        let node = self.store.node_for_slot(slot);
                        sub = Some(self.store.wakeups().subscribe(
                            node,
                            &keys.channel(),
                            self.store.is_cluster(),
                            deadline,
                        ));
                    }
                    Some(sub) => {
                        let wait = poll.next_wait(remaining_ms, ms_until(deadline));
                        if sub.wait(entry, Instant::now() + Duration::from_millis(wait)) {
                            poll.reset();
                        }
                    }
                },
            }
        }
    }

    /// The warm-hit fast path: `HMGET` of the read fields, served when
    /// [`Peek::decode`] finds a fresh hit on this host's clock. Anything else, errors
    /// included, is `None`: `sc-get` decides (and reports errors).
    fn peek(&self, entry: &[u8], xe: f64) -> Option<Vec<u8>> {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(entry).arg(&PEEK_FIELDS[..]);
        let reply = self.store.query::<redis::Value>(entry, &cmd).ok()?;
        let now_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .ok()
            .and_then(|d| u64::try_from(d.as_millis()).ok())?;
        match Peek::decode(to_value(reply).ok()?, now_ms, xe) {
            Ok(Peek::Hit { value, .. }) => Some(value),
            Ok(Peek::Ask) | Err(_) => None,
        }
    }

    pub(crate) fn count_lease(&self, takeover: bool) {
        bump(&self.counters.leases);
        if takeover {
            bump(&self.counters.takeovers);
        }
    }

    /// Runs `loader` under the lease `fence` with a heartbeat, then fills (or abandons).
    pub(crate) fn load_and_fill(
        &self,
        entry: &[u8],
        fence: u64,
        loader: &mut dyn FnMut() -> std::result::Result<Vec<u8>, LoadError>,
    ) -> Loaded {
        let c = &self.checked;
        let notify = self.store.notify();
        let started = Instant::now();
        let (stop, stopped) = mpsc::channel::<()>();
        let result = thread::scope(|scope| {
            scope.spawn(move || {
                let every = Duration::from_millis((c.lease_ms / 3).max(1));
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    let call = Call::extend(entry, fence, c.lease_ms, None);
                    match self
                        .store
                        .eval(&call, None)
                        .map(|v| decode_flag(&v, "sc-extend"))
                    {
                        Ok(Ok(true)) => {}
                        // Lost (invalidated, or taken over): the fill will be fenced.
                        Ok(_) => return,
                        // Redis unreachable for now: try again at the next beat.
                        Err(_) => {}
                    }
                }
            });
            let stop = stop;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut *loader));
            drop(stop);
            result
        });
        let result = match result {
            Ok(result) => result,
            Err(panic) => {
                // Release the lease at once (the error is cached for the negative TTL),
                // then let the panic go on to the caller.
                bump(&self.counters.backend_calls);
                bump(&self.counters.backend_errors);
                self.abandon(entry, fence, "LOADER_PANIC", "the loader panicked", true);
                std::panic::resume_unwind(panic);
            }
        };
        bump(&self.counters.backend_calls);
        let load_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let value = match result {
            Ok(value) => value,
            Err(failure) => {
                bump(&self.counters.backend_errors);
                self.abandon(
                    entry,
                    fence,
                    failure.code(),
                    failure.message(),
                    failure.is_cached(),
                );
                return Loaded::Failed(Error::Backend {
                    code: failure.code().to_string(),
                    message: failure.message().to_string(),
                    cached: false,
                });
            }
        };
        if let Err(e) = check_value_len(value.len(), self.config.max_value_len) {
            self.abandon(entry, fence, "VALUE_TOO_LARGE", &e.to_string(), true);
            return Loaded::Failed(e.into());
        }
        let call = Call::fill(
            entry, fence, &value, c.soft_ms, c.hard_ms, load_ms, notify, None,
        );
        match self.store.eval(&call, None).map(FillReply::decode) {
            Ok(Ok(FillReply::Stored { .. } | FillReply::Duplicate { .. })) => Loaded::Stored(value),
            Ok(Ok(FillReply::Fenced { .. })) => {
                bump(&self.counters.fenced_fills);
                Loaded::Fenced(value)
            }
            Ok(Err(_)) | Err(_) => Loaded::Unstored(value),
        }
    }

    /// Releases the lease `fence`, the failure cached for the negative TTL when `cached`
    /// (else for 0 ms: the next caller loads).
    fn abandon(&self, entry: &[u8], fence: u64, code: &str, message: &str, cached: bool) {
        let c = &self.checked;
        let call = Call::abandon(
            entry,
            fence,
            code.as_bytes(),
            message.as_bytes(),
            if cached { c.neg_ms } else { 0 },
            self.store.notify(),
            None,
        );
        // If Redis is unreachable the lease simply expires.
        let _ = self.store.eval(&call, None);
    }

    /// Drops the value of `kind` for `client` and bumps its fence, so a load in progress
    /// is discarded (its fill is fenced) and the next caller loads afresh; waiters are
    /// woken. Whether an entry was there.
    ///
    /// # Errors
    /// A bad client id or kind; a Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// // The client opened a new card: the next read loads afresh, a load in flight is discarded.
    /// cache.invalidate("client-42", "cards")?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn invalidate(&self, client: impl AsRef<[u8]>, kind: impl AsRef<[u8]>) -> Result<bool> {
        let keys = ClientKeys::new(client.as_ref(), &self.config.token_key)?;
        let entry = keys.entry(kind.as_ref())?;
        let call = Call::invalidate(&entry, self.checked.tombstone_ms, self.store.notify(), None);
        Ok(decode_flag(
            &self.store.eval(&call, None)?,
            "sc-invalidate",
        )?)
    }
}

fn ms_until(deadline: Instant) -> u64 {
    u64::try_from(
        deadline
            .saturating_duration_since(Instant::now())
            .as_millis(),
    )
    .unwrap_or(u64::MAX)
}

fn timeout(entry: &[u8], started: Instant) -> Error {
    Error::CacheTimeout {
        context: format!("get_or_load {}", String::from_utf8_lossy(entry)),
        after: started.elapsed(),
    }
}
