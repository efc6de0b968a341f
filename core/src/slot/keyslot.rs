//! Key → slot: `crc16_xmodem(hash_tag(key)) & 16383`, one key or a batch.
use core::fmt;

use crate::error::ErrorCode;

use super::crc16_table::{fold16, fold_tail};
use super::tag::{find_byte, has_byte16};
use super::{crc16_xmodem, crc16_xmodem_update, crc16_xmodem_with, Crc16Path};

/// The Redis Cluster hash slot of `key`: `crc16_xmodem(hash_tag(key)) & 16383`.
///
/// Keys are bytes; encode strings as UTF-8 (`key.as_bytes()`).
///
/// ```
/// use keyroute::slot::key_slot;
///
/// assert_eq!(key_slot(b"foo"), 12182);
/// assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"{user1000}.followers"));
/// assert_eq!(key_slot(b"foo{}{bar}"), 8363); // an empty first tag hashes the whole key
/// assert_eq!(key_slot(b""), 0);
/// ```
#[inline(always)]
#[must_use]
pub fn key_slot(key: &[u8]) -> u16 {
    // Short keys on CPUs with VPCLMULQDQ and AVX-512BW/VL: all in registers (masked
    // loads, carry-less products; `short_slot`). Elsewhere, one pass: hash 16-byte blocks
    // while checking each for `{`. Keys without a tag (the
    // common case) are never scanned separately; the brace check runs in parallel with
    // the CRC dependency chain.
    #[cfg(target_arch = "x86_64")]
    if key.len() <= super::crc16_clmul::SHORT_MAX {
        if super::crc16::clmul::selected() == Crc16Path::Vpclmul {
            // SAFETY: the length is checked and the selected path's features are there.
            if let Some(crc) = unsafe { super::crc16_clmul::short_slot(key) } {
                return crc & MASK;
            }
        }
    } else if key.len() >= super::crc16::clmul::PCLMUL_MIN {
        if let Some(crc) = super::crc16::clmul::long_slot(key) {
            return crc & MASK;
        }
    }
    let mut crc = 0u16;
    let mut chunks = key.chunks_exact(16);
    let mut done = 0;
    for c in &mut chunks {
        if has_byte16(c, b'{') {
            return slot_from_brace(key, done, crc);
        }
        crc = fold16(crc, c);
        done += 16;
    }
    let rest = chunks.remainder();
    if find_byte(rest, b'{').is_some() {
        return slot_from_brace(key, done, crc);
    }
    fold_tail(crc, rest) & MASK
}

const MASK: u16 = super::SLOT_COUNT - 1;

/// The slot of `key` whose first `{` is at or after `done`; `crc` is the CRC of
/// `key[..done]` (no `{` in there).
fn slot_from_brace(key: &[u8], done: usize, crc: u16) -> u16 {
    let tail = &key[done..];
    if let Some(open) = find_byte(tail, b'{') {
        let after = &tail[open + 1..];
        if let Some(len) = find_byte(after, b'}') {
            if len > 0 {
                return crc16_xmodem(&after[..len]) & MASK;
            }
        }
    }
    // Empty tag or no `}`: the whole key, continuing from what was hashed already.
    crc16_xmodem_update(crc, tail) & MASK
}

/// The slot of `key` by one given CRC16 path, as [`key_slot`] runs it: keys shorter than
/// the path's [`min_len`](Crc16Path::min_len) by the table path, except that
/// [`Crc16Path::Vpclmul`] computes keys of up to 32 bytes without a `{` in registers;
/// `None` when this CPU lacks the path. For tests and benchmarks: [`key_slot`] picks the path itself.
///
/// ```
/// use keyroute::slot::{key_slot, key_slot_with, Crc16Path};
///
/// let key = [b'k'; 700];
/// for path in Crc16Path::ALL {
///     assert_eq!(key_slot_with(path, &key).unwrap_or(key_slot(&key)), key_slot(&key));
/// }
/// ```
#[must_use]
pub fn key_slot_with(path: Crc16Path, key: &[u8]) -> Option<u16> {
    if !path.available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    if path == Crc16Path::Vpclmul && key.len() <= super::crc16_clmul::SHORT_MAX {
        // SAFETY: available (checked) and short enough; as `key_slot` runs it.
        if let Some(crc) = unsafe { super::crc16_clmul::short_slot(key) } {
            return Some(crc & MASK);
        }
    } else if key.len() >= path.min_len() {
        if let Some(crc) = super::crc16::clmul::run::<true>(path, 0, key) {
            return Some(crc & MASK);
        }
    }
    crc16_xmodem_with(path, 0, super::hash_tag(key)).map(|c| c & MASK)
}

