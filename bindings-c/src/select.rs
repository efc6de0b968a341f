//! Least-used selection in memory (`keyroute::select::Pool`), restore modes and pool
//! keys.

use keyroute_core::error::ErrorCode;
use keyroute_core::select::{checked_picks, side_key, Pool, Restore, UnknownRestoreMode};

use crate::ffi::{
    array_mut, buffer, bytes, deliver, free, get, get_mut, guard, guard_or, hand_out, put,
    required, tag, too_small, ByteList, Fail, Handle, Res,
};
use crate::status::keyroute_status;

/// How a removed member comes back: `KEYROUTE_RESTORE_KEEP` its remembered count,
/// `KEYROUTE_RESTORE_AT_MINIMUM` the pool's lowest count now. Passed as an `int`; any
/// other value is `KEYROUTE_BAD_RESTORE_MODE`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum keyroute_restore {
    /// The count it had when removed (as AT_MINIMUM when none is remembered).
    KEYROUTE_RESTORE_KEEP = 0,
    /// The lowest count in the pool now (0 when empty).
    KEYROUTE_RESTORE_AT_MINIMUM = 1,
}

/// A `keyroute_restore` value as passed over the ABI (an `int`).
pub(crate) fn restore_mode(mode: i32) -> Res<Restore> {
    const KEEP: i32 = keyroute_restore::KEYROUTE_RESTORE_KEEP as i32;
    const AT_MINIMUM: i32 = keyroute_restore::KEYROUTE_RESTORE_AT_MINIMUM as i32;
    match mode {
        KEEP => Ok(Restore::Keep),
        AT_MINIMUM => Ok(Restore::AtMinimum),
        _ => {
            let e = UnknownRestoreMode;
            Err(Fail::new(
                e.code(),
                format!(
                    "{e} (restore mode {mode}: pass KEYROUTE_RESTORE_KEEP or \
                     KEYROUTE_RESTORE_AT_MINIMUM)"
                ),
            ))
        }
    }
}

/// `KEYROUTE_UNKNOWN_NODE` for a member a pool does not hold.
pub(crate) fn not_in_pool(member: &[u8], what: &str) -> Fail {
    Fail::new(
        ErrorCode::UnknownNode,
        format!("member {:?} is not {what}", String::from_utf8_lossy(member)),
    )
}

/// An in-memory least-used pool (opaque), with the semantics of the Redis scripts
/// (lowest count first, ties to the byte-wise smallest member, cumulative counts).
///
/// Thread safety: none of its calls may run concurrently on the same pool (a pick
/// modifies it); a pool may be moved between threads.
#[derive(Debug)]
pub struct keyroute_pool {
    _opaque: [u8; 0],
}

/// What a `keyroute_pool` holds.
#[derive(Debug)]
pub(crate) struct PoolState {
    pool: Pool,
    /// The members handed out by the last pick (one) or pick_many (many).
    picks: Vec<Vec<u8>>,
}

impl Handle for keyroute_pool {
    type State = PoolState;
    const TAG: u64 = tag(b"kr-pool");
    const NAME: &'static str = "keyroute_pool";
}

/// Makes an empty in-memory pool and writes it to `*out`. Free with
/// `keyroute_pool_free()`. This is the model of the Redis pool, for tests and
/// single-process use; it does not talk to Redis.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_new(out: *mut *mut keyroute_pool) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        let state = PoolState {
            pool: Pool::new(),
            picks: Vec::new(),
        };
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, state) };
        Ok(())
    })
}

/// Frees a pool (as `keyroute_ring_free()`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_free(pool: *mut keyroute_pool) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(pool, "pool") }
}

/// Adds `count` members `(members[i], lens[i])` with count `initial` (at most 2^53).
/// Members already in the pool keep their count unless `overwrite` is non-zero. Writes
/// the number of members added (new ones) to `*added_out` if it is not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE`
/// (`count` above `KEYROUTE_MAX_BATCH`), `KEYROUTE_BAD_COUNT`, `KEYROUTE_EMPTY_MEMBER`;
/// nothing changes on error.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_seed(
    pool: *mut keyroute_pool,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
    initial: u64,
    overwrite: i32,
    added_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a pool used exclusively; arrays of `count` entries.
        let (p, ms) = unsafe {
            (
                get_mut(pool, "pool")?,
                ByteList::new(members, lens, count, "members")?,
            )
        };
        let added = p.pool.seed(ms.iter(), initial, overwrite != 0)?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(added_out, added) };
        Ok(())
    })
}

