//! How an engine turns a key into a number: the peer's key hash and, for some peers,
//! the part of the key they hash (a hash tag).

use crate::hashes::{self, HaproxyHash, TwemproxyHash};

/// A peer's key hash. Every value is a `u64`; 32-bit hashes are zero-extended, and Jedis'
/// signed 64-bit hash is mapped to `u64` with its sign bit flipped (so that unsigned
/// order is Java's signed order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyHash {
    /// CRC-32/IEEE (nginx `hash ... consistent`, groupcache, redis-rb, Predis).
    Crc32,
    /// The first four bytes of MD5, little-endian (ketama, Dubbo, spymemcached).
    Md5,
    /// XXH64 with a seed (Envoy, go-redis, keyroute's jump/rendezvous/maglev).
    Xxh64(u64),
    /// MurmurHash64A with a seed, signed order (Jedis).
    Murmur64aSigned(u64),
    /// `Math.abs(s.hashCode())` (the java-hashcode ring).
    JavaAbsHashCode,
    /// An HAProxy hash function, with `avalanche` or not.
    Haproxy(HaproxyHash, bool),
    /// HAProxy's `balance source`: the key is an IP address as text; its hash is the XOR
    /// of its big-endian 32-bit words (IPv4: the address as an integer), then `full_hash`
    /// when `avalanche`. A key that is not an IP address hashes to 0.
    HaproxySource(bool),
    /// A twemproxy key hash (an empty key hashes to 0, as `server_pool_hash` does).
    Twemproxy(TwemproxyHash),
    /// A spymemcached `DefaultHashAlgorithm`.
    Spymemcached(SpyHash),
    /// Jedis' `Hashing.MD5`: the first four MD5 bytes little-endian as a (positive)
    /// `long`, in signed order.
    JedisMd5,
    /// `Hashing.murmur3_128().hashString(key, UTF_8).padToLong()` (Guava).
    Murmur3_128,
    /// `Hashing.murmur3_32_fixed().hashString(key, UTF_8).padToLong()` (Guava).
    Murmur3_32,
}

impl KeyHash {
    /// The hash of `key`.
    ///
    /// ```
    /// use keyroute::engine::KeyHash;
    /// assert_eq!(KeyHash::Crc32.hash(b"test"), 0xd87f7e0c);
    /// assert_eq!(KeyHash::Md5.hash(b"test"), 3446378249);
    /// ```
    #[inline]
    pub fn hash(self, key: &[u8]) -> u64 {
        match self {
            KeyHash::Crc32 => u64::from(hashes::crc32(key)),
            KeyHash::Md5 => {
                let d = hashes::md5(key);
                u64::from(u32::from_le_bytes([d[0], d[1], d[2], d[3]]))
            }
            KeyHash::Xxh64(seed) => hashes::xxh64(key, seed),
            KeyHash::Murmur64aSigned(seed) => hashes::murmur64a(key, seed) ^ (1 << 63),
            KeyHash::JavaAbsHashCode => {
                u64::from(hashes::java_abs(hashes::java_string_hash(key)) as u32 ^ (1 << 31))
            }
            KeyHash::Haproxy(f, avalanche) => {
                let h = f.hash(key);
                u64::from(if avalanche { hashes::full_hash(h) } else { h })
            }
            KeyHash::HaproxySource(avalanche) => {
                let h = match core::str::from_utf8(key)
                    .ok()
                    .and_then(|t| t.parse::<core::net::IpAddr>().ok())
                {
                    Some(core::net::IpAddr::V4(a)) => u32::from(a),
                    Some(core::net::IpAddr::V6(a)) => {
                        a.octets().chunks_exact(4).fold(0u32, |h, w| {
                            h ^ u32::from_be_bytes([w[0], w[1], w[2], w[3]])
                        })
                    }
                    None => 0,
                };
                u64::from(if avalanche { hashes::full_hash(h) } else { h })
            }
            KeyHash::Twemproxy(f) => {
                if key.is_empty() {
                    0
                } else {
                    u64::from(f.hash(key))
                }
            }
            KeyHash::Spymemcached(alg) => u64::from(alg.hash(key)),
            KeyHash::JedisMd5 => KeyHash::Md5.hash(key) ^ (1 << 63),
            KeyHash::Murmur3_128 => hashes::murmur3_x64_128_low(key, 0),
            KeyHash::Murmur3_32 => u64::from(hashes::murmur3_32(key, 0)),
        }
    }

    /// The bits of the values: 32 or 64.
    ///
    /// ```
    /// use keyroute::engine::KeyHash;
    /// assert_eq!(KeyHash::Crc32.bits(), 32);
    /// assert_eq!(KeyHash::Xxh64(0).bits(), 64);
    /// ```
    pub const fn bits(self) -> u32 {
        match self {
            KeyHash::Xxh64(_)
            | KeyHash::Murmur64aSigned(_)
            | KeyHash::Murmur3_128
            | KeyHash::JedisMd5 => 64,
            _ => 32,
        }
    }
}

/// The part of a key a peer hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum KeyTag {
    /// The whole key.
    Whole,
    /// Redis Cluster's rule (go-redis, Predis, Jedis with a tag pattern): the bytes between
    /// the first `{` and the next `}` when that span is non-empty.
    Braces,
    /// redis-rb's default `/^\{(.+?)\}/`: a `{` at the start of a line, then the shortest
    /// non-empty run of non-newline bytes before a `}`.
    RubyBraces,
    /// twemproxy's `hash_tag: "ab"`: the bytes between the first `a` and the next `b`
    /// after it, when non-empty.
    Pair(u8, u8),
}

