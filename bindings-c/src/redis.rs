//! Least-used pools, leases and affinity with a cap on a Redis server or a Redis Cluster (`keyroute-redis`):
//! one connection (or one cluster client) per handle, every failure with the status of
//! its code (`KEYROUTE_REDIS_*`, `KEYROUTE_CLUSTER_*`).

use std::ffi::c_char;
use std::time::Duration;

use keyroute_core::error::ErrorCode;
use keyroute_redis::affinity::Cap;
use keyroute_redis::{
    Affinity, Error as RedisError, Lease, Leases, LeastUsed, Link, Now, Release, Timeouts,
};

use crate::ffi::{
    array, buffer, bytes, deliver, free, get_mut, guard, hand_out, put, required, tag, text,
    too_small, ByteList, Fail, Handle, Res,
};
use crate::select::{not_in_pool, restore_mode};
use crate::status::keyroute_status;

/// Connect, read and write timeout of `keyroute_least_used_open()` and
/// `keyroute_leases_open()` when `timeout_ms` is 0.
pub const KEYROUTE_DEFAULT_TIMEOUT_MS: u32 = 2000;

/// A least-used pool on a Redis server (opaque): a sorted set at the pool key (member =
/// proxy id, score = assignments) and its side hash of removed members' counts, driven
/// by atomic scripts (`EVALSHA`). Same semantics as `keyroute_pool`: lowest count first,
/// ties to the byte-wise smallest member, cumulative counts.
///
/// The handle holds one connection to one standalone server, reconnected on the next
/// call after a connection error (a request is never resent on its own), or, opened with
/// `keyroute_least_used_open_cluster()`, a Redis Cluster client (one connection per
/// node) that follows `MOVED`/`ASK`, retries `TRYAGAIN`/`CLUSTERDOWN` (commands that did
/// not run), and refreshes its map after a failover; a request that may have run is not
/// resent there either.
///
/// Thread safety: not thread-safe. No two calls may run concurrently on the same handle;
/// open one handle per thread (handles on the same pool key share the pool through the
/// server, atomically). A handle may be moved between threads.
#[derive(Debug)]
pub struct keyroute_least_used {
    _opaque: [u8; 0],
}

/// What a `keyroute_least_used` holds.
#[derive(Debug)]
pub(crate) struct LeastUsedState {
    pool: LeastUsed,
    con: Link,
    /// A member picked (and counted on the server) that did not fit the caller's buffer;
    /// the next `keyroute_least_used_pick()` returns it instead of picking again.
    pending: Option<Vec<u8>>,
}

impl Handle for keyroute_least_used {
    type State = LeastUsedState;
    const TAG: u64 = tag(b"kr-lused");
    const NAME: &'static str = "keyroute_least_used";
}

/// Least-concurrency selection on a Redis server (opaque): acquire a lease on the member
/// with the fewest leases in flight, release it when the work is done, reclaim leases
/// abandoned past their deadline. Time is the server's clock (milliseconds since the Unix
/// epoch). This is not the cumulative least-used counter.
///
/// Thread safety: as `keyroute_least_used` (one connection: one handle per thread).
#[derive(Debug)]
pub struct keyroute_leases {
    _opaque: [u8; 0],
}

/// What a `keyroute_leases` holds.
#[derive(Debug)]
pub(crate) struct LeasesState {
    leases: Leases,
    con: Link,
    /// A lease acquired that did not fit the caller's buffer; the next
    /// `keyroute_leases_acquire()` returns it instead of acquiring another.
    pending: Option<Lease>,
}

impl Handle for keyroute_leases {
    type State = LeasesState;
    const TAG: u64 = tag(b"kr-lease");
    const NAME: &'static str = "keyroute_leases";
}

/// What `keyroute_leases_release()` did.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum keyroute_release {
    /// No such lease in flight (released before, or reclaimed): nothing changed.
    KEYROUTE_RELEASE_NOT_IN_FLIGHT = 0,
    /// The lease was in flight within its deadline; its member's count went down.
    KEYROUTE_RELEASE_RELEASED = 1,
    /// The lease was past its deadline but not yet reclaimed: ended now (its member's
    /// count went down once). The work overran its lease.
    KEYROUTE_RELEASE_EXPIRED = 2,
}

