//! [`MemoryStore`]: state in this process (lost on restart), kept by the core state models
//! ([`EntryModel`], [`SessionModel`]) so it answers as the Redis scripts do.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use keyroute::cache::{
    check_client_id, check_device_id, check_kind, check_version, ClientToken, CreateReply,
    EntryModel, FillReply, GetReply, InputError, SessionId, SessionModel, TokenKey, Touch,
};
use keyroute::error::ErrorCode;
use keyroute::frame::TransportError;

use super::{now_ms, put_ttls, LoadFailure, Loader, Store, StoreInfo, StoreStats, WarmLoader};
use crate::proto::Answer;

/// What one stored thing costs beyond its bytes (map slots, the model, the LRU index),
/// counted against `--memory-max`.
const OVERHEAD: usize = 192;

type Key = (String, String);

/// A cache entry, its size as counted and when it was last used.
#[derive(Default)]
struct Slot {
    model: EntryModel,
    size: usize,
    used: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<Key, Slot>,
    /// Cache entries by last use (the eviction order).
    lru: BTreeMap<u64, Key>,
    seq: u64,
    sessions: HashMap<ClientToken, (String, SessionModel, usize)>,
    devices: HashMap<String, String>,
    /// Everything counted: entries, sessions and devices.
    bytes: usize,
    last_sweep: u64,
}

fn entry_size(key: &Key, m: &EntryModel) -> usize {
    let len = |v: &Option<Vec<u8>>| v.as_ref().map_or(0, Vec::len);
    OVERHEAD
        + key.0.len()
        + key.1.len()
        + m.entry()
            .map_or(0, |e| len(&e.v) + len(&e.e) + len(&e.em) + len(&e.lo))
}

fn sessions_size(client: &str, m: &SessionModel) -> usize {
    m.index()
        .iter()
        .map(|(sid, _)| {
            OVERHEAD
                + sid.len()
                + m.session(sid)
                    .map_or(0, |s| s.client.len() + s.version.len() + s.data.len())
        })
        .sum::<usize>()
        + client.len()
}

impl State {
    /// The entry of `key` (made empty when absent); call [`State::settle`] after
    /// changing it.
    fn entry(&mut self, key: &Key) -> &mut EntryModel {
        &mut self.entries.entry(key.clone()).or_default().model
    }

    /// Counts `key`'s entry again and marks it used now.
    fn settle(&mut self, key: &Key) {
        let Some(slot) = self.entries.get_mut(key) else {
            return;
        };
        let size = entry_size(key, &slot.model);
        self.bytes = self.bytes - slot.size + size;
        slot.size = size;
        self.lru.remove(&slot.used);
        self.seq += 1;
        slot.used = self.seq;
        self.lru.insert(self.seq, key.clone());
    }

    fn remove_entry(&mut self, key: &Key) {
        if let Some(slot) = self.entries.remove(key) {
            self.bytes -= slot.size;
            self.lru.remove(&slot.used);
        }
    }

    /// Counts a client's sessions again.
    fn settle_sessions(&mut self, token: &ClientToken) {
        if let Some((client, m, size)) = self.sessions.get_mut(token) {
            let now = sessions_size(client, m);
            self.bytes = self.bytes - *size + now;
            *size = now;
        }
    }

    /// Makes room for `need` more bytes under `max`: expired entries go first, then the
    /// least recently used cache entries (never `keep`'s, the one being filled); false
    /// when what is left (sessions, devices) does not leave room.
    fn make_room(&mut self, now: u64, need: usize, max: usize, keep: Option<&Key>) -> bool {
        if self.bytes + need <= max {
            return true;
        }
        self.sweep_now(now);
        let mut kept = None;
        while self.bytes + need > max {
            let Some((seq, key)) = self.lru.pop_first() else {
                break;
            };
            if Some(&key) == keep {
                kept = Some((seq, key));
                continue;
            }
            self.remove_entry(&key);
        }
        if let Some((seq, key)) = kept {
            self.lru.insert(seq, key);
        }
        self.bytes + need <= max
    }

    /// [`State::sweep_now`] at most once a second.
    fn sweep(&mut self, now: u64) {
        if now >= self.last_sweep + 1000 {
            self.sweep_now(now);
        }
    }

    /// Drops what Redis would have expired by now (its TTLs), so memory stays bounded
    /// however many clients pass: entries past their hard expiry, entries with no
    /// value, no live lease and no live error, sessions past their expiry.
    fn sweep_now(&mut self, now: u64) {
        self.last_sweep = now;
        tracing::debug!(
            entries = self.entries.len(),
            cap = self.entries.capacity(),
            bytes = self.bytes,
            "memory store sweep"
        );
        let dead: Vec<Key> = self
            .entries
            .iter()
            .filter(|(_, s)| {
                !s.model.entry().is_some_and(|e| {
                    let alive = e.hx.is_none_or(|hx| hx > now);
                    let leased = e.st == Some(keyroute::cache::LeaseState::Updating)
                        && e.lx.is_some_and(|lx| lx > now);
                    let error = e.e.is_some() && e.ex.is_some_and(|ex| ex > now);
                    alive && (e.v.is_some() || leased || error)
                })
            })
            .map(|(k, _)| k.clone())
            .collect();
        for k in &dead {
            self.remove_entry(k);
        }
        let mut freed = 0;
        self.sessions.retain(|_, (_, m, size)| {
            let live = !m.list(now).is_empty();
            if !live {
                freed += *size;
            }
            live
        });
        self.bytes -= freed;
        self.entries.shrink_to(self.entries.len() * 2);
        self.sessions.shrink_to(self.sessions.len() * 2);
    }
}

