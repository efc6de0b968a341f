//! [`MemoryStore`]: state in this process (lost on restart), kept by the core state models
//! ([`EntryModel`], [`SessionModel`]) so it answers as the Redis scripts do: it runs the
//! same [`Call`]s (`sess-guard` included) on the models and replies with the same values.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use keyroute::cache::{
    check_device_id, device_key, session_keys, Call, ClientKeys, CreateReply, EntryModel,
    FillReply, GetReply, InputError, SessionId, SessionModel, TokenKey, Touch, UpdateReply, Value,
};
use keyroute::error::ErrorCode;
use keyroute::frame::TransportError;

use super::{now_ms, LoadFailure, Loader, Store, StoreInfo, StoreStats, WarmLoader};
use crate::proto::Answer;

/// What one stored thing costs beyond its bytes (map slots, the model, the LRU index),
/// counted against `--memory-max`.
const OVERHEAD: usize = 192;

/// A cache entry, its size as counted and when it was last used.
#[derive(Default)]
struct Slot {
    model: EntryModel,
    size: usize,
    used: u64,
}

/// The keys are the keys Redis would hold (`kr:{c:T}:e:<kind>`, `kr:{c:T}:sidx`,
/// `kr:{d:<device>}`), so a [`Call`] finds its state as a script finds its keys.
#[derive(Default)]
struct State {
    entries: HashMap<Vec<u8>, Slot>,
    /// Cache entries by last use (the eviction order).
    lru: BTreeMap<u64, Vec<u8>>,
    seq: u64,
    /// One client's sessions by its session index key, and their size as counted.
    sessions: HashMap<Vec<u8>, (SessionModel, usize)>,
    /// Device key → client id.
    devices: HashMap<Vec<u8>, Vec<u8>>,
    /// Everything counted: entries, sessions and devices.
    bytes: usize,
    last_sweep: u64,
}

fn entry_size(key: &[u8], m: &EntryModel) -> usize {
    let len = |v: &Option<Vec<u8>>| v.as_ref().map_or(0, Vec::len);
    OVERHEAD
        + key.len()
        + m.entry()
            .map_or(0, |e| len(&e.v) + len(&e.e) + len(&e.em) + len(&e.lo))
}

fn sessions_size(index: &[u8], m: &SessionModel) -> usize {
    m.index()
        .iter()
        .map(|(sid, _)| {
            OVERHEAD
                + sid.len()
                + m.session(sid)
                    .map_or(0, |s| s.client.len() + s.version.len() + s.data.len())
        })
        .sum::<usize>()
        + index.len()
}

impl State {
    /// The entry of `key` (made empty when absent); call [`State::settle`] after
    /// changing it.
    fn entry(&mut self, key: &[u8]) -> &mut EntryModel {
        &mut self.entries.entry(key.to_vec()).or_default().model
    }

    /// Counts `key`'s entry again and marks it used now.
    fn settle(&mut self, key: &[u8]) {
        let Some(slot) = self.entries.get_mut(key) else {
            return;
        };
        let size = entry_size(key, &slot.model);
        self.bytes = self.bytes - slot.size + size;
        slot.size = size;
        self.lru.remove(&slot.used);
        self.seq += 1;
        slot.used = self.seq;
        self.lru.insert(self.seq, key.to_vec());
    }

    fn remove_entry(&mut self, key: &[u8]) {
        if let Some(slot) = self.entries.remove(key) {
            self.bytes -= slot.size;
            self.lru.remove(&slot.used);
        }
    }

    /// The sessions of the client whose index is `index` (made empty when absent); call
    /// [`State::settle_sessions`] after changing them.
    fn sessions(&mut self, index: &[u8]) -> &mut SessionModel {
        &mut self.sessions.entry(index.to_vec()).or_default().0
    }

    /// Counts a client's sessions again.
    fn settle_sessions(&mut self, index: &[u8]) {
        if let Some((m, size)) = self.sessions.get_mut(index) {
            let now = sessions_size(index, m);
            self.bytes = self.bytes - *size + now;
            *size = now;
        }
    }

