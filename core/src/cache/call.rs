//! The smart cache's script calls: the [`Call`] of each cache script, built from typed
//! arguments, so every client passes the same arguments in the same form.

use alloc::borrow::Cow;
use alloc::vec;
use alloc::vec::Vec;

use super::error::InputError;
use super::keys::{session_keys, ClientKeys, KEY_PREFIX};
use super::script::{
    DEVICE_BIND, SC_ABANDON, SC_EXTEND, SC_FILL, SC_GET, SC_INVALIDATE, SC_PUT, SC_READ,
    SESS_CREATE, SESS_DESTROY, SESS_GUARD, SESS_LIST, SESS_TOUCH, SESS_UPDATE, WARM_BEGIN,
};
use super::session_id::SessionId;
use super::token::ClientToken;
use crate::script::{int_arg as int, Call, Script};

/// How the scripts that change an entry wake its waiters.
///
/// ```
/// use keyroute::cache::Notify;
/// assert_eq!(Notify::Publish.as_arg(), "PUBLISH");
/// assert_eq!(Notify::default(), Notify::Publish);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Notify {
    /// `PUBLISH` (standalone servers; waiters `SUBSCRIBE`).
    #[default]
    Publish,
    /// `SPUBLISH` (Redis Cluster; waiters `SSUBSCRIBE` on the node owning the slot).
    ShardPublish,
    /// No wake-up (waiters poll).
    Nothing,
}

impl Notify {
    /// The script argument: `PUBLISH`, `SPUBLISH` or empty.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::Notify::Nothing.as_arg(), "");
    /// ```
    pub const fn as_arg(self) -> &'static str {
        match self {
            Notify::Publish => "PUBLISH",
            Notify::ShardPublish => "SPUBLISH",
            Notify::Nothing => "",
        }
    }
}

