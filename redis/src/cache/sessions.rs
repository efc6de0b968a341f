//! [`Sessions`]: client sessions any server can read, with a sliding TTL, an optional
//! maximum age and a service-version check.

use std::time::Duration;

use keyroute::cache::{
    check_value_len, check_version, decode_flag, decode_sessions, Call, ClientToken, CreateReply,
    SessionId, TokenKey, Touch,
};

use super::config::ms;
use super::random::secure_bytes;
use super::store::Store;
use crate::error::{Error, Result};

/// How [`Sessions`] keep sessions.
///
/// ```
/// use std::time::Duration;
/// use keyroute_redis::cache::SessionConfig;
/// let config = SessionConfig { max_age: Some(Duration::from_secs(12 * 3600)), ..SessionConfig::default() };
/// assert_eq!(config.ttl, Duration::from_secs(1800));
/// ```
#[derive(Clone, Debug)]
pub struct SessionConfig {
    /// The sliding lifetime: a session expires this long after its last touch. Default
    /// 30 min.
    pub ttl: Duration,
    /// The longest a session lives however often it is touched. Default none.
    pub max_age: Option<Duration>,
    /// The largest session data. Default 1 MiB.
    pub max_data_len: usize,
    /// The key of the client-id hash in key names. Default [`TokenKey::DEFAULT`].
    pub token_key: TokenKey,
}

impl Default for SessionConfig {
    fn default() -> Self {
        // Core's defaults, the same in every binding.
        let d = keyroute::cache::SessionSettings::DEFAULT;
        SessionConfig {
            ttl: Duration::from_millis(d.ttl_ms),
            max_age: d.max_age_ms.map(Duration::from_millis),
            max_data_len: d.max_data_len,
            token_key: TokenKey::DEFAULT,
        }
    }
}

/// A session just created.
///
/// ```no_run
/// use keyroute_redis::cache::Store;
/// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
/// let sessions = keyroute_redis::cache::Sessions::new(store, Default::default())?;
/// let new = sessions.create("client-42", "app-2.14", b"{}")?;
/// println!("{} until {}", new.id, new.expires_at);
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewSession {
    /// Its id (`T.R`): give it to the client; it is the session's only secret.
    pub id: SessionId,
    /// When it expires unless touched (ms since the Unix epoch, server time).
    pub expires_at: u64,
}

/// Sessions on a [`Store`]: any server reads any session from its id alone; expiry and
/// a version mismatch are answers ([`Touch`]), not errors.
///
/// ```no_run
/// use keyroute::cache::Touch;
/// use keyroute_redis::cache::{SessionConfig, Sessions, Store};
/// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
/// let sessions = Sessions::new(store, SessionConfig::default())?;
/// let new = sessions.create("client-42", "app-2.14", b"{\"lang\":\"en\"}")?;
/// match sessions.touch(new.id.as_str(), Some("app-2.14"))? {
///     Touch::Live { client, data, .. } => { /* serve the request */ }
///     Touch::Expired => { /* "log in again" */ }
///     Touch::VersionMismatch { stored } => { /* the app was upgraded */ }
/// }
/// # Ok::<(), keyroute_redis::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Sessions {
    store: Store,
    config: SessionConfig,
    ttl_ms: u64,
    max_age_ms: u64,
}

