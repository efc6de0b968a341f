//! The Murmur family: MurmurHash64A and twemproxy's MurmurHash2 (written here: no
//! maintained `no_std` crate computes them), MurmurHash3 (the `mur3` crate).

const M64: u64 = 0xc6a4_a793_5bd1_e995;

/// MurmurHash64A (Austin Appleby), little-endian 8-byte blocks and tail.
///
/// Jedis' `MurmurHash.hash64A` is this function (its seed is `0x1234ABCD` and it keeps the
/// result as a signed `long`); so is libstdc++'s 64-bit `std::_Hash_bytes` (`mul`,
/// `shift_mix`, `load_bytes`), which Envoy's ring uses with seed `0xc70f6907`.
///
/// ```
/// use keyroute::hashes::murmur64a;
/// // libstdc++ 12 on x86-64: std::_Hash_bytes("hello", 5, 0xc70f6907)
/// assert_eq!(murmur64a(b"hello", 0xc70f6907), 0x26553298fdbe39c8);
/// ```
pub fn murmur64a(bytes: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ (bytes.len() as u64).wrapping_mul(M64);
    let mut blocks = bytes.chunks_exact(8);
    for b in &mut blocks {
        let mut k = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        k = k.wrapping_mul(M64);
        k ^= k >> 47;
        k = k.wrapping_mul(M64);
        h ^= k;
        h = h.wrapping_mul(M64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut t = [0u8; 8];
        t[..tail.len()].copy_from_slice(tail);
        h ^= u64::from_le_bytes(t);
        h = h.wrapping_mul(M64);
    }
    h ^= h >> 47;
    h = h.wrapping_mul(M64);
    h ^ (h >> 47)
}

/// twemproxy's `hash_murmur`: MurmurHash2 (32-bit) with the seed `0xdeadbeef × len`.
///
/// ```
/// use keyroute::hashes::murmur2_twemproxy;
/// assert_eq!(murmur2_twemproxy(b""), 0);
/// ```
pub fn murmur2_twemproxy(bytes: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let len = bytes.len() as u32;
    let seed = 0xdead_beefu32.wrapping_mul(len);
    let mut h = seed ^ len;
    let mut blocks = bytes.chunks_exact(4);
    for b in &mut blocks {
        let mut k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

/// MurmurHash3 x86_32 with a seed (pymemcache's `murmur3_32`, Guava's
/// `murmur3_32_fixed`), by `mur3`.
///
/// ```
/// assert_eq!(keyroute::hashes::murmur3_32(b"hello", 0), 0x248bfa47);
/// ```
#[inline]
pub fn murmur3_32(bytes: &[u8], seed: u32) -> u32 {
    mur3::murmurhash3_x86_32(bytes, seed)
}

/// The first 64 bits of MurmurHash3 x64_128 (seed `seed`) as Guava reads them
/// (`Hashing.murmur3_128().hashBytes(b).asLong()`, the digest's first 8 bytes
/// little-endian), by `mur3`.
///
/// ```
/// use keyroute::hashes::murmur3_x64_128_low;
/// assert_eq!(murmur3_x64_128_low(b"", 0), 0);
/// ```
#[inline]
pub fn murmur3_x64_128_low(bytes: &[u8], seed: u32) -> u64 {
    mur3::murmurhash3_x64_128(bytes, seed).0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_hash_bytes_of_libstdcxx() {
        // g++ 12 (Debian bookworm, x86-64): std::_Hash_bytes(s, len, seed), the function
        // Envoy's MURMUR_HASH_2 ring copies; printed by a three-line C++ program.
        let rows: [(&[u8], u64, u64); 24] = [
            (b"", 0xc70f6907, 0x553e93901e462a6e),
            (b"hello", 0xc70f6907, 0x26553298fdbe39c8),
            (b"a", 0xc70f6907, 0x454ddee488c1ed6b),
            (b"abcdefgh", 0xc70f6907, 0x783db3e38db898bb),
            (b"abcdefghi", 0xc70f6907, 0xb4ec9257851c8aaf),
            (b"10.0.0.1:80_0", 0xc70f6907, 0xbd8f6461ecffb28c),
            (
                b"host-with-a-long-name.example.com:8080_159",
                0xc70f6907,
                0xc0abdee94d31458f,
            ),
            (b"\xff\xfe\x80", 0xc70f6907, 0xca01bf8f2c418857),
            (b"", 0x1234abcd, 0x742d0865aa627b0b),
            (b"hello", 0x1234abcd, 0x9c6a0b91ce5d8807),
            (b"a", 0x1234abcd, 0x6ee2d45a1217e2fd),
            (b"abcdefgh", 0x1234abcd, 0x2050c16e4fcc5436),
            (b"abcdefghi", 0x1234abcd, 0xe2b217f2895ddcd0),
            (b"10.0.0.1:80_0", 0x1234abcd, 0x97923cc9a9878440),
            (
                b"host-with-a-long-name.example.com:8080_159",
                0x1234abcd,
                0xf9d8997ce909c974,
            ),
            (b"\xff\xfe\x80", 0x1234abcd, 0x7de4ef55cffc69ca),
            (b"", 0, 0),
            (b"hello", 0, 0x1e68d17c457bf117),
            (b"a", 0, 0x071717d2d36b6b11),
            (b"abcdefgh", 0, 0xafdb0257ff41aa98),
            (b"abcdefghi", 0, 0xc9b9d84356146ac2),
            (b"10.0.0.1:80_0", 0, 0x32abda8d4bcc0895),
            (
                b"host-with-a-long-name.example.com:8080_159",
                0,
                0xd7a2046370b71996,
            ),
            (b"\xff\xfe\x80", 0, 0x57f93ca722e123a4),
        ];
        for (s, seed, want) in rows {
            assert_eq!(murmur64a(s, seed), want, "{s:?}");
        }
    }
}
