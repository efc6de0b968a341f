//! Least-used selection: which proxy gets the next job.
//!
//! A pool is a Redis sorted set (member = proxy id, score = assignments). The
//! [least-used script](LEAST_USED_SCRIPT) picks the lowest score, ties going to the
//! byte-wise smallest member, and increments it in one atomic server-side step; an empty
//! or missing pool gives nil, and the caller makes no request. The count is cumulative
//! assignments (including ones whose request later failed), not in-flight work.
//!
//! * the Lua scripts with their SHA1s, constants available without `alloc` for any client
//!   that runs them: [`LEAST_USED`], [`SEED`], [`REMOVE`], [`RESTORE`] (as
//!   [`Script`](crate::script::Script)s, all in [`POOL_SCRIPTS`] and in
//!   [`crate::script::SCRIPTS`]; texts also as `*_SCRIPT`, digests as `*_SHA1`), the
//!   lease scripts in [`lease_script`] and the affinity-with-a-cap scripts in
//!   [`affinity_script`];
//! * [`SideKey`]: the hash where removed members' counts are remembered, kept in the pool
//!   key's Redis Cluster slot;
//! * `Pool` (feature `alloc`): the same semantics in memory, checked against a real
//!   Redis by `tests/vectors/pool/`.
//!
//! # Scripts and key layout
//!
//! | script | `KEYS` | `ARGV` | reply |
//! |---|---|---|---|
//! | [`LEAST_USED`] | pool | — | chosen member, or nil when the pool is empty or missing |
//! | [`SEED`] | pool, side | initial count (decimal, `0..=2^53`), overwrite (`0`/`1`), members… | integer: members newly added |
//! | [`REMOVE`] | pool, side | member | integer: the count remembered, or nil if not in the pool |
//! | [`RESTORE`] | pool, side | member, mode (`keep`/`at_minimum`, see [`Restore`]) | integer: the member's count afterwards |
//!
//! The pool key holds a sorted set; the side key ([`SideKey`]: pool key + `:removed` when
//! it has a hash tag, else `{pool key}:removed`) a hash, member → count when it was
//! removed. A member is never in both. Run a script with `EVALSHA sha1 numkeys keys...
//! args...` and, on `NOSCRIPT`, `SCRIPT LOAD` the text and retry (scripts are cached per
//! node). Each script validates its arguments before its first write and answers `ERR
//! keyroute ...` when they are wrong, so a refused call changes nothing. Taking several
//! members is the least-used script called once per member wanted: each call is atomic,
//! the sequence is not.
//!
//! Every text ends with exactly one `\n` (the last line is terminated like the others),
//! and its SHA1 covers it; [`LEAST_USED_SCRIPT`] is the block in `docs/design.md`, each of
//! its four lines followed by `\n`. Counts are exact up to [`MAX_EXACT_COUNT`] = 2^53:
//! Redis stores scores as doubles.
//!
//! ```
//! use keyroute::select::{SideKey, LEAST_USED, SEED};
//! // EVALSHA <sha1> 1 {proxies}:pool   (loading the text on NOSCRIPT)
//! assert_eq!(LEAST_USED.num_keys(), 1);
//! assert_eq!(LEAST_USED.sha1().len(), 40);
//! // EVALSHA <sha1> 2 {proxies}:pool {proxies}:pool:removed 0 0 proxy-1 proxy-2
//! let side = SideKey::new(b"{proxies}:pool")?;
//! assert_eq!(side.parts().concat(), b"{proxies}:pool:removed");
//! assert_eq!(SEED.num_keys(), 2);
//! # Ok::<(), keyroute::select::KeyError>(())
//! ```
//!
//! In memory, with the `alloc` feature:
//!
//! ```
//! # #[cfg(feature = "alloc")] {
//! use keyroute::select::Pool;
//! let mut pool = Pool::new();
//! pool.seed(["proxy-2", "proxy-1"], 0, false)?;
//! assert_eq!(pool.pick().as_deref(), Some(&b"proxy-1"[..]));
//! assert_eq!(pool.pick().as_deref(), Some(&b"proxy-2"[..]));
//! assert_eq!(Pool::new().pick(), None); // empty pool: make no request
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod affinity_script;
#[cfg(feature = "alloc")]
mod call;
mod keys;
pub mod lease_script;
#[cfg(feature = "alloc")]
mod pool;
mod restore;
mod script;

pub use affinity_script::{AffinityError, Cap, AFFINITY_RELEASE, AFFINITY_TAKE};
#[cfg(feature = "alloc")]
pub use call::{
    decode_count, decode_member, decode_removed, AffinityCalls, Lease, LeaseCalls, PoolCalls,
    Release, Taken, RECLAIM_BATCH,
};
#[cfg(feature = "alloc")]
pub use keys::side_key;
pub use keys::{KeyError, SideKey, SIDE_KEY_SUFFIX};
pub use lease_script::{LEASE_ACQUIRE, LEASE_RECLAIM, LEASE_RELEASE};
#[cfg(feature = "alloc")]
pub use pool::{checked_initial, checked_picks, Pool, PoolError, MAX_PICKS_PER_CALL};
pub use restore::{Restore, UnknownRestoreMode};
pub use script::{
    seed_overwrite_arg, LEAST_USED, LEAST_USED_SCRIPT, LEAST_USED_SHA1, MAX_EXACT_COUNT,
    POOL_SCRIPTS, REMOVE, REMOVE_SCRIPT, REMOVE_SHA1, RESTORE, RESTORE_SCRIPT, RESTORE_SHA1, SEED,
    SEED_SCRIPT, SEED_SHA1,
};
