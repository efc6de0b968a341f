//! [`EntryModel`]: one cache entry in memory, with exactly the semantics of the entry
//! scripts ([`SC_GET`](super::SC_GET), [`SC_FILL`](super::SC_FILL),
//! [`SC_EXTEND`](super::SC_EXTEND), [`SC_ABANDON`](super::SC_ABANDON),
//! [`SC_INVALIDATE`](super::SC_INVALIDATE), [`WARM_BEGIN`](super::WARM_BEGIN) for one
//! key, [`SC_READ`](super::SC_READ), [`SC_PUT`](super::SC_PUT)). It is the specification the scripts are tested against: the same operations at
//! the same `now` give the same replies and leave the same hash fields
//! (`redis/tests/cache_model.rs` runs thousands of random sequences on a real Redis).
//!
//! The entry hash:
//!
//! | field | meaning |
//! |---|---|
//! | `v`, `ver` | value, version (bumped by every fill) |
//! | `sx`, `d` | soft expiry (ms), how long the last load took (XFetch's δ) |
//! | `st`, `lx`, `lo` | `u` while leased (else `i`), lease expiry, lease owner |
//! | `f` | fence of the last lease: `max(f + 1, now)`, so it keeps growing even after a failover lost increments |
//! | `e`, `em`, `ex` | cached backend error code, message, expiry |
//! | `hx` | hard expiry: the key's `PEXPIREAT`; an entry whose `hx` ≤ now is absent |

use alloc::vec::Vec;

use super::reply::{FillReply, GetReply, PutReply};

/// The lease state of an entry (`st`).
///
/// ```
/// assert_eq!(keyroute::cache::LeaseState::Updating.as_field(), "u");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeaseState {
    /// `u`: leased to a loader.
    Updating,
    /// `i`: idle.
    Idle,
}

impl LeaseState {
    /// The stored form: `u` or `i`.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::LeaseState::Idle.as_field(), "i");
    /// ```
    pub const fn as_field(self) -> &'static str {
        match self {
            LeaseState::Updating => "u",
            LeaseState::Idle => "i",
        }
    }
}

/// The fields of an entry hash (see the module docs); `None` is an absent field.
///
/// ```
/// use keyroute::cache::{EntryModel, LeaseState};
/// let mut m = EntryModel::new();
/// m.get(10, 100, b"me", 0.0, false);
/// let e = m.entry().expect("leased");
/// assert_eq!((e.st, e.f, e.lx, e.hx), (Some(LeaseState::Updating), Some(10), Some(110), Some(210)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub struct Entry {
    pub v: Option<Vec<u8>>,
    pub ver: Option<u64>,
    pub sx: Option<u64>,
    pub d: Option<u64>,
    pub st: Option<LeaseState>,
    pub lx: Option<u64>,
    pub lo: Option<Vec<u8>>,
    pub f: Option<u64>,
    pub e: Option<Vec<u8>>,
    pub em: Option<Vec<u8>>,
    pub ex: Option<u64>,
    pub hx: Option<u64>,
}

impl Entry {
    /// The fields present, as `(name, stored bytes)` sorted by name (what `HGETALL`
    /// gives, sorted).
    ///
    /// ```
    /// use keyroute::cache::Entry;
    /// let e = Entry { f: Some(5), hx: Some(9), ..Entry::default() };
    /// assert_eq!(e.fields(), vec![("f", b"5".to_vec()), ("hx", b"9".to_vec())]);
    /// ```
    pub fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        let n = |x: u64| alloc::format!("{x}").into_bytes();
        let mut out = Vec::new();
        let mut put = |name, value: Option<Vec<u8>>| {
            if let Some(value) = value {
                out.push((name, value));
            }
        };
        put("d", self.d.map(n));
        put("e", self.e.clone());
        put("em", self.em.clone());
        put("ex", self.ex.map(n));
        put("f", self.f.map(n));
        put("hx", self.hx.map(n));
        put("lo", self.lo.clone());
        put("lx", self.lx.map(n));
        put("st", self.st.map(|s| s.as_field().as_bytes().to_vec()));
        put("sx", self.sx.map(n));
        put("v", self.v.clone());
        put("ver", self.ver.map(n));
        out
    }
}

