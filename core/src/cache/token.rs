//! [`ClientToken`]: the opaque `T` of a client's keys, derived from the client id so ids
//! never appear in key names.
//!
//! `T` = lowercase base32 (26 characters, no padding) of the 128-bit keyed SipHash-2-4 of
//! the client id's bytes, with a 16-byte [`TokenKey`]. The default key is the ASCII bytes
//! of `keyroute-cache-1` ([`TokenKey::DEFAULT`]); every instance sharing a Redis must use
//! the same key. With the default (public) key, someone who can read key names and guess
//! a client id can check the guess; a secret key of your own
//! ([`TokenKey::new`]) prevents that. 128 bits make two clients sharing a token
//! practically impossible (a shared token would mean shared entries).

use core::fmt;

use siphasher::sip128::SipHasher24;

use super::base32;
use super::check::check_client_id;
use super::error::InputError;

/// The 16-byte key of the keyed hash that turns client ids into [`ClientToken`]s.
///
/// ```
/// use keyroute::cache::TokenKey;
/// assert_eq!(TokenKey::DEFAULT.bytes(), b"keyroute-cache-1");
/// assert_ne!(TokenKey::new(*b"our-secret-key-1"), TokenKey::DEFAULT);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenKey([u8; 16]);

impl TokenKey {
    /// The documented default key: the ASCII bytes of `keyroute-cache-1`.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::TokenKey::DEFAULT, keyroute::cache::TokenKey::default());
    /// ```
    pub const DEFAULT: TokenKey = TokenKey(*b"keyroute-cache-1");

    /// A key of your own (keep it secret to keep client ids unguessable from key names).
    ///
    /// ```
    /// let key = keyroute::cache::TokenKey::new([7; 16]);
    /// assert_eq!(key.bytes(), &[7; 16]);
    /// ```
    pub const fn new(bytes: [u8; 16]) -> TokenKey {
        TokenKey(bytes)
    }

    /// The key's bytes.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::TokenKey::DEFAULT.bytes().len(), 16);
    /// ```
    pub const fn bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl Default for TokenKey {
    fn default() -> Self {
        TokenKey::DEFAULT
    }
}

/// Never prints the key itself (it may be a secret).
impl fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == TokenKey::DEFAULT {
            f.write_str("TokenKey(DEFAULT)")
        } else {
            f.write_str("TokenKey(***)")
        }
    }
}

/// The opaque token `T` of a client: 26 lowercase base32 characters (see the module
/// docs). Every key of the client carries the hash tag `{c:T}`.
///
/// ```
/// use keyroute::cache::{ClientToken, TokenKey};
/// let t = ClientToken::of(b"client-42", &TokenKey::DEFAULT)?;
/// assert_eq!(t.as_str().len(), 26);
/// assert_eq!(t, ClientToken::of(b"client-42", &TokenKey::DEFAULT)?);
/// assert_ne!(t, ClientToken::of(b"client-43", &TokenKey::DEFAULT)?);
/// assert_eq!(ClientToken::parse(t.as_bytes()), Some(t));
/// # Ok::<(), keyroute::cache::InputError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientToken([u8; base32::LEN]);

impl ClientToken {
    /// The number of characters of a token.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::ClientToken::LEN, 26);
    /// ```
    pub const LEN: usize = base32::LEN;

    /// The token of `client_id` under `key`.
    ///
    /// # Errors
    /// As [`check_client_id`]: an empty or too long id (`BAD_CLIENT_ID`).
    ///
    /// ```
    /// use keyroute::cache::{ClientToken, TokenKey};
    /// assert!(ClientToken::of(b"", &TokenKey::DEFAULT).is_err());
    /// let ours = ClientToken::of(b"c1", &TokenKey::new([1; 16]))?;
    /// assert_ne!(ours, ClientToken::of(b"c1", &TokenKey::DEFAULT)?);
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn of(client_id: &[u8], key: &TokenKey) -> Result<ClientToken, InputError> {
        check_client_id(client_id)?;
        let hash = SipHasher24::new_with_key(key.bytes()).hash(client_id);
        Ok(ClientToken(base32::encode(&hash.as_bytes())))
    }

    /// A token from its text, if it is one (26 canonical lowercase base32 characters).
    ///
    /// ```
    /// use keyroute::cache::ClientToken;
    /// assert!(ClientToken::parse(b"aaaaaaaaaaaaaaaaaaaaaaaaaa").is_some());
    /// assert!(ClientToken::parse(b"AAAAAAAAAAAAAAAAAAAAAAAAAA").is_none());
    /// ```
    pub fn parse(text: &[u8]) -> Option<ClientToken> {
        base32::decode(text)?;
        let mut out = [0u8; base32::LEN];
        out.copy_from_slice(text);
        Some(ClientToken(out))
    }

    /// The token's text.
    ///
    /// ```
    /// # use keyroute::cache::{ClientToken, TokenKey};
    /// let t = ClientToken::of(b"x", &TokenKey::DEFAULT)?;
    /// assert!(t.as_str().bytes().all(|b| b.is_ascii_lowercase() || (b'2'..=b'7').contains(&b)));
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub fn as_str(&self) -> &str {
        // Base32 characters are ASCII.
        core::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The token's text as bytes.
    ///
    /// ```
    /// # use keyroute::cache::{ClientToken, TokenKey};
    /// let t = ClientToken::of(b"x", &TokenKey::DEFAULT)?;
    /// assert_eq!(t.as_bytes(), t.as_str().as_bytes());
    /// # Ok::<(), keyroute::cache::InputError>(())
    /// ```
    pub const fn as_bytes(&self) -> &[u8; base32::LEN] {
        &self.0
    }
}

impl fmt::Debug for ClientToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClientToken({})", self.as_str())
    }
}

impl fmt::Display for ClientToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_is_pinned() {
        // Pinned so that every language and version derives the same keys.
        let t = ClientToken::of(b"client-42", &TokenKey::DEFAULT).expect("token");
        let hash = SipHasher24::new_with_key(b"keyroute-cache-1").hash(b"client-42");
        assert_eq!(t.as_bytes(), &base32::encode(&hash.as_bytes()));
        assert_eq!(t.as_str(), PINNED);
    }

    const PINNED: &str = "zypmxxjy3pm4kj3jnqw3uicaae";
}