/// The failure of a call made on `con`: a refused connect made on the call's behalf is
/// reported as itself (a refused password is `KEYROUTE_REDIS_AUTH`, not a lost
/// connection).
fn failed(con: &mut Link) -> impl FnOnce(RedisError) -> Fail + '_ {
    move |e| Fail::from(con.explain(e))
}

/// Where a handle connects: a standalone URL or cluster seeds.
enum Target<'a> {
    Url(&'a str),
    Seeds(Vec<&'a str>),
}

impl Target<'_> {
    /// # Safety
    /// `seeds` is NULL or holds `count` pointers, each NULL or a NUL-terminated string.
    unsafe fn seeds<'a>(seeds: *const *const c_char, count: usize) -> Res<Target<'a>> {
        // SAFETY: as the caller promises.
        let ptrs = unsafe { array(seeds, count, "seeds") }?;
        if ptrs.is_empty() {
            return Err(Fail::new(
                ErrorCode::ClusterUnreachable,
                "`seeds` is empty: give at least one cluster node (host:port)",
            ));
        }
        let mut out = Vec::with_capacity(ptrs.len());
        for (i, &p) in ptrs.iter().enumerate() {
            // SAFETY: as the caller promises.
            out.push(unsafe { text(p, &format!("seeds[{i}]")) }?);
        }
        Ok(Target::Seeds(out))
    }

    /// Connects now: the server, or the cluster's topology.
    fn connect(&self, timeouts: Timeouts) -> Res<Link> {
        let mut link = match self {
            Target::Url(url) => Link::single(url, timeouts)?,
            Target::Seeds(seeds) => Link::cluster(seeds, timeouts, false)?,
        };
        link.ensure_connected()?;
        Ok(link)
    }
}

/// The shared part of the `keyroute_least_used_open*()` and `keyroute_leases_open*()`
/// functions: checks the arguments (the pool key before connecting: nothing is sent for
/// a bad key), connects, builds the handle with `make` and writes it to `*out`.
///
/// # Safety
/// As the exports that call it.
unsafe fn open<'t, H: Handle>(
    out: *mut *mut H,
    target: impl FnOnce() -> Res<Target<'t>>,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    make: impl FnOnce(&[u8], Link) -> Res<H::State>,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        let target = target()?;
        // SAFETY: as documented on the exports.
        let key = unsafe { bytes(pool_key, key_len, "pool_key")? };
        keyroute_core::select::side_key(key)?;
        let ms = if timeout_ms == 0 {
            KEYROUTE_DEFAULT_TIMEOUT_MS
        } else {
            timeout_ms
        };
        let timeouts = Timeouts::uniform(Duration::from_millis(u64::from(ms)));
        let con = target.connect(timeouts)?;
        let state = make(key, con)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, state) };
        Ok(())
    })
}

fn least_used_state(key: &[u8], con: Link) -> Res<LeastUsedState> {
    Ok(LeastUsedState {
        pool: LeastUsed::new(key)?,
        con,
        pending: None,
    })
}

fn leases_state(key: &[u8], con: Link) -> Res<LeasesState> {
    Ok(LeasesState {
        leases: Leases::new(key)?,
        con,
        pending: None,
    })
}

/// Opens a least-used pool handle on the Redis server at `url` (NUL-terminated,
/// `redis://[[user]:password@]host:port[/db]`, or `host:port`) for the pool at
/// `(pool_key, key_len)` (bytes; hash-tag it for Redis Cluster, e.g. `{proxies}:pool`),
/// connects now, and writes the handle to `*out`. `timeout_ms` bounds connecting and
/// each read and write (0 = `KEYROUTE_DEFAULT_TIMEOUT_MS`). Free it with
/// `keyroute_least_used_free()`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_UTF8` (url), `KEYROUTE_BAD_POOL_KEY`
/// (checked before connecting), `KEYROUTE_REDIS_BAD_URL`, `KEYROUTE_REDIS_CONNECT`
/// (refused, unreachable), `KEYROUTE_REDIS_AUTH` (wrong or missing password; the message
/// never shows it), `KEYROUTE_REDIS_TIMEOUT`, `KEYROUTE_REDIS_PROTOCOL` (not a Redis
/// server).
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_open(
    url: *const c_char,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_least_used,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe {
        open(
            out,
            || Ok(Target::Url(text(url, "url")?)),
            pool_key,
            key_len,
            timeout_ms,
            least_used_state,
        )
    }
}

