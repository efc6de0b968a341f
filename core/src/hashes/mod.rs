//! The hash functions the fleet's rings and proxies use, each exactly as its peer computes
//! it (byte signedness, widths and seeds included).
//!
//! Where a well-kept `no_std` crate exists it is used: CRC32/IEEE is `crc32fast`, XXH64
//! and XXH32 are `xxhash-rust`, MurmurHash3 is `mur3`. The rest is written here from the
//! peers' sources, because no crate computes it the peer's way: MurmurHash64A (Jedis, and
//! libstdc++'s `_Hash_bytes`, which is the same function), twemproxy's twelve key hashes
//! (several sign-extend bytes), HAProxy's `sdbm`/`djb2`/`wt6`/`full_hash`, Java's
//! `String.hashCode` over UTF-16 units, and PHP 8.2's `round()`.
//!
//! ```
//! use keyroute::hashes::{crc32, murmur64a, xxh64};
//! assert_eq!(crc32(b"123456789"), 0xcbf43926);
//! assert_eq!(xxh64(b"", 0), 0xef46db3751d8e999);
//! assert_eq!(murmur64a(b"", 0), 0);
//! ```

mod haproxy;
mod java;
mod murmur;
mod php;
mod twemproxy;

pub use haproxy::{djb2, full_hash, sdbm, wt6, HaproxyHash};
pub use java::{java_abs, java_string_hash};
pub use murmur::{murmur2_twemproxy, murmur3_32, murmur3_x64_128_low, murmur64a};
pub use php::php_round;
pub use twemproxy::TwemproxyHash;

/// CRC-32/IEEE (zlib's `crc32`, PHP's `crc32()`, Ruby's `Zlib.crc32`, Go's
/// `crc32.ChecksumIEEE`), by `crc32fast`.
///
/// ```
/// assert_eq!(keyroute::hashes::crc32(b"test"), 0xd87f7e0c);
/// ```
#[inline]
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// MD5 (the `md-5` crate): ketama's points, Dubbo's and spymemcached's `KETAMA_HASH`.
///
/// ```
/// assert_eq!(keyroute::hashes::md5(b"")[0], 0xd4);
/// ```
#[inline]
pub fn md5(bytes: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(bytes).into()
}

/// XXH64 with a seed (Envoy's `HashUtil::xxHash64`, go-redis), by `xxhash-rust`.
///
/// ```
/// assert_eq!(keyroute::hashes::xxh64(b"a", 0), 0xd24ec4f1a98c6e5b);
/// ```
#[inline]
pub fn xxh64(bytes: &[u8], seed: u64) -> u64 {
    xxhash_rust::xxh64::xxh64(bytes, seed)
}

/// XXH32 with a seed (HAProxy 3.x `hash-key addr` for IPv6), by `xxhash-rust`.
///
/// ```
/// assert_eq!(keyroute::hashes::xxh32(b"", 0), 0x02cc5d05);
/// ```
#[inline]
pub fn xxh32(bytes: &[u8], seed: u32) -> u32 {
    xxhash_rust::xxh32::xxh32(bytes, seed)
}
