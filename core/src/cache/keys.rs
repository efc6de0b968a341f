//! Key, tag and channel names: the storage model. Every key of one client carries the
//! hash tag `{c:T}` ([`ClientToken`]), so every script touches one Redis Cluster slot and a
//! client's data moves as a unit when slots move.
//!
//! | key | type | content |
//! |---|---|---|
//! | `kr:{c:T}:e:<kind>` | hash | cache entry ([`ClientKeys::entry`]) |
//! | `kr:{c:T}:s:<R>` | hash | session ([`ClientKeys::session`], `R` from the [`SessionId`]) |
//! | `kr:{c:T}:sidx` | sorted set | session index: session id → expiry ms ([`ClientKeys::session_index`]) |
//! | `kr:{c:T}:n` | channel | wake-ups, a shard channel on Cluster ([`ClientKeys::channel`]) |
//! | `kr:{d:<device>}` | string | device → client id ([`device_key`]) |

use alloc::vec::Vec;

use super::check::{check_device_id, check_kind};
use super::error::InputError;
use super::session_id::SessionId;
use super::token::{ClientToken, TokenKey};

/// The prefix of every key.
///
/// ```
/// assert_eq!(keyroute::cache::KEY_PREFIX, "kr:");
/// ```
pub const KEY_PREFIX: &str = "kr:";

/// The keys of one client (see the module docs).
///
/// ```
/// use keyroute::cache::{ClientKeys, TokenKey};
/// use keyroute::slot::key_slot;
/// let keys = ClientKeys::new(b"client-42", &TokenKey::DEFAULT)?;
/// let t = keys.token();
/// assert_eq!(keys.entry(b"accounts")?, format!("kr:{{c:{t}}}:e:accounts").into_bytes());
/// assert_eq!(keys.channel(), format!("kr:{{c:{t}}}:n").into_bytes());
/// assert_eq!(key_slot(&keys.entry(b"cards")?), key_slot(&keys.session_index()));
/// # Ok::<(), keyroute::cache::InputError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientKeys {
    token: ClientToken,
}

impl ClientKeys {
    /// The keys of `client_id` under `key`.
    ///
    /// # Errors
    /// An empty or too long client id (`BAD_CLIENT_ID`).
    ///
    /// ```
    /// use keyroute::cache::{ClientKeys, TokenKey};
    /// assert!(ClientKeys::new(b"", &TokenKey::DEFAULT).is_err());
    /// ```
    pub fn new(client_id: &[u8], key: &TokenKey) -> Result<ClientKeys, InputError> {
        Ok(ClientKeys {
            token: ClientToken::of(client_id, key)?,
        })
    }