/// Opens a least-used pool handle on a Redis Cluster, from `count` seed nodes
/// (`seeds[i]`, NUL-terminated: `host:port` or `redis://host:port`; any node of the
/// cluster will do) for the pool at `(pool_key, key_len)` (hash-tag it, e.g.
/// `{proxies}:pool`, so that its side key shares its slot): reads the topology now and
/// writes the handle to `*out`. Picks follow `MOVED`/`ASK`, `TRYAGAIN`/`CLUSTERDOWN` are
/// retried, and after a failover the next call finds the new master (a call during the
/// failover fails with a `KEYROUTE_REDIS_*`/`KEYROUTE_CLUSTER_*` status; a pick whose
/// reply was lost may or may not have been counted, and is never resent). Pipelined
/// picks count every pick once even while the pool's slot migrates. Free it with
/// `keyroute_least_used_free()`; every other call is as on a standalone handle.
///
/// Errors: as `keyroute_least_used_open()`; also `KEYROUTE_CLUSTER_UNREACHABLE` (no seed
/// answered with a topology, or `count` is 0) and `KEYROUTE_TOO_LARGE` (`count` above
/// `KEYROUTE_MAX_BATCH`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_open_cluster(
    seeds: *const *const c_char,
    count: usize,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_least_used,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe {
        open(
            out,
            || Target::seeds(seeds, count),
            pool_key,
            key_len,
            timeout_ms,
            least_used_state,
        )
    }
}

/// Closes the connection and frees the handle (the pool stays on the server). A member
/// held back by `KEYROUTE_BUFFER_TOO_SMALL` was counted but is dropped. NULL is ignored;
/// `KEYROUTE_INVALID_HANDLE` as `keyroute_ring_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_free(lu: *mut keyroute_least_used) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(lu, "lu") }
}

/// Adds `count` members `(members[i], lens[i])` with count `initial` (at most 2^53) in
/// one atomic script call; members already in the pool keep their count unless
/// `overwrite` is non-zero. Writes the number of new members to `*added_out` if not NULL.
/// `members` and `lens` may be NULL only when `count` is 0.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE`,
/// `KEYROUTE_BAD_COUNT` and `KEYROUTE_EMPTY_MEMBER` (nothing sent), the `KEYROUTE_REDIS_*`
/// statuses (`KEYROUTE_REDIS_WRONGTYPE`: a key holds another type, nothing changed).
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_seed(
    lu: *mut keyroute_least_used,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
    initial: u64,
    overwrite: i32,
    added_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; arrays of `count` entries.
        let (h, ms) = unsafe {
            (
                get_mut(lu, "lu")?,
                ByteList::new(members, lens, count, "members")?,
            )
        };
        let added = h
            .pool
            .seed(&mut h.con, ms.iter(), initial, overwrite != 0)
            .map_err(failed(&mut h.con))?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(added_out, added) };
        Ok(())
    })
}

/// Picks the least-used member (ties: byte-wise smallest) and counts the assignment, in
/// one atomic script call; copies the member's bytes (not NUL-terminated) into `buf`
/// (`cap` bytes) and writes their length to `*len_out`.
///
/// Returns `KEYROUTE_EMPTY` when the pool is empty or missing: make no request then.
///
/// Returns `KEYROUTE_BUFFER_TOO_SMALL` when the member is longer than `cap`: its length
/// is written to `*len_out` and the member, already counted on the server, is held by
/// the handle; the next `keyroute_least_used_pick()` on this handle returns that member
/// (without picking again) once the buffer is large enough. So a pick is never lost nor
/// counted twice. `buf` may be NULL when `cap` is 0 (a pick whose length is reported).
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, the `KEYROUTE_REDIS_*`
/// statuses (after `KEYROUTE_REDIS_TIMEOUT` or `KEYROUTE_REDIS_CONNECTION_LOST` the pick
/// may or may not have been counted).
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_pick(
    lu: *mut keyroute_least_used,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively.
        let h = unsafe { get_mut(lu, "lu") }?;
        let len_out = required(len_out, "len_out")?;
        buffer(buf, cap)?;
        let member = match h.pending.take() {
            Some(m) => m,
            None => h
                .pool
                .pick(&mut h.con)
                .map_err(failed(&mut h.con))?
                .ok_or(Fail::EMPTY)?,
        };
        // SAFETY: checked buffer and out-pointer.
        unsafe { deliver(member, buf, cap, len_out) }.map_err(|m| {
            h.pending = Some(m);
            too_small()
        })
    })
}