/// State in memory: one instance, lost on restart. Single flight holds within the
/// process. See [`Store`]. It keeps at most [`MemoryConfig::memory_max`] bytes: past it,
/// expired entries go first, then the least recently used cache entries; sessions and
/// devices are never evicted, and one that does not fit is refused `STORE_FULL` (as is a
/// `cache.put` when only those are left; a loaded value is then served, not kept).
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
    /// The budget in bytes (values, session data, devices and their keys, plus a
    /// per-item overhead): see [`MemoryStore`].
    pub memory_max: usize,
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
            memory_max: 256 << 20,
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
        let c = &self.config;
        let out = match result {
            Ok(value) => {
                if let Err(e) = self.check_value(value.len()) {
                    st.entry(&key)
                        .abandon(now, fence, b"VALUE_TOO_LARGE", b"", c.neg_ms);
                    Err(e)
                } else if !st.make_room(now, value.len(), c.memory_max, Some(&key)) {
                    // Served, not kept: the store is full of sessions.
                    let full = LoadFailure::Transport(TransportError::StoreFull);
                    st.entry(&key)
                        .abandon(now, fence, full.code().as_bytes(), b"", 0);
                    Ok(Some(value))
                } else {
                    let entry = st.entry(&key);
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
                st.entry(&key).abandon(
                    now,
                    fence,
                    f.code().as_bytes(),
                    f.message().as_bytes(),
                    neg,
                );
                Err(LoadFailure::answer(&f.code(), f.message()))
            }
        };
        st.settle(&key);
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
        let now = now_ms();
        let mut st = self.lock();
        let need = OVERHEAD + sid.as_str().len() + client.len() + version.len() + data.len();
        if !st.make_room(now, need, self.config.memory_max, None) {
            return Err(Answer::Transport(TransportError::StoreFull));
        }
        let (_, model, _) = st
            .sessions
            .entry(token)
            .or_insert_with(|| (client.to_string(), SessionModel::new(), 0));
        let reply = model.create(
            now_ms(),
            sid.as_str().as_bytes(),
            client.as_bytes(),
            version.as_bytes(),
            self.config.session_ttl_ms,
            0,
            data,
        );
        st.settle_sessions(&token);
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
        let touch = match st.sessions.get_mut(&id.token()) {
            Some((_, model, _)) => {
                model.touch(now_ms(), sid.as_bytes(), version.map(str::as_bytes))
            }
            None => Touch::Expired,
        };
        st.settle_sessions(&id.token());
        Ok(touch)
    }

    fn session_destroy(&self, sid: &str) -> Result<bool, Answer> {
        let id = SessionId::parse(sid.as_bytes()).map_err(input)?;
        let mut st = self.lock();
        let destroyed = st
            .sessions
            .get_mut(&id.token())
            .is_some_and(|(_, m, _)| m.destroy(now_ms(), sid.as_bytes()));
        st.settle_sessions(&id.token());
        Ok(destroyed)
    }

    fn session_list(&self, client: &str) -> Result<Vec<(String, u64)>, Answer> {
        let token = ClientToken::of(client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let st = self.lock();
        Ok(st.sessions.get(&token).map_or_else(Vec::new, |(_, m, _)| {
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
        let key = (client.to_string(), kind.to_string());
        let mut st = self.lock();
        let value = st
            .entries
            .get(&key)
            .and_then(|s| s.model.entry())
            .filter(|e| e.hx.is_none_or(|hx| hx > now))
            .and_then(|e| e.v.clone());
        if value.is_some() {
            st.settle(&key);
        }
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
        let (soft, hard) = put_ttls(ttl_ms, c.soft_ms, c.hard_ms)?;
        let now = now_ms();
        let key = (client.to_string(), kind.to_string());
        let mut st = self.lock();
        if !st.make_room(now, value.len(), c.memory_max, Some(&key)) {
            return Err(Answer::Transport(TransportError::StoreFull));
        }
        let m = st.entry(&key);
        m.invalidate(now, c.lease_ms);
        if let GetReply::Lease { fence, .. } = m.get(now, c.lease_ms, &self.owner, 0.0, false) {
            m.fill(now, fence, value, soft, hard, 0);
        }
        st.settle(&key);
        drop(st);
        self.changed.notify_all();
        Ok(())
    }

    fn cache_invalidate(&self, client: &str, kind: &str) -> Result<bool, Answer> {
        check_client_id(client.as_bytes()).map_err(input)?;
        check_kind(kind.as_bytes()).map_err(input)?;
        let key = (client.to_string(), kind.to_string());
        let mut st = self.lock();
        let dropped = st
            .entries
            .get_mut(&key)
            .is_some_and(|s| s.model.invalidate(now_ms(), self.config.lease_ms));
        st.settle(&key);
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
            let reply = st.entry(&key).get(now_ms(), lease, &self.owner, 0.0, true);
            st.settle(&key);
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
        let mut st = self.lock();
        let size = |d: &str, c: &str| OVERHEAD + d.len() + c.len();
        let old = st.devices.get(device).map_or(0, |c| size(device, c));
        let need = size(device, client).saturating_sub(old);
        if !st.make_room(now_ms(), need, self.config.memory_max, None) {
            return Err(Answer::Transport(TransportError::StoreFull));
        }
        st.devices.insert(device.to_string(), client.to_string());
        st.bytes = st.bytes + size(device, client) - old;
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
                    let key = (client.clone(), kind.clone());
                    let fence =
                        st.entry(&key)
                            .warm_begin(now, self.config.lease_ms * 15, &self.owner);
                    st.settle(&key);
                    fence.map(|fence| (kind.clone(), fence))
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
