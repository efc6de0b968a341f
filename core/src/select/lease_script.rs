//! Lease scripts: least-concurrency selection (in-flight work), a lifecycle distinct from
//! the cumulative least-used counter.
//!
//! A lease pool keeps four keys, all in the pool key's Redis Cluster slot (derived as the
//! [side key](super::SideKey) is: the pool key + suffix when it has a hash tag, else
//! `{` + pool key + `}` + suffix):
//!
//! | `KEYS[i]` | key | type | content |
//! |---|---|---|---|
//! | 1 | pool key | sorted set | member → leases in flight |
//! | 2 | + `:leases` | sorted set | lease id → deadline (ms since the Unix epoch) |
//! | 3 | + `:lease-members` | hash | lease id → member |
//! | 4 | + `:lease-seq` | string | the last lease id given out |
//!
//! | script | `ARGV` | reply |
//! |---|---|---|
//! | [`LEASE_ACQUIRE_SCRIPT`] | ttl ms (`1..=2^53`), now ms | `[member, id, deadline]`, or nil when the pool is empty |
//! | [`LEASE_RELEASE_SCRIPT`] | lease id, now ms | 1 released, 2 released past its deadline (not yet reclaimed), 0 unknown (released or reclaimed before): nothing changed |
//! | [`LEASE_RECLAIM_SCRIPT`] | now ms, limit | flat `[member, id, deadline, ...]` of the leases reclaimed (deadline ≤ now), at most `limit` |
//!
//! `now ms` empty means the server's `TIME` (recommended: one clock for every worker);
//! digits pass an explicit time (tests, replays). A lease leaves the leases set in the same
//! atomic step that decrements its member's in-flight count, so a lease is un-counted at
//! most once whichever of release and reclaim comes first. The count is never decremented
//! below 0 nor for a member no longer in the pool.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

use crate::script::Script;

#[cfg(feature = "alloc")]
use super::{KeyError, SideKey};

/// Suffixes of `KEYS[2..=4]` (see the module docs).
///
/// ```
/// assert_eq!(keyroute::select::lease_script::LEASE_KEY_SUFFIXES[0], ":leases");
/// ```
pub const LEASE_KEY_SUFFIXES: [&str; 3] = [":leases", ":lease-members", ":lease-seq"];

/// Acquire: the member with the fewest leases in flight (ties: byte-wise smallest), one
/// more lease for it with deadline now + ttl.
pub const LEASE_ACQUIRE_SCRIPT: &str = include_str!("lease_acquire.lua");
/// SHA1 of [`LEASE_ACQUIRE_SCRIPT`].
pub const LEASE_ACQUIRE_SHA1: &str = "6766a5d2d5eaa960dde68e97f29bfd222cb521c6";
/// Release: ends a lease once.
pub const LEASE_RELEASE_SCRIPT: &str = include_str!("lease_release.lua");
/// SHA1 of [`LEASE_RELEASE_SCRIPT`].
pub const LEASE_RELEASE_SHA1: &str = "9f39f9619fc636b9e4b4119d3f3416563223d3e5";
/// Reclaim: ends the leases abandoned past their deadline.
pub const LEASE_RECLAIM_SCRIPT: &str = include_str!("lease_reclaim.lua");
/// SHA1 of [`LEASE_RECLAIM_SCRIPT`].
pub const LEASE_RECLAIM_SHA1: &str = "edbf3c8062bfef744868b876c6097b9ef2fbabf8";

/// [`LEASE_ACQUIRE_SCRIPT`] as a [`Script`].
///
/// ```
/// assert_eq!(keyroute::select::lease_script::LEASE_ACQUIRE.num_keys(), 4);
/// ```
pub const LEASE_ACQUIRE: Script = Script::new(
    "lease-acquire",
    "lease the member with the fewest leases in flight (KEYS: pool, leases, lease-members, lease-seq; ARGV: ttl_ms, now_ms or '')",
    LEASE_ACQUIRE_SCRIPT,
    LEASE_ACQUIRE_SHA1,
    4,
);
/// [`LEASE_RELEASE_SCRIPT`] as a [`Script`].
pub const LEASE_RELEASE: Script = Script::new(
    "lease-release",
    "end a lease once (KEYS: as lease-acquire; ARGV: lease id, now_ms or '')",
    LEASE_RELEASE_SCRIPT,
    LEASE_RELEASE_SHA1,
    4,
);
/// [`LEASE_RECLAIM_SCRIPT`] as a [`Script`].
pub const LEASE_RECLAIM: Script = Script::new(
    "lease-reclaim",
    "end leases past their deadline (KEYS: as lease-acquire; ARGV: now_ms or '', limit)",
    LEASE_RECLAIM_SCRIPT,
    LEASE_RECLAIM_SHA1,
    4,
);

/// The four keys of a lease pool, `KEYS[1..=4]` of every lease script.
///
/// # Errors
/// As [`SideKey::new`]: an empty pool key, or one that needs a hash tag.
///
/// ```
/// use keyroute::select::lease_script::lease_keys;
/// let keys = lease_keys(b"{jobs}:busy")?;
/// assert_eq!(keys[1], b"{jobs}:busy:leases");
/// let keys = lease_keys(b"jobs")?;
/// assert_eq!(keys[3], b"{jobs}:lease-seq");
/// # Ok::<(), keyroute::select::KeyError>(())
/// ```
#[cfg(feature = "alloc")]
pub fn lease_keys(pool_key: &[u8]) -> Result<[Vec<u8>; 4], KeyError> {
    let wrapped = SideKey::new(pool_key)?.is_wrapped();
    let derive = |suffix: &str| {
        let mut key = Vec::with_capacity(pool_key.len() + suffix.len() + 2);
        if wrapped {
            key.push(b'{');
            key.extend_from_slice(pool_key);
            key.push(b'}');
        } else {
            key.extend_from_slice(pool_key);
        }
        key.extend_from_slice(suffix.as_bytes());
        key
    };
    let [a, b, c] = LEASE_KEY_SUFFIXES;
    Ok([pool_key.to_vec(), derive(a), derive(b), derive(c)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "alloc")]
    #[test]
    fn sha1s_match_the_texts() {
        use sha1::{Digest, Sha1};
        for (text, sha) in [
            (LEASE_ACQUIRE_SCRIPT, LEASE_ACQUIRE_SHA1),
            (LEASE_RELEASE_SCRIPT, LEASE_RELEASE_SHA1),
            (LEASE_RECLAIM_SCRIPT, LEASE_RECLAIM_SHA1),
        ] {
            let digest = Sha1::digest(text.as_bytes());
            let hex: alloc::string::String =
                digest.iter().map(|b| alloc::format!("{b:02x}")).collect();
            assert_eq!(hex, sha);
        }
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn keys_share_the_slot() {
        for pool in [&b"{a}:x"[..], b"plain", b"{{a}}"] {
            let keys = lease_keys(pool).expect("keys");
            let slot = crate::slot::key_slot(&keys[0]);
            for key in &keys {
                assert_eq!(crate::slot::key_slot(key), slot);
            }
        }
        assert!(lease_keys(b"").is_err());
        assert!(lease_keys(b"a}").is_err());
    }
}
