//! Hashing keys and server strings onto the circle.

use core::hash::Hasher;
use md5::{Digest, Md5};

use siphasher::sip::SipHasher13;

use super::profile::{PointHash, NATIVE_SIP_KEY};

fn sip() -> SipHasher13 {
    let (k0, k1) = NATIVE_SIP_KEY.split_at(8);
    let mut a = [0u8; 8];
    let mut b = [0u8; 8];
    a.copy_from_slice(k0);
    b.copy_from_slice(k1);
    SipHasher13::new_with_keys(u64::from_le_bytes(a), u64::from_le_bytes(b))
}

/// The MD5 digest of `bytes`.
pub(crate) fn md5(bytes: &[u8]) -> [u8; 16] {
    Md5::digest(bytes).into()
}

/// Point `h` of an MD5 digest: bytes `4h..4h+4` read little-endian (ketama).
#[inline]
pub(crate) fn ketama_point(d: &[u8; 16], h: usize) -> u32 {
    u32::from_le_bytes([d[4 * h], d[4 * h + 1], d[4 * h + 2], d[4 * h + 3]])
}

/// Where `key` lands on a circle of the given hash family.
///
/// MD5 profiles: the first four digest bytes, little-endian (`MD5("test")` →
/// 3446378249). Native: SipHash-1-3 keyed with [`NATIVE_SIP_KEY`].
///
/// ```
/// use keyroute::ring::{key_hash, PointHash};
/// assert_eq!(key_hash(PointHash::Md5, b"test"), 3446378249);
/// ```
#[inline]
pub fn key_hash(hash: PointHash, key: &[u8]) -> u64 {
    match hash {
        PointHash::Md5 => ketama_point(&md5(key), 0) as u64,
        PointHash::SipHash13 => sip().hash(key),
    }
}

/// A SipHash state that has absorbed `prefix`: clone it and feed the rest, so a node's
/// points (`name-0`, `name-1`, …) do not hash the name again each time.
pub(crate) fn native_prefix(prefix: &[u8]) -> SipHasher13 {
    let mut h = sip();
    h.write(prefix);
    h
}

/// The native point of `prefix ++ rest`, from a state made by [`native_prefix`].
#[inline]
pub(crate) fn native_point_from(prefix: &SipHasher13, rest: &[u8]) -> u64 {
    let mut h = *prefix;
    h.write(rest);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_equals_one_shot() {
        let mut all = alloc::vec::Vec::new();
        for name in [
            "",
            "a",
            "cache-b",
            "10.0.1.1:11211",
            "a-much-longer-node-name.example.com:6379",
        ] {
            let p = native_prefix(name.as_bytes());
            for k in ["-0", "-7", "-159", "-123456"] {
                all.clear();
                all.extend_from_slice(name.as_bytes());
                all.extend_from_slice(k.as_bytes());
                assert_eq!(
                    native_point_from(&p, k.as_bytes()),
                    sip().hash(&all),
                    "{name}{k}"
                );
            }
        }
    }

    #[test]
    fn native_key_hash_is_pinned() {
        // SipHash-1-3 keyed "keyroute-native1": changing this moves every key in every fleet.
        assert_eq!(
            key_hash(PointHash::SipHash13, b"user:42"),
            11846131503532646535
        );
    }
}
