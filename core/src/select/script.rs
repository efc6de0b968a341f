//! The Lua scripts that run the pool on a Redis server, with their SHA1 digests (key
//! layout and arguments in the [module docs](super)).
//!
//! The scripts are registered in core's one table of scripts ([`crate::script`]), their
//! texts written in `core/src/script/lua/` and their SHA1s computed by the build; the
//! vector generator (`tests/vectors/gen/pool/generate.py`) runs the very same texts on a
//! real `redis-server` and checks every SHA1 against the server's `SCRIPT LOAD` answer.
//! Every text ends with exactly one `\n`, covered by its SHA1.

pub use crate::script::table::{LEAST_USED, POOL_SCRIPTS, REMOVE, RESTORE, SEED};

/// The largest count a pool holds: 2^53; [`SEED_SCRIPT`] refuses larger initial counts.
/// Redis keeps scores as doubles, which hold every integer in `0..=2^53` exactly. Picking
/// a member at 2^53 leaves it at 2^53, as `ZINCRBY` does (2^53 + 1 rounds back to 2^53),
/// and the in-memory `Pool` does the same.
///
/// ```
/// assert_eq!(keyroute::select::MAX_EXACT_COUNT, 9_007_199_254_740_992);
/// ```
pub const MAX_EXACT_COUNT: u64 = 1 << 53;

/// The least-used script: picks the member with the lowest score (ties go to the
/// byte-wise smallest member), increments its score by one and returns it; returns nil
/// when the pool is empty or missing.
///
/// Exactly the text in `docs/design.md`, ending with one `\n`.
///
/// ```
/// use keyroute::select::LEAST_USED_SCRIPT;
/// assert!(LEAST_USED_SCRIPT.starts_with("local chosen = redis.call('ZRANGE', KEYS[1], 0, 0)[1]\n"));
/// assert!(LEAST_USED_SCRIPT.ends_with("return chosen\n"));
/// ```
pub const LEAST_USED_SCRIPT: &str = LEAST_USED.text();
/// SHA1 (lowercase hex) of [`LEAST_USED_SCRIPT`], the name `EVALSHA` takes.
///
/// ```
/// assert_eq!(keyroute::select::LEAST_USED_SHA1.len(), 40);
/// ```
pub const LEAST_USED_SHA1: &str = LEAST_USED.sha1();

/// The seed script: adds members at an initial count.
///
/// `KEYS[1]` pool, `KEYS[2]` side hash; `ARGV[1]` the initial count in decimal digits,
/// `0..=2^53`; `ARGV[2]` `1` to overwrite the counts of members already in the pool or
/// `0` to keep them; `ARGV[3..]` the members. Every member it places in the pool loses
/// its remembered count in the side hash. Replies with the number of members that were
/// not in the pool before.
///
/// ```
/// assert!(keyroute::select::SEED_SCRIPT.contains("'NX'"));
/// ```
pub const SEED_SCRIPT: &str = SEED.text();
/// SHA1 (lowercase hex) of [`SEED_SCRIPT`].
///
/// ```
/// assert_eq!(keyroute::select::SEED_SHA1.len(), 40);
/// ```
pub const SEED_SHA1: &str = SEED.sha1();

/// The remove script: takes a member out of the pool and remembers its count.
///
/// `KEYS[1]` pool, `KEYS[2]` side hash; `ARGV[1]` the member. Replies with the count it
/// remembered in the side hash, or nil (changing nothing) when the member is not in the
/// pool.
///
/// ```
/// assert!(keyroute::select::REMOVE_SCRIPT.contains("'ZREM'"));
/// ```
pub const REMOVE_SCRIPT: &str = REMOVE.text();
/// SHA1 (lowercase hex) of [`REMOVE_SCRIPT`].
///
/// ```
/// assert_eq!(keyroute::select::REMOVE_SHA1.len(), 40);
/// ```
pub const REMOVE_SHA1: &str = REMOVE.sha1();

/// The restore script: puts a member back into the pool.
///
/// `KEYS[1]` pool, `KEYS[2]` side hash; `ARGV[1]` the member; `ARGV[2]` the mode,
/// [`Restore::Keep`](super::Restore::Keep) (`keep`: the count remembered by the remove
/// script, or as `at_minimum` when none is remembered) or
/// [`Restore::AtMinimum`](super::Restore::AtMinimum) (`at_minimum`: the lowest count in
/// the pool now, 0 when the pool is empty). A member already in the pool keeps its
/// count. Clears the remembered count and replies with the member's count afterwards.
///
/// ```
/// assert!(keyroute::select::RESTORE_SCRIPT.contains("'at_minimum'"));
/// ```
pub const RESTORE_SCRIPT: &str = RESTORE.text();
/// SHA1 (lowercase hex) of [`RESTORE_SCRIPT`].
///
/// ```
/// assert_eq!(keyroute::select::RESTORE_SHA1.len(), 40);
/// ```
pub const RESTORE_SHA1: &str = RESTORE.sha1();

/// The `ARGV[2]` of [`SEED_SCRIPT`]: `"1"` to overwrite existing counts, `"0"` to keep them.
///
/// ```
/// assert_eq!(keyroute::select::seed_overwrite_arg(true), "1");
/// ```
pub const fn seed_overwrite_arg(overwrite: bool) -> &'static str {
    if overwrite {
        "1"
    } else {
        "0"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_used_is_the_design_text() {
        let design = "local chosen = redis.call('ZRANGE', KEYS[1], 0, 0)[1]\n\
                      if not chosen then return nil end\n\
                      redis.call('ZINCRBY', KEYS[1], 1, chosen)\n\
                      return chosen\n";
        assert_eq!(LEAST_USED_SCRIPT, design);
    }
}
