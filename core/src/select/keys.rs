//! The side key: where a pool remembers the counts of removed members.
//!
//! Every key of one script call must hash to the same Redis Cluster slot, so the side key
//! is derived from the pool key:
//!
//! * pool key with a non-empty hash tag (the bytes between the first `{` and the first
//!   `}` after it): side key = pool key + `:removed`. `{proxies}:pool` →
//!   `{proxies}:pool:removed`. Appending never changes the tag.
//! * pool key without one, not empty and without any `}` byte: side key =
//!   `{` + pool key + `}:removed`. `proxies` → `{proxies}:removed`, whose tag is the whole
//!   pool key, so both hash the same bytes.
//! * otherwise (empty pool key, or a `}` that is not closing a non-empty tag, such as
//!   `a}b` or `{}pool`) no derived key provably shares the slot, and [`SideKey::new`]
//!   returns a [`KeyError`]: hash-tag the pool key.

use core::fmt;

use crate::error::ErrorCode;

/// What is appended to the pool key (after `}` when the pool key is wrapped).
///
/// ```
/// assert_eq!(keyroute::select::SIDE_KEY_SUFFIX, ":removed");
/// ```
pub const SIDE_KEY_SUFFIX: &str = ":removed";

/// Why no side key can be derived from a pool key.
///
/// ```
/// use keyroute::select::{KeyError, SideKey};
/// assert_eq!(SideKey::new(b""), Err(KeyError::EmptyPoolKey));
/// assert_eq!(SideKey::new(b"a}b"), Err(KeyError::NeedsHashTag));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyError {
    /// The pool key is empty.
    EmptyPoolKey,
    /// The pool key has no non-empty hash tag but contains `}`, so wrapping it in a tag
    /// would hash different bytes.
    NeedsHashTag,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::EmptyPoolKey => {
                f.write_str("the pool key is empty; name the pool, e.g. \"{proxies}:pool\"")
            }
            KeyError::NeedsHashTag => f.write_str(
                "the pool key contains '}' but no non-empty hash tag, so no side key can \
                 share its Redis Cluster slot; put a hash tag in the pool key, \
                 e.g. \"{proxies}:pool\"",
            ),
        }
    }
}

impl KeyError {
    /// The stable code of the error: `BAD_POOL_KEY`.
    ///
    /// ```
    /// assert_eq!(keyroute::select::KeyError::EmptyPoolKey.code().as_str(), "BAD_POOL_KEY");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        ErrorCode::BadPoolKey
    }
}

impl core::error::Error for KeyError {}

/// The side key of a pool key, without allocating: the concatenation of
/// [`parts`](Self::parts).
///
/// ```
/// use keyroute::select::SideKey;
/// let tagged = SideKey::new(b"{proxies}:pool")?;
/// assert_eq!(tagged.parts().concat(), b"{proxies}:pool:removed");
/// let plain = SideKey::new(b"proxies")?;
/// assert_eq!(plain.parts().concat(), b"{proxies}:removed");
/// assert_eq!(plain.len(), b"{proxies}:removed".len());
/// # Ok::<(), keyroute::select::KeyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SideKey<'a> {
    pool_key: &'a [u8],
    wrapped: bool,
}

impl<'a> SideKey<'a> {
    /// Derives the side key of `pool_key` (see the module docs for the rule).
    ///
    /// # Errors
    /// [`KeyError::EmptyPoolKey`] for an empty key, [`KeyError::NeedsHashTag`] when the key
    /// has no non-empty hash tag and contains `}`.
    ///
    /// ```
    /// use keyroute::select::{KeyError, SideKey};
    /// assert!(SideKey::new(b"{p}x").is_ok());
    /// assert_eq!(SideKey::new(b"{}x"), Err(KeyError::NeedsHashTag));
    /// ```
    pub fn new(pool_key: &'a [u8]) -> Result<Self, KeyError> {
        if pool_key.is_empty() {
            return Err(KeyError::EmptyPoolKey);
        }
        if hash_tag(pool_key).is_some() {
            return Ok(SideKey {
                pool_key,
                wrapped: false,
            });
        }
        if pool_key.contains(&b'}') {
            return Err(KeyError::NeedsHashTag);
        }
        Ok(SideKey {
            pool_key,
            wrapped: true,
        })
    }

