//! [`MemoryStore`]: state in this process (lost on restart), kept by the core state models
//! ([`EntryModel`], [`SessionModel`]) so it answers as the Redis scripts do.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use keyroute::cache::{
    check_client_id, check_device_id, check_kind, check_version, ClientToken, CreateReply,
    EntryModel, FillReply, GetReply, InputError, SessionId, SessionModel, TokenKey, Touch,
};
use keyroute::error::ErrorCode;
use keyroute::frame::TransportError;

use super::{now_ms, LoadFailure, Loader, Store, StoreInfo, StoreStats, WarmLoader};
use crate::proto::Answer;

#[derive(Default)]
struct State {
    entries: HashMap<(String, String), EntryModel>,
    sessions: HashMap<ClientToken, (String, SessionModel)>,
    devices: HashMap<String, String>,
    last_sweep: u64,
}

impl State {
    /// Drops what Redis would have expired by now (its TTLs), at most once a second, so
    /// memory stays bounded however many clients pass: entries past their hard expiry,
    /// entries with no value, no live lease and no live error, sessions past their
    /// expiry.
    fn sweep(&mut self, now: u64) {
        if now < self.last_sweep + 1000 {
            return;
        }
        self.last_sweep = now;
        tracing::debug!(
            entries = self.entries.len(),
            cap = self.entries.capacity(),
            "memory store sweep"
        );
        self.entries.retain(|_, m| {
            m.entry().is_some_and(|e| {
                let alive = e.hx.is_none_or(|hx| hx > now);
                let leased = e.st == Some(keyroute::cache::LeaseState::Updating)
                    && e.lx.is_some_and(|lx| lx > now);
                let error = e.e.is_some() && e.ex.is_some_and(|ex| ex > now);
                alive && (e.v.is_some() || leased || error)
            })
        });
        self.sessions.retain(|_, (_, m)| !m.list(now).is_empty());
        self.entries.shrink_to(self.entries.len() * 2);
        self.sessions.shrink_to(self.sessions.len() * 2);
    }
}

/// State in memory: one instance, lost on restart. Single flight holds within the
/// process. See [`Store`].
///
/// ```
/// use keyroute_serve::store::{MemoryStore, Store};
/// let store = MemoryStore::new(Default::default());
/// assert_eq!(store.info().role, "memory");
/// ```
#[derive(Debug)]
pub struct MemoryStore {
    state: Mutex<State>,
    changed: Condvar,
    config: MemoryConfig,
    owner: Vec<u8>,
    hits: AtomicU64,
    misses: AtomicU64,
    loads: AtomicU64,
    takeovers: AtomicU64,
    fenced: AtomicU64,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("entries", &self.entries.len())
            .finish_non_exhaustive()
    }
}

/// TTLs of a [`MemoryStore`] (ms).
#[derive(Clone, Debug)]
pub struct MemoryConfig {
    /// Lease of a load.
    pub lease_ms: u64,
    /// How long a value is fresh.
    pub soft_ms: u64,
    /// How long a value is kept.
    pub hard_ms: u64,
    /// How long a backend error is remembered.
    pub neg_ms: u64,
    /// Sessions' sliding lifetime.
    pub session_ttl_ms: u64,
    /// Largest value or session data.
    pub max_value_len: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            lease_ms: 2000,
            soft_ms: 60_000,
            hard_ms: 600_000,
            neg_ms: 1000,
            session_ttl_ms: 1_800_000,
            max_value_len: keyroute::cache::DEFAULT_MAX_VALUE_LEN,
        }
    }
}

