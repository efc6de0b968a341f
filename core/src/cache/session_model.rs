//! [`SessionModel`]: one client's sessions and session index in memory, with exactly the
//! semantics of [`SESS_CREATE`](super::SESS_CREATE), [`SESS_TOUCH`](super::SESS_TOUCH),
//! [`SESS_UPDATE`](super::SESS_UPDATE), [`SESS_DESTROY`](super::SESS_DESTROY),
//! [`SESS_LIST`](super::SESS_LIST) and the session part of
//! [`SESS_GUARD`](super::SESS_GUARD) (checked against a real Redis like
//! [`EntryModel`](super::EntryModel)).
//!
//! A session is a hash `c` (client id), `ver` (service version), `d` (data), `ca`
//! (created, ms), `ttl`, `ma` (max age, 0 = none), `x` (expiry, the key's `PEXPIREAT`).
//! Each touch slides `x` to `now + ttl`, never past `ca + ma`. The index is a sorted set
//! session id → `x`; every create, touch and destroy removes ids whose `x` ≤ now and sets
//! the index's `PEXPIREAT` to its highest `x`, so the index never outlives its sessions.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;

use super::reply::{CreateReply, Touch, UpdateReply};

/// A stored session (see the module docs).
///
/// ```
/// let mut m = keyroute::cache::SessionModel::new();
/// m.create(5, b"t.a", b"c1", b"v1", 100, 0, b"{}");
/// assert_eq!(m.session(b"t.a").map(|s| s.expires_at), Some(105));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Session {
    /// `c`: the client id.
    pub client: Vec<u8>,
    /// `ver`: the service version that created it.
    pub version: Vec<u8>,
    /// `d`: its data.
    pub data: Vec<u8>,
    /// `ca`: when it was created (ms).
    pub created_at: u64,
    /// `ttl`: its sliding lifetime (ms).
    pub ttl_ms: u64,
    /// `ma`: its maximum age (ms), 0 = none.
    pub max_age_ms: u64,
    /// `x`: its expiry (ms).
    pub expires_at: u64,
}

impl Session {
    /// The hash fields, sorted by name (what `HGETALL` gives, sorted).
    ///
    /// ```
    /// use keyroute::cache::Session;
    /// let s = Session { client: b"c".to_vec(), version: b"v".to_vec(), data: vec![], created_at: 1, ttl_ms: 2, max_age_ms: 0, expires_at: 3 };
    /// assert_eq!(s.fields()[0], ("c", b"c".to_vec()));
    /// assert_eq!(s.fields().len(), 7);
    /// ```
    pub fn fields(&self) -> Vec<(&'static str, Vec<u8>)> {
        let n = |x: u64| alloc::format!("{x}").into_bytes();
        alloc::vec![
            ("c", self.client.clone()),
            ("ca", n(self.created_at)),
            ("d", self.data.clone()),
            ("ma", n(self.max_age_ms)),
            ("ttl", n(self.ttl_ms)),
            ("ver", self.version.clone()),
            ("x", n(self.expires_at)),
        ]
    }
}

/// One client's sessions and index in memory (see the module docs). Session ids are the
/// bytes of [`SessionId`](super::SessionId)s.
///
/// ```
/// use keyroute::cache::{CreateReply, SessionModel, Touch};
/// let mut m = SessionModel::new();
/// assert_eq!(m.create(0, b"t.a", b"c1", b"v1", 100, 0, b"{}"), CreateReply::Created { expires_at: 100 });
/// assert!(matches!(m.touch(50, b"t.a", Some(b"v1")), Touch::Live { expires_at: 150, .. }));
/// assert_eq!(m.touch(50, b"t.a", Some(b"v2")), Touch::VersionMismatch { stored: b"v1".to_vec() });
/// assert_eq!(m.touch(150, b"t.a", None), Touch::Expired);
/// assert!(m.list(150).is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionModel {
    sessions: BTreeMap<Vec<u8>, Session>,
    index: BTreeMap<Vec<u8>, u64>,
}

impl SessionModel {
    /// No sessions.
    ///
    /// ```
    /// assert!(keyroute::cache::SessionModel::new().index().is_empty());
    /// ```
    pub const fn new() -> Self {
        SessionModel {
            sessions: BTreeMap::new(),
            index: BTreeMap::new(),
        }
    }

    /// The stored session of `sid`, if its key exists (expired ones stay until an
    /// operation on them).
    ///
    /// ```
    /// assert!(keyroute::cache::SessionModel::new().session(b"t.a").is_none());
    /// ```
    pub fn session(&self, sid: &[u8]) -> Option<&Session> {
        self.sessions.get(sid)
    }