/// Takes `member` out of the pool, remembering its count in the side hash (written to
/// `*count_out` if not NULL). Returns `KEYROUTE_UNKNOWN_NODE` (nothing changed) if it is
/// not in the pool. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, the
/// `KEYROUTE_REDIS_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_remove(
    lu: *mut keyroute_least_used,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; `len` bytes at `member`.
        let (h, m) = unsafe { (get_mut(lu, "lu")?, bytes(member, len, "member")?) };
        let c = h
            .pool
            .remove(&mut h.con, m)
            .map_err(failed(&mut h.con))?
            .ok_or_else(|| not_in_pool(m, "in the pool"))?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(count_out, c) };
        Ok(())
    })
}

/// Puts `member` back with the count chosen by `mode` (a `keyroute_restore` value;
/// others give `KEYROUTE_BAD_RESTORE_MODE`, nothing sent): `KEYROUTE_RESTORE_KEEP` its
/// remembered count, `KEYROUTE_RESTORE_AT_MINIMUM` the pool's current minimum (never 0
/// in a busy pool, which would herd every pick onto it). A member already in the pool
/// keeps its count. The count afterwards is written to `*count_out` if not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`,
/// `KEYROUTE_BAD_RESTORE_MODE`, `KEYROUTE_EMPTY_MEMBER`, the `KEYROUTE_REDIS_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_restore(
    lu: *mut keyroute_least_used,
    member: *const u8,
    len: usize,
    mode: i32,
    count_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; `len` bytes at `member`.
        let (h, m) = unsafe { (get_mut(lu, "lu")?, bytes(member, len, "member")?) };
        let mode = restore_mode(mode)?;
        let c = h
            .pool
            .restore(&mut h.con, m, mode)
            .map_err(failed(&mut h.con))?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(count_out, c) };
        Ok(())
    })
}

/// The count of `member` in the pool (from one `ZRANGE`), written to `*count_out`;
/// `KEYROUTE_UNKNOWN_NODE` if it is not in the pool.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, the `KEYROUTE_REDIS_*`
/// statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_count(
    lu: *mut keyroute_least_used,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; `len` bytes at `member`.
        let (h, m) = unsafe { (get_mut(lu, "lu")?, bytes(member, len, "member")?) };
        let count_out = required(count_out, "count_out")?;
        let counts = h.pool.counts(&mut h.con).map_err(failed(&mut h.con))?;
        let c = counts
            .into_iter()
            .find(|(x, _)| x == m)
            .map(|(_, c)| c)
            .ok_or_else(|| not_in_pool(m, "in the pool"))?;
        // SAFETY: non-NULL out-pointer.
        unsafe { count_out.write(c) };
        Ok(())
    })
}

/// Opens a lease pool handle on the Redis server at `url` for the pool at
/// `(pool_key, key_len)` (its three companion keys share its hash tag), connecting now;
/// as `keyroute_least_used_open()`. Free it with `keyroute_leases_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_open(
    url: *const c_char,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_leases,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe {
        open(
            out,
            || Ok(Target::Url(text(url, "url")?)),
            pool_key,
            key_len,
            timeout_ms,
            leases_state,
        )
    }
}

/// Opens a lease pool handle on a Redis Cluster from `count` seed nodes; as
/// `keyroute_least_used_open_cluster()` (the pool key and its three companion keys
/// share its hash tag). Free it with `keyroute_leases_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_open_cluster(
    seeds: *const *const c_char,
    count: usize,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_leases,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe {
        open(
            out,
            || Target::seeds(seeds, count),
            pool_key,
            key_len,
            timeout_ms,
            leases_state,
        )
    }
}

/// Closes the connection and frees the handle. A lease held back by
/// `KEYROUTE_BUFFER_TOO_SMALL` stays in flight until reclaimed. NULL is ignored;
/// `KEYROUTE_INVALID_HANDLE` as `keyroute_ring_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_free(leases: *mut keyroute_leases) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(leases, "leases") }
}