/// Writes the slot of `keys[i]` to `out[i]` for every key, without allocating.
///
/// `out` may be longer than `keys`; the extra entries are left untouched.
///
/// # Errors
/// [`BatchError::OutputTooShort`] if `out` has fewer entries than `keys` (nothing is
/// written then).
///
/// ```
/// use keyroute::slot::{key_slot, key_slots};
///
/// let keys = ["foo", "bar", "{foo}.x"];
/// let mut slots = [0u16; 3];
/// key_slots(&keys, &mut slots)?;
/// assert_eq!(slots, [12182, 5061, 12182]);
/// assert_eq!(slots[1], key_slot(b"bar"));
/// # Ok::<(), keyroute::slot::BatchError>(())
/// ```
pub fn key_slots<K: AsRef<[u8]>>(keys: &[K], out: &mut [u16]) -> Result<(), BatchError> {
    key_slots_from(keys.iter().map(AsRef::as_ref), out)
}

/// [`key_slots`] for keys held in any container that lists them in order, such as
/// [`PackedKeys`](crate::keys::PackedKeys): `out[i]` = the slot of the `i`-th key.
///
/// # Errors
/// [`BatchError::OutputTooShort`] if `out` has fewer entries than there are keys
/// (nothing is written then).
///
/// ```
/// use keyroute::keys::PackedKeys;
/// use keyroute::slot::{key_slots_from, BatchError};
///
/// let keys: PackedKeys = ["foo", "bar"].into_iter().collect();
/// let mut slots = [0u16; 2];
/// key_slots_from(&keys, &mut slots)?;
/// assert_eq!(slots, [12182, 5061]);
/// # Ok::<(), BatchError>(())
/// ```
pub fn key_slots_from<'a, I>(keys: I, out: &mut [u16]) -> Result<(), BatchError>
where
    I: IntoIterator<Item = &'a [u8]>,
    I::IntoIter: ExactSizeIterator,
{
    let keys = keys.into_iter();
    if out.len() < keys.len() {
        return Err(BatchError::OutputTooShort {
            keys: keys.len(),
            out: out.len(),
        });
    }
    #[cfg(target_arch = "x86_64")]
    if super::crc16::clmul::selected() == Crc16Path::Vpclmul {
        // SAFETY: the selected path is available.
        unsafe { super::crc16_clmul::short_slots(keys, out) };
        return Ok(());
    }
    for (slot, key) in out.iter_mut().zip(keys) {
        *slot = key_slot(key);
    }
    Ok(())
}

/// [`key_slots`] by one given CRC16 path; `None` when this CPU lacks the path. With
/// [`Crc16Path::Vpclmul`], keys of up to 32 bytes take a register-only path (masked loads
/// and a Barrett reduction); the other paths compute each key as [`key_slot_with`] does.
/// For tests and benchmarks: [`key_slots`] picks the path itself.
///
/// # Errors
/// [`BatchError::OutputTooShort`] as for [`key_slots`].
///
/// ```
/// use keyroute::slot::{key_slots, key_slots_with, Crc16Path};
///
/// let keys = ["foo", "bar", "{foo}.x", "a-key-of-twenty-five-bytes"];
/// let mut want = [0u16; 4];
/// key_slots(&keys, &mut want)?;
/// for path in Crc16Path::ALL {
///     let mut got = [0u16; 4];
///     if let Some(done) = key_slots_with(path, &keys, &mut got) {
///         done?;
///         assert_eq!(got, want);
///     }
/// }
/// # Ok::<(), keyroute::slot::BatchError>(())
/// ```
pub fn key_slots_with<K: AsRef<[u8]>>(
    path: Crc16Path,
    keys: &[K],
    out: &mut [u16],
) -> Option<Result<(), BatchError>> {
    if !path.available() {
        return None;
    }
    if out.len() < keys.len() {
        return Some(Err(BatchError::OutputTooShort {
            keys: keys.len(),
            out: out.len(),
        }));
    }
    #[cfg(target_arch = "x86_64")]
    if path == Crc16Path::Vpclmul {
        // SAFETY: available (checked).
        unsafe { super::crc16_clmul::short_slots(keys.iter().map(AsRef::as_ref), out) };
        return Some(Ok(()));
    }
    for (slot, key) in out.iter_mut().zip(keys) {
        *slot = key_slot_with(path, key.as_ref())?;
    }
    Some(Ok(()))
}

