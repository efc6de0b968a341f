//! The one table of keyroute's Lua scripts: each script's summary, key count and docs, and
//! the lists it belongs to. The texts and SHA1s come from the build (`lua`, assembled from
//! `core/src/script/lua/`); `select` and `cache` re-export their scripts from here. Adding
//! a script: `docs/design.md`, "Adding a script".

use super::{lua, Script};

// ---------------------------------------------------------------------------------------
// The least-used pool (`select`)

/// `least-used`: picks the member with the lowest score (ties go to the byte-wise smallest
/// member), increments its score by one and returns it; nil when the pool is empty or
/// missing. KEYS: pool. Its text is exactly the block in `docs/design.md`
/// ([`LEAST_USED_SCRIPT`](crate::select::LEAST_USED_SCRIPT)).
///
/// ```
/// assert_eq!(keyroute::select::LEAST_USED.name(), "least-used");
/// ```
pub const LEAST_USED: Script = Script::new(
    lua::LEAST_USED,
    "pick the lowest-count member and increment it (KEYS: pool)",
    1,
);

/// `seed`: adds members at an initial count (text:
/// [`SEED_SCRIPT`](crate::select::SEED_SCRIPT)).
///
/// ```
/// assert_eq!(keyroute::select::SEED.name(), "seed");
/// ```
pub const SEED: Script = Script::new(
    lua::SEED,
    "add members at an initial count (KEYS: pool, side; ARGV: initial, overwrite 0|1, members...)",
    2,
);

/// `remove`: takes a member out of the pool and remembers its count (text:
/// [`REMOVE_SCRIPT`](crate::select::REMOVE_SCRIPT)).
///
/// ```
/// assert_eq!(keyroute::select::REMOVE.name(), "remove");
/// ```
pub const REMOVE: Script = Script::new(
    lua::REMOVE,
    "take a member out, remembering its count (KEYS: pool, side; ARGV: member)",
    2,
);

/// `restore`: puts a member back into the pool (text:
/// [`RESTORE_SCRIPT`](crate::select::RESTORE_SCRIPT)).
///
/// ```
/// assert_eq!(keyroute::select::RESTORE.name(), "restore");
/// ```
pub const RESTORE: Script = Script::new(
    lua::RESTORE,
    "put a member back (KEYS: pool, side; ARGV: member, keep|at_minimum)",
    2,
);

/// The least-used pool's scripts, in the order the command line lists them (every
/// script of keyroute is in [`SCRIPTS`]).
///
/// ```
/// let names: Vec<&str> = keyroute::select::POOL_SCRIPTS.iter().map(|s| s.name()).collect();
/// assert_eq!(names, ["least-used", "seed", "remove", "restore"]);
/// ```
pub const POOL_SCRIPTS: [Script; 4] = [LEAST_USED, SEED, REMOVE, RESTORE];

// ---------------------------------------------------------------------------------------
// Leases and affinity with a cap (`select::lease_script`, `select::affinity_script`)

/// `lease-acquire`: the member with the fewest leases in flight (ties: byte-wise
/// smallest), one more lease for it with deadline now + ttl (keys and replies:
/// [`lease_script`](crate::select::lease_script)).
///
/// ```
/// assert_eq!(keyroute::select::lease_script::LEASE_ACQUIRE.num_keys(), 4);
/// ```
pub const LEASE_ACQUIRE: Script = Script::new(
    lua::LEASE_ACQUIRE,
    "lease the member with the fewest leases in flight (KEYS: pool, leases, lease-members, lease-seq; ARGV: ttl_ms, now_ms or '')",
    4,
);

/// `lease-release`: ends a lease once.
///
/// ```
/// assert_eq!(keyroute::select::lease_script::LEASE_RELEASE.num_keys(), 4);
/// ```
pub const LEASE_RELEASE: Script = Script::new(
    lua::LEASE_RELEASE,
    "end a lease once (KEYS: as lease-acquire; ARGV: lease id, now_ms or '')",
    4,
);