/// Picks the member with the lowest count (ties: byte-wise smallest), increments its
/// count, and writes a pointer to the member's bytes to `*member_out` and its length to
/// `*len_out`. The bytes are not NUL-terminated and stay valid until the next call on
/// this pool. Returns `KEYROUTE_EMPTY` when the pool is empty: make no request then.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_pick(
    pool: *mut keyroute_pool,
    member_out: *mut *const u8,
    len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a pool used exclusively.
        let p = unsafe { get_mut(pool, "pool") }?;
        let member_out = required(member_out, "member_out")?;
        let len_out = required(len_out, "len_out")?;
        let m = p.pool.pick().ok_or(Fail::EMPTY)?;
        p.picks.clear();
        p.picks.push(m);
        let m = &p.picks[0];
        // SAFETY: non-NULL out-pointers.
        unsafe {
            member_out.write(m.as_ptr());
            len_out.write(m.len());
        }
        Ok(())
    })
}

/// `n` picks in a row (as `n` calls of `keyroute_pool_pick()`): writes pointers to the
/// members' bytes to `members_out[0..]` and their lengths to `lens_out[0..]` (both with
/// room for `n`), and how many were made to `*count_out` (`n`, or 0 when the pool is
/// empty: `KEYROUTE_EMPTY`). The bytes stay valid until the next call on this pool.
/// `n` is at most 2^24 (16777216; else `KEYROUTE_TOO_LARGE`, nothing picked): the limit
/// of one call in every language.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_pick_many(
    pool: *mut keyroute_pool,
    n: usize,
    members_out: *mut *const u8,
    lens_out: *mut usize,
    count_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a pool used exclusively.
        let p = unsafe { get_mut(pool, "pool") }?;
        let count_out = required(count_out, "count_out")?;
        let n = checked_picks(n as i128)?;
        // SAFETY: arrays with room for `n` entries (documented contract).
        let (members, lens) = unsafe {
            (
                array_mut(members_out, n, "members_out")?,
                array_mut(lens_out, n, "lens_out")?,
            )
        };
        if p.pool.is_empty() {
            // SAFETY: non-NULL out-pointer.
            unsafe { count_out.write(0) };
            return Err(Fail::EMPTY);
        }
        p.picks = p.pool.pick_many(n);
        for ((m, l), pick) in members.iter_mut().zip(lens.iter_mut()).zip(&p.picks) {
            *m = pick.as_ptr();
            *l = pick.len();
        }
        // SAFETY: non-NULL out-pointer.
        unsafe { count_out.write(p.picks.len()) };
        Ok(())
    })
}

/// Takes `member` out of the pool, remembering its count (written to `*count_out` if not
/// NULL). Returns `KEYROUTE_UNKNOWN_NODE` (nothing changed) if it is not in the pool.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_remove(
    pool: *mut keyroute_pool,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a pool used exclusively; `len` bytes at `member`.
        let (p, m) = unsafe { (get_mut(pool, "pool")?, bytes(member, len, "member")?) };
        let c = p
            .pool
            .remove(m)
            .ok_or_else(|| not_in_pool(m, "in the pool"))?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(count_out, c) };
        Ok(())
    })
}

/// Puts `member` back into the pool with the count chosen by `mode` (a
/// `keyroute_restore`; other values give `KEYROUTE_BAD_RESTORE_MODE`), written to
/// `*count_out` if not NULL. A member already in the pool keeps its count.
/// `KEYROUTE_EMPTY_MEMBER` for an empty member.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_restore(
    pool: *mut keyroute_pool,
    member: *const u8,
    len: usize,
    mode: i32,
    count_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a pool used exclusively; `len` bytes at `member`.
        let (p, m) = unsafe { (get_mut(pool, "pool")?, bytes(member, len, "member")?) };
        let c = p.pool.restore(m, restore_mode(mode)?)?;
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(count_out, c) };
        Ok(())
    })
}