/// The slots of all `keys`, in order, in one new vector.
///
/// ```
/// use keyroute::slot::key_slots_vec;
///
/// assert_eq!(key_slots_vec(&["foo", "bar"]), vec![12182, 5061]);
/// ```
#[cfg(feature = "alloc")]
#[must_use]
pub fn key_slots_vec<K: AsRef<[u8]>>(keys: &[K]) -> alloc::vec::Vec<u16> {
    keys.iter().map(|k| key_slot(k.as_ref())).collect()
}

/// The one slot that all `keys` share, as multi-key commands (`MGET`, `MSET`, Lua
/// scripts) require; `None` if `keys` is empty or they span several slots (Redis would
/// answer `CROSSSLOT`).
///
/// ```
/// use keyroute::slot::{key_slot, single_slot};
///
/// assert_eq!(single_slot(&["{cart:7}:items", "{cart:7}:total"]), Some(key_slot(b"cart:7")));
/// assert_eq!(single_slot(&["a", "b"]), None);
/// assert_eq!(single_slot::<&str>(&[]), None);
/// ```
#[must_use]
pub fn single_slot<K: AsRef<[u8]>>(keys: &[K]) -> Option<u16> {
    let (first, rest) = keys.split_first()?;
    let slot = key_slot(first.as_ref());
    rest.iter()
        .all(|k| key_slot(k.as_ref()) == slot)
        .then_some(slot)
}

/// Why a batch slot computation could not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum BatchError {
    /// The output buffer has fewer entries than there are keys.
    OutputTooShort {
        /// Number of keys given.
        keys: usize,
        /// Length of the output buffer.
        out: usize,
    },
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutputTooShort { keys, out } => write!(
                f,
                "output buffer holds {out} slots but {keys} keys were given; \
                 pass a buffer at least as long as the key list"
            ),
        }
    }
}

impl BatchError {
    /// The stable code of the error: `BUFFER_TOO_SMALL`.
    ///
    /// ```
    /// use keyroute::slot::{key_slots, BatchError};
    /// let err = key_slots(&[b"a"], &mut []).unwrap_err();
    /// assert_eq!(err.code().as_str(), "BUFFER_TOO_SMALL");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::OutputTooShort { .. } => ErrorCode::BufferTooSmall,
        }
    }
}

impl core::error::Error for BatchError {}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn design_examples() {
        assert_eq!(key_slot(b"{}{a}"), 13650);
        assert_eq!(key_slot(b"{{a}}"), 10276);
        assert_eq!(key_slot(b"foo{}{bar}"), 8363);
        assert_eq!(key_slot(b"foo{bar}{zap}"), 5061);
        assert_eq!(key_slot(b""), 0);
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
    }

    #[test]
    fn fused_scan_matches_tag_rule() {
        // Braces at every position around the 16-byte block boundaries.
        let reference = |k: &[u8]| crc16_xmodem(crate::slot::hash_tag(k)) & MASK;
        for len in 0..70 {
            let base: [u8; 70] = core::array::from_fn(|i| b'a' + (i % 26) as u8);
            assert_eq!(key_slot(&base[..len]), reference(&base[..len]));
            for open in 0..len {
                for close in open..=len {
                    let mut k = base;
                    k[open] = b'{';
                    if close < len {
                        k[close] = b'}';
                    }
                    assert_eq!(key_slot(&k[..len]), reference(&k[..len]), "{open} {close}");
                }
            }
        }
    }

    #[test]
    fn batch_short_output_is_an_error() {
        let mut out = [7u16; 1];
        let err = key_slots(&["a", "b"], &mut out).unwrap_err();
        assert_eq!(err, BatchError::OutputTooShort { keys: 2, out: 1 });
        assert_eq!(out, [7]);
    }

    #[test]
    fn batch_longer_output_keeps_tail() {
        let mut out = [7u16; 3];
        key_slots(&[b"foo".as_slice()], &mut out).unwrap();
        assert_eq!(out, [12182, 7, 7]);
    }
}
