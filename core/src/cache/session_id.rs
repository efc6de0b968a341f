//! [`SessionId`]: `T.R`, the client's [token](super::ClientToken) and 128 random bits, so
//! that a session (and its client's slot) is found from its id alone.

use core::fmt;

use super::base32;
use super::error::InputError;
use super::token::ClientToken;

/// A session id: `<T>.<R>`, 53 ASCII characters, where `T` is the client's token and `R`
/// the lowercase base32 of 16 random bytes the caller supplies (from a cryptographically
/// secure source: the id is the session's only secret).
///
/// ```
/// use keyroute::cache::{ClientToken, SessionId, TokenKey};
/// let t = ClientToken::of(b"client-42", &TokenKey::DEFAULT)?;
/// let sid = SessionId::new(t, [0xab; 16]);
/// assert_eq!(sid.as_str().len(), SessionId::LEN);
/// assert_eq!(sid.token(), t);
/// assert_eq!(SessionId::parse(sid.as_bytes())?, sid);
/// assert!(SessionId::parse(b"not-a-session").is_err());
/// # Ok::<(), keyroute::cache::InputError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId([u8; SessionId::LEN]);

impl SessionId {
    /// The length of a session id: 26 + 1 + 26.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::SessionId::LEN, 53);
    /// ```
    pub const LEN: usize = 2 * base32::LEN + 1;

    /// The session id of `token` with the random bytes `random`.
    ///
    /// ```
    /// # use keyroute::cache::{ClientToken, SessionId, TokenKey};
    /// let t = ClientToken::of(b"c", &TokenKey::DEFAULT)?;
    /// assert_ne!(SessionId::new(t, [1; 16]), SessionId::new(t, [2; 16]));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn new(token: ClientToken, random: [u8; 16]) -> SessionId {
        let mut out = [0u8; SessionId::LEN];
        out[..base32::LEN].copy_from_slice(token.as_bytes());
        out[base32::LEN] = b'.';
        out[base32::LEN + 1..].copy_from_slice(&base32::encode(&random));
        SessionId(out)
    }

    /// Parses a session id.
    ///
    /// # Errors
    /// [`InputError::BadSessionId`] (`BAD_SESSION_ID`) for anything [`new`](Self::new)
    /// cannot give.
    ///
    /// ```
    /// use keyroute::cache::SessionId;
    /// let text = "aaaaaaaaaaaaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbbbbbbbbbbba";
    /// assert_eq!(SessionId::parse(text.as_bytes())?.as_str(), text);
    /// assert!(SessionId::parse(text.to_uppercase().as_bytes()).is_err());
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn parse(text: &[u8]) -> Result<SessionId, InputError> {
        if text.len() != SessionId::LEN || text[base32::LEN] != b'.' {
            return Err(InputError::BadSessionId);
        }
        ClientToken::parse(&text[..base32::LEN]).ok_or(InputError::BadSessionId)?;
        base32::decode(&text[base32::LEN + 1..]).ok_or(InputError::BadSessionId)?;
        let mut out = [0u8; SessionId::LEN];
        out.copy_from_slice(text);
        Ok(SessionId(out))
    }

    /// The client token `T` it embeds.
    ///
    /// ```
    /// # use keyroute::cache::{ClientToken, SessionId, TokenKey};
    /// let t = ClientToken::of(b"c", &TokenKey::DEFAULT)?;
    /// assert_eq!(SessionId::new(t, [9; 16]).token(), t);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn token(&self) -> ClientToken {
        match ClientToken::parse(&self.0[..base32::LEN]) {
            Some(t) => t,
            None => unreachable!("a SessionId always holds a token"),
        }
    }

    /// The random part `R` (26 characters), the last segment of the session key.
    ///
    /// ```
    /// # use keyroute::cache::{ClientToken, SessionId, TokenKey};
    /// # let t = ClientToken::of(b"c", &TokenKey::DEFAULT)?;
    /// assert_eq!(SessionId::new(t, [0; 16]).random_part(), b"aaaaaaaaaaaaaaaaaaaaaaaaaa");
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn random_part(&self) -> &[u8] {
        &self.0[base32::LEN + 1..]
    }

    /// The id's text.
    ///
    /// ```
    /// # use keyroute::cache::{ClientToken, SessionId, TokenKey};
    /// # let t = ClientToken::of(b"c", &TokenKey::DEFAULT)?;
    /// assert_eq!(SessionId::new(t, [0; 16]).as_str().as_bytes()[26], b'.');
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The id's text as bytes.
    ///
    /// ```
    /// # use keyroute::cache::{ClientToken, SessionId, TokenKey};
    /// # let t = ClientToken::of(b"c", &TokenKey::DEFAULT)?;
    /// let sid = SessionId::new(t, [0; 16]);
    /// assert_eq!(sid.as_bytes(), sid.as_str().as_bytes());
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub const fn as_bytes(&self) -> &[u8; SessionId::LEN] {
        &self.0
    }
}

/// Shows only the token: the random part is the session's secret.
impl fmt::Debug for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SessionId({}.***)", self.token())
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
