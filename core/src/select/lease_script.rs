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

pub use crate::script::table::{LEASE_ACQUIRE, LEASE_RECLAIM, LEASE_RELEASE};

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
pub const LEASE_ACQUIRE_SCRIPT: &str = LEASE_ACQUIRE.text();
/// SHA1 of [`LEASE_ACQUIRE_SCRIPT`].
pub const LEASE_ACQUIRE_SHA1: &str = LEASE_ACQUIRE.sha1();
/// Release: ends a lease once.
pub const LEASE_RELEASE_SCRIPT: &str = LEASE_RELEASE.text();
/// SHA1 of [`LEASE_RELEASE_SCRIPT`].
pub const LEASE_RELEASE_SHA1: &str = LEASE_RELEASE.sha1();
/// Reclaim: ends the leases abandoned past their deadline.
pub const LEASE_RECLAIM_SCRIPT: &str = LEASE_RECLAIM.text();
/// SHA1 of [`LEASE_RECLAIM_SCRIPT`].
pub const LEASE_RECLAIM_SHA1: &str = LEASE_RECLAIM.sha1();

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

#[cfg(all(test, feature = "alloc"))]
mod tests {
    use super::*;

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