/// `lease-reclaim`: ends the leases abandoned past their deadline.
///
/// ```
/// assert_eq!(keyroute::select::lease_script::LEASE_RECLAIM.num_keys(), 4);
/// ```
pub const LEASE_RECLAIM: Script = Script::new(
    lua::LEASE_RECLAIM,
    "end leases past their deadline (KEYS: as lease-acquire; ARGV: now_ms or '', limit)",
    4,
);

/// `affinity-take`: the item's holder, or the first candidate under the cap (keys and
/// replies: [`affinity_script`](crate::select::affinity_script)).
///
/// ```
/// assert_eq!(keyroute::select::affinity_script::AFFINITY_TAKE.num_keys(), 2);
/// ```
pub const AFFINITY_TAKE: Script = Script::new(
    lua::AFFINITY_TAKE,
    "give an item to its holder or the first candidate under the cap (KEYS: affinity, loads; ARGV: item, 'cap' or 'c', value, candidates...)",
    2,
);

/// `affinity-release`: frees an item once.
///
/// ```
/// assert_eq!(keyroute::select::affinity_script::AFFINITY_RELEASE.num_keys(), 2);
/// ```
pub const AFFINITY_RELEASE: Script = Script::new(
    lua::AFFINITY_RELEASE,
    "free an item once (KEYS: as affinity-take; ARGV: item)",
    2,
);

// ---------------------------------------------------------------------------------------
// The smart cache, sessions and devices (`cache`). Every script reads the time from Redis
// `TIME` (or from the optional last argument `now_ms`, which only tests pass) and treats an
// entry or session whose stored expiry has passed as absent.

/// `sc-get`: Reads an entry and decides: `{1, v, ver}` hit; `{2, v, ver, fence, takeover}` serve `v` and refresh (soft TTL passed, or an XFetch early refresh); `{3, v, ver}` stale (someone else refreshes, or a backend error is cached, and `allow_stale` is 1); `{4, fence, takeover}` lease granted; `{5, remaining_ms, fence}` wait; `{6, code, message, remaining_ms}` cached backend error. Decoded by [`GetReply`](crate::cache::GetReply).
///
/// ```
/// use keyroute::cache::SC_GET;
/// assert_eq!(SC_GET.name(), "sc-get");
/// assert_eq!(SC_GET.num_keys(), 1);
/// ```
pub const SC_GET: Script = Script::new(
    lua::SC_GET,
    "read an entry: hit, refresh (serve and lease), stale, lease (fence, takeover), wait, or cached error (KEYS: entry; ARGV: lease_ms, owner, xfetch_e, allow_stale 0|1[, now_ms])",
    1,
);

/// `sc-fill`: Stores a loaded value when `fence` is the entry's current fence and the entry is leased: `{1, ver}` stored (version bumped, wake-up published); `{0, current_fence}` fenced (someone took over, or the entry was invalidated); `{2, ver}` already filled with this fence. Decoded by [`FillReply`](crate::cache::FillReply).
///
/// ```
/// use keyroute::cache::SC_FILL;
/// assert_eq!(SC_FILL.name(), "sc-fill");
/// assert_eq!(SC_FILL.num_keys(), 1);
/// ```
pub const SC_FILL: Script = Script::new(
    lua::SC_FILL,
    "store a loaded value if the fence is current; bumps the version and publishes a wake-up (KEYS: entry; ARGV: fence, value, soft_ttl_ms, hard_ttl_ms, load_ms, notify PUBLISH|SPUBLISH|''[, now_ms])",
    1,
);

/// `sc-extend`: Heartbeat: extends the lease of `fence` to now + `lease_ms` (server time). `1` extended, `0` the lease is lost (fenced or filled).
///
/// ```
/// use keyroute::cache::SC_EXTEND;
/// assert_eq!(SC_EXTEND.name(), "sc-extend");
/// assert_eq!(SC_EXTEND.num_keys(), 1);
/// ```
pub const SC_EXTEND: Script = Script::new(
    lua::SC_EXTEND,
    "heartbeat: extend a lease to now + lease_ms (KEYS: entry; ARGV: fence, lease_ms[, now_ms])",
    1,
);