/// One cache entry in memory (see the module docs). Every operation takes `now` (ms).
///
/// ```
/// use keyroute::cache::{EntryModel, FillReply, GetReply};
/// let mut m = EntryModel::new();
/// let GetReply::Lease { fence, takeover: false } = m.get(1000, 2000, b"a", 0.0, true) else { panic!() };
/// assert!(matches!(m.get(1001, 2000, b"b", 0.0, true), GetReply::Wait { remaining_ms: 1999, .. }));
/// assert_eq!(m.fill(1200, fence, b"v", 60_000, 600_000, 200), FillReply::Stored { version: 1 });
/// assert_eq!(m.get(1300, 2000, b"b", 0.0, true), GetReply::Hit { value: b"v".to_vec(), version: 1 });
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct EntryModel {
    entry: Option<Entry>,
}

impl EntryModel {
    /// An absent entry.
    ///
    /// ```
    /// assert!(keyroute::cache::EntryModel::new().entry().is_none());
    /// ```
    pub const fn new() -> Self {
        EntryModel { entry: None }
    }

    /// The stored hash, if the key exists (expired entries stay until an operation
    /// sees them, as in Redis under test time).
    ///
    /// ```
    /// let m = keyroute::cache::EntryModel::new();
    /// assert_eq!(m.entry(), None);
    /// ```
    pub fn entry(&self) -> Option<&Entry> {
        self.entry.as_ref()
    }

    /// Drops the entry if its hard expiry has passed (what every script does first).
    fn expire(&mut self, now: u64) {
        if self
            .entry
            .as_ref()
            .is_some_and(|e| e.hx.is_some_and(|hx| hx <= now))
        {
            self.entry = None;
        }
    }

    /// Leases the entry (creating it): the new fence.
    fn grant(&mut self, now: u64, lease_ms: u64, owner: &[u8]) -> u64 {
        let e = self.entry.get_or_insert_with(Entry::default);
        let fence = (e.f.unwrap_or(0) + 1).max(now);
        e.st = Some(LeaseState::Updating);
        e.lx = Some(now + lease_ms);
        e.f = Some(fence);
        e.lo = Some(owner.to_vec());
        e.hx = Some(e.hx.unwrap_or(0).max(now + 2 * lease_ms));
        fence
    }

    /// [`SC_GET`](super::SC_GET).
    ///
    /// ```
    /// use keyroute::cache::{EntryModel, GetReply};
    /// let mut m = EntryModel::new();
    /// assert!(matches!(m.get(5, 100, b"a", 0.0, false), GetReply::Lease { fence: 5, takeover: false }));
    /// // The lease expired unfilled: the next caller takes over with a higher fence.
    /// assert!(matches!(m.get(200, 100, b"b", 0.0, false), GetReply::Lease { fence: 200, takeover: true }));
    /// ```
    pub fn get(
        &mut self,
        now: u64,
        lease_ms: u64,
        owner: &[u8],
        xfetch_e: f64,
        allow_stale: bool,
    ) -> GetReply {
        self.expire(now);
        let e = self.entry.clone().unwrap_or_default();
        let (ver, sx, d) = (e.ver.unwrap_or(0), e.sx.unwrap_or(0), e.d.unwrap_or(0));
        let (lx, f, ex) = (e.lx.unwrap_or(0), e.f.unwrap_or(0), e.ex.unwrap_or(0));
        let updating = e.st == Some(LeaseState::Updating);
        let leased = updating && lx > now;
        let takeover = updating && !leased;
        let err = e.e.is_some() && ex > now;
        let xe = if xfetch_e.is_finite() && xfetch_e > 0.0 {
            xfetch_e.min(1_000_000.0)
        } else {
            0.0
        };
        let error = |e: &Entry| GetReply::Error {
            code: e.e.clone().unwrap_or_default(),
            message: e.em.clone().unwrap_or_default(),
            remaining_ms: ex - now,
        };
        let wait = GetReply::Wait {
            remaining_ms: lx.saturating_sub(now),
            fence: f,
        };
        if let Some(value) = e.v.clone() {
            if now < sx {
                if !leased && !err && super::xfetch::should_refresh(now, sx, d, xe) {
                    let fence = self.grant(now, lease_ms, owner);
                    return GetReply::Refresh {
                        value,
                        version: ver,
                        fence,
                        takeover,
                    };
                }
                return GetReply::Hit {
                    value,
                    version: ver,
                };
            }
            if leased || err {
                if allow_stale {
                    return GetReply::Stale {
                        value,
                        version: ver,
                    };
                }
                return if leased { wait } else { error(&e) };
            }
            let fence = self.grant(now, lease_ms, owner);
            if allow_stale {
                return GetReply::Refresh {
                    value,
                    version: ver,
                    fence,
                    takeover,
                };
            }
            return GetReply::Lease { fence, takeover };
        }
        if leased {
            return wait;
        }
        if err {
            return error(&e);
        }
        GetReply::Lease {
            fence: self.grant(now, lease_ms, owner),
            takeover,
        }
    }