fn text(s: &'static str) -> Cow<'static, [u8]> {
    Cow::Borrowed(s.as_bytes())
}

/// The scripts [`Call::in_session`] may guard (those `sess-guard` inlines).
const GUARDED: [&Script; 10] = [
    &SC_GET,
    &SC_READ,
    &SC_PUT,
    &SC_INVALIDATE,
    &WARM_BEGIN,
    &SESS_CREATE,
    &SESS_TOUCH,
    &SESS_UPDATE,
    &SESS_DESTROY,
    &SESS_LIST,
];

fn push_now(args: &mut Vec<Cow<'_, [u8]>>, now: Option<u64>) {
    if let Some(now) = now {
        args.push(int(now));
    }
}

/// The `xfetch_e` argument: `e` written in decimal without an exponent, `0` (off) for
/// anything not finite and positive, at most 1,000,000.
///
/// ```
/// use keyroute::cache::xfetch_arg;
/// assert_eq!(xfetch_arg(0.5), "0.5");
/// assert_eq!(xfetch_arg(f64::NAN), "0");
/// assert_eq!(xfetch_arg(1e-7), "0.0000001");
/// assert_eq!(xfetch_arg(1e300), "1000000");
/// ```
pub fn xfetch_arg(e: f64) -> alloc::string::String {
    if !(e.is_finite() && e > 0.0) {
        return "0".into();
    }
    alloc::format!("{}", e.min(1_000_000.0))
}

impl<'a> Call<'a> {
    /// [`SC_GET`](super::SC_GET): read `entry`, leasing it for `lease_ms` to `owner` when
    /// it must be loaded. `xfetch_e` = β·(−ln u) for a uniform u in (0, 1] draws an early
    /// refresh (0 = off); `allow_stale` serves a stale value while someone refreshes.
    ///
    /// ```
    /// use keyroute::cache::Call;
    /// let call = Call::get(b"kr:{c:t}:e:k", 500, b"me", 1.5, false, Some(1000));
    /// assert_eq!(call.args[2], &b"1.5"[..]);
    /// assert_eq!(call.args[4], &b"1000"[..]);
    /// ```
    pub fn get(
        entry: &'a [u8],
        lease_ms: u64,
        owner: &'a [u8],
        xfetch_e: f64,
        allow_stale: bool,
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![
            int(lease_ms),
            Cow::Borrowed(owner),
            Cow::Owned(xfetch_arg(xfetch_e).into_bytes()),
            text(if allow_stale { "1" } else { "0" }),
        ];
        push_now(&mut args, now);
        Call::new(&SC_GET, vec![Cow::Borrowed(entry)], args)
    }

    /// [`SC_FILL`](super::SC_FILL): store `value` under the lease `fence`, fresh for
    /// `soft_ms`, kept `hard_ms`; `load_ms` is how long the load took (XFetch's δ).
    ///
    /// ```
    /// use keyroute::cache::{Call, Notify};
    /// let call = Call::fill(b"kr:{c:t}:e:k", 7, b"v", 60_000, 600_000, 200, Notify::Publish, None);
    /// assert_eq!(call.args.len(), 6);
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn fill(
        entry: &'a [u8],
        fence: u64,
        value: &'a [u8],
        soft_ms: u64,
        hard_ms: u64,
        load_ms: u64,
        notify: Notify,
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![
            int(fence),
            Cow::Borrowed(value),
            int(soft_ms),
            int(hard_ms),
            int(load_ms),
            text(notify.as_arg()),
        ];
        push_now(&mut args, now);
        Call::new(&SC_FILL, vec![Cow::Borrowed(entry)], args)
    }

    /// [`SC_EXTEND`](super::SC_EXTEND): extend the lease `fence` to now + `lease_ms`.
    ///
    /// ```
    /// let call = keyroute::cache::Call::extend(b"kr:{c:t}:e:k", 7, 2000, None);
    /// assert_eq!(call.args, [&b"7"[..], b"2000"]);
    /// ```
    pub fn extend(entry: &'a [u8], fence: u64, lease_ms: u64, now: Option<u64>) -> Self {
        let mut args = vec![int(fence), int(lease_ms)];
        push_now(&mut args, now);
        Call::new(&SC_EXTEND, vec![Cow::Borrowed(entry)], args)
    }

    /// [`SC_ABANDON`](super::SC_ABANDON): release the lease `fence` after a backend error
    /// (`code`, `message`), cached for `neg_ttl_ms`.
    ///
    /// ```
    /// use keyroute::cache::{Call, Notify};
    /// let call = Call::abandon(b"kr:{c:t}:e:k", 7, b"E_BACKEND", b"down", 1000, Notify::Publish, None);
    /// assert_eq!(call.args[1], &b"E_BACKEND"[..]);
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn abandon(
        entry: &'a [u8],
        fence: u64,
        code: &'a [u8],
        message: &'a [u8],
        neg_ttl_ms: u64,
        notify: Notify,
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![
            int(fence),
            Cow::Borrowed(code),
            Cow::Borrowed(message),
            int(neg_ttl_ms),
            text(notify.as_arg()),
        ];
        push_now(&mut args, now);
        Call::new(&SC_ABANDON, vec![Cow::Borrowed(entry)], args)
    }

    /// [`SC_INVALIDATE`](super::SC_INVALIDATE): drop the value, bump the fence, keep a
    /// tombstone for `tombstone_ms`.
    ///
    /// ```
    /// use keyroute::cache::{Call, Notify};
    /// let call = Call::invalidate(b"kr:{c:t}:e:k", 4000, Notify::ShardPublish, None);
    /// assert_eq!(call.args, [&b"4000"[..], b"SPUBLISH"]);
    /// ```
    pub fn invalidate(
        entry: &'a [u8],
        tombstone_ms: u64,
        notify: Notify,
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![int(tombstone_ms), text(notify.as_arg())];
        push_now(&mut args, now);
        Call::new(&SC_INVALIDATE, vec![Cow::Borrowed(entry)], args)
    }

    /// [`WARM_BEGIN`](super::WARM_BEGIN): lease every cold entry among `entries` (all of
    /// one client, at most [`MAX_WARM_KINDS`](super::MAX_WARM_KINDS)).
    ///
    /// ```
    /// let entries = [b"kr:{c:t}:e:a".to_vec(), b"kr:{c:t}:e:b".to_vec()];
    /// let call = keyroute::cache::Call::warm_begin(&entries, 2000, b"me", None);
    /// assert_eq!(call.keys.len(), 2);
    /// ```
    pub fn warm_begin(
        entries: &'a [alloc::vec::Vec<u8>],
        lease_ms: u64,
        owner: &'a [u8],
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![int(lease_ms), Cow::Borrowed(owner)];
        push_now(&mut args, now);
        let keys = entries.iter().map(|k| Cow::Borrowed(&k[..])).collect();
        Call::new(&WARM_BEGIN, keys, args)
    }

    /// [`SESS_CREATE`](super::SESS_CREATE): create the session `sid` for `client`.
    /// `max_age_ms` 0 means none.
    ///
    /// ```
    /// use keyroute::cache::{Call, ClientToken, SessionId, TokenKey};
    /// let sid = SessionId::new(ClientToken::of(b"c1", &TokenKey::DEFAULT)?, [3; 16]);
    /// let call = Call::sess_create(&sid, b"c1", b"v1", 1_800_000, 0, b"{}", None);
    /// assert_eq!(call.keys.len(), 2);
    /// assert_eq!(call.args[0], &sid.as_bytes()[..]);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn sess_create(
        sid: &'a SessionId,
        client: &'a [u8],
        version: &'a [u8],
        ttl_ms: u64,
        max_age_ms: u64,
        data: &'a [u8],
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![
            Cow::Borrowed(&sid.as_bytes()[..]),
            Cow::Borrowed(client),
            Cow::Borrowed(version),
            int(ttl_ms),
            int(max_age_ms),
            Cow::Borrowed(data),
        ];
        push_now(&mut args, now);
        Call::new(&SESS_CREATE, session_keys(sid).map(Cow::Owned).into(), args)
    }

    /// [`SESS_TOUCH`](super::SESS_TOUCH): read `sid` and slide its expiry; with
    /// `Some(version)`, a session of another version answers a mismatch.
    ///
    /// ```
    /// use keyroute::cache::{Call, ClientToken, SessionId, TokenKey};
    /// let sid = SessionId::new(ClientToken::of(b"c1", &TokenKey::DEFAULT)?, [3; 16]);
    /// assert_eq!(Call::sess_touch(&sid, None, None).args[1], &b"0"[..]);
    /// assert_eq!(Call::sess_touch(&sid, Some(b"v2"), None).args[2], &b"v2"[..]);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn sess_touch(sid: &'a SessionId, version: Option<&'a [u8]>, now: Option<u64>) -> Self {
        let mut args = vec![
            Cow::Borrowed(&sid.as_bytes()[..]),
            text(if version.is_some() { "1" } else { "0" }),
            Cow::Borrowed(version.unwrap_or_default()),
        ];
        push_now(&mut args, now);
        Call::new(&SESS_TOUCH, session_keys(sid).map(Cow::Owned).into(), args)
    }

    /// [`SESS_DESTROY`](super::SESS_DESTROY): remove `sid`.
    ///
    /// ```
    /// use keyroute::cache::{Call, ClientToken, SessionId, TokenKey};
    /// let sid = SessionId::new(ClientToken::of(b"c1", &TokenKey::DEFAULT)?, [3; 16]);
    /// assert_eq!(Call::sess_destroy(&sid, None).script.name(), "sess-destroy");
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn sess_destroy(sid: &'a SessionId, now: Option<u64>) -> Self {
        let mut args = vec![Cow::Borrowed(&sid.as_bytes()[..])];
        push_now(&mut args, now);
        Call::new(
            &SESS_DESTROY,
            session_keys(sid).map(Cow::Owned).into(),
            args,
        )
    }

    /// [`SESS_LIST`](super::SESS_LIST): the live sessions of the client of `token`.
    ///
    /// ```
    /// use keyroute::cache::{Call, ClientToken, TokenKey};
    /// let t = ClientToken::of(b"c1", &TokenKey::DEFAULT)?;
    /// assert!(Call::sess_list(t, None).keys[0].ends_with(b":sidx"));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn sess_list(token: ClientToken, now: Option<u64>) -> Self {
        let mut args = Vec::new();
        push_now(&mut args, now);
        let key = ClientKeys::of_token(token).session_index();
        Call::new(&SESS_LIST, vec![Cow::Owned(key)], args)
    }

    /// [`SC_READ`](super::SC_READ): the value of `entry`, if it has one (nothing changes).
    ///
    /// ```
    /// let call = keyroute::cache::Call::read(b"kr:{c:t}:e:k", None);
    /// assert_eq!((call.script.name(), call.args.len()), ("sc-read", 0));
    /// ```
    pub fn read(entry: &'a [u8], now: Option<u64>) -> Self {
        let mut args = Vec::new();
        push_now(&mut args, now);
        Call::new(&SC_READ, vec![Cow::Borrowed(entry)], args)
    }

    /// [`SC_PUT`](super::SC_PUT): store `value` directly, fresh for `soft_ms`, kept
    /// `hard_ms`, bumping the fence so that a load in flight for `entry` is discarded.
    ///
    /// ```
    /// use keyroute::cache::{Call, Notify};
    /// let call = Call::put(b"kr:{c:t}:e:k", b"v", 60_000, 600_000, Notify::Publish, None);
    /// assert_eq!(call.args, [&b"v"[..], b"60000", b"600000", b"PUBLISH"]);
    /// ```
    pub fn put(
        entry: &'a [u8],
        value: &'a [u8],
        soft_ms: u64,
        hard_ms: u64,
        notify: Notify,
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![
            Cow::Borrowed(value),
            int(soft_ms),
            int(hard_ms),
            text(notify.as_arg()),
        ];
        push_now(&mut args, now);
        Call::new(&SC_PUT, vec![Cow::Borrowed(entry)], args)
    }

    /// [`SESS_UPDATE`](super::SESS_UPDATE): replace the data of `sid` with `data` when it
    /// was created by service `version` (and slide it).
    ///
    /// ```
    /// use keyroute::cache::{Call, ClientToken, SessionId, TokenKey};
    /// let sid = SessionId::new(ClientToken::of(b"c1", &TokenKey::DEFAULT)?, [3; 16]);
    /// let call = Call::sess_update(&sid, b"v1", b"{\"pay\":1}", None);
    /// assert_eq!(call.args[1], &b"v1"[..]);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn sess_update(
        sid: &'a SessionId,
        version: &'a [u8],
        data: &'a [u8],
        now: Option<u64>,
    ) -> Self {
        let mut args = vec![
            Cow::Borrowed(&sid.as_bytes()[..]),
            Cow::Borrowed(version),
            Cow::Borrowed(data),
        ];
        push_now(&mut args, now);
        Call::new(&SESS_UPDATE, session_keys(sid).map(Cow::Owned).into(), args)
    }

    /// [`SESS_GUARD`](super::SESS_GUARD): `call` run under the session `sid`, in one atomic
    /// call: it runs only when the session is live, and the session slides as a touch
    /// does. Decode the reply with [`Guarded::decode`](super::Guarded::decode), then the
    /// guarded reply with `call`'s own decoder.
    ///
    /// # Errors
    /// [`InputError::SessionClientMismatch`] (`SESSION_CLIENT_MISMATCH`) when a key of
    /// `call` is not of the session's client (`kr:{c:T}:...`, `T` the session's token):
    /// on Redis Cluster it would be in another slot; [`InputError::NotGuardable`]
    /// (`BAD_TYPE`) for a script `sess-guard` does not run (the loader's `sc-fill`,
    /// `sc-extend` and `sc-abandon`, `device-bind`, `sess-guard` itself).
    ///
    /// ```
    /// use keyroute::cache::{Call, ClientKeys, SessionId, TokenKey};
    /// let mine = ClientKeys::new(b"c1", &TokenKey::DEFAULT)?;
    /// let sid = SessionId::new(mine.token(), [3; 16]);
    /// let entry = mine.entry(b"cards")?;
    /// let call = Call::in_session(&sid, Call::read(&entry, None), None)?;
    /// assert_eq!(call.script.name(), "sess-guard");
    /// assert_eq!(call.keys.len(), 3);
    /// assert_eq!(call.args[2], &b"sc-read"[..]);
    /// let theirs = ClientKeys::new(b"c2", &TokenKey::DEFAULT)?.entry(b"cards")?;
    /// let refused = Call::in_session(&sid, Call::read(&theirs, None), None).unwrap_err();
    /// assert_eq!(refused.code().as_str(), "SESSION_CLIENT_MISMATCH");
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn in_session(
        sid: &'a SessionId,
        call: Call<'a>,
        now: Option<u64>,
    ) -> Result<Self, InputError> {
        if !GUARDED.iter().any(|s| s.name() == call.script.name()) {
            return Err(InputError::NotGuardable);
        }
        let tag = ClientKeys::of_token(sid.token()).tag();
        let mine = |key: &[u8]| {
            key.strip_prefix(KEY_PREFIX.as_bytes())
                .and_then(|k| k.strip_prefix(&tag[..]))
                .is_some_and(|rest| rest.first() == Some(&b':'))
        };
        if !call.keys.iter().all(|k| mine(k)) {
            return Err(InputError::SessionClientMismatch);
        }
        let [session, index] = session_keys(sid);
        let mut keys = vec![Cow::Owned(session), Cow::Owned(index)];
        keys.extend(call.keys);
        let mut args = vec![
            Cow::Borrowed(&sid.as_bytes()[..]),
            match now {
                Some(now) => int(now),
                None => Cow::Borrowed(&b""[..]),
            },
            text(call.script.name()),
        ];
        args.extend(call.args);
        Ok(Call::new(&SESS_GUARD, keys, args))
    }

    /// [`DEVICE_BIND`](super::DEVICE_BIND): `device_key` names `client` for `ttl_ms`.
    ///
    /// ```
    /// use keyroute::cache::{device_key, Call};
    /// let key = device_key(b"ios-1")?;
    /// assert_eq!(Call::device_bind(&key, b"c1", 86_400_000).args, [&b"c1"[..], b"86400000"]);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn device_bind(device_key: &'a [u8], client: &'a [u8], ttl_ms: u64) -> Self {
        Call::new(
            &DEVICE_BIND,
            vec![Cow::Borrowed(device_key)],
            vec![Cow::Borrowed(client), int(ttl_ms)],
        )
    }
}
