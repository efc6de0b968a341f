//! Hashing keys and server strings onto the circle.

#[cfg(test)]
use core::hash::Hasher;
use md5::{Digest, Md5};

#[cfg(test)]
use siphasher::sip::SipHasher13;

use super::profile::{PointHash, NATIVE_SIP_KEY};

/// `siphasher`'s SipHash-1-3 under the native key: the reference the hand-written
/// functions are tested against.
#[cfg(test)]
fn sip() -> SipHasher13 {
    SipHasher13::new_with_keys(K0, K1)
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
        PointHash::SipHash13 => sip13_key(key),
    }
}

/// [`NATIVE_SIP_KEY`] as SipHash's two little-endian `u64` key halves.
const K0: u64 = match NATIVE_SIP_KEY.first_chunk::<8>() {
    Some(k) => u64::from_le_bytes(*k),
    None => 0,
};
const K1: u64 = match NATIVE_SIP_KEY.last_chunk::<8>() {
    Some(k) => u64::from_le_bytes(*k),
    None => 0,
};

/// One SipRound.
#[inline(always)]
pub(crate) fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

/// SipHash-1-3 of a whole key with the native key, as `siphasher`'s `SipHasher13::hash`
/// computes it (tests check every length 0..=80 and random keys against it).
///
/// Why not `siphasher` itself on this path: keys are hashed one-shot, and its streaming
/// state (kept in memory, tail assembled byte by byte with length-dependent branches)
/// costs ~40% more per short key (15 vs 10.6 ns on 14–22 byte keys, measured). Here the
/// state stays in registers and the tail is one unaligned load and a shift.
/// The SipHash state before any message, under the native key.
#[inline(always)]
pub(crate) const fn sip_start() -> [u64; 4] {
    [
        K0 ^ 0x736f_6d65_7073_6575,
        K1 ^ 0x646f_7261_6e64_6f6d,
        K0 ^ 0x6c79_6765_6e65_7261,
        K1 ^ 0x7465_6462_7974_6573,
    ]
}

/// `siphasher`'s streaming SipHash-1-3 under the native key (the reference in tests).
#[cfg(test)]
pub(crate) fn sip_hasher() -> SipHasher13 {
    sip()
}

#[inline(always)]
fn sip13_key(msg: &[u8]) -> u64 {
    let mut v = sip_start();
    // Blocks split off as arrays (a load each), not `chunks_exact` and `copy_from_slice`,
    // which size-optimised builds (the .wasm) leave as calls.
    let mut blocks = msg;
    while let Some((block, more)) = blocks.split_first_chunk::<8>() {
        sip_compress(&mut v, u64::from_le_bytes(*block));
        blocks = more;
    }
    sip_finish(v, sip_last_word(msg))
}

/// SipHash's last word of `msg`: its length in the top byte, its last `len % 8` bytes
/// (after the whole 8-byte blocks) below, little-endian.
#[inline(always)]
pub(crate) fn sip_last_word(msg: &[u8]) -> u64 {
    let rest = msg.len() % 8;
    let tail = if let Some(last) = msg.last_chunk::<8>() {
        // The last 8 bytes end with the `rest` tail bytes: keep those (none when rest = 0).
        (u64::from_le_bytes(*last) >> 1) >> (63 - 8 * rest as u32)
    } else {
        // A key of fewer than 8 bytes.
        msg.iter().rev().fold(0u64, |t, &b| (t << 8) | u64::from(b))
    };
    ((msg.len() as u64) << 56) | tail
}

/// SipHash-1-3's compression of one message word.
#[inline(always)]
pub(crate) fn sip_compress(v: &mut [u64; 4], m: u64) {
    v[3] ^= m;
    sip_round(v);
    v[0] ^= m;
}

/// SipHash-1-3's last word (`len << 56 | tail`) and finalization: the hash.
#[inline(always)]
pub(crate) fn sip_finish(mut v: [u64; 4], b: u64) -> u64 {
    sip_compress(&mut v, b);
    v[2] ^= 0xff;
    sip_round(&mut v);
    sip_round(&mut v);
    sip_round(&mut v);
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// A SipHash state that has absorbed `prefix` (the streaming reference of the tests; builds
/// use `sip_many`).
#[cfg(test)]
pub(crate) fn native_prefix(prefix: &[u8]) -> SipHasher13 {
    let mut h = sip();
    h.write(prefix);
    h
}

/// The native point of `prefix ++ rest`, from a state made by [`native_prefix`].
#[cfg(test)]
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
    fn one_shot_equals_siphasher_at_every_length() {
        let bytes: alloc::vec::Vec<u8> = (0..80u32)
            .map(|i| (i.wrapping_mul(151) ^ 0xa5) as u8)
            .collect();
        for len in 0..=bytes.len() {
            for start in [0, 1, 3] {
                if start + len <= bytes.len() {
                    let k = &bytes[start..start + len];
                    assert_eq!(sip13_key(k), sip().hash(k), "len {len} at {start}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn one_shot_equals_siphasher(k in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            proptest::prop_assert_eq!(sip13_key(&k), sip().hash(&k));
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