    /// [`SC_FILL`](super::SC_FILL).
    ///
    /// ```
    /// use keyroute::cache::{EntryModel, FillReply};
    /// let mut m = EntryModel::new();
    /// assert_eq!(m.fill(5, 1, b"v", 10, 10, 0), FillReply::Fenced { current: 0 });
    /// ```
    pub fn fill(
        &mut self,
        now: u64,
        fence: u64,
        value: &[u8],
        soft_ms: u64,
        hard_ms: u64,
        load_ms: u64,
    ) -> FillReply {
        self.expire(now);
        let Some(e) = self.entry.as_mut() else {
            return FillReply::Fenced { current: 0 };
        };
        let f = e.f.unwrap_or(0);
        if f != fence {
            return FillReply::Fenced { current: f };
        }
        let ver = e.ver.unwrap_or(0);
        if e.st != Some(LeaseState::Updating) {
            return FillReply::Duplicate { version: ver };
        }
        e.lx = None;
        e.lo = None;
        e.e = None;
        e.em = None;
        e.ex = None;
        e.v = Some(value.to_vec());
        e.ver = Some(ver + 1);
        e.sx = Some(now + soft_ms);
        e.d = Some(load_ms);
        e.st = Some(LeaseState::Idle);
        e.hx = Some(now + hard_ms);
        FillReply::Stored { version: ver + 1 }
    }

    /// [`SC_EXTEND`](super::SC_EXTEND): whether the lease was extended.
    ///
    /// ```
    /// use keyroute::cache::{EntryModel, GetReply};
    /// let mut m = EntryModel::new();
    /// let GetReply::Lease { fence, .. } = m.get(5, 100, b"a", 0.0, false) else { panic!() };
    /// assert!(m.extend(90, fence, 100));
    /// assert!(!m.extend(90, fence + 1, 100));
    /// ```
    pub fn extend(&mut self, now: u64, fence: u64, lease_ms: u64) -> bool {
        self.expire(now);
        let Some(e) = self.entry.as_mut() else {
            return false;
        };
        if e.f.unwrap_or(0) != fence || e.st != Some(LeaseState::Updating) {
            return false;
        }
        e.lx = Some(now + lease_ms);
        e.hx = Some(e.hx.unwrap_or(0).max(now + 2 * lease_ms));
        true
    }

    /// [`SC_ABANDON`](super::SC_ABANDON): whether the lease was released.
    ///
    /// ```
    /// use keyroute::cache::{EntryModel, GetReply};
    /// let mut m = EntryModel::new();
    /// let GetReply::Lease { fence, .. } = m.get(5, 100, b"a", 0.0, false) else { panic!() };
    /// assert!(m.abandon(50, fence, b"E", b"down", 1000));
    /// assert!(matches!(m.get(60, 100, b"b", 0.0, false), GetReply::Error { remaining_ms: 990, .. }));
    /// ```
    pub fn abandon(
        &mut self,
        now: u64,
        fence: u64,
        code: &[u8],
        message: &[u8],
        neg_ttl_ms: u64,
    ) -> bool {
        self.expire(now);
        let Some(e) = self.entry.as_mut() else {
            return false;
        };
        if e.f.unwrap_or(0) != fence || e.st != Some(LeaseState::Updating) {
            return false;
        }
        e.lx = None;
        e.lo = None;
        e.st = Some(LeaseState::Idle);
        e.e = Some(code.to_vec());
        e.em = Some(message.to_vec());
        e.ex = Some(now + neg_ttl_ms);
        e.hx = Some(e.hx.unwrap_or(0).max(now + neg_ttl_ms));
        true
    }

