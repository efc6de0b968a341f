//! HAProxy's hash functions (`src/hash.c`, `include/haproxy/intops.h`, 2.2 and later:
//! bytes are unsigned).

/// HAProxy's `hash_sdbm`: `h = c + (h << 6) + (h << 16) - h`, from 0.
///
/// ```
/// assert_eq!(keyroute::hashes::sdbm(b"a"), 97);
/// ```
pub fn sdbm(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |h, &c| {
        u32::from(c)
            .wrapping_add(h << 6)
            .wrapping_add(h << 16)
            .wrapping_sub(h)
    })
}

/// HAProxy's `hash_djb2`: `h = h * 33 + c`, from 5381.
///
/// ```
/// assert_eq!(keyroute::hashes::djb2(b""), 5381);
/// assert_eq!(keyroute::hashes::djb2(b"a"), 5381 * 33 + 97);
/// ```
pub fn djb2(bytes: &[u8]) -> u32 {
    bytes.iter().fold(5381u32, |h, &c| {
        (h << 5).wrapping_add(h).wrapping_add(u32::from(c))
    })
}

/// HAProxy's `hash_wt6` (Willy Tarreau's rotating hash).
///
/// ```
/// assert_eq!(keyroute::hashes::wt6(b""), 0xa53c965a ^ 0x5ca6953a);
/// ```
pub fn wt6(bytes: &[u8]) -> u32 {
    let (mut h0, mut h1) = (0xa53c_965au32, 0x5ca6_953au32);
    let (mut step0, mut step1) = (6u32, 18u32);
    for &c in bytes {
        let t = u32::from(c);
        h0 = !(h0 ^ t);
        h1 = !(h1.wrapping_add(t));
        let t = h1.rotate_left(step0);
        h1 = h0.rotate_left(step1);
        h0 = t;
        let t = ((h0 >> 16) ^ h1) & 0xffff;
        step0 = t & 0x1f;
        step1 = t >> 11;
    }
    h0 ^ h1
}

/// HAProxy's `full_hash`: Bob Jenkins' 6-shift integer hash times 3221225473 (a bijection
/// of `u32`). It places `hash-type consistent` points and is the `avalanche` modifier.
///
/// ```
/// use keyroute::hashes::full_hash;
/// assert_ne!(full_hash(1), full_hash(2));
/// ```
pub const fn full_hash(a: u32) -> u32 {
    let mut a = a;
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
}

/// The hash function of a `hash-type` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HaproxyHash {
    /// `sdbm` (the default).
    Sdbm,
    /// `djb2`.
    Djb2,
    /// `wt6`.
    Wt6,
    /// `crc32` (IEEE, the same value as zlib's).
    Crc32,
}

impl HaproxyHash {
    /// The function named as HAProxy's configuration names it.
    ///
    /// ```
    /// use keyroute::hashes::HaproxyHash;
    /// assert_eq!(HaproxyHash::from_name("djb2"), Some(HaproxyHash::Djb2));
    /// assert_eq!(HaproxyHash::from_name("none"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<HaproxyHash> {
        Some(match name {
            "sdbm" => HaproxyHash::Sdbm,
            "djb2" => HaproxyHash::Djb2,
            "wt6" => HaproxyHash::Wt6,
            "crc32" => HaproxyHash::Crc32,
            _ => return None,
        })
    }

    /// The name in HAProxy's configuration.
    ///
    /// ```
    /// assert_eq!(keyroute::hashes::HaproxyHash::Wt6.as_str(), "wt6");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            HaproxyHash::Sdbm => "sdbm",
            HaproxyHash::Djb2 => "djb2",
            HaproxyHash::Wt6 => "wt6",
            HaproxyHash::Crc32 => "crc32",
        }
    }

    /// The hash of `bytes`.
    ///
    /// ```
    /// use keyroute::hashes::HaproxyHash;
    /// assert_eq!(HaproxyHash::Crc32.hash(b"test"), keyroute::hashes::crc32(b"test"));
    /// ```
    #[inline]
    pub fn hash(self, bytes: &[u8]) -> u32 {
        match self {
            HaproxyHash::Sdbm => sdbm(bytes),
            HaproxyHash::Djb2 => djb2(bytes),
            HaproxyHash::Wt6 => wt6(bytes),
            HaproxyHash::Crc32 => super::crc32(bytes),
        }
    }
}