/// Adds `count` members with no lease in flight; members already there keep their
/// counts. Writes the number of new members to `*added_out` if not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE`,
/// `KEYROUTE_EMPTY_MEMBER` (nothing sent), the `KEYROUTE_REDIS_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_seed(
    leases: *mut keyroute_leases,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
    added_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; arrays of `count` entries.
        let (h, ms) = unsafe {
            (
                get_mut(leases, "leases")?,
                ByteList::new(members, lens, count, "members")?,
            )
        };
        let added = h
            .leases
            .seed(&mut h.con, ms.iter())
            .map_err(failed(&mut h.con))?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(added_out, added) };
        Ok(())
    })
}

/// Takes `member` out of the lease pool (no new lease goes to it; its leases in flight
/// stay valid). Returns `KEYROUTE_UNKNOWN_NODE` if it was not there.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, the `KEYROUTE_REDIS_*`
/// statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_remove(
    leases: *mut keyroute_leases,
    member: *const u8,
    len: usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; `len` bytes at `member`.
        let (h, m) = unsafe { (get_mut(leases, "leases")?, bytes(member, len, "member")?) };
        if h.leases.remove(&mut h.con, m).map_err(failed(&mut h.con))? {
            Ok(())
        } else {
            Err(not_in_pool(m, "in the lease pool"))
        }
    })
}

/// Acquires a lease of `ttl_ms` milliseconds (1..=2^53, else `KEYROUTE_BAD_TTL`, nothing
/// sent) on the member with the fewest leases in flight (ties: byte-wise smallest), in
/// one atomic script call. Copies the member into `buf` (`cap` bytes, not
/// NUL-terminated), its length to `*len_out`, the lease id to `*lease_id_out` and its
/// deadline (ms since the Unix epoch, server clock) to `*deadline_ms_out` (these two may
/// be NULL).
///
/// Returns `KEYROUTE_EMPTY` when the pool is empty or missing: make no request then.
/// Returns `KEYROUTE_BUFFER_TOO_SMALL` (the length needed in `*len_out`) when the member
/// does not fit: the lease, already in flight, is held by the handle and the next
/// `keyroute_leases_acquire()` returns it (without acquiring another; its deadline is
/// unchanged, the `ttl_ms` of that call is only checked). `buf` may be NULL when `cap` is
/// 0. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_TTL`, the
/// `KEYROUTE_REDIS_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_acquire(
    leases: *mut keyroute_leases,
    ttl_ms: u64,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
    lease_id_out: *mut u64,
    deadline_ms_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively.
        let h = unsafe { get_mut(leases, "leases") }?;
        let len_out = required(len_out, "len_out")?;
        buffer(buf, cap)?;
        let ttl = Duration::from_millis(ttl_ms);
        // The bound of `Leases::acquire`, checked here too so that a call returning a held
        // lease refuses a bad TTL the same way.
        if !(1..=1u64 << 53).contains(&ttl_ms) {
            return Err(RedisError::BadTtl(ttl).into());
        }
        let mut lease = match h.pending.take() {
            Some(l) => l,
            None => h
                .leases
                .acquire(&mut h.con, ttl)
                .map_err(failed(&mut h.con))?
                .ok_or(Fail::EMPTY)?,
        };
        let member = std::mem::take(&mut lease.member);
        // SAFETY: checked buffer and out-pointer.
        match unsafe { deliver(member, buf, cap, len_out) } {
            Ok(()) => {
                // SAFETY: optional out-pointers.
                unsafe {
                    put(lease_id_out, lease.id);
                    put(deadline_ms_out, lease.deadline_ms);
                }
                Ok(())
            }
            Err(m) => {
                lease.member = m;
                h.pending = Some(lease);
                Err(too_small())
            }
        }
    })
}