    /// The index as `ZRANGE 0 -1 WITHSCORES` gives it: by expiry, then id.
    ///
    /// ```
    /// let mut m = keyroute::cache::SessionModel::new();
    /// m.create(0, b"t.b", b"c", b"", 10, 0, b"");
    /// m.create(0, b"t.a", b"c", b"", 10, 0, b"");
    /// assert_eq!(m.index(), vec![(b"t.a".to_vec(), 10), (b"t.b".to_vec(), 10)]);
    /// ```
    pub fn index(&self) -> Vec<(Vec<u8>, u64)> {
        let mut out: Vec<(Vec<u8>, u64)> =
            self.index.iter().map(|(k, v)| (k.clone(), *v)).collect();
        out.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// The index key's expiry (`PEXPIREAT`): its highest score, `None` when empty (the
    /// key does not exist).
    ///
    /// ```
    /// let mut m = keyroute::cache::SessionModel::new();
    /// assert_eq!(m.index_expiry(), None);
    /// m.create(0, b"t.a", b"c", b"", 10, 0, b"");
    /// assert_eq!(m.index_expiry(), Some(10));
    /// ```
    pub fn index_expiry(&self) -> Option<u64> {
        self.index.values().copied().max()
    }

    /// Prunes the index; its expiry follows from what is left.
    fn tidy(&mut self, now: u64) {
        self.index.retain(|_, x| *x > now);
    }

    /// [`SESS_CREATE`](super::SESS_CREATE).
    ///
    /// ```
    /// use keyroute::cache::{CreateReply, SessionModel};
    /// let mut m = SessionModel::new();
    /// // A max age shorter than the TTL caps the first expiry.
    /// assert_eq!(m.create(0, b"t.a", b"c", b"v", 100, 30, b""), CreateReply::Created { expires_at: 30 });
    /// assert_eq!(m.create(1, b"t.a", b"c", b"v", 100, 30, b""), CreateReply::Taken);
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &mut self,
        now: u64,
        sid: &[u8],
        client: &[u8],
        version: &[u8],
        ttl_ms: u64,
        max_age_ms: u64,
        data: &[u8],
    ) -> CreateReply {
        if self.sessions.get(sid).is_some_and(|s| s.expires_at > now) {
            return CreateReply::Taken;
        }
        let mut x = now + ttl_ms;
        if max_age_ms > 0 && now + max_age_ms < x {
            x = now + max_age_ms;
        }
        self.sessions.insert(
            sid.to_vec(),
            Session {
                client: client.to_vec(),
                version: version.to_vec(),
                data: data.to_vec(),
                created_at: now,
                ttl_ms,
                max_age_ms,
                expires_at: x,
            },
        );
        self.index.insert(sid.to_vec(), x);
        self.tidy(now);
        CreateReply::Created { expires_at: x }
    }

    /// [`SESS_TOUCH`](super::SESS_TOUCH); `version` `Some` checks the service version.
    ///
    /// ```
    /// use keyroute::cache::{SessionModel, Touch};
    /// let mut m = SessionModel::new();
    /// m.create(0, b"t.a", b"c", b"v", 100, 150, b"");
    /// assert!(matches!(m.touch(90, b"t.a", None), Touch::Live { expires_at: 150, .. })); // capped by max age
    /// assert_eq!(m.touch(150, b"t.a", None), Touch::Expired);
    /// ```
    pub fn touch(&mut self, now: u64, sid: &[u8], version: Option<&[u8]>) -> Touch {
        let live = self.sessions.get(sid).is_some_and(|s| s.expires_at > now);
        if !live {
            self.sessions.remove(sid);
            self.index.remove(sid);
            self.tidy(now);
            return Touch::Expired;
        }
        let Some(s) = self.sessions.get_mut(sid) else {
            return Touch::Expired;
        };
        if let Some(want) = version {
            if want != s.version.as_slice() {
                return Touch::VersionMismatch {
                    stored: s.version.clone(),
                };
            }
        }
        let mut x = now + s.ttl_ms;
        if s.max_age_ms > 0 && s.created_at + s.max_age_ms < x {
            x = s.created_at + s.max_age_ms;
        }
        s.expires_at = x;
        let reply = Touch::Live {
            client: s.client.clone(),
            data: s.data.clone(),
            expires_at: x,
            version: s.version.clone(),
        };
        self.index.insert(sid.to_vec(), x);
        self.tidy(now);
        reply
    }

    /// The new expiry of a live session slid at `now`: `now + ttl`, never past
    /// `created + max age`.
    fn slid(s: &Session, now: u64) -> u64 {
        let mut x = now + s.ttl_ms;
        if s.max_age_ms > 0 && s.created_at + s.max_age_ms < x {
            x = s.created_at + s.max_age_ms;
        }
        x
    }