impl KeyTag {
    /// The hashed part of `key`.
    ///
    /// ```
    /// use keyroute::engine::KeyTag;
    /// assert_eq!(KeyTag::Braces.apply(b"x{user1}y"), b"user1");
    /// assert_eq!(KeyTag::RubyBraces.apply(b"x{user1}y"), b"x{user1}y");
    /// assert_eq!(KeyTag::RubyBraces.apply(b"{user1}y"), b"user1");
    /// assert_eq!(KeyTag::Pair(b'$', b'$').apply(b"a$b$c"), b"b");
    /// ```
    pub fn apply(self, key: &[u8]) -> &[u8] {
        match self {
            KeyTag::Whole => key,
            KeyTag::Braces => crate::slot::hash_tag(key),
            KeyTag::Pair(open, close) => {
                if let Some(s) = key.iter().position(|&b| b == open) {
                    if let Some(e) = key[s + 1..].iter().position(|&b| b == close) {
                        if e > 0 {
                            return &key[s + 1..s + 1 + e];
                        }
                    }
                }
                key
            }
            KeyTag::RubyBraces => {
                // Ruby's `^` matches at the start of the string and after every "\n".
                let mut start = 0;
                loop {
                    let line = &key[start..];
                    if line.len() >= 3 && line[0] == b'{' && line[1] != b'\n' {
                        // `.+?`: at least one byte (not "\n"), then the first `}`.
                        if let Some(e) = line[2..].iter().position(|&b| b == b'}' || b == b'\n') {
                            if line[2 + e] == b'}' {
                                return &line[1..2 + e];
                            }
                        }
                    }
                    match key[start..].iter().position(|&b| b == b'\n') {
                        Some(nl) => start += nl + 1,
                        None => return key,
                    }
                }
            }
        }
    }
}

/// spymemcached's `DefaultHashAlgorithm` (2.12), truncated to 32 bits as it returns them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpyHash {
    /// `KETAMA_HASH`: the first four MD5 bytes of the UTF-8 key, little-endian.
    Ketama,
    /// `NATIVE_HASH`: `String.hashCode()`.
    Native,
    /// `CRC_HASH`: `(crc32(UTF-8 key) >> 16) & 0x7fff`.
    Crc,
    /// `FNV1_64_HASH` over UTF-16 units.
    Fnv1_64,
    /// `FNV1A_64_HASH` over UTF-16 units.
    Fnv1a64,
    /// `FNV1_32_HASH` over UTF-16 units.
    Fnv1_32,
    /// `FNV1A_32_HASH` over UTF-16 units.
    Fnv1a32,
}

impl SpyHash {
    /// The algorithm of a name (`ketama`, `native`, `crc`, `fnv1_64`, `fnv1a_64`,
    /// `fnv1_32`, `fnv1a_32`; spymemcached's enum names also work: `KETAMA_HASH`, ...).
    ///
    /// ```
    /// use keyroute::engine::SpyHash;
    /// assert_eq!(SpyHash::from_name("FNV1A_32_HASH"), Some(SpyHash::Fnv1a32));
    /// assert_eq!(SpyHash::from_name("ketama"), Some(SpyHash::Ketama));
    /// ```
    pub fn from_name(name: &str) -> Option<SpyHash> {
        let n = name.to_ascii_lowercase();
        let n = n.strip_suffix("_hash").unwrap_or(&n);
        Some(match n {
            "ketama" => SpyHash::Ketama,
            "native" => SpyHash::Native,
            "crc" => SpyHash::Crc,
            "fnv1_64" => SpyHash::Fnv1_64,
            "fnv1a_64" => SpyHash::Fnv1a64,
            "fnv1_32" => SpyHash::Fnv1_32,
            "fnv1a_32" => SpyHash::Fnv1a32,
            _ => return None,
        })
    }

    /// The hash of the string whose UTF-8 bytes are `key`.
    ///
    /// ```
    /// use keyroute::engine::SpyHash;
    /// assert_eq!(SpyHash::Ketama.hash(b"test"), 3446378249);
    /// assert_eq!(SpyHash::Native.hash(b"hello"), 99162322);
    /// ```
    pub fn hash(self, key: &[u8]) -> u32 {
        const FNV64_INIT: u64 = 0xcbf2_9ce4_8422_2325;
        const FNV64_PRIME: u64 = 0x0100_0000_01b3;
        const FNV32_INIT: u64 = 2_166_136_261;
        const FNV32_PRIME: u64 = 16_777_619;
        let fnv = |init: u64, prime: u64, xor_first: bool| {
            let mut h = init;
            for_each_utf16(key, |u| {
                if xor_first {
                    h ^= u64::from(u);
                    h = h.wrapping_mul(prime);
                } else {
                    h = h.wrapping_mul(prime);
                    h ^= u64::from(u);
                }
            });
            h as u32
        };
        match self {
            SpyHash::Ketama => KeyHash::Md5.hash(key) as u32,
            SpyHash::Native => hashes::java_string_hash(key) as u32,
            SpyHash::Crc => (hashes::crc32(key) >> 16) & 0x7fff,
            SpyHash::Fnv1_64 => fnv(FNV64_INIT, FNV64_PRIME, false),
            SpyHash::Fnv1a64 => fnv(FNV64_INIT, FNV64_PRIME, true),
            SpyHash::Fnv1_32 => fnv(FNV32_INIT, FNV32_PRIME, false),
            SpyHash::Fnv1a32 => fnv(FNV32_INIT, FNV32_PRIME, true),
        }
    }
}

/// Calls `f` with each UTF-16 unit of the string whose UTF-8 bytes are `text` (bytes that
/// are not UTF-8 count as U+FFFD, as Java decodes them).
pub(crate) fn for_each_utf16(text: &[u8], mut f: impl FnMut(u16)) {
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                f(*u);
            }
        }
        if !chunk.invalid().is_empty() {
            f(0xfffd);
        }
    }
}