impl Sessions {
    /// Sessions on `store`.
    ///
    /// # Errors
    /// A TTL or max age out of range (`BAD_TTL`), a bad maximum data size.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let config = keyroute_redis::cache::SessionConfig { max_age: Some(std::time::Duration::from_secs(43200)), ..Default::default() };
    /// let sessions = keyroute_redis::cache::Sessions::new(store, config)?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn new(store: Store, config: SessionConfig) -> Result<Sessions> {
        keyroute::cache::checked_max_value_len(config.max_data_len)?;
        let ttl_ms = ms("ttl", config.ttl, 1)?;
        let max_age_ms = match config.max_age {
            Some(d) => ms("max_age", d, 1)?,
            None => 0,
        };
        Ok(Sessions {
            store,
            config,
            ttl_ms,
            max_age_ms,
        })
    }

    /// Creates a session for `client`, made by service `version`, holding `data`.
    ///
    /// # Errors
    /// A bad client id, a version over 128 bytes, data over the maximum; a Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let sessions = keyroute_redis::cache::Sessions::new(store, Default::default())?;
    /// let new = sessions.create("client-42", "app-2.14", b"{\"lang\":\"en\"}")?;
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn create(
        &self,
        client: impl AsRef<[u8]>,
        version: impl AsRef<[u8]>,
        data: &[u8],
    ) -> Result<NewSession> {
        let token = ClientToken::of(client.as_ref(), &self.config.token_key)?;
        check_version(version.as_ref())?;
        check_value_len(data.len(), self.config.max_data_len)?;
        for _ in 0..4 {
            let id = SessionId::new(token, secure_bytes()?);
            let call = Call::sess_create(
                &id,
                client.as_ref(),
                version.as_ref(),
                self.ttl_ms,
                self.max_age_ms,
                data,
                None,
            );
            match CreateReply::decode(self.store.eval(&call, None)?)? {
                CreateReply::Created { expires_at } => return Ok(NewSession { id, expires_at }),
                CreateReply::Taken => {}
            }
        }
        Err(Error::Busy("four random session ids in a row were taken"))
    }

    /// Reads session `sid` and slides its expiry. With `Some(version)`, a session made by
    /// another service version answers [`Touch::VersionMismatch`] (and is not touched).
    ///
    /// # Errors
    /// A malformed id (`BAD_SESSION_ID`), a version over 128 bytes; a Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let sessions = keyroute_redis::cache::Sessions::new(store, Default::default())?;
    /// let answer = sessions.touch("aaaaaaaaaaaaaaaaaaaaaaaaaa.aaaaaaaaaaaaaaaaaaaaaaaaaa", None)?;
    /// assert_eq!(answer, keyroute::cache::Touch::Expired);
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn touch(&self, sid: impl AsRef<[u8]>, version: Option<&str>) -> Result<Touch> {
        let id = SessionId::parse(sid.as_ref())?;
        if let Some(v) = version {
            check_version(v.as_bytes())?;
        }
        let call = Call::sess_touch(&id, version.map(str::as_bytes), None);
        Ok(Touch::decode(self.store.eval(&call, None)?)?)
    }

    /// Removes session `sid`; whether it was live.
    ///
    /// # Errors
    /// A malformed id (`BAD_SESSION_ID`); a Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let sessions = keyroute_redis::cache::Sessions::new(store, Default::default())?;
    /// let new = sessions.create("client-42", "v1", b"")?;
    /// assert!(sessions.destroy(new.id.as_str())?);
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn destroy(&self, sid: impl AsRef<[u8]>) -> Result<bool> {
        let id = SessionId::parse(sid.as_ref())?;
        Ok(decode_flag(
            &self.store.eval(&Call::sess_destroy(&id, None), None)?,
            "sess-destroy",
        )?)
    }

    /// The live sessions of `client` with their expiry (ms), soonest first.
    ///
    /// # Errors
    /// A bad client id; a Redis error.
    ///
    /// ```no_run
    /// use keyroute_redis::cache::Store;
    /// let store = Store::standalone("redis://127.0.0.1:6379", Default::default())?;
    /// let sessions = keyroute_redis::cache::Sessions::new(store, Default::default())?;
    /// for (sid, expires_at) in sessions.list("client-42")? { println!("{sid} {expires_at}"); }
    /// # Ok::<(), keyroute_redis::Error>(())
    /// ```
    pub fn list(&self, client: impl AsRef<[u8]>) -> Result<Vec<(SessionId, u64)>> {
        let token = ClientToken::of(client.as_ref(), &self.config.token_key)?;
        let pairs = decode_sessions(self.store.eval(&Call::sess_list(token, None), None)?)?;
        pairs
            .into_iter()
            .map(|(sid, at)| Ok((SessionId::parse(&sid)?, at)))
            .collect()
    }
}