    /// The pool key this side key belongs to.
    ///
    /// ```
    /// use keyroute::select::SideKey;
    /// assert_eq!(SideKey::new(b"p")?.pool_key(), b"p");
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub const fn pool_key(&self) -> &'a [u8] {
        self.pool_key
    }

    /// Whether the pool key had no hash tag and is wrapped in `{...}`.
    ///
    /// ```
    /// use keyroute::select::SideKey;
    /// assert!(SideKey::new(b"p")?.is_wrapped());
    /// assert!(!SideKey::new(b"{p}")?.is_wrapped());
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub const fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    /// Three byte strings whose concatenation is the side key:
    /// `["", pool, ":removed"]` or `["{", pool, "}:removed"]`.
    ///
    /// ```
    /// use keyroute::select::SideKey;
    /// let key = SideKey::new(b"p")?;
    /// assert_eq!(key.parts(), [&b"{"[..], b"p", b"}:removed"]);
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    pub const fn parts(&self) -> [&'a [u8]; 3] {
        const OPEN: &[u8] = b"{";
        const CLOSE: &[u8] = b"}:removed";
        if self.wrapped {
            [OPEN, self.pool_key, CLOSE]
        } else {
            [&[], self.pool_key, SIDE_KEY_SUFFIX.as_bytes()]
        }
    }

    /// The side key's length in bytes.
    ///
    /// ```
    /// use keyroute::select::SideKey;
    /// assert_eq!(SideKey::new(b"{p}")?.len(), 11);
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    #[allow(clippy::len_without_is_empty)] // a side key is never empty
    pub const fn len(&self) -> usize {
        let [a, b, c] = self.parts();
        a.len() + b.len() + c.len()
    }

    /// The side key as one byte string.
    ///
    /// ```
    /// use keyroute::select::SideKey;
    /// assert_eq!(SideKey::new(b"{p}:pool")?.to_vec(), b"{p}:pool:removed");
    /// # Ok::<(), keyroute::select::KeyError>(())
    /// ```
    #[cfg(feature = "alloc")]
    pub fn to_vec(&self) -> alloc::vec::Vec<u8> {
        let mut key = alloc::vec::Vec::with_capacity(self.len());
        for part in self.parts() {
            key.extend_from_slice(part);
        }
        key
    }
}

/// The side key of `pool_key` as one byte string: shorthand for
/// [`SideKey::new`]`(pool_key)?.`[`to_vec`](SideKey::to_vec)`()`.
///
/// # Errors
/// As [`SideKey::new`].
///
/// ```
/// use keyroute::select::side_key;
/// assert_eq!(side_key(b"{proxies}:pool")?, b"{proxies}:pool:removed");
/// assert_eq!(side_key(b"proxies")?, b"{proxies}:removed");
/// assert!(side_key(b"}").is_err());
/// # Ok::<(), keyroute::select::KeyError>(())
/// ```
#[cfg(feature = "alloc")]
pub fn side_key(pool_key: &[u8]) -> Result<alloc::vec::Vec<u8>, KeyError> {
    SideKey::new(pool_key).map(|key| key.to_vec())
}

/// The Redis Cluster hash tag of `key`, if it has a non-empty one
/// ([`crate::slot::hash_tag`] answers the whole key when it has none; a tag is always
/// shorter than its key, since it leaves out the braces).
fn hash_tag(key: &[u8]) -> Option<&[u8]> {
    let tag = crate::slot::hash_tag(key);
    (tag.len() < key.len()).then_some(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_tag_follows_the_cluster_rule() {
        assert_eq!(hash_tag(b"{a}"), Some(&b"a"[..]));
        assert_eq!(hash_tag(b"foo{bar}{zap}"), Some(&b"bar"[..]));
        assert_eq!(hash_tag(b"{}{a}"), None);
        assert_eq!(hash_tag(b"{{a}}"), Some(&b"{a"[..]));
        assert_eq!(hash_tag(b"foo{}{bar}"), None);
        assert_eq!(hash_tag(b"foo{"), None);
        assert_eq!(hash_tag(b"}{a"), None);
        assert_eq!(hash_tag(b""), None);
    }

    #[test]
    fn derivation() {
        assert_eq!(SideKey::new(b"{{a}}").map(|k| k.is_wrapped()), Ok(false));
        assert_eq!(SideKey::new(b"a{b").map(|k| k.is_wrapped()), Ok(true));
        assert_eq!(
            SideKey::new(b"}{a}"),
            Ok(SideKey {
                pool_key: b"}{a}",
                wrapped: false
            })
        );
        assert_eq!(SideKey::new(b"{}{a}"), Err(KeyError::NeedsHashTag));
        assert_eq!(SideKey::new(b"}"), Err(KeyError::NeedsHashTag));
        assert_eq!(SideKey::new(b""), Err(KeyError::EmptyPoolKey));
    }
}
