//! [`SmartCache`]: `get_or_load` with one backend call per cold key across every instance,
//! `invalidate`, and the counters.

use std::any::Any;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use keyroute::cache::{
    check_value_len, checked_ms, decode_flag, CacheSettings, Call, ClientKeys, Failure, Fault,
    Fill, FillStep, GetOrLoad, GetOrLoadStep as Step, Heartbeat, LoadFailure, LoadResult, PutReply,
    SessionId, Stored, Value, PEEK_FIELDS,
};
use keyroute::slot::key_slot;

use super::config::CacheConfig;
use super::exec::to_value;
use super::flight::{Flights, Role};
use super::load_error::LoadError;
use super::random;
use super::stats::{bump, Counters, Stats};
use super::store::Store;
use crate::error::{Error, Result};

/// The most times one `get_or_load` call runs its loader when each fill is fenced: core's
/// rule, the same in every runtime.
pub use keyroute::cache::MAX_FENCED_LOADS;

/// A loader as the executors run it.
pub(crate) type Loader<'a> = dyn FnMut() -> std::result::Result<Vec<u8>, LoadError> + 'a;

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
    pub(crate) settings: CacheSettings,
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
        let settings = config.check()?;
        Ok(SmartCache {
            store,
            config,
            settings,
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
        loader: F,
    ) -> Result<Vec<u8>>
    where
        F: FnMut() -> std::result::Result<Vec<u8>, LoadError>,
    {
        self.read(None, client.as_ref(), kind.as_ref(), deadline, loader)
    }

    /// [`get_or_load`](Self::get_or_load) under the session `session` (a session id of
    /// [`Sessions`](super::Sessions)): its first read runs in one atomic call with a check
    /// of the session (the `sess-guard` script), which slides the session as a touch does.
    /// When the session is not live, nothing is read, leased or loaded. In this process,
    /// callers of one key share a Redis round trip only with callers of the same session.
    ///
    /// # Errors
    /// As [`get_or_load`](Self::get_or_load), and:
    /// * [`Error::SessionExpired`] (`SESSION_EXPIRED`): the session is not live;
    /// * [`Error::Input`]: a malformed session id (`BAD_SESSION_ID`), or a session of
    ///   another client than `client` (`SESSION_CLIENT_MISMATCH`); nothing was sent.
    ///
    /// ```no_run
    /// use std::time::{Duration, Instant};
    /// use keyroute_redis::cache::{LoadError, Sessions, SmartCache, Store};
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = SmartCache::new(store.clone(), Default::default())?;
    /// let sessions = Sessions::new(store, Default::default())?;
    /// let login = sessions.create("client-42", "app-2.14", b"")?;
    /// let deadline = Instant::now() + Duration::from_secs(5);
    /// let cards = cache.get_or_load_in_session(login.id.as_str(), "client-42", "cards", deadline, || {
    ///     Ok::<_, LoadError>(b"[]".to_vec())
    /// })?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn get_or_load_in_session<F>(
        &self,
        session: impl AsRef<[u8]>,
        client: impl AsRef<[u8]>,
        kind: impl AsRef<[u8]>,
        deadline: Instant,
        loader: F,
    ) -> Result<Vec<u8>>
    where
        F: FnMut() -> std::result::Result<Vec<u8>, LoadError>,
    {
        let sid = SessionId::parse(session.as_ref())?;
        self.read(Some(sid), client.as_ref(), kind.as_ref(), deadline, loader)
    }

    fn read<F>(
        &self,
        session: Option<SessionId>,
        client: &[u8],
        kind: &[u8],
        deadline: Instant,
        mut loader: F,
    ) -> Result<Vec<u8>>
    where
        F: FnMut() -> std::result::Result<Vec<u8>, LoadError>,
    {
        let keys = ClientKeys::new(client, &self.config.token_key)?;
        let entry = keys.entry(kind)?;
        if let Some(sid) = &session {
            // Refused before anything is sent, as core's driver would.
            Call::in_session(sid, Call::read(&entry, None), None)?;
        }
        // A flight is shared only by callers of one session (each is checked and slid).
        let mut flight_key = entry.clone();
        if let Some(sid) = &session {
            flight_key.push(0);
            flight_key.extend_from_slice(sid.as_bytes());
        }
        let started = Instant::now();
        loop {
            if Instant::now() >= deadline {
                return Err(timeout(&entry, started));
            }
            match self.flights.join(&flight_key) {
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
                    let outcome = self.lead(
                        &keys,
                        &entry,
                        session,
                        deadline,
                        started,
                        &mut loader,
                        &mut early,
                    );
                    leader.complete(&outcome);
                    return outcome;
                }
            }
        }
    }

    /// The leader's part of [`get_or_load`](Self::get_or_load): carries out the steps of
    /// core's [`GetOrLoad`] driver. `early` serves the followers before a refresh.
    #[allow(clippy::too_many_arguments)]
    fn lead(
        &self,
        keys: &ClientKeys,
        entry: &[u8],
        session: Option<SessionId>,
        deadline: Instant,
        started: Instant,
        loader: &mut Loader<'_>,
        early: &mut dyn FnMut(&Vec<u8>),
    ) -> Result<Vec<u8>> {
        let origin = Instant::now();
        let clock = |t: Instant| ms_between(origin, t);
        let mut read = GetOrLoad::new(
            entry.to_vec(),
            &self.owner,
            &self.settings,
            self.store.notify(),
            0,
            clock(deadline),
        );
        if let Some(sid) = session {
            read = read.in_session(sid);
        }
        let mut sub = None;
        let mut last_error: Option<Error> = None;
        let mut panic = None;
        let outcome = loop {
            match read.step(clock(Instant::now()), random::unit()) {
                Step::Peek { key } => {
                    let reply = self.peek(key);
                    read.peeked(reply, wall_ms());
                }
                Step::Run(call) => {
                    let reply = self.store.eval(&call, Some(deadline));
                    read.replied(reply.map_err(|e| {
                        let fault = fault_of(&e);
                        last_error = Some(e);
                        fault
                    }));
                }
                Step::Subscribe => {
                    // Subscribe first, then re-check at once: a fill between the two is
                    // seen by the re-check, one after it wakes us.
                    let node = self.store.node_for_slot(key_slot(entry));
                    sub = Some(self.store.wakeups().subscribe(
                        node,
                        &keys.channel(),
                        self.store.is_cluster(),
                        deadline,
                    ));
                    read.subscribed();
                }
                Step::Wait { ms } => {
                    let until = Instant::now() + Duration::from_millis(ms);
                    let woken = match sub.as_mut() {
                        Some(sub) => sub.wait(entry, until),
                        None => {
                            thread::sleep(Duration::from_millis(ms));
                            false
                        }
                    };
                    read.woken(woken);
                }
                Step::Sleep { ms } => {
                    thread::sleep(Duration::from_millis(ms));
                    read.slept();
                }
                Step::Load { heartbeat, stale } => {
                    if let Some(stale) = stale {
                        early(&stale.to_vec());
                        drop(sub.take());
                    }
                    let (result, load_ms) = self.run_loader(&heartbeat, loader, &mut panic);
                    read.loaded(result, load_ms);
                }
                Step::Done => break read.outcome(),
            }
        };
        self.counters.add(&read.counts());
        match outcome {
            Some(Ok(value)) => Ok(value),
            Some(Err(failure)) => Err(self.error_of(failure, last_error, panic, entry, started)),
            None => Err(timeout(entry, started)),
        }
    }

    /// The error of a driver's [`Failure`]: the executor's own for I/O, a panic resumed.
    pub(crate) fn error_of(
        &self,
        failure: Failure,
        last_error: Option<Error>,
        panic: Option<Box<dyn Any + Send>>,
        entry: &[u8],
        started: Instant,
    ) -> Error {
        match failure {
            Failure::Timeout => timeout(entry, started),
            Failure::Io | Failure::Refused => last_error.unwrap_or_else(|| timeout(entry, started)),
            Failure::Backend {
                code,
                message,
                cached,
            } => Error::Backend {
                code: String::from_utf8_lossy(&code).into_owned(),
                message: String::from_utf8_lossy(&message).into_owned(),
                cached,
            },
            Failure::Reply(e) => e.into(),
            Failure::Input(e) => e.into(),
            Failure::SessionExpired => Error::SessionExpired,
            Failure::Panicked => match panic {
                Some(panic) => std::panic::resume_unwind(panic),
                None => timeout(entry, started),
            },
        }
    }

    /// The warm-hit fast path: `HMGET` of the read fields (`None` on any error: `sc-get`
    /// decides, and reports errors).
    fn peek(&self, entry: &[u8]) -> Option<Value> {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(entry).arg(&PEEK_FIELDS[..]);
        let reply = self.store.query::<redis::Value>(entry, &cmd).ok()?;
        to_value(reply).ok()
    }

    /// Runs `loader` while `heartbeat` extends its lease every third of it: what it
    /// returned and how long it ran (ms). A panic is kept in `panic` (reported as
    /// [`LoadResult::Panicked`]: the driver releases the lease, then the caller resumes
    /// it).
    fn run_loader(
        &self,
        heartbeat: &Heartbeat,
        loader: &mut Loader<'_>,
        panic: &mut Option<Box<dyn Any + Send>>,
    ) -> (LoadResult, u64) {
        let started = Instant::now();
        let (stop, stopped) = mpsc::channel::<()>();
        let result = thread::scope(|scope| {
            scope.spawn(move || {
                let every = Duration::from_millis(heartbeat.every_ms());
                while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    let reply = self.store.eval(&heartbeat.call(), None);
                    if !heartbeat.keep_beating(reply.as_ref().map_err(fault_of)) {
                        return;
                    }
                }
            });
            let stop = stop;
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut *loader));
            drop(stop);
            result
        });
        let load_ms = ms_between(started, Instant::now());
        let result = match result {
            Ok(Ok(value)) => LoadResult::Value(value),
            Ok(Err(failure)) => {
                let mut f = LoadFailure::new(failure.code(), failure.message());
                f.cached = failure.is_cached();
                LoadResult::Failed(f)
            }
            Err(payload) => {
                *panic = Some(payload);
                LoadResult::Panicked
            }
        };
        (result, load_ms)
    }

    /// Carries out a [`Fill`]: the loader under its lease, then the store (or release).
    /// A loader's panic is resumed once the lease is released.
    pub(crate) fn run_fill(&self, fill: &mut Fill, loader: &mut Loader<'_>) -> Stored {
        let mut panic = None;
        loop {
            match fill.step() {
                FillStep::Load => {
                    let heartbeat = fill.heartbeat();
                    let (result, load_ms) = self.run_loader(&heartbeat, loader, &mut panic);
                    fill.loaded(result, load_ms);
                }
                FillStep::Run(call) => {
                    let reply = self.store.eval(&call, None);
                    fill.replied(reply.map_err(|e| fault_of(&e)));
                }
                FillStep::Done => break,
            }
        }
        self.counters.add(&fill.counts());
        let stored = fill
            .take_outcome()
            .unwrap_or(Stored::Failed(Failure::Refused));
        if let (Stored::Failed(Failure::Panicked), Some(panic)) = (&stored, panic) {
            std::panic::resume_unwind(panic);
        }
        stored
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
        let call = Call::invalidate(
            &entry,
            self.settings.tombstone_ms(),
            self.store.notify(),
            None,
        );
        Ok(decode_flag(
            &self.store.eval(&call, None)?,
            "sc-invalidate",
        )?)
    }

    /// Stores `value` as the value of `kind` for `client`, directly: no lease, no loader.
    /// The entry's fence is bumped in the same atomic call (the `sc-put` script), so a
    /// load in flight for that key, here or in another process, has its fill refused and
    /// its callers get this value; waiters are woken. Fresh for `ttl` and kept as long
    /// (`None`: the configured soft and hard TTLs).
    ///
    /// # Errors
    /// A bad client id or kind, a value over the maximum (`VALUE_TOO_LARGE`), a `ttl`
    /// outside 1 ms ..= 2^48 ms (`BAD_TTL`): nothing was sent. A Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let cache = keyroute_redis::cache::SmartCache::new(store, Default::default())?;
    /// // The client changed a setting: write it through; a load in flight is discarded.
    /// cache.put("client-42", "prefs", b"{\"lang\":\"en\"}", None)?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn put(
        &self,
        client: impl AsRef<[u8]>,
        kind: impl AsRef<[u8]>,
        value: &[u8],
        ttl: Option<Duration>,
    ) -> Result<()> {
        let keys = ClientKeys::new(client.as_ref(), &self.config.token_key)?;
        let entry = keys.entry(kind.as_ref())?;
        check_value_len(value.len(), self.config.max_value_len)?;
        let (soft, hard) = match ttl {
            None => (self.settings.soft_ttl_ms, self.settings.hard_ttl_ms),
            Some(t) => {
                let ms = checked_ms("ttl", i128::try_from(t.as_millis()).unwrap_or(i128::MAX), 1)?;
                (ms, ms)
            }
        };
        let call = Call::put(&entry, value, soft, hard, self.store.notify(), None);
        PutReply::decode(self.store.eval(&call, None)?)?;
        Ok(())
    }
}

/// Whole ms from `from` to `to` (0 when `to` is earlier).
fn ms_between(from: Instant, to: Instant) -> u64 {
    u64::try_from(to.saturating_duration_since(from).as_millis()).unwrap_or(u64::MAX)
}

/// Unix time in ms (0 if the clock is before 1970).
fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

/// How a Redis call failed, for the driver.
pub(crate) fn fault_of(e: &Error) -> Fault {
    if e.is_timeout() {
        Fault::Timeout
    } else if e.is_connection_error() {
        Fault::Connection
    } else {
        Fault::Other
    }
}

fn timeout(entry: &[u8], started: Instant) -> Error {
    Error::CacheTimeout {
        context: format!("get_or_load {}", String::from_utf8_lossy(entry)),
        after: started.elapsed(),
    }
}