/// `sc-abandon`: Releases the lease of `fence` after a backend error and caches the error (`code`, `message`) for `neg_ttl_ms`, so waiters fail fast instead of calling the backend again; publishes a wake-up. `1` released, `0` the lease was lost.
///
/// ```
/// use keyroute::cache::SC_ABANDON;
/// assert_eq!(SC_ABANDON.name(), "sc-abandon");
/// assert_eq!(SC_ABANDON.num_keys(), 1);
/// ```
pub const SC_ABANDON: Script = Script::new(
    lua::SC_ABANDON,
    "release a lease after a backend error, caching the error for the negative TTL; publishes a wake-up (KEYS: entry; ARGV: fence, code, message, neg_ttl_ms, notify[, now_ms])",
    1,
);

/// `sc-invalidate`: Drops the value, the lease and any cached error, bumps the fence (an in-flight load's fill is then fenced) and keeps only the fence and version for `tombstone_ms`; publishes a wake-up. `1` if the entry existed, `0` (nothing changed) if not.
///
/// ```
/// use keyroute::cache::SC_INVALIDATE;
/// assert_eq!(SC_INVALIDATE.name(), "sc-invalidate");
/// assert_eq!(SC_INVALIDATE.num_keys(), 1);
/// ```
pub const SC_INVALIDATE: Script = Script::new(
    lua::SC_INVALIDATE,
    "drop an entry's value and bump its fence, so an in-flight load is discarded (KEYS: entry; ARGV: tombstone_ms, notify[, now_ms])",
    1,
);

/// `warm-begin`: Leases every cold entry among `KEYS` (no fresh value, no lease in force, no cached error) in one call; the keys must be entries of one client. Replies one integer per key: the fence to load with, or `0` (skipped).
///
/// ```
/// use keyroute::cache::WARM_BEGIN;
/// assert_eq!(WARM_BEGIN.name(), "warm-begin");
/// assert_eq!(WARM_BEGIN.num_keys(), 1);
/// ```
pub const WARM_BEGIN: Script = Script::new_variadic(
    lua::WARM_BEGIN,
    "lease every cold entry of one client in one call (KEYS: 1..64 entries of one client; ARGV: lease_ms, owner[, now_ms])",
    1,
);

/// `sess-create`: Creates a session and indexes it: `{1, expires_at}`, or `{0}` when a live session already has that id (draw another). The index is pruned of expired ids and expires with its last session.
///
/// ```
/// use keyroute::cache::SESS_CREATE;
/// assert_eq!(SESS_CREATE.name(), "sess-create");
/// assert_eq!(SESS_CREATE.num_keys(), 2);
/// ```
pub const SESS_CREATE: Script = Script::new(
    lua::SESS_CREATE,
    "create a session (KEYS: session, index; ARGV: sid, client, version, ttl_ms, max_age_ms (0 = none), data[, now_ms])",
    2,
);

/// `sess-touch`: Reads a session and slides its expiry to now + its TTL (never past its creation + max age): `{1, client, data, expires_at, version}`; `{0}` expired (or unknown): log in again; `{2, stored_version}` another service version created it (nothing changed). Decoded by [`Touch`](crate::cache::Touch).
///
/// ```
/// use keyroute::cache::SESS_TOUCH;
/// assert_eq!(SESS_TOUCH.name(), "sess-touch");
/// assert_eq!(SESS_TOUCH.num_keys(), 2);
/// ```
pub const SESS_TOUCH: Script = Script::new(
    lua::SESS_TOUCH,
    "read a session and slide its TTL (max age, version check; the index is pruned and self-expiring) (KEYS: session, index; ARGV: sid, check_version 0|1, version[, now_ms])",
    2,
);