    /// [`SC_INVALIDATE`](super::SC_INVALIDATE): whether the entry existed.
    ///
    /// ```
    /// use keyroute::cache::{EntryModel, FillReply, GetReply};
    /// let mut m = EntryModel::new();
    /// let GetReply::Lease { fence, .. } = m.get(5, 100, b"a", 0.0, false) else { panic!() };
    /// assert!(m.invalidate(6, 1000));
    /// assert!(matches!(m.fill(7, fence, b"old", 10, 10, 0), FillReply::Fenced { .. }));
    /// ```
    pub fn invalidate(&mut self, now: u64, tombstone_ms: u64) -> bool {
        self.expire(now);
        let Some(e) = self.entry.as_ref() else {
            return false;
        };
        self.entry = Some(Entry {
            f: Some((e.f.unwrap_or(0) + 1).max(now)),
            ver: Some(e.ver.unwrap_or(0)),
            hx: Some(now + tombstone_ms),
            ..Entry::default()
        });
        true
    }

    /// [`SC_READ`](super::SC_READ): the value, if the entry has one (nothing changes).
    ///
    /// ```
    /// use keyroute::cache::EntryModel;
    /// let mut m = EntryModel::new();
    /// assert_eq!(m.read(5), None);
    /// m.put(5, b"v", 10, 20);
    /// assert_eq!(m.read(24), Some(b"v".to_vec()));
    /// assert_eq!(m.read(25), None); // past the hard expiry
    /// ```
    pub fn read(&self, now: u64) -> Option<Vec<u8>> {
        self.entry
            .as_ref()
            .filter(|e| e.hx.is_none_or(|hx| hx > now))
            .and_then(|e| e.v.clone())
    }

    /// [`SC_PUT`](super::SC_PUT): stores `value` directly, bumping the fence (a load in
    /// flight is then fenced) and dropping any lease or cached error.
    ///
    /// ```
    /// use keyroute::cache::{EntryModel, FillReply, GetReply, PutReply};
    /// let mut m = EntryModel::new();
    /// let GetReply::Lease { fence, .. } = m.get(5, 100, b"a", 0.0, false) else { panic!() };
    /// assert_eq!(m.put(6, b"put", 60, 600), PutReply { version: 1, fence: 6 });
    /// assert!(matches!(m.fill(7, fence, b"loaded", 60, 600, 1), FillReply::Fenced { current: 6 }));
    /// assert_eq!(m.get(8, 100, b"b", 0.0, false), GetReply::Hit { value: b"put".to_vec(), version: 1 });
    /// ```
    pub fn put(&mut self, now: u64, value: &[u8], soft_ms: u64, hard_ms: u64) -> PutReply {
        self.expire(now);
        let e = self.entry.take().unwrap_or_default();
        let version = e.ver.unwrap_or(0) + 1;
        let fence = (e.f.unwrap_or(0) + 1).max(now);
        self.entry = Some(Entry {
            v: Some(value.to_vec()),
            ver: Some(version),
            sx: Some(now + soft_ms),
            d: Some(0),
            st: Some(LeaseState::Idle),
            f: Some(fence),
            hx: Some(now + hard_ms),
            ..Entry::default()
        });
        PutReply { version, fence }
    }

    /// [`WARM_BEGIN`](super::WARM_BEGIN) for this entry: the fence if it was cold and is
    /// now leased, else `None`.
    ///
    /// ```
    /// let mut m = keyroute::cache::EntryModel::new();
    /// assert_eq!(m.warm_begin(5, 100, b"w"), Some(5));
    /// assert_eq!(m.warm_begin(6, 100, b"w"), None); // leased now
    /// ```
    pub fn warm_begin(&mut self, now: u64, lease_ms: u64, owner: &[u8]) -> Option<u64> {
        self.expire(now);
        if let Some(e) = self.entry.as_ref() {
            let leased = e.st == Some(LeaseState::Updating) && e.lx.unwrap_or(0) > now;
            let err = e.e.is_some() && e.ex.unwrap_or(0) > now;
            let fresh = e.v.is_some() && e.sx.unwrap_or(0) > now;
            if fresh || leased || err {
                return None;
            }
        }
        Some(self.grant(now, lease_ms, owner))
    }
}
