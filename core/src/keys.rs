//! A batch of keys packed into one buffer: what bindings hand to the batch lookups.
//!
//! A binding that receives keys as foreign objects (Python `str`/`bytes`, JS strings, C
//! pointer arrays) copies their bytes into a [`PackedKeys`] once, then runs the lookups
//! over it. The copy is sequential and cheap; the lookups then read one contiguous
//! buffer instead of chasing one pointer per key, and the foreign objects need not be
//! kept alive (or locked) while the lookups run.

use alloc::vec::Vec;
use core::iter::FusedIterator;

/// The most keys (or members, or entries) one batch call takes, in every binding:
/// 2^24 = 16,777,216. A caller's larger count is refused (`TOO_LARGE`) before anything is
/// allocated; split the batch.
///
/// ```
/// assert_eq!(keyroute::keys::MAX_KEYS_PER_CALL, 16_777_216);
/// ```
pub const MAX_KEYS_PER_CALL: usize = 1 << 24;

/// The most key bytes one batch call takes, in every binding: 1 GiB.
///
/// ```
/// assert_eq!(keyroute::keys::MAX_BATCH_BYTES, 1 << 30);
/// ```
pub const MAX_BATCH_BYTES: usize = 1 << 30;

/// The longest key any call takes: 512 MiB, the largest string Redis holds.
///
/// ```
/// assert_eq!(keyroute::keys::MAX_KEY_BYTES, 512 * 1024 * 1024);
/// ```
pub const MAX_KEY_BYTES: usize = 512 << 20;

/// Keys stored back to back in one byte buffer, with the end offset of each.
///
/// Reuse one value across batches ([`PackedKeys::clear`] keeps the capacity) and no
/// allocation happens per batch once it has grown.
///
/// ```
/// use keyroute::keys::PackedKeys;
/// use keyroute::ring::{Profile, Ring};
///
/// let mut keys = PackedKeys::new();
/// keys.push(b"user:1");
/// keys.push("user:2".as_bytes());
/// keys.push(b"");
/// assert_eq!(keys.len(), 3);
/// assert_eq!(keys.get(1), Some(&b"user:2"[..]));
///
/// let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1)])?;
/// let mut owners = Vec::new();
/// ring.get_many_into(keys.iter(), &mut owners);
/// assert_eq!(owners[0], ring.get_index(b"user:1"));
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackedKeys {
    bytes: Vec<u8>,
    /// `ends[i]` is one past the last byte of key `i`; key `i` starts at `ends[i - 1]`
    /// (or 0).
    ends: Vec<usize>,
}

impl PackedKeys {
    /// An empty batch.
    #[must_use]
    pub const fn new() -> PackedKeys {
        PackedKeys {
            bytes: Vec::new(),
            ends: Vec::new(),
        }
    }

    /// An empty batch with room for `keys` keys totalling `bytes` bytes.
    #[must_use]
    pub fn with_capacity(keys: usize, bytes: usize) -> PackedKeys {
        PackedKeys {
            bytes: Vec::with_capacity(bytes),
            ends: Vec::with_capacity(keys),
        }
    }

    /// Appends a key (its bytes are copied).
    #[inline]
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Reserves room for `keys` more keys (their bytes grow the buffer as needed).
    pub fn reserve(&mut self, keys: usize) {
        self.ends.reserve(keys);
    }

    /// Removes every key, keeping the allocated capacity.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Number of keys.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are no keys.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Key `i`, if there is one.
    #[must_use]
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.bytes.get(start..end)
    }

    /// The keys in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            bytes: &self.bytes,
            ends: self.ends.iter(),
            start: 0,
        }
    }
}

impl<'a> IntoIterator for &'a PackedKeys {
    type Item = &'a [u8];
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<K: AsRef<[u8]>> FromIterator<K> for PackedKeys {
    fn from_iter<I: IntoIterator<Item = K>>(keys: I) -> PackedKeys {
        let mut p = PackedKeys::new();
        p.extend(keys);
        p
    }
}

impl<K: AsRef<[u8]>> Extend<K> for PackedKeys {
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        let keys = keys.into_iter();
        self.ends.reserve(keys.size_hint().0);
        for k in keys {
            self.push(k.as_ref());
        }
    }
}

/// Iterator over the keys of a [`PackedKeys`], see [`PackedKeys::iter`].
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    bytes: &'a [u8],
    ends: core::slice::Iter<'a, usize>,
    start: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let end = *self.ends.next()?;
        let key = self.bytes.get(self.start..end).unwrap_or_default();
        self.start = end;
        Some(key)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ends.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}
impl FusedIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn every_length_round_trips() {
        let bytes: Vec<u8> = (0..100u8).collect();
        let mut p = PackedKeys::new();
        for len in 0..=bytes.len() {
            p.push(&bytes[len / 3..len / 3 + len.min(bytes.len() - len / 3)]);
        }
        for (len, k) in p.iter().enumerate() {
            assert_eq!(k, &bytes[len / 3..len / 3 + len.min(bytes.len() - len / 3)]);
        }
    }

    #[test]
    fn round_trips_keys_including_empty_ones() {
        let keys: Vec<&[u8]> = vec![b"", b"a", b"", b"\xff\x00binary", b"{tag}x"];
        let mut p: PackedKeys = keys.iter().collect();
        assert_eq!(p.len(), 5);
        assert_eq!(p.iter().collect::<Vec<_>>(), keys);
        assert_eq!(p.iter().len(), 5);
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(p.get(i), Some(*k));
        }
        assert_eq!(p.get(5), None);
        p.clear();
        assert!(p.is_empty());
        assert_eq!(p.iter().next(), None);
        p.push(b"again");
        assert_eq!((&p).into_iter().collect::<Vec<_>>(), vec![&b"again"[..]]);
    }
}