/// Ends lease `lease_id`, at most once; what happened is written to `*result_out` if not
/// NULL (`KEYROUTE_RELEASE_NOT_IN_FLIGHT` is not an error).
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, the `KEYROUTE_REDIS_*`
/// statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_release(
    leases: *mut keyroute_leases,
    lease_id: u64,
    result_out: *mut keyroute_release,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively.
        let h = unsafe { get_mut(leases, "leases") }?;
        // The release script needs the id only.
        let lease = Lease {
            member: Vec::new(),
            id: lease_id,
            deadline_ms: 0,
        };
        let r = match h
            .leases
            .release(&mut h.con, &lease)
            .map_err(failed(&mut h.con))?
        {
            Release::Released => keyroute_release::KEYROUTE_RELEASE_RELEASED,
            Release::Expired => keyroute_release::KEYROUTE_RELEASE_EXPIRED,
            _ => keyroute_release::KEYROUTE_RELEASE_NOT_IN_FLIGHT,
        };
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(result_out, r) };
        Ok(())
    })
}

/// Ends every lease past its deadline (server clock) and writes how many were ended to
/// `*count_out` if not NULL. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`,
/// the `KEYROUTE_REDIS_*` statuses (leases ended by earlier batches of this call are then
/// not counted).
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_reclaim(
    leases: *mut keyroute_leases,
    count_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively.
        let h = unsafe { get_mut(leases, "leases") }?;
        let ended = h
            .leases
            .reclaim(&mut h.con, Now::Server)
            .map_err(failed(&mut h.con))?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(count_out, ended.len()) };
        Ok(())
    })
}

/// Affinity with a cap on a Redis server (opaque): each item held by one node; a take
/// gives an item to its holder, else to the first of its candidate nodes holding fewer
/// items than the cap, in one atomic script, so that no node ever holds more than the
/// cap whichever workers take at once (bounded-load consistent hashing shared through
/// Redis). A hash at the affinity key (item -> node) and one beside it (node -> load).
///
/// Thread safety: as `keyroute_least_used` (one connection: one handle per thread).
#[derive(Debug)]
pub struct keyroute_affinity {
    _opaque: [u8; 0],
}

/// What a `keyroute_affinity` holds.
#[derive(Debug)]
pub(crate) struct AffinityState {
    affinity: Affinity,
    con: Link,
}

impl Handle for keyroute_affinity {
    type State = AffinityState;
    const TAG: u64 = tag(b"kr-affin");
    const NAME: &'static str = "keyroute_affinity";
}

fn affinity_state(key: &[u8], con: Link) -> Res<AffinityState> {
    Ok(AffinityState {
        affinity: Affinity::new(key)?,
        con,
    })
}

/// Opens an affinity handle on the Redis server at `url` for the affinity map at
/// `(key, key_len)` (its loads key shares its hash tag), connecting now; as
/// `keyroute_least_used_open()`. Free it with `keyroute_affinity_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_affinity_open(
    url: *const c_char,
    key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_affinity,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe {
        open(
            out,
            || Ok(Target::Url(text(url, "url")?)),
            key,
            key_len,
            timeout_ms,
            affinity_state,
        )
    }
}

/// Opens an affinity handle on a Redis Cluster from `count` seed nodes; as
/// `keyroute_least_used_open_cluster()`. Free it with `keyroute_affinity_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_affinity_open_cluster(
    seeds: *const *const c_char,
    count: usize,
    key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_affinity,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe {
        open(
            out,
            || Target::seeds(seeds, count),
            key,
            key_len,
            timeout_ms,
            affinity_state,
        )
    }
}

/// Closes the connection and frees the handle. NULL is ignored;
/// `KEYROUTE_INVALID_HANDLE` as `keyroute_ring_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_affinity_free(
    affinity: *mut keyroute_affinity,
) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(affinity, "affinity") }
}