/// `sess-destroy`: Removes a session and its index entry: `1` if it was live, else `0`.
///
/// ```
/// use keyroute::cache::SESS_DESTROY;
/// assert_eq!(SESS_DESTROY.name(), "sess-destroy");
/// assert_eq!(SESS_DESTROY.num_keys(), 2);
/// ```
pub const SESS_DESTROY: Script = Script::new(
    lua::SESS_DESTROY,
    "remove a session (KEYS: session, index; ARGV: sid[, now_ms])",
    2,
);

/// `sess-list`: Lists a client's live sessions: flat `[sid, expires_at, ...]`, by expiry then id. Changes nothing.
///
/// ```
/// use keyroute::cache::SESS_LIST;
/// assert_eq!(SESS_LIST.name(), "sess-list");
/// assert_eq!(SESS_LIST.num_keys(), 1);
/// ```
pub const SESS_LIST: Script = Script::new(
    lua::SESS_LIST,
    "list a client's live sessions with their expiry (KEYS: index; ARGV: [now_ms])",
    1,
);

/// `device-bind`: Binds a device to a client id for `ttl_ms` (`SET PX`): `1`. Read it back with `GET`.
///
/// ```
/// use keyroute::cache::DEVICE_BIND;
/// assert_eq!(DEVICE_BIND.name(), "device-bind");
/// assert_eq!(DEVICE_BIND.num_keys(), 1);
/// ```
pub const DEVICE_BIND: Script = Script::new(
    lua::DEVICE_BIND,
    "bind a device to a client id for ttl_ms (KEYS: device; ARGV: client, ttl_ms)",
    1,
);

/// `sc-read`: The value of an entry: nil when there is none, or when the entry is past its hard expiry. Changes nothing; no lease, no load (what `cache.get` of `keyroute serve` answers).
///
/// ```
/// use keyroute::cache::SC_READ;
/// assert_eq!(SC_READ.name(), "sc-read");
/// assert_eq!(SC_READ.num_keys(), 1);
/// ```
pub const SC_READ: Script = Script::new(
    lua::SC_READ,
    "read an entry's value, nil when absent or expired; changes nothing (KEYS: entry; ARGV: [now_ms])",
    1,
);

/// `sc-put`: Stores a value directly (no lease needed): bumps the fence to `max(f + 1, now)`, so a load in flight for the entry has its fill refused, drops any lease and cached error, stores the value fresh for `soft_ttl_ms` and kept `hard_ttl_ms`, and publishes a wake-up. `{version, fence}`. Decoded by [`PutReply`](crate::cache::PutReply).
///
/// ```
/// use keyroute::cache::SC_PUT;
/// assert_eq!(SC_PUT.name(), "sc-put");
/// assert_eq!(SC_PUT.num_keys(), 1);
/// ```
pub const SC_PUT: Script = Script::new(
    lua::SC_PUT,
    "store a value directly, bumping the fence so a load in flight is discarded; publishes a wake-up (KEYS: entry; ARGV: value, soft_ttl_ms, hard_ttl_ms, notify[, now_ms])",
    1,
);

/// `sess-update`: Replaces a session's data when the session is live and was created by service `version`, and slides its expiry as a touch does: `{1, expires_at}`; `{0}` expired (or unknown); `{2, stored_version}` another service version created it (nothing changed). Decoded by [`UpdateReply`](crate::cache::UpdateReply).
///
/// ```
/// use keyroute::cache::SESS_UPDATE;
/// assert_eq!(SESS_UPDATE.name(), "sess-update");
/// assert_eq!(SESS_UPDATE.num_keys(), 2);
/// ```
pub const SESS_UPDATE: Script = Script::new(
    lua::SESS_UPDATE,
    "replace a session's data under the version check, sliding its TTL (KEYS: session, index; ARGV: sid, version, data[, now_ms])",
    2,
);