/// `keyroute_pool_count()` and `keyroute_pool_removed_count()`.
///
/// # Safety
/// As those.
unsafe fn count_of(
    pool: *const keyroute_pool,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
    get_count: fn(&Pool, &[u8]) -> Option<u64>,
    what: &str,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live pool; `len` bytes at `member`.
        let (p, m) = unsafe { (get(pool, "pool")?, bytes(member, len, "member")?) };
        let count_out = required(count_out, "count_out")?;
        let c = get_count(&p.pool, m).ok_or_else(|| not_in_pool(m, what))?;
        // SAFETY: non-NULL out-pointer.
        unsafe { count_out.write(c) };
        Ok(())
    })
}

/// The count of `member`, written to `*count_out`; `KEYROUTE_UNKNOWN_NODE` if it is not
/// in the pool.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_count(
    pool: *const keyroute_pool,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
) -> keyroute_status {
    // SAFETY: the caller's contract is count_of's.
    unsafe { count_of(pool, member, len, count_out, Pool::count, "in the pool") }
}

/// The count remembered for a removed `member`, written to `*count_out`;
/// `KEYROUTE_UNKNOWN_NODE` if none is remembered.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_removed_count(
    pool: *const keyroute_pool,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
) -> keyroute_status {
    // SAFETY: the caller's contract is count_of's.
    unsafe {
        count_of(
            pool,
            member,
            len,
            count_out,
            Pool::removed_count,
            "among the removed members",
        )
    }
}

/// The number of members in the pool (0 for NULL or an invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_len(pool: *const keyroute_pool) -> usize {
    // SAFETY: NULL or a live pool.
    guard_or(0, || Ok(unsafe { get(pool, "pool") }?.pool.len()))
}

/// The side key of a least-used pool key `(pool_key, key_len)`: the hash of removed
/// members' counts, `KEYS[2]` of the seed, remove and restore scripts (`keyroute_script`),
/// for programs that run the scripts over their own Redis client. Copies it into `buf`
/// (`cap` bytes, not NUL-terminated) and its length to `*len_out`;
/// `KEYROUTE_BUFFER_TOO_SMALL` (the length needed in `*len_out`, nothing copied) when it
/// does not fit. `KEYROUTE_BAD_POOL_KEY` for an empty key, or one with `}` but no
/// non-empty hash tag (the side key could not share its slot: use e.g. `{proxies}:pool`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_side_key(
    pool_key: *const u8,
    key_len: usize,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: `key_len` bytes at `pool_key`.
        let key = unsafe { bytes(pool_key, key_len, "pool_key") }?;
        let len_out = required(len_out, "len_out")?;
        buffer(buf, cap)?;
        let side = side_key(key)?;
        // SAFETY: `cap` writable bytes at `buf`, `len_out` non-NULL.
        unsafe { deliver(side, buf, cap, len_out) }.map_err(|_| too_small())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::keyroute_status::*;

    /// Found by bindings-c/tests/fuzz_api.c: a NULL `buf` with a capacity was written
    /// through (SIGSEGV) instead of refused.
    #[test]
    fn side_key_refuses_a_null_buffer_with_a_capacity() {
        let key = b"{p}:pool";
        let mut len = 0usize;
        let st = unsafe {
            keyroute_side_key(key.as_ptr(), key.len(), std::ptr::null_mut(), 64, &mut len)
        };
        assert_eq!(st, KEYROUTE_NULL_ARGUMENT);
        // NULL with capacity 0 asks for the length only.
        let st = unsafe {
            keyroute_side_key(key.as_ptr(), key.len(), std::ptr::null_mut(), 0, &mut len)
        };
        assert_eq!(st, KEYROUTE_BUFFER_TOO_SMALL);
        assert!(len > key.len());
        let mut buf = vec![0u8; len];
        let st = unsafe {
            keyroute_side_key(
                key.as_ptr(),
                key.len(),
                buf.as_mut_ptr(),
                buf.len(),
                &mut len,
            )
        };
        assert_eq!(st, KEYROUTE_OK);
        assert!(buf.starts_with(key));
    }
}
