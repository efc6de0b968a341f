//! The smart cache's Lua scripts as [`Script`] values (all also in
//! [`crate::script::SCRIPTS`]). The texts are the `.lua` files beside this one, included
//! byte for byte; `core/tests/cache_scripts.rs` checks every SHA1, and the model tests run
//! them on a real `redis-server`.
//!
//! Every script checks its arguments and the types of all its keys before its first write
//! (a refused call changes nothing), reads the time from Redis `TIME` (or from the
//! optional last argument `now_ms`, which only tests pass), and treats an entry or session
//! whose stored expiry has passed as absent.

use crate::script::Script;

/// `sc-get`: Reads an entry and decides: `{1, v, ver}` hit; `{2, v, ver, fence, takeover}` serve `v` and refresh (soft TTL passed, or an XFetch early refresh); `{3, v, ver}` stale (someone else refreshes, or a backend error is cached, and `allow_stale` is 1); `{4, fence, takeover}` lease granted; `{5, remaining_ms, fence}` wait; `{6, code, message, remaining_ms}` cached backend error. Decoded by [`GetReply`](super::GetReply).
///
/// ```
/// use keyroute::cache::SC_GET;
/// assert_eq!(SC_GET.name(), "sc-get");
/// assert_eq!(SC_GET.num_keys(), 1);
/// ```
pub const SC_GET: Script = Script::new(
    "sc-get",
    "read an entry: hit, refresh (serve and lease), stale, lease (fence, takeover), wait, or cached error (KEYS: entry; ARGV: lease_ms, owner, xfetch_e, allow_stale 0|1[, now_ms])",
    include_str!("sc_get.lua"),
    "8bd4d16a7c5fc5024ef643aed598564343041f8e",
    1,
);

/// `sc-fill`: Stores a loaded value when `fence` is the entry's current fence and the entry is leased: `{1, ver}` stored (version bumped, wake-up published); `{0, current_fence}` fenced (someone took over, or the entry was invalidated); `{2, ver}` already filled with this fence. Decoded by [`FillReply`](super::FillReply).
///
/// ```
/// use keyroute::cache::SC_FILL;
/// assert_eq!(SC_FILL.name(), "sc-fill");
/// assert_eq!(SC_FILL.num_keys(), 1);
/// ```
pub const SC_FILL: Script = Script::new(
    "sc-fill",
    "store a loaded value if the fence is current; bumps the version and publishes a wake-up (KEYS: entry; ARGV: fence, value, soft_ttl_ms, hard_ttl_ms, load_ms, notify PUBLISH|SPUBLISH|''[, now_ms])",
    include_str!("sc_fill.lua"),
    "91a657734ea77adb44a32815dcaede27d057d6d2",
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
    "sc-extend",
    "heartbeat: extend a lease to now + lease_ms (KEYS: entry; ARGV: fence, lease_ms[, now_ms])",
    include_str!("sc_extend.lua"),
    "1d5bfdd12a49f07bc5929b56ce4841f3d4a918e9",
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
    "sc-abandon",
    "release a lease after a backend error, caching the error for the negative TTL; publishes a wake-up (KEYS: entry; ARGV: fence, code, message, neg_ttl_ms, notify[, now_ms])",
    include_str!("sc_abandon.lua"),
    "095120f025fe0fed7122387498468a81cf5f8e4d",
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
    "sc-invalidate",
    "drop an entry's value and bump its fence, so an in-flight load is discarded (KEYS: entry; ARGV: tombstone_ms, notify[, now_ms])",
    include_str!("sc_invalidate.lua"),
    "ecebf52b93e4d93ccd8d812ef818ff1c2d19d62b",
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
    "warm-begin",
    "lease every cold entry of one client in one call (KEYS: 1..64 entries of one client; ARGV: lease_ms, owner[, now_ms])",
    include_str!("warm_begin.lua"),
    "db7c9b5bf4d752712b15810003901f9a6e3618c8",
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
    "sess-create",
    "create a session (KEYS: session, index; ARGV: sid, client, version, ttl_ms, max_age_ms (0 = none), data[, now_ms])",
    include_str!("sess_create.lua"),
    "7584691463a80f2f6adbd5bc40e150e65bf48809",
    2,
);

/// `sess-touch`: Reads a session and slides its expiry to now + its TTL (never past its creation + max age): `{1, client, data, expires_at, version}`; `{0}` expired (or unknown): log in again; `{2, stored_version}` another service version created it (nothing changed). Decoded by [`Touch`](super::Touch).
///
/// ```
/// use keyroute::cache::SESS_TOUCH;
/// assert_eq!(SESS_TOUCH.name(), "sess-touch");
/// assert_eq!(SESS_TOUCH.num_keys(), 2);
/// ```
pub const SESS_TOUCH: Script = Script::new(
    "sess-touch",
    "read a session and slide its TTL (max age, version check; the index is pruned and self-expiring) (KEYS: session, index; ARGV: sid, check_version 0|1, version[, now_ms])",
    include_str!("sess_touch.lua"),
    "4863197e842f2705b5d03f4dc9e6408eeb19ab01",
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
    "sess-destroy",
    "remove a session (KEYS: session, index; ARGV: sid[, now_ms])",
    include_str!("sess_destroy.lua"),
    "67416b4acbf082de3e37f046f0b790b7bb88ff6a",
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
    "sess-list",
    "list a client's live sessions with their expiry (KEYS: index; ARGV: [now_ms])",
    include_str!("sess_list.lua"),
    "311b1fbf7e332ed277dfac82e76a5fb6b7fd47d2",
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
    "device-bind",
    "bind a device to a client id for ttl_ms (KEYS: device; ARGV: client, ttl_ms)",
    include_str!("device_bind.lua"),
    "b6fc74788135201e270017a2242511d27a54bf86",
    1,
);

/// Every smart-cache script, in the order `keyroute script --list` shows them.
///
/// ```
/// assert_eq!(keyroute::cache::CACHE_SCRIPTS.len(), 11);
/// ```
pub const CACHE_SCRIPTS: [Script; 11] = [
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
];