/// `sess-guard`: Runs another cache script under a session, in one atomic call: when the session is live the script runs and the session slides as a touch does (`{1, expires_at, reply}`, `reply` the script's own); when it is not, the script does not run (`{0}`). The script's keys must all be of the session's client (`kr:{c:T}:...`), so that every key is in one Cluster slot. Its body is inlined, so the guarded scripts are those listed in its text: `sc-get`, `sc-read`, `sc-put`, `sc-invalidate`, `warm-begin` and the session scripts. Built by [`Call::in_session`](crate::cache::Call::in_session), decoded by [`Guarded`](crate::cache::Guarded).
///
/// ```
/// use keyroute::cache::SESS_GUARD;
/// assert_eq!(SESS_GUARD.name(), "sess-guard");
/// assert!(SESS_GUARD.variadic_keys());
/// ```
pub const SESS_GUARD: Script = Script::new_variadic(
    lua::SESS_GUARD,
    "run a cache script only if a session is live, sliding the session in the same call (KEYS: session, index, the script's keys; ARGV: sid, now_ms or '', script name, the script's arguments)",
    2,
);

/// Every smart-cache script, in the order `keyroute script --list` shows them.
///
/// ```
/// assert_eq!(keyroute::cache::CACHE_SCRIPTS.len(), 15);
/// ```
pub const CACHE_SCRIPTS: [Script; 15] = [
    SC_GET,
    SC_FILL,
    SC_EXTEND,
    SC_ABANDON,
    SC_INVALIDATE,
    WARM_BEGIN,
    SESS_CREATE,
    SESS_TOUCH,
    SESS_DESTROY,
    SESS_LIST,
    DEVICE_BIND,
    SC_READ,
    SC_PUT,
    SESS_UPDATE,
    SESS_GUARD,
];

// ---------------------------------------------------------------------------------------

/// Every script, in the order `keyroute script --list` shows them: the pool's, the
/// leases' and affinity's, the cache's.
///
/// ```
/// assert_eq!(keyroute::script::SCRIPTS[0].name(), "least-used");
/// ```
pub const SCRIPTS: &[Script] = &ALL;

const ALL: [Script; 24] = join(&[
    &POOL_SCRIPTS,
    &[
        LEASE_ACQUIRE,
        LEASE_RELEASE,
        LEASE_RECLAIM,
        AFFINITY_TAKE,
        AFFINITY_RELEASE,
    ],
    &CACHE_SCRIPTS,
]);

/// The scripts of `groups` in order, in an array of exactly their number (checked at
/// compile time).
const fn join<const N: usize>(groups: &[&[Script]]) -> [Script; N] {
    let mut all = [LEAST_USED; N];
    let (mut n, mut g) = (0, 0);
    while g < groups.len() {
        let mut i = 0;
        while i < groups[g].len() {
            all[n] = groups[g][i];
            n += 1;
            i += 1;
        }
        g += 1;
    }
    assert!(n == N, "ALL's length is not the number of scripts");
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of `core/src/script/lua` is in [`SCRIPTS`] once, and nothing else is.
    #[test]
    fn every_file_is_registered_once() {
        assert_eq!(SCRIPTS.len(), lua::ALL.len());
        for file in lua::ALL {
            let count = SCRIPTS.iter().filter(|s| s.name() == file.name).count();
            assert_eq!(count, 1, "{} is in SCRIPTS {count} times", file.name);
            let script = Script::by_name(file.name).expect("registered");
            assert_eq!(script.text(), file.text);
        }
        for group in [&POOL_SCRIPTS[..], &CACHE_SCRIPTS[..]] {
            assert!(group.iter().all(|s| SCRIPTS.contains(s)));
        }
    }

    #[test]
    fn every_text_ends_with_one_newline() {
        for script in SCRIPTS {
            assert!(script.text().ends_with('\n'), "{}", script.name());
            assert!(!script.text().ends_with("\n\n"), "{}", script.name());
            assert!(!script.text().contains('\r'), "{}", script.name());
            assert!(!script.text().contains("--#"), "{}", script.name());
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        for script in SCRIPTS {
            assert_eq!(Script::by_name(script.name()), Some(script));
        }
        assert_eq!(Script::by_name(""), None);
        assert_eq!(Script::by_name("least-used-"), None);
    }
}