    /// Makes room for `need` more bytes under `max`: expired entries go first, then the
    /// least recently used cache entries (never `keep`'s, the one being filled); false
    /// when what is left (sessions, devices) does not leave room.
    fn make_room(&mut self, now: u64, need: usize, max: usize, keep: Option<&[u8]>) -> bool {
        if self.bytes + need <= max {
            return true;
        }
        self.sweep_now(now);
        let mut kept = None;
        while self.bytes + need > max {
            let Some((seq, key)) = self.lru.pop_first() else {
                break;
            };
            if Some(&key[..]) == keep {
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
        let dead: Vec<Vec<u8>> = self
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
        self.sessions.retain(|_, (m, size)| {
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

/// TTLs of a [`MemoryStore`] (ms). The calls of the message types carry their own (the
/// session TTL, a put's TTLs); these are for the values loaded by `product.get` and
/// `app.start`.
#[derive(Clone, Debug)]
pub struct MemoryConfig {
    /// Lease of a load.
    pub lease_ms: u64,
    /// How long a loaded value is fresh.
    pub soft_ms: u64,
    /// How long a loaded value is kept.
    pub hard_ms: u64,
    /// How long a backend error is remembered.
    pub neg_ms: u64,
    /// Largest loaded value.
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

/// A call the memory store cannot run: a bug (core builds every call).
fn bad_call(script: &str, why: &str) -> Answer {
    Answer::data(
        ErrorCode::Internal,
        format!("the memory store cannot run this {script} call: {why}"),
    )
}

/// The arguments of one call, read as its script reads them.
struct Args<'a> {
    script: &'a str,
    keys: &'a [&'a [u8]],
    args: &'a [&'a [u8]],
}

impl<'a> Args<'a> {
    fn key(&self, i: usize) -> Result<&'a [u8], Answer> {
        self.keys
            .get(i)
            .copied()
            .ok_or_else(|| bad_call(self.script, "a key is missing"))
    }

    fn arg(&self, i: usize) -> Result<&'a [u8], Answer> {
        self.args
            .get(i)
            .copied()
            .ok_or_else(|| bad_call(self.script, "an argument is missing"))
    }

    fn num(&self, i: usize) -> Result<u64, Answer> {
        std::str::from_utf8(self.arg(i)?)
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| bad_call(self.script, "a number is not one"))
    }
}

fn int(n: u64) -> Value {
    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

fn array(items: Vec<Value>) -> Value {
    Value::Array(items)
}

fn touch_value(t: Touch) -> Value {
    match t {
        Touch::Live {
            client,
            data,
            expires_at,
            version,
        } => array(vec![
            int(1),
            Value::Bytes(client),
            Value::Bytes(data),
            int(expires_at),
            Value::Bytes(version),
        ]),
        Touch::Expired => array(vec![int(0)]),
        Touch::VersionMismatch { stored } => array(vec![int(2), Value::Bytes(stored)]),
    }
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

    /// Runs one script call on the models, as the script runs on Redis (its time is this
    /// host's clock: the `now_ms` test argument is not read).
    fn exec(&self, st: &mut State, now: u64, a: &Args<'_>) -> Result<Value, Answer> {
        let max = self.config.memory_max;
        let full = || Answer::Transport(TransportError::StoreFull);
        match a.script {
            "sc-read" => {
                let k = a.key(0)?;
                let value = st.entries.get(k).and_then(|s| s.model.read(now));
                bump(if value.is_some() {
                    st.settle(k);
                    &self.hits
                } else {
                    &self.misses
                });
                Ok(value.map_or(Value::Nil, Value::Bytes))
            }
            "sc-put" => {
                let (k, value) = (a.key(0)?, a.arg(0)?);
                let (soft, hard) = (a.num(1)?, a.num(2)?);
                if !st.make_room(now, value.len(), max, Some(k)) {
                    return Err(full());
                }
                let put = st.entry(k).put(now, value, soft, hard);
                st.settle(k);
                Ok(array(vec![int(put.version), int(put.fence)]))
            }
            "sc-invalidate" => {
                let k = a.key(0)?;
                let tombstone = a.num(0)?;
                let dropped = st
                    .entries
                    .get_mut(k)
                    .is_some_and(|s| s.model.invalidate(now, tombstone));
                st.settle(k);
                Ok(int(u64::from(dropped)))
            }
            "sess-create" => {
                let index = a.key(1)?;
                let (sid, client, version, data) = (a.arg(0)?, a.arg(1)?, a.arg(2)?, a.arg(5)?);
                let (ttl, max_age) = (a.num(3)?, a.num(4)?);
                let need = OVERHEAD + sid.len() + client.len() + version.len() + data.len();
                if !st.make_room(now, need, max, None) {
                    return Err(full());
                }
                let created = st
                    .sessions(index)
                    .create(now, sid, client, version, ttl, max_age, data);
                st.settle_sessions(index);
                Ok(match created {
                    CreateReply::Created { expires_at } => array(vec![int(1), int(expires_at)]),
                    CreateReply::Taken => array(vec![int(0)]),
                })
            }
            "sess-touch" => {
                let index = a.key(1)?;
                let version = (a.arg(1)? == b"1").then_some(a.arg(2)?);
                let (sid, touched) = (a.arg(0)?, Touch::Expired);
                let touched = match st.sessions.get_mut(index) {
                    Some((m, _)) => m.touch(now, sid, version),
                    None => touched,
                };
                st.settle_sessions(index);
                Ok(touch_value(touched))
            }
            "sess-update" => {
                let index = a.key(1)?;
                let (sid, version, data) = (a.arg(0)?, a.arg(1)?, a.arg(2)?);
                let Some((m, _)) = st.sessions.get(index) else {
                    return Ok(array(vec![int(0)]));
                };
                let old = m.session(sid).map_or(0, |s| s.data.len());
                if !st.make_room(now, data.len().saturating_sub(old), max, None) {
                    return Err(full());
                }
                let updated = st.sessions(index).update(now, sid, version, data);
                st.settle_sessions(index);
                Ok(match updated {
                    UpdateReply::Updated { expires_at } => array(vec![int(1), int(expires_at)]),
                    UpdateReply::Expired => array(vec![int(0)]),
                    UpdateReply::VersionMismatch { stored } => {
                        array(vec![int(2), Value::Bytes(stored)])
                    }
                })
            }
            "sess-destroy" => {
                let index = a.key(1)?;
                let sid = a.arg(0)?;
                let destroyed = match st.sessions.get_mut(index) {
                    Some((m, _)) => m.destroy(now, sid),
                    None => false,
                };
                st.settle_sessions(index);
                Ok(int(u64::from(destroyed)))
            }
            "sess-list" => {
                let index = a.key(0)?;
                let list = st
                    .sessions
                    .get(index)
                    .map_or_else(Vec::new, |(m, _)| m.list(now));
                Ok(array(
                    list.into_iter()
                        .flat_map(|(sid, x)| [Value::Bytes(sid), int(x)])
                        .collect(),
                ))
            }
            "device-bind" => {
                let (key, client) = (a.key(0)?, a.arg(0)?);
                let size = |c: &[u8]| OVERHEAD + key.len() + c.len();
                let old = st.devices.get(key).map_or(0, |c| size(c));
                if !st.make_room(now, size(client).saturating_sub(old), max, None) {
                    return Err(full());
                }
                st.devices.insert(key.to_vec(), client.to_vec());
                st.bytes = st.bytes + size(client) - old;
                Ok(int(1))
            }
            "sess-guard" => {
                let (index, sid) = (a.key(1)?, a.arg(0)?);
                let script = std::str::from_utf8(a.arg(2)?)
                    .map_err(|_| bad_call(a.script, "the guarded script's name"))?;
                let live = match st.sessions.get_mut(index) {
                    Some((m, _)) => m.guard(now, sid),
                    None => false,
                };
                if !live {
                    st.settle_sessions(index);
                    return Ok(array(vec![int(0)]));
                }
                let before = st.sessions(index).session(sid).map_or(0, |s| s.expires_at);
                let inner = Args {
                    script,
                    keys: a.keys.get(2..).unwrap_or_default(),
                    args: a.args.get(3..).unwrap_or_default(),
                };
                let reply = self.exec(st, now, &inner)?;
                let x = st.sessions(index).slide(now, sid, before);
                st.settle_sessions(index);
                Ok(array(vec![int(1), int(x), reply]))
            }
            other => Err(bad_call(other, "not a call of a message type")),
        }
    }

    /// Runs the loader under the lease `fence` and fills; `Ok(None)` when the fill was
    /// fenced (ask again).
    fn load(&self, key: &[u8], fence: u64, loader: Loader<'_>) -> Result<Option<Vec<u8>>, Answer> {
        let started = now_ms();
        bump(&self.loads);
        let result = loader();
        let now = now_ms();
        let mut st = self.lock();
        let c = &self.config;
        let out = match result {
            Ok(value) => {
                if let Err(e) = self.check_value(value.len()) {
                    st.entry(key)
                        .abandon(now, fence, b"VALUE_TOO_LARGE", b"", c.neg_ms);
                    Err(e)
                } else if !st.make_room(now, value.len(), c.memory_max, Some(key)) {
                    // Served, not kept: the store is full of sessions.
                    let full = LoadFailure::Transport(TransportError::StoreFull);
                    st.entry(key)
                        .abandon(now, fence, full.code().as_bytes(), b"", 0);
                    Ok(Some(value))
                } else {
                    let entry = st.entry(key);
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
                st.entry(key)
                    .abandon(now, fence, f.code().as_bytes(), f.message().as_bytes(), neg);
                Err(LoadFailure::answer(&f.code(), f.message()))
            }
        };
        st.settle(key);
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

    fn run(&self, call: &Call<'_>) -> Result<Value, Answer> {
        let keys: Vec<&[u8]> = call.keys.iter().map(|k| &k[..]).collect();
        let args: Vec<&[u8]> = call.args.iter().map(|a| &a[..]).collect();
        let a = Args {
            script: call.script.name(),
            keys: &keys,
            args: &args,
        };
        let mut st = self.lock();
        let out = self.exec(&mut st, now_ms(), &a);
        drop(st);
        // A put or an invalidation wakes the reads waiting on a lease.
        self.changed.notify_all();
        out
    }

    fn get_or_load(
        &self,
        session: Option<&SessionId>,
        client: &str,
        kind: &str,
        deadline: Instant,
        loader: Loader<'_>,
    ) -> Result<Vec<u8>, Answer> {
        let keys = ClientKeys::new(client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let key = keys.entry(kind.as_bytes()).map_err(input)?;
        // The session's index and id, until the first read has checked it.
        let mut guard = match session {
            Some(sid) if sid.token() != keys.token() => {
                return Err(input(InputError::SessionClientMismatch))
            }
            Some(sid) => Some((session_keys(sid)[1].clone(), *sid)),
            None => None,
        };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Answer::Transport(TransportError::LoadTimeout));
            }
            // The lease covers the whole wait for a worker (no heartbeat thread here).
            let lease = self.config.lease_ms + u64::try_from(left.as_millis()).unwrap_or(0);
            let mut st = self.lock();
            let now = now_ms();
            // Under a session, the first read checks and slides it in the same step.
            let session = guard.take();
            if let Some((index, sid)) = &session {
                let live = match st.sessions.get_mut(index) {
                    Some((m, _)) => m.guard(now, sid.as_bytes()),
                    None => false,
                };
                if !live {
                    st.settle_sessions(index);
                    return Err(Answer::data(
                        ErrorCode::SessionExpired,
                        ErrorCode::SessionExpired.summary(),
                    ));
                }
            }
            let reply = st.entry(&key).get(now, lease, &self.owner, 0.0, true);
            st.settle(&key);
            if let Some((index, sid)) = &session {
                st.sessions(index).slide(now, sid.as_bytes(), 0);
                st.settle_sessions(index);
            }
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
                    return Ok(match self.load(&key, fence, loader) {
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
                    if let Some(value) = self.load(&key, fence, loader)? {
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

    fn warm(
        &self,
        device: &str,
        kinds: &[String],
        loader: WarmLoader<'_>,
    ) -> Result<usize, Answer> {
        check_device_id(device.as_bytes()).map_err(input)?;
        let dkey = device_key(device.as_bytes()).map_err(input)?;
        let Some(client) = self.lock().devices.get(&dkey).cloned() else {
            return Ok(0);
        };
        let client = String::from_utf8_lossy(&client).into_owned();
        let keys = ClientKeys::new(client.as_bytes(), &TokenKey::DEFAULT).map_err(input)?;
        let now = now_ms();
        let granted: Vec<(&String, Vec<u8>, u64)> = {
            let mut st = self.lock();
            kinds
                .iter()
                .filter_map(|kind| {
                    let key = keys.entry(kind.as_bytes()).ok()?;
                    let fence =
                        st.entry(&key)
                            .warm_begin(now, self.config.lease_ms * 15, &self.owner);
                    st.settle(&key);
                    fence.map(|fence| (kind, key, fence))
                })
                .collect()
        };
        std::thread::scope(|s| {
            for (kind, key, fence) in &granted {
                let client = &client;
                s.spawn(move || {
                    let mut once = || loader(client, kind);
                    let _ = self.load(key, *fence, &mut once);
                });
            }
        });
        Ok(granted.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use keyroute::cache::{decode_read, Guarded, PutReply};

    fn sid_of(client: &[u8], n: u8) -> SessionId {
        SessionId::new(
            keyroute::cache::ClientToken::of(client, &TokenKey::DEFAULT).expect("token"),
            [n; 16],
        )
    }

    /// The memory store runs a call under a session as `sess-guard` does: the call runs
    /// only while the session is live, and the session slides.
    #[test]
    fn guarded_calls() {
        let store = MemoryStore::new(MemoryConfig::default());
        let keys = ClientKeys::new(b"c1", &TokenKey::DEFAULT).expect("keys");
        let entry = keys.entry(b"cards").expect("kind");
        let sid = sid_of(b"c1", 1);
        let put = Call::put(&entry, b"v", 60_000, 60_000, store.notify(), None);
        let guarded = Call::in_session(&sid, put.clone(), None).expect("same client");
        assert_eq!(
            Guarded::decode(store.run(&guarded).expect("runs")),
            Ok(Guarded::Expired)
        );
        assert_eq!(
            decode_read(store.run(&Call::read(&entry, None)).expect("runs")),
            Ok(None),
            "the put did not run"
        );
        let create = Call::sess_create(&sid, b"c1", b"1", 1000, 0, b"", None);
        store.run(&create).expect("created");
        let Ok(Guarded::Live { expires_at, reply }) =
            Guarded::decode(store.run(&guarded).expect("runs"))
        else {
            panic!("live");
        };
        assert!(expires_at > now_ms());
        assert_eq!(PutReply::decode(reply).map(|p| p.version), Ok(1));
        assert_eq!(
            decode_read(store.run(&Call::read(&entry, None)).expect("runs")),
            Ok(Some(b"v".to_vec()))
        );
    }

    #[test]
    fn product_get_under_a_session() {
        let store = MemoryStore::new(MemoryConfig::default());
        let deadline = Instant::now() + Duration::from_secs(5);
        let sid = sid_of(b"c1", 2);
        let mut loader = || Ok(b"loaded".to_vec());
        let expired = store.get_or_load(Some(&sid), "c1", "cards", deadline, &mut loader);
        assert!(matches!(expired, Err(Answer::Data { code, .. }) if code == "SESSION_EXPIRED"));
        assert_eq!(store.stats().backend_loads, 0, "nothing was loaded");
        let other = sid_of(b"c2", 2);
        let mismatch = store.get_or_load(Some(&other), "c1", "cards", deadline, &mut loader);
        assert!(
            matches!(mismatch, Err(Answer::Data { code, .. }) if code == "SESSION_CLIENT_MISMATCH")
        );
        store
            .run(&Call::sess_create(&sid, b"c1", b"1", 1000, 0, b"", None))
            .expect("created");
        let got = store.get_or_load(Some(&sid), "c1", "cards", deadline, &mut loader);
        assert_eq!(got.ok(), Some(b"loaded".to_vec()));
    }
}