fn input(e: InputError) -> Answer {
    Answer::data(e.code(), e.to_string())
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl MemoryStore {
    /// An empty store.
    ///
    /// ```
    /// let store = keyroute_serve::store::MemoryStore::new(Default::default());
    /// # let _ = store;
    /// ```
    pub fn new(config: MemoryConfig) -> MemoryStore {
        MemoryStore {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            config,
            owner: b"memory".to_vec(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            loads: AtomicU64::new(0),
            takeovers: AtomicU64::new(0),
            fenced: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.sweep(now_ms());
        st
    }

    fn check_value(&self, len: usize) -> Result<(), Answer> {
        keyroute::cache::check_value_len(len, self.config.max_value_len).map_err(input)
    }

    /// Runs the loader under the lease `fence` and fills; `Ok(None)` when the fill was
    /// fenced (ask again).
    fn load(
        &self,
        client: &str,
        kind: &str,
        fence: u64,
        loader: Loader<'_>,
    ) -> Result<Option<Vec<u8>>, Answer> {
        let key = (client.to_string(), kind.to_string());
        let started = now_ms();
        bump(&self.loads);
        let result = loader();
        let now = now_ms();
        let mut st = self.lock();
        let entry = st.entries.entry(key).or_default();
        let out = match result {
            Ok(value) => {
                if let Err(e) = self.check_value(value.len()) {
                    entry.abandon(now, fence, b"VALUE_TOO_LARGE", b"", self.config.neg_ms);
                    Err(e)
                } else {
                    let c = &self.config;
                    match entry.fill(now, fence, &value, c.soft_ms, c.hard_ms, now - started) {
                        FillReply::Stored { .. } | FillReply::Duplicate { .. } => Ok(Some(value)),
                        FillReply::Fenced { .. } => {
                            bump(&self.fenced);
                            Ok(None)
                        }
                    }
                }
            }
            Err(f) => {
                // Transport failures are not remembered: the next caller tries again.
                let neg = match f {
                    LoadFailure::Backend { .. } => self.config.neg_ms,
                    LoadFailure::Transport(_) => 0,
                };
                entry.abandon(now, fence, f.code().as_bytes(), f.message().as_bytes(), neg);
                Err(LoadFailure::answer(f.code(), f.message()))
            }
        };
        drop(st);
        self.changed.notify_all();
        out
    }
}

impl Store for MemoryStore {
    fn info(&self) -> StoreInfo {
        StoreInfo {
            address: "memory".into(),
            role: "memory".into(),
        }
    }

    fn stats(&self) -> StoreStats {
        StoreStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            backend_loads: self.loads.load(Ordering::Relaxed),
            takeovers: self.takeovers.load(Ordering::Relaxed),
            fenced_fills: self.fenced.load(Ordering::Relaxed),
        }
    }

    fn session_create(
        &self,
        client: &str,
        version: &str,
        data: &[u8],
    ) -> Result<(String, u64), Answer> {
        check_client_id(client.as_bytes()).map_err(input)?;
        check_version(version.as_bytes()).map_err(input)?;
        self.check_value(data.len())?;
        let token = ClientToken::of(client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let mut random = [0u8; 16];
        getrandom::fill(&mut random)
            .map_err(|e| Answer::data(ErrorCode::Internal, format!("no random bytes: {e}")))?;
        let sid = SessionId::new(token, random);
        let mut st = self.lock();
        let (_, model) = st
            .sessions
            .entry(token)
            .or_insert_with(|| (client.to_string(), SessionModel::new()));
        let reply = model.create(
            now_ms(),
            sid.as_str().as_bytes(),
            client.as_bytes(),
            version.as_bytes(),
            self.config.session_ttl_ms,
            0,
            data,
        );
        match reply {
            CreateReply::Created { expires_at } => Ok((sid.as_str().to_string(), expires_at)),
            CreateReply::Taken => Err(Answer::data(
                ErrorCode::Internal,
                "a fresh random session id was taken",
            )),
        }
    }

    fn session_touch(&self, sid: &str, version: Option<&str>) -> Result<Touch, Answer> {
        let id = SessionId::parse(sid.as_bytes()).map_err(input)?;
        if let Some(v) = version {
            check_version(v.as_bytes()).map_err(input)?;
        }
        let mut st = self.lock();
        Ok(match st.sessions.get_mut(&id.token()) {
            Some((_, model)) => model.touch(now_ms(), sid.as_bytes(), version.map(str::as_bytes)),
            None => Touch::Expired,
        })
    }

    fn session_destroy(&self, sid: &str) -> Result<bool, Answer> {
        let id = SessionId::parse(sid.as_bytes()).map_err(input)?;
        let mut st = self.lock();
        Ok(st
            .sessions
            .get_mut(&id.token())
            .is_some_and(|(_, m)| m.destroy(now_ms(), sid.as_bytes())))
    }

    fn session_list(&self, client: &str) -> Result<Vec<(String, u64)>, Answer> {
        let token = ClientToken::of(client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let st = self.lock();
        Ok(st.sessions.get(&token).map_or_else(Vec::new, |(_, m)| {
            m.list(now_ms())
                .into_iter()
                .map(|(sid, x)| (String::from_utf8_lossy(&sid).into_owned(), x))
                .collect()
        }))
    }

    fn cache_get(&self, client: &str, kind: &str) -> Result<Option<Vec<u8>>, Answer> {
        check_client_id(client.as_bytes()).map_err(input)?;
        check_kind(kind.as_bytes()).map_err(input)?;
        let now = now_ms();
        let st = self.lock();
        let value = st
            .entries
            .get(&(client.to_string(), kind.to_string()))
            .and_then(|m| m.entry())
            .filter(|e| e.hx.is_none_or(|hx| hx > now))
            .and_then(|e| e.v.clone());
        bump(if value.is_some() {
            &self.hits
        } else {
            &self.misses
        });
        Ok(value)
    }

    fn cache_put(
        &self,
        client: &str,
        kind: &str,
        value: &[u8],
        ttl_ms: Option<u64>,
    ) -> Result<(), Answer> {
        check_client_id(client.as_bytes()).map_err(input)?;
        check_kind(kind.as_bytes()).map_err(input)?;
        self.check_value(value.len())?;
        let c = &self.config;
        let (soft, hard) = match ttl_ms {
            Some(0) => return Err(Answer::data(ErrorCode::BadTtl, "ttl_ms must be at least 1")),
            Some(t) => (t, t),
            None => (c.soft_ms, c.hard_ms),
        };
        let now = now_ms();
        let mut st = self.lock();
        let m = st
            .entries
            .entry((client.to_string(), kind.to_string()))
            .or_default();
        m.invalidate(now, c.lease_ms);
        if let GetReply::Lease { fence, .. } = m.get(now, c.lease_ms, &self.owner, 0.0, false) {
            m.fill(now, fence, value, soft, hard, 0);
        }
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    fn cache_invalidate(&self, client: &str, kind: &str) -> Result<bool, Answer> {
        check_client_id(client.as_bytes()).map_err(input)?;
        check_kind(kind.as_bytes()).map_err(input)?;
        let mut st = self.lock();
        let dropped = st
            .entries
            .get_mut(&(client.to_string(), kind.to_string()))
            .is_some_and(|m| m.invalidate(now_ms(), self.config.lease_ms));
        drop(st);
        self.changed.notify_all();
        Ok(dropped)
    }

    fn get_or_load(
        &self,
        client: &str,
        kind: &str,
        deadline: Instant,
        loader: Loader<'_>,
    ) -> Result<Vec<u8>, Answer> {
        check_client_id(client.as_bytes()).map_err(input)?;
        check_kind(kind.as_bytes()).map_err(input)?;
        let key = (client.to_string(), kind.to_string());
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Answer::Transport(TransportError::LoadTimeout));
            }
            // The lease covers the whole wait for a worker (no heartbeat thread here).
            let lease = self.config.lease_ms + u64::try_from(left.as_millis()).unwrap_or(0);
            let mut st = self.lock();
            let reply = st.entries.entry(key.clone()).or_default().get(
                now_ms(),
                lease,
                &self.owner,
                0.0,
                true,
            );
            match reply {
                GetReply::Hit { value, .. } | GetReply::Stale { value, .. } => {
                    bump(&self.hits);
                    return Ok(value);
                }
                GetReply::Error { code, message, .. } => {
                    return Err(LoadFailure::answer(
                        &String::from_utf8_lossy(&code),
                        &String::from_utf8_lossy(&message),
                    ))
                }
                GetReply::Refresh {
                    value,
                    fence,
                    takeover,
                    ..
                } => {
                    drop(st);
                    bump(&self.hits);
                    if takeover {
                        bump(&self.takeovers);
                    }
                    return Ok(match self.load(client, kind, fence, loader) {
                        Ok(Some(fresh)) => fresh,
                        _ => value,
                    });
                }
                GetReply::Lease { fence, takeover } => {
                    drop(st);
                    bump(&self.misses);
                    if takeover {
                        bump(&self.takeovers);
                    }
                    if let Some(value) = self.load(client, kind, fence, loader)? {
                        return Ok(value);
                    }
                }
                GetReply::Wait { remaining_ms, .. } => {
                    let wait = left.min(Duration::from_millis(remaining_ms.max(1)));
                    let _ = self.changed.wait_timeout(st, wait);
                }
            }
        }
    }

    fn device_bind(&self, device: &str, client: &str) -> Result<(), Answer> {
        check_device_id(device.as_bytes()).map_err(input)?;
        check_client_id(client.as_bytes()).map_err(input)?;
        self.lock()
            .devices
            .insert(device.to_string(), client.to_string());
        Ok(())
    }

    fn warm(
        &self,
        device: &str,
        kinds: &[String],
        loader: WarmLoader<'_>,
    ) -> Result<usize, Answer> {
        check_device_id(device.as_bytes()).map_err(input)?;
        let Some(client) = self.lock().devices.get(device).cloned() else {
            return Ok(0);
        };
        let now = now_ms();
        let granted: Vec<(String, u64)> = {
            let mut st = self.lock();
            kinds
                .iter()
                .filter_map(|kind| {
                    let m = st
                        .entries
                        .entry((client.clone(), kind.clone()))
                        .or_default();
                    m.warm_begin(now, self.config.lease_ms * 15, &self.owner)
                        .map(|fence| (kind.clone(), fence))
                })
                .collect()
        };
        std::thread::scope(|s| {
            for (kind, fence) in &granted {
                let client = &client;
                s.spawn(move || {
                    let mut once = || loader(client, kind);
                    let _ = self.load(client, kind, *fence, &mut once);
                });
            }
        });
        Ok(granted.len())
    }
}