/// Gives `(item, item_len)` to the node holding it, else to the first of the `count`
/// candidates `(candidates[i], lens[i])` (the item's nodes in preference order, e.g.
/// from `keyroute_router_get_n()`) holding fewer items than the cap, in one atomic
/// script call. The cap is `cap` items per node when `cap` is not 0, else the
/// bounded-loads factor `c` (finite, 1 to 2^53): `ceil(c * (items held + 1) / count)`.
///
/// Writes the position of the node among the candidates to `*index_out` (`SIZE_MAX`
/// when the item is held by a node not among them: `keyroute_affinity_holder()` names
/// it), and, where not NULL, its load to `*load_out`, the cap to `*cap_out` and 1 to
/// `*new_out` when this call placed the item (0: it was held already, nothing changed).
///
/// Returns `KEYROUTE_EMPTY` when every candidate is at the cap (nothing changed).
/// Errors, nothing sent: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`,
/// `KEYROUTE_TOO_LARGE` (more than 65,536 candidates), `KEYROUTE_OUT_OF_RANGE` (no
/// candidates, a cap above 2^53, a bad `c`), `KEYROUTE_EMPTY_MEMBER` (an empty item or
/// candidate); then the `KEYROUTE_REDIS_*` statuses (`KEYROUTE_REDIS_WRONGTYPE` when a
/// key holds another type: nothing changed).
#[no_mangle]
pub unsafe extern "C" fn keyroute_affinity_take(
    affinity: *mut keyroute_affinity,
    item: *const u8,
    item_len: usize,
    candidates: *const *const u8,
    lens: *const usize,
    count: usize,
    cap: u64,
    c: f64,
    index_out: *mut usize,
    load_out: *mut u64,
    cap_out: *mut u64,
    new_out: *mut u8,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; `item_len` bytes at `item`.
        let (h, item) = unsafe {
            (
                get_mut(affinity, "affinity")?,
                bytes(item, item_len, "item")?,
            )
        };
        let index_out = required(index_out, "index_out")?;
        if count > keyroute_redis::affinity::MAX_AFFINITY_CANDIDATES {
            return Err(RedisError::from(
                keyroute_core::select::affinity_script::AffinityError::TooManyCandidates(count),
            )
            .into());
        }
        // SAFETY: arrays of `count` entries (documented).
        let list = unsafe { ByteList::new(candidates, lens, count, "candidates") }?;
        let cs: Vec<&[u8]> = list.iter().collect();
        let cap = if cap != 0 {
            Cap::Fixed(cap)
        } else {
            Cap::Factor(c)
        };
        let taken = h
            .affinity
            .take(&mut h.con, item, &cs, cap)
            .map_err(failed(&mut h.con))?
            .ok_or(Fail::EMPTY)?;
        let at = cs.iter().position(|c| *c == taken.node.as_slice());
        // SAFETY: a checked out-pointer and optional ones.
        unsafe {
            index_out.write(at.unwrap_or(usize::MAX));
            put(load_out, taken.load);
            put(cap_out, taken.cap);
            put(new_out, u8::from(taken.new));
        }
        Ok(())
    })
}

/// Frees `(item, item_len)` once: writes 1 to `*released_out` (if not NULL) when it was
/// held (its node's load went down by one), 0 when it was not (nothing changed).
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_EMPTY_MEMBER`
/// (an empty item, nothing sent), the `KEYROUTE_REDIS_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_affinity_release(
    affinity: *mut keyroute_affinity,
    item: *const u8,
    item_len: usize,
    released_out: *mut u8,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; `item_len` bytes at `item`.
        let (h, item) = unsafe {
            (
                get_mut(affinity, "affinity")?,
                bytes(item, item_len, "item")?,
            )
        };
        let was = h
            .affinity
            .release(&mut h.con, item)
            .map_err(failed(&mut h.con))?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(released_out, u8::from(was.is_some())) };
        Ok(())
    })
}

/// Copies the node holding `(item, item_len)` into `buf` (`cap` bytes, not
/// NUL-terminated) and its length to `*len_out`. Returns `KEYROUTE_EMPTY` when the item
/// is not held, `KEYROUTE_BUFFER_TOO_SMALL` (the length needed in `*len_out`) when the
/// name does not fit. `buf` may be NULL when `cap` is 0. Errors:
/// `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, the `KEYROUTE_REDIS_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_affinity_holder(
    affinity: *mut keyroute_affinity,
    item: *const u8,
    item_len: usize,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a handle used exclusively; `item_len` bytes at `item`.
        let (h, item) = unsafe {
            (
                get_mut(affinity, "affinity")?,
                bytes(item, item_len, "item")?,
            )
        };
        let len_out = required(len_out, "len_out")?;
        buffer(buf, cap)?;
        let node = h
            .affinity
            .holder(&mut h.con, item)
            .map_err(failed(&mut h.con))?
            .ok_or(Fail::EMPTY)?;
        // SAFETY: checked buffer and out-pointer.
        unsafe { deliver(node, buf, cap, len_out) }.map_err(|_| too_small())
    })
}