    /// [`SESS_UPDATE`](super::SESS_UPDATE): replaces the data of a live session created by
    /// `version`, and slides it.
    ///
    /// ```
    /// use keyroute::cache::{SessionModel, UpdateReply};
    /// let mut m = SessionModel::new();
    /// m.create(0, b"t.a", b"c", b"v1", 100, 0, b"old");
    /// assert_eq!(m.update(10, b"t.a", b"v1", b"new"), UpdateReply::Updated { expires_at: 110 });
    /// assert_eq!(m.session(b"t.a").map(|s| s.data.clone()), Some(b"new".to_vec()));
    /// assert_eq!(m.update(20, b"t.a", b"v2", b"x"), UpdateReply::VersionMismatch { stored: b"v1".to_vec() });
    /// assert_eq!(m.update(110, b"t.a", b"v1", b"x"), UpdateReply::Expired);
    /// ```
    pub fn update(&mut self, now: u64, sid: &[u8], version: &[u8], data: &[u8]) -> UpdateReply {
        if !self.guard(now, sid) {
            return UpdateReply::Expired;
        }
        let Some(s) = self.sessions.get_mut(sid) else {
            return UpdateReply::Expired;
        };
        if s.version != version {
            return UpdateReply::VersionMismatch {
                stored: s.version.clone(),
            };
        }
        let x = Self::slid(s, now);
        s.data = data.to_vec();
        s.expires_at = x;
        self.index.insert(sid.to_vec(), x);
        self.tidy(now);
        UpdateReply::Updated { expires_at: x }
    }

    /// The first half of [`SESS_GUARD`](super::SESS_GUARD): whether `sid` is live (then
    /// the guarded call runs, and [`slide`](Self::slide) follows it); a session that is
    /// not is removed, as a touch removes it.
    ///
    /// ```
    /// let mut m = keyroute::cache::SessionModel::new();
    /// m.create(0, b"t.a", b"c", b"v", 100, 0, b"");
    /// assert!(m.guard(50, b"t.a"));
    /// assert!(!m.guard(100, b"t.a"));
    /// assert!(m.session(b"t.a").is_none());
    /// ```
    pub fn guard(&mut self, now: u64, sid: &[u8]) -> bool {
        if self.sessions.get(sid).is_some_and(|s| s.expires_at > now) {
            return true;
        }
        self.sessions.remove(sid);
        self.index.remove(sid);
        self.tidy(now);
        false
    }

    /// The second half of [`SESS_GUARD`](super::SESS_GUARD), after the guarded call: slides
    /// `sid` as a touch does, if it still exists; its expiry (`before` when the guarded
    /// call removed it).
    ///
    /// ```
    /// let mut m = keyroute::cache::SessionModel::new();
    /// m.create(0, b"t.a", b"c", b"v", 100, 0, b"");
    /// assert_eq!(m.slide(30, b"t.a", 100), 130);
    /// m.destroy(40, b"t.a");
    /// assert_eq!(m.slide(40, b"t.a", 130), 130);
    /// ```
    pub fn slide(&mut self, now: u64, sid: &[u8], before: u64) -> u64 {
        let Some(s) = self.sessions.get_mut(sid) else {
            return before;
        };
        let x = Self::slid(s, now);
        s.expires_at = x;
        self.index.insert(sid.to_vec(), x);
        self.tidy(now);
        x
    }

    /// [`SESS_DESTROY`](super::SESS_DESTROY): whether the session was live.
    ///
    /// ```
    /// let mut m = keyroute::cache::SessionModel::new();
    /// m.create(0, b"t.a", b"c", b"v", 100, 0, b"");
    /// assert!(m.destroy(10, b"t.a"));
    /// assert!(!m.destroy(10, b"t.a"));
    /// ```
    pub fn destroy(&mut self, now: u64, sid: &[u8]) -> bool {
        let live = self.sessions.get(sid).is_some_and(|s| s.expires_at > now);
        self.sessions.remove(sid);
        self.index.remove(sid);
        self.tidy(now);
        live
    }

    /// [`SESS_LIST`](super::SESS_LIST): the live sessions, by expiry then id.
    ///
    /// ```
    /// let mut m = keyroute::cache::SessionModel::new();
    /// m.create(0, b"t.a", b"c", b"v", 100, 0, b"");
    /// assert_eq!(m.list(99), vec![(b"t.a".to_vec(), 100)]);
    /// assert!(m.list(100).is_empty());
    /// ```
    pub fn list(&self, now: u64) -> Vec<(Vec<u8>, u64)> {
        self.index().into_iter().filter(|(_, x)| *x > now).collect()
    }
}