    /// The keys of the client with token `token` (e.g. from a [`SessionId`]).
    ///
    /// ```
    /// # use keyroute::cache::{ClientKeys, ClientToken, TokenKey};
    /// let t = ClientToken::of(b"c", &TokenKey::DEFAULT)?;
    /// assert_eq!(ClientKeys::of_token(t), ClientKeys::new(b"c", &TokenKey::DEFAULT)?);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub const fn of_token(token: ClientToken) -> ClientKeys {
        ClientKeys { token }
    }

    /// The client's token `T`.
    ///
    /// ```
    /// # use keyroute::cache::{ClientKeys, TokenKey};
    /// assert_eq!(ClientKeys::new(b"c", &TokenKey::DEFAULT)?.token().as_str().len(), 26);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub const fn token(&self) -> ClientToken {
        self.token
    }

    /// `kr:{c:T}`, the part every key of the client starts with.
    fn base(&self, extra: usize) -> Vec<u8> {
        let mut key = Vec::with_capacity(KEY_PREFIX.len() + 4 + ClientToken::LEN + extra);
        key.extend_from_slice(KEY_PREFIX.as_bytes());
        key.extend_from_slice(b"{c:");
        key.extend_from_slice(self.token.as_bytes());
        key.push(b'}');
        key
    }

    /// The hash tag of the client's keys, `{c:T}` (its slot is the client's slot).
    ///
    /// ```
    /// # use keyroute::cache::{ClientKeys, TokenKey};
    /// let keys = ClientKeys::new(b"c", &TokenKey::DEFAULT)?;
    /// assert_eq!(keyroute::slot::hash_tag(&keys.session_index()), &keys.tag()[1..keys.tag().len() - 1]);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn tag(&self) -> Vec<u8> {
        let mut tag = Vec::with_capacity(ClientToken::LEN + 4);
        tag.extend_from_slice(b"{c:");
        tag.extend_from_slice(self.token.as_bytes());
        tag.push(b'}');
        tag
    }

    /// The cache entry of `kind`: `kr:{c:T}:e:<kind>`.
    ///
    /// # Errors
    /// As [`check_kind`] (`BAD_KIND`).
    ///
    /// ```
    /// # use keyroute::cache::{ClientKeys, TokenKey};
    /// let keys = ClientKeys::new(b"c", &TokenKey::DEFAULT)?;
    /// assert!(keys.entry(b"loans")?.ends_with(b"}:e:loans"));
    /// assert!(keys.entry(b"a{b}").is_err());
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn entry(&self, kind: &[u8]) -> Result<Vec<u8>, InputError> {
        check_kind(kind)?;
        let mut key = self.base(3 + kind.len());
        key.extend_from_slice(b":e:");
        key.extend_from_slice(kind);
        Ok(key)
    }

    /// The session key of a session id of this client: `kr:{c:T}:s:<R>`.
    ///
    /// ```
    /// # use keyroute::cache::{ClientKeys, SessionId, TokenKey};
    /// let keys = ClientKeys::new(b"c", &TokenKey::DEFAULT)?;
    /// let sid = SessionId::new(keys.token(), [0; 16]);
    /// assert!(keys.session(&sid).ends_with(b"}:s:aaaaaaaaaaaaaaaaaaaaaaaaaa"));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn session(&self, sid: &SessionId) -> Vec<u8> {
        let mut key = self.base(3 + sid.random_part().len());
        key.extend_from_slice(b":s:");
        key.extend_from_slice(sid.random_part());
        key
    }

    /// The session index: `kr:{c:T}:sidx`.
    ///
    /// ```
    /// # use keyroute::cache::{ClientKeys, TokenKey};
    /// assert!(ClientKeys::new(b"c", &TokenKey::DEFAULT)?.session_index().ends_with(b"}:sidx"));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn session_index(&self) -> Vec<u8> {
        let mut key = self.base(5);
        key.extend_from_slice(b":sidx");
        key
    }

    /// The wake-up channel: `kr:{c:T}:n` (`SUBSCRIBE` on a standalone server, `SSUBSCRIBE`
    /// on Cluster). The scripts publish the entry key that changed.
    ///
    /// ```
    /// # use keyroute::cache::{ClientKeys, TokenKey};
    /// assert!(ClientKeys::new(b"c", &TokenKey::DEFAULT)?.channel().ends_with(b"}:n"));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn channel(&self) -> Vec<u8> {
        let mut key = self.base(2);
        key.extend_from_slice(b":n");
        key
    }
}

/// The session key and the session index key of a session id, found from the id alone.
///
/// ```
/// use keyroute::cache::{session_keys, ClientKeys, SessionId, TokenKey};
/// let keys = ClientKeys::new(b"c", &TokenKey::DEFAULT)?;
/// let sid = SessionId::new(keys.token(), [5; 16]);
/// assert_eq!(session_keys(&sid), [keys.session(&sid), keys.session_index()]);
/// # Ok::<(), keyroute::cache::InputError>(())
/// ```
pub fn session_keys(sid: &SessionId) -> [Vec<u8>; 2] {
    let keys = ClientKeys::of_token(sid.token());
    [keys.session(sid), keys.session_index()]
}

/// The device key: `kr:{d:<device>}` (a string holding the client id).
///
/// # Errors
/// As [`check_device_id`] (`BAD_DEVICE_ID`).
///
/// ```
/// use keyroute::cache::device_key;
/// assert_eq!(device_key(b"ios-1")?, b"kr:{d:ios-1}");
/// assert!(device_key(b"").is_err());
/// # Ok::<(), keyroute::cache::InputError>(())
/// ```
pub fn device_key(device: &[u8]) -> Result<Vec<u8>, InputError> {
    check_device_id(device)?;
    let mut key = Vec::with_capacity(KEY_PREFIX.len() + 4 + device.len());
    key.extend_from_slice(KEY_PREFIX.as_bytes());
    key.extend_from_slice(b"{d:");
    key.extend_from_slice(device);
    key.push(b'}');
    Ok(key)
}
