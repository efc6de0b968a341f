//! `libkeyroute`: the keyroute routing core as a C library.
//!
//! The header `include/keyroute.h` is generated from this file by cbindgen (see
//! `build.rs`); the documentation comments below are the C documentation.
//!
//! Conventions (those of rure and BLAKE3):
//! * opaque handles made by `keyroute_*_new` and released by `keyroute_*_free`;
//! * every fallible call returns a `keyroute_status()` and writes its results through
//!   out-pointers, which are left untouched unless the call returns `KEYROUTE_OK`;
//! * no global error state: `keyroute_status_str()` describes a status;
//! * every export catches Rust panics and reports `KEYROUTE_PANIC` instead of unwinding
//!   into C;
//! * keys are byte strings `(const uint8_t *key, size_t len)`; `key` may be NULL when
//!   `len` is 0. Names (node names, profile names) are NUL-terminated UTF-8.
//!
//! The logic lives in the `keyroute` crate; this crate converts types and errors only.
#![allow(non_camel_case_types)]
// The exported functions check every pointer they dereference for NULL; the remaining
// contract (pointers valid for the lengths given) is the C caller's and is documented.
#![allow(clippy::missing_safety_doc)]

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::time::Duration;

use keyroute_core::ring::{checked_weight, Profile, ProfileName, ProfileOptions, Ring, RingError};
use keyroute_core::select::{side_key, Pool, PoolError, Restore};
use keyroute_core::slot::{
    self, Address, MapError, NodeIndex, Redirect, RedirectError, RedirectKind, Role, SlotMap,
};
use keyroute_redis::{
    Error as RedisError, Lease, Leases, LeastUsed, Now, Reconnecting, Release, Timeouts,
};

/// The result of every fallible call. `KEYROUTE_OK` is 0; every other value is an error
/// (or, for lookups, "no answer") and leaves the out-pointers untouched.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum keyroute_status {
    /// Success.
    KEYROUTE_OK = 0,
    /// No node owns the key: the ring (or pool) is empty. Not a failure of the call:
    /// the caller must make no request.
    KEYROUTE_EMPTY = 1,
    /// A required pointer argument was NULL.
    KEYROUTE_NULL_ARGUMENT = 2,
    /// A name was not valid UTF-8.
    KEYROUTE_INVALID_UTF8 = 3,
    /// A node name was empty.
    KEYROUTE_EMPTY_NAME = 4,
    /// A weight was zero, negative or above UINT32_MAX.
    KEYROUTE_BAD_WEIGHT = 5,
    /// The profile name is not one keyroute knows.
    KEYROUTE_UNKNOWN_PROFILE = 6,
    /// A `keyroute_ring_options` field is out of range (vnodes outside 1..=65536, points
    /// per digest outside 1..=4 or set on the native profile, port outside -1..=65535).
    KEYROUTE_BAD_OPTION = 7,
    /// The node is already on the ring.
    KEYROUTE_DUPLICATE_NODE = 8,
    /// The node is not on the ring.
    KEYROUTE_UNKNOWN_NODE = 9,
    /// The ring would hold more than 2^25 points; lower the weights or vnodes.
    KEYROUTE_TOO_MANY_POINTS = 10,
    /// An index is out of range.
    KEYROUTE_OUT_OF_RANGE = 11,
    /// A count does not fit (pool counts are at most 2^53).
    KEYROUTE_BAD_COUNT = 12,
    /// A slot range is reversed or reaches past 16383.
    KEYROUTE_BAD_RANGE = 13,
    /// Slots or replicas were given to a node that is a replica.
    KEYROUTE_NOT_A_MASTER = 14,
    /// The error message is not a `MOVED`/`ASK` redirection (it is some other error).
    KEYROUTE_NOT_A_REDIRECT = 15,
    /// A `MOVED`/`ASK` message with a bad field count, slot or address.
    KEYROUTE_BAD_REDIRECT = 16,
    /// Redis: a bad URL, a refused or timed-out connection, a lost reply, an error reply
    /// or an unexpected reply. After a connection error the handle reconnects on its next
    /// call; a pick or acquire whose reply was lost may or may not have been counted.
    KEYROUTE_REDIS = 17,
    /// The caller's buffer is too small for the member: the length needed is written to
    /// `*len_out` (an exception to "out-pointers untouched unless `KEYROUTE_OK`"). What
    /// happens to the member is stated on each call (it is never lost).
    KEYROUTE_BUFFER_TOO_SMALL = 18,
    /// A Redis pool key is empty, or contains `}` without a non-empty hash tag (so its
    /// companion keys could not share its Redis Cluster slot; use e.g. `{proxies}:pool`).
    KEYROUTE_BAD_KEY = 19,
    /// A bug in keyroute: a Rust panic was caught at the boundary. The handle involved
    /// is left in a valid state but should be freed.
    KEYROUTE_PANIC = 99,
}

use keyroute_status::*;

/// Options for `keyroute_ring_new()`. A zero-initialised struct (`{0}`) means "the
/// profile's defaults" for every field.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct keyroute_ring_options {
    /// Virtual nodes: points per unit of weight for `native` (default 160), digests per
    /// server at equal weights for the ketama family (default 40). 0 = default;
    /// otherwise 1..=65536.
    pub vnodes: u32,
    /// Points per MD5 digest, 1..=4 (ketama family only; 3 = npm hashring's
    /// `compatibility: 'hash_ring'`). 0 = default.
    pub points_per_digest: u32,
    /// The port whose `:port` suffix is left out of the hashed server string (npm
    /// hashring's `default port`; libmemcached and twemproxy use 11211). 0 = the
    /// profile's default, -1 = none, 1..=65535 = that port.
    pub default_port: i32,
}

/// A consistent-hash ring (opaque).
///
/// Thread safety: a ring may be read (`keyroute_ring_get*`, `_len`, `_node`,
/// `_point_count`, `_profile`) from any number of threads at once; modifying calls
/// (`_add`, `_remove`, `_set_weight`) and `_free` need exclusive access (no concurrent
/// call of any kind on the same ring). A ring may be moved between threads.
#[derive(Debug)]
pub struct keyroute_ring {
    ring: Ring,
    /// `names[i]` is `ring.nodes()[i]` NUL-terminated, so lookups hand out C strings
    /// without copying.
    names: Vec<CString>,
}

/// An in-memory least-used pool (opaque), with the semantics of the Redis scripts
/// (lowest count first, ties to the byte-wise smallest member, cumulative counts).
///
/// Thread safety: none of its calls may run concurrently on the same pool (a pick
/// modifies it); a pool may be moved between threads.
#[derive(Debug)]
pub struct keyroute_pool {
    pool: Pool,
    last: Vec<u8>,
}

/// Runs `f`, turning a panic into `KEYROUTE_PANIC`.
fn guard(f: impl FnOnce() -> keyroute_status) -> keyroute_status {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(KEYROUTE_PANIC)
}

/// Runs `f`, turning a panic into `fallback`.
fn guard_or<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(fallback)
}

/// Writes `value` through an optional out-pointer: nothing when `out` is NULL.
///
/// # Safety
/// `out` is NULL or valid for writing a `T`.
unsafe fn put<T>(out: *mut T, value: T) {
    if !out.is_null() {
        // SAFETY: non-NULL, and valid per the caller.
        unsafe { out.write(value) };
    }
}

/// A `keyroute_restore` value as passed over the ABI (an `int`), if it is one.
fn restore_mode(mode: i32) -> Option<Restore> {
    match mode {
        m if m == keyroute_restore::KEYROUTE_RESTORE_KEEP as i32 => Some(Restore::Keep),
        m if m == keyroute_restore::KEYROUTE_RESTORE_AT_MINIMUM as i32 => Some(Restore::AtMinimum),
        _ => None,
    }
}

fn ring_status(e: &RingError) -> keyroute_status {
    match e {
        RingError::EmptyNodeName => KEYROUTE_EMPTY_NAME,
        RingError::ZeroWeight(_)
        | RingError::NegativeWeight(..)
        | RingError::WeightTooLarge(..) => KEYROUTE_BAD_WEIGHT,
        RingError::DuplicateNode(_) => KEYROUTE_DUPLICATE_NODE,
        RingError::UnknownNode(_) => KEYROUTE_UNKNOWN_NODE,
        RingError::UnknownProfile(_) => KEYROUTE_UNKNOWN_PROFILE,
        RingError::TooManyPoints(_) => KEYROUTE_TOO_MANY_POINTS,
        RingError::BadVnodes(_)
        | RingError::BadPointsPerDigest(_)
        | RingError::BadPort(_)
        | RingError::BadOption { .. } => KEYROUTE_BAD_OPTION,
        // Not produced by the calls this library exposes.
        _ => KEYROUTE_PANIC,
    }
}

/// A key as a slice; `None` for a NULL pointer with a non-zero length.
unsafe fn key_slice<'a>(key: *const u8, len: usize) -> Option<&'a [u8]> {
    if len == 0 {
        Some(&[])
    } else if key.is_null() {
        None
    } else {
        // SAFETY: the caller passes `len` readable bytes at `key` (documented contract).
        Some(unsafe { std::slice::from_raw_parts(key, len) })
    }
}

/// A NUL-terminated UTF-8 name.
unsafe fn name_str<'a>(name: *const c_char) -> Result<&'a str, keyroute_status> {
    if name.is_null() {
        return Err(KEYROUTE_NULL_ARGUMENT);
    }
    // SAFETY: non-NULL and NUL-terminated (documented contract).
    unsafe { CStr::from_ptr(name) }
        .to_str()
        .map_err(|_| KEYROUTE_INVALID_UTF8)
}

// ---------------------------------------------------------------------------------------
// Library

/// The library version, `"MAJOR.MINOR.PATCH"` (static storage; never NULL). Compare with
/// the `KEYROUTE_VERSION_STRING` macro to detect a header/library mismatch.
#[no_mangle]
pub extern "C" fn keyroute_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A short English description of a `keyroute_status` value (static storage; never
/// NULL; values that are not a status give "unknown status").
#[no_mangle]
pub extern "C" fn keyroute_status_str(status: i32) -> *const c_char {
    const ALL: [keyroute_status; 21] = [
        KEYROUTE_OK,
        KEYROUTE_EMPTY,
        KEYROUTE_NULL_ARGUMENT,
        KEYROUTE_INVALID_UTF8,
        KEYROUTE_EMPTY_NAME,
        KEYROUTE_BAD_WEIGHT,
        KEYROUTE_UNKNOWN_PROFILE,
        KEYROUTE_BAD_OPTION,
        KEYROUTE_DUPLICATE_NODE,
        KEYROUTE_UNKNOWN_NODE,
        KEYROUTE_TOO_MANY_POINTS,
        KEYROUTE_OUT_OF_RANGE,
        KEYROUTE_BAD_COUNT,
        KEYROUTE_BAD_RANGE,
        KEYROUTE_NOT_A_MASTER,
        KEYROUTE_NOT_A_REDIRECT,
        KEYROUTE_BAD_REDIRECT,
        KEYROUTE_REDIS,
        KEYROUTE_BUFFER_TOO_SMALL,
        KEYROUTE_BAD_KEY,
        KEYROUTE_PANIC,
    ];
    let Some(&status) = ALL.iter().find(|&&s| s as i32 == status) else {
        return c"unknown status".as_ptr();
    };
    let s: &'static CStr = match status {
        KEYROUTE_OK => c"ok",
        KEYROUTE_EMPTY => c"no node: the ring or pool is empty",
        KEYROUTE_NULL_ARGUMENT => c"a required pointer argument is NULL",
        KEYROUTE_INVALID_UTF8 => c"a name is not valid UTF-8",
        KEYROUTE_EMPTY_NAME => c"node names must not be empty",
        KEYROUTE_BAD_WEIGHT => c"weights must be between 1 and 4294967295",
        KEYROUTE_UNKNOWN_PROFILE => {
            c"unknown profile; expected one of native, libketama, libmemcached, twemproxy, \
             uhashring, node-hashring, hash_ring"
        }
        KEYROUTE_BAD_OPTION => {
            c"ring option out of range (vnodes 1..=65536; points_per_digest 1..=4 and not on \
             native; default_port -1..=65535)"
        }
        KEYROUTE_DUPLICATE_NODE => c"the node is already on the ring; use set_weight to change it",
        KEYROUTE_UNKNOWN_NODE => c"the node is not on the ring",
        KEYROUTE_TOO_MANY_POINTS => {
            c"the ring would hold more than 33554432 points; lower the weights or vnodes"
        }
        KEYROUTE_OUT_OF_RANGE => c"index out of range",
        KEYROUTE_BAD_COUNT => c"count above 2^53, the largest a Redis score holds exactly",
        KEYROUTE_BAD_RANGE => c"slot range reversed or past 16383",
        KEYROUTE_NOT_A_MASTER => c"the node is a replica; slots and replicas go to masters",
        KEYROUTE_NOT_A_REDIRECT => c"the error message is not a MOVED or ASK redirection",
        KEYROUTE_BAD_REDIRECT => {
            c"malformed redirection; expected `MOVED|ASK <slot> <host>:<port>`"
        }
        KEYROUTE_REDIS => {
            c"redis: bad URL, connection refused or timed out, or an error reply from the server"
        }
        KEYROUTE_BUFFER_TOO_SMALL => {
            c"the buffer is too small for the member; *len_out holds the length needed"
        }
        KEYROUTE_BAD_KEY => {
            c"bad pool key: empty, or contains '}' without a non-empty hash tag \
             (use e.g. {proxies}:pool)"
        }
        KEYROUTE_PANIC => c"internal error in keyroute (a panic was caught); please report it",
    };
    s.as_ptr()
}

// ---------------------------------------------------------------------------------------
// Redis Cluster slots

/// Number of Redis Cluster hash slots.
pub const KEYROUTE_SLOT_COUNT: u16 = 16384;
/// Returned by `keyroute_key_slot()` for a NULL key with a non-zero length (never a slot).
pub const KEYROUTE_NO_SLOT: u16 = 0xFFFF;

/// The Redis Cluster hash slot of `key` (0..=16383): CRC16/XMODEM of its hash tag (the
/// bytes between the first `{` and the next `}`, if non-empty) or of the whole key.
/// Returns `KEYROUTE_NO_SLOT` if `key` is NULL and `len` is not 0. Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_key_slot(key: *const u8, len: usize) -> u16 {
    guard_or(KEYROUTE_NO_SLOT, move || {
        match unsafe { key_slice(key, len) } {
            Some(k) => slot::key_slot(k),
            None => KEYROUTE_NO_SLOT,
        }
    })
}

/// The slots of `count` keys: `slots_out[i]` = slot of `(keys[i], lens[i])`.
/// `keys`, `lens` and `slots_out` may be NULL only when `count` is 0; `keys[i]` may be
/// NULL only when `lens[i]` is 0 (else `KEYROUTE_NULL_ARGUMENT`, nothing written).
/// Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_key_slots(
    keys: *const *const u8,
    lens: *const usize,
    count: usize,
    slots_out: *mut u16,
) -> keyroute_status {
    guard(move || {
        if count == 0 {
            return KEYROUTE_OK;
        }
        if keys.is_null() || lens.is_null() || slots_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        // SAFETY: `count` entries each (documented contract).
        let (keys, lens, out) = unsafe {
            (
                std::slice::from_raw_parts(keys, count),
                std::slice::from_raw_parts(lens, count),
                std::slice::from_raw_parts_mut(slots_out, count),
            )
        };
        if keys.iter().zip(lens).any(|(k, &l)| k.is_null() && l != 0) {
            return KEYROUTE_NULL_ARGUMENT;
        }
        for ((o, &k), &l) in out.iter_mut().zip(keys).zip(lens) {
            // SAFETY: checked above; `l` readable bytes at `k`.
            *o = slot::key_slot(unsafe { key_slice(k, l) }.unwrap_or_default());
        }
        KEYROUTE_OK
    })
}

/// The hash tag of `key`: the part that is hashed for its slot, as an offset and length
/// into `key` (the whole key when it has no non-empty `{...}` tag). Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_hash_tag(
    key: *const u8,
    len: usize,
    offset_out: *mut usize,
    len_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        let Some(k) = (unsafe { key_slice(key, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if offset_out.is_null() || len_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let tag = slot::hash_tag(k);
        let offset = if tag.is_empty() {
            0
        } else {
            tag.as_ptr() as usize - k.as_ptr() as usize
        };
        // SAFETY: non-NULL out-pointers.
        unsafe {
            *offset_out = offset;
            *len_out = tag.len();
        }
        KEYROUTE_OK
    })
}

// ---------------------------------------------------------------------------------------
// Rings

impl keyroute_ring {
    fn sync_names(&mut self) {
        self.names = self
            .ring
            .nodes()
            .iter()
            // Names come from C strings, so they hold no NUL.
            .map(|n| CString::new(n.name()).unwrap_or_default())
            .collect();
    }
}

/// Builds an empty ring of profile `profile` (`"native"`, `"libketama"`,
/// `"libmemcached"`, `"twemproxy"`, `"uhashring"`, `"node-hashring"`, `"hash_ring"`;
/// case-insensitive, `-` and `_` interchangeable) with `options` (NULL = defaults), and
/// writes it to `*out`. Free it with `keyroute_ring_free()`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_UTF8`, `KEYROUTE_UNKNOWN_PROFILE`,
/// `KEYROUTE_BAD_OPTION`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_new(
    profile: *const c_char,
    options: *const keyroute_ring_options,
    out: *mut *mut keyroute_ring,
) -> keyroute_status {
    guard(move || {
        if out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let name = match unsafe { name_str(profile) } {
            Ok(s) => s,
            Err(e) => return e,
        };
        // SAFETY: NULL or a valid options struct.
        let opts = unsafe { options.as_ref() }.copied().unwrap_or_default();
        let given = |v: i64| (v != 0).then_some(i128::from(v));
        let options = ProfileOptions {
            vnodes: given(opts.vnodes.into()),
            points_per_digest: given(opts.points_per_digest.into()),
            default_port: match opts.default_port {
                -1 => Some(0),
                port => given(port.into()),
            },
        };
        let p = match Profile::from_options(name, &options) {
            Ok(p) => p,
            Err(e) => return ring_status(&e),
        };
        let handle = Box::new(keyroute_ring {
            ring: Ring::new(p),
            names: Vec::new(),
        });
        // SAFETY: non-NULL out-pointer.
        unsafe { *out = Box::into_raw(handle) };
        KEYROUTE_OK
    })
}

/// Frees a ring made by `keyroute_ring_new()`. NULL is ignored. Every name pointer
/// obtained from the ring becomes invalid.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_free(ring: *mut keyroute_ring) {
    // SAFETY: NULL or made by keyroute_ring_new, freed once (documented contract).
    unsafe { free_handle(ring) };
}

unsafe fn ring_mut<'a>(ring: *mut keyroute_ring) -> Option<&'a mut keyroute_ring> {
    // SAFETY: NULL or a live ring with exclusive access (documented contract).
    unsafe { ring.as_mut() }
}

unsafe fn ring_ref<'a>(ring: *const keyroute_ring) -> Option<&'a keyroute_ring> {
    // SAFETY: NULL or a live ring (documented contract).
    unsafe { ring.as_ref() }
}

/// Adds node `name` (NUL-terminated UTF-8) with `weight` (1..=UINT32_MAX). In the ketama
/// profiles every node's share is recomputed from the new total weight, as the peers do.
/// Nodes are kept in the order added (the order decides ties in the ketama family).
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_UTF8`, `KEYROUTE_EMPTY_NAME`,
/// `KEYROUTE_BAD_WEIGHT`, `KEYROUTE_DUPLICATE_NODE`, `KEYROUTE_TOO_MANY_POINTS`; the ring
/// is unchanged on error.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_add(
    ring: *mut keyroute_ring,
    name: *const c_char,
    weight: i64,
) -> keyroute_status {
    guard(move || {
        let Some(r) = (unsafe { ring_mut(ring) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let name = match unsafe { name_str(name) } {
            Ok(s) => s,
            Err(e) => return e,
        };
        if name.is_empty() {
            return KEYROUTE_EMPTY_NAME;
        }
        // Names are re-synced only on success: a failed call leaves earlier pointers valid.
        match checked_weight(name, weight.into()).and_then(|w| r.ring.add(name, w)) {
            Ok(()) => {
                r.sync_names();
                KEYROUTE_OK
            }
            Err(e) => ring_status(&e),
        }
    })
}

/// Removes node `name`. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_UTF8`,
/// `KEYROUTE_UNKNOWN_NODE`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_remove(
    ring: *mut keyroute_ring,
    name: *const c_char,
) -> keyroute_status {
    guard(move || {
        let Some(r) = (unsafe { ring_mut(ring) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let name = match unsafe { name_str(name) } {
            Ok(s) => s,
            Err(e) => return e,
        };
        match r.ring.remove(name) {
            Ok(_) => {
                r.sync_names();
                KEYROUTE_OK
            }
            Err(e) => ring_status(&e),
        }
    })
}

/// Changes the weight of node `name`. Errors: `KEYROUTE_NULL_ARGUMENT`,
/// `KEYROUTE_INVALID_UTF8`, `KEYROUTE_UNKNOWN_NODE`, `KEYROUTE_BAD_WEIGHT`,
/// `KEYROUTE_TOO_MANY_POINTS`; the ring is unchanged on error.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_set_weight(
    ring: *mut keyroute_ring,
    name: *const c_char,
    weight: i64,
) -> keyroute_status {
    guard(move || {
        let Some(r) = (unsafe { ring_mut(ring) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let name = match unsafe { name_str(name) } {
            Ok(s) => s,
            Err(e) => return e,
        };
        if !r.ring.contains(name) {
            return KEYROUTE_UNKNOWN_NODE;
        }
        let res = checked_weight(name, weight.into()).and_then(|w| r.ring.set_weight(name, w));
        match res {
            Ok(()) => KEYROUTE_OK,
            Err(e) => ring_status(&e),
        }
    })
}

/// The node owning `key`: writes a pointer to its NUL-terminated name to `*node_out`
/// and, if `node_len_out` is not NULL, the name's length (without the NUL) to
/// `*node_len_out`. The name is not copied: it stays valid until the ring is next
/// modified (`_add`, `_remove`, `_set_weight`) or freed.
///
/// Returns `KEYROUTE_EMPTY` on a ring without nodes (nothing written; make no request),
/// `KEYROUTE_NULL_ARGUMENT` if `ring` or `node_out` is NULL, or `key` is NULL with a
/// non-zero `len`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_get(
    ring: *const keyroute_ring,
    key: *const u8,
    len: usize,
    node_out: *mut *const c_char,
    node_len_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        let (Some(r), Some(k)) = (unsafe { ring_ref(ring) }, unsafe { key_slice(key, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if node_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let Some(i) = r.ring.get_index(k) else {
            return KEYROUTE_EMPTY;
        };
        let name = &r.names[i];
        // SAFETY: non-NULL out-pointers.
        unsafe {
            *node_out = name.as_ptr();
            put(node_len_out, name.as_bytes().len());
        }
        KEYROUTE_OK
    })
}

/// The index (into the order of `keyroute_ring_node()`) of the node owning `key`, written
/// to `*index_out`. Returns `KEYROUTE_EMPTY` on an empty ring. Same lifetime rule as
/// `keyroute_ring_get()`: indexes change when the ring is modified.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_get_index(
    ring: *const keyroute_ring,
    key: *const u8,
    len: usize,
    index_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        let (Some(r), Some(k)) = (unsafe { ring_ref(ring) }, unsafe { key_slice(key, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if index_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        match r.ring.get_index(k) {
            Some(i) => {
                // SAFETY: non-NULL out-pointer.
                unsafe { *index_out = i };
                KEYROUTE_OK
            }
            None => KEYROUTE_EMPTY,
        }
    })
}

/// Batch lookup without allocation: `indexes_out[i]` = index of the node owning
/// `(keys[i], lens[i])`, or `SIZE_MAX` when the ring is empty. `keys`, `lens` and
/// `indexes_out` may be NULL only when `count` is 0; `keys[i]` may be NULL only when
/// `lens[i]` is 0. Resolve indexes with `keyroute_ring_node()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_get_many(
    ring: *const keyroute_ring,
    keys: *const *const u8,
    lens: *const usize,
    count: usize,
    indexes_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        let Some(r) = (unsafe { ring_ref(ring) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if count == 0 {
            return KEYROUTE_OK;
        }
        if keys.is_null() || lens.is_null() || indexes_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        // SAFETY: `count` entries each (documented contract).
        let (keys, lens, out) = unsafe {
            (
                std::slice::from_raw_parts(keys, count),
                std::slice::from_raw_parts(lens, count),
                std::slice::from_raw_parts_mut(indexes_out, count),
            )
        };
        if keys.iter().zip(lens).any(|(k, &l)| k.is_null() && l != 0) {
            return KEYROUTE_NULL_ARGUMENT;
        }
        for ((o, &k), &l) in out.iter_mut().zip(keys).zip(lens) {
            // SAFETY: checked above.
            let k = unsafe { key_slice(k, l) }.unwrap_or_default();
            *o = r.ring.get_index(k).unwrap_or(usize::MAX);
        }
        KEYROUTE_OK
    })
}

/// Up to `n` distinct nodes for `key`, walking clockwise from its point: the owner
/// first, then the replicas. Writes `*count_out` names to `nodes_out[0..]` (capacity
/// `n`) and, if `lens_out` is not NULL, their lengths to `lens_out[0..]`. Fewer than `n`
/// when the ring has fewer nodes. Names live as in `keyroute_ring_get()`.
///
/// Returns `KEYROUTE_EMPTY` on an empty ring (with `*count_out` = 0); `nodes_out` may be
/// NULL only when `n` is 0.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_get_n(
    ring: *const keyroute_ring,
    key: *const u8,
    len: usize,
    n: usize,
    nodes_out: *mut *const c_char,
    lens_out: *mut usize,
    count_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        let (Some(r), Some(k)) = (unsafe { ring_ref(ring) }, unsafe { key_slice(key, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if count_out.is_null() || (n > 0 && nodes_out.is_null()) {
            return KEYROUTE_NULL_ARGUMENT;
        }
        if r.ring.is_empty() {
            // SAFETY: non-NULL out-pointer.
            unsafe { *count_out = 0 };
            return KEYROUTE_EMPTY;
        }
        let mut idx = Vec::new();
        r.ring.get_n_into(k, n, &mut idx);
        for (j, &i) in idx.iter().enumerate() {
            let name = &r.names[i];
            // SAFETY: capacity `n` >= idx.len() (documented contract).
            unsafe {
                *nodes_out.add(j) = name.as_ptr();
                if !lens_out.is_null() {
                    *lens_out.add(j) = name.as_bytes().len();
                }
            }
        }
        // SAFETY: non-NULL out-pointer.
        unsafe { *count_out = idx.len() };
        KEYROUTE_OK
    })
}

/// The number of nodes on the ring (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_len(ring: *const keyroute_ring) -> usize {
    guard_or(0, move || {
        unsafe { ring_ref(ring) }.map_or(0, |r| r.ring.len())
    })
}

/// The number of points on the ring's circle (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_point_count(ring: *const keyroute_ring) -> usize {
    guard_or(0, move || {
        unsafe { ring_ref(ring) }.map_or(0, |r| r.ring.point_count())
    })
}

/// The canonical name of the ring's profile (static storage), or NULL for a NULL ring.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_profile(ring: *const keyroute_ring) -> *const c_char {
    guard_or(ptr::null(), move || {
        let Some(r) = (unsafe { ring_ref(ring) }) else {
            return ptr::null();
        };
        let s: &'static CStr = match r.ring.profile().name() {
            ProfileName::Native => c"native",
            ProfileName::Libketama => c"libketama",
            ProfileName::Libmemcached => c"libmemcached",
            ProfileName::Twemproxy => c"twemproxy",
            ProfileName::Uhashring => c"uhashring",
            ProfileName::NodeHashring => c"node-hashring",
            ProfileName::HashRing => c"hash_ring",
        };
        s.as_ptr()
    })
}

/// Node `index` (0..len, in the order added): its NUL-terminated name (lifetime as in
/// `keyroute_ring_get()`) and, if the pointers are not NULL, its name length and weight.
/// Returns `KEYROUTE_OUT_OF_RANGE` for an index >= len.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_node(
    ring: *const keyroute_ring,
    index: usize,
    name_out: *mut *const c_char,
    name_len_out: *mut usize,
    weight_out: *mut u32,
) -> keyroute_status {
    guard(move || {
        let Some(r) = (unsafe { ring_ref(ring) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if name_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let (Some(node), Some(name)) = (r.ring.nodes().get(index), r.names.get(index)) else {
            return KEYROUTE_OUT_OF_RANGE;
        };
        // SAFETY: non-NULL out-pointers.
        unsafe {
            *name_out = name.as_ptr();
            put(name_len_out, name.as_bytes().len());
            put(weight_out, node.weight());
        }
        KEYROUTE_OK
    })
}

// ---------------------------------------------------------------------------------------
// Least-used pool model (in memory)

/// How a removed member comes back: `KEYROUTE_RESTORE_KEEP` its remembered count,
/// `KEYROUTE_RESTORE_AT_MINIMUM` the pool's lowest count now.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum keyroute_restore {
    /// The count it had when removed (as AT_MINIMUM when none is remembered).
    KEYROUTE_RESTORE_KEEP = 0,
    /// The lowest count in the pool now (0 when empty).
    KEYROUTE_RESTORE_AT_MINIMUM = 1,
}

/// Makes an empty in-memory pool and writes it to `*out`. Free with
/// `keyroute_pool_free()`. This is the model of the Redis pool, for tests and
/// single-process use; it does not talk to Redis.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_new(out: *mut *mut keyroute_pool) -> keyroute_status {
    // SAFETY: NULL or a writable out-pointer (documented contract).
    unsafe {
        new_handle(out, || keyroute_pool {
            pool: Pool::new(),
            last: Vec::new(),
        })
    }
}

/// Frees a pool. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_free(pool: *mut keyroute_pool) {
    // SAFETY: NULL or made by keyroute_pool_new, freed once (documented contract).
    unsafe { free_handle(pool) };
}

/// Adds `count` members `(members[i], lens[i])` with count `initial` (at most 2^53).
/// Members already in the pool keep their count unless `overwrite` is non-zero. Writes
/// the number of members added (new ones) to `*added_out` if it is not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_COUNT` (nothing changed).
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
    guard(move || {
        // SAFETY: NULL or a live pool with exclusive access.
        let Some(p) = (unsafe { pool.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let ms: Vec<&[u8]> = if count == 0 {
            Vec::new()
        } else {
            if members.is_null() || lens.is_null() {
                return KEYROUTE_NULL_ARGUMENT;
            }
            // SAFETY: `count` entries each (documented contract).
            let (ms, ls) = unsafe {
                (
                    std::slice::from_raw_parts(members, count),
                    std::slice::from_raw_parts(lens, count),
                )
            };
            let mut v = Vec::with_capacity(count);
            for (&m, &l) in ms.iter().zip(ls) {
                match unsafe { key_slice(m, l) } {
                    Some(s) => v.push(s),
                    None => return KEYROUTE_NULL_ARGUMENT,
                }
            }
            v
        };
        match p.pool.seed(ms, initial, overwrite != 0) {
            Ok(n) => {
                // SAFETY: NULL or a valid out-pointer (documented contract).
                unsafe { put(added_out, n) };
                KEYROUTE_OK
            }
            Err(PoolError::BadInitialCount(_)) => KEYROUTE_BAD_COUNT,
            Err(_) => KEYROUTE_PANIC,
        }
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
    guard(move || {
        // SAFETY: NULL or a live pool with exclusive access.
        let Some(p) = (unsafe { pool.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if member_out.is_null() || len_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let Some(m) = p.pool.pick() else {
            return KEYROUTE_EMPTY;
        };
        p.last = m;
        // SAFETY: non-NULL out-pointers.
        unsafe {
            *member_out = p.last.as_ptr();
            *len_out = p.last.len();
        }
        KEYROUTE_OK
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
    guard(move || {
        // SAFETY: NULL or a live pool with exclusive access.
        let (Some(p), Some(m)) = (unsafe { pool.as_mut() }, unsafe { key_slice(member, len) })
        else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        match p.pool.remove(m) {
            Some(c) => {
                // SAFETY: NULL or a valid out-pointer (documented contract).
                unsafe { put(count_out, c) };
                KEYROUTE_OK
            }
            None => KEYROUTE_UNKNOWN_NODE,
        }
    })
}

/// Puts `member` back into the pool with the count chosen by `mode` (a
/// `keyroute_restore`; other values give `KEYROUTE_BAD_OPTION`), written to
/// `*count_out` if not NULL. A member already in the pool keeps its count.
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_restore(
    pool: *mut keyroute_pool,
    member: *const u8,
    len: usize,
    mode: i32,
    count_out: *mut u64,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live pool with exclusive access.
        let (Some(p), Some(m)) = (unsafe { pool.as_mut() }, unsafe { key_slice(member, len) })
        else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let Some(mode) = restore_mode(mode) else {
            return KEYROUTE_BAD_OPTION;
        };
        let Ok(c) = p.pool.restore(m, mode) else {
            return KEYROUTE_EMPTY_NAME;
        };
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(count_out, c) };
        KEYROUTE_OK
    })
}

/// `keyroute_pool_count()` and `keyroute_pool_removed_count()`: the count `get` reads for
/// `member`, written to `*count_out`; `KEYROUTE_UNKNOWN_NODE` when there is none.
///
/// # Safety
/// `pool` NULL or live; `member` NULL or `len` readable bytes; `count_out` NULL or
/// writable.
unsafe fn pool_count_of(
    pool: *const keyroute_pool,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
    get: fn(&Pool, &[u8]) -> Option<u64>,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live pool.
        let (Some(p), Some(m)) = (unsafe { pool.as_ref() }, unsafe { key_slice(member, len) })
        else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if count_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        match get(&p.pool, m) {
            Some(c) => {
                // SAFETY: non-NULL out-pointer.
                unsafe { *count_out = c };
                KEYROUTE_OK
            }
            None => KEYROUTE_UNKNOWN_NODE,
        }
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
    // SAFETY: the caller's contract is pool_count_of's.
    unsafe { pool_count_of(pool, member, len, count_out, Pool::count) }
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
    // SAFETY: the caller's contract is pool_count_of's.
    unsafe { pool_count_of(pool, member, len, count_out, Pool::removed_count) }
}

/// The number of members in the pool (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn keyroute_pool_len(pool: *const keyroute_pool) -> usize {
    // SAFETY: NULL or a live pool.
    guard_or(0, move || {
        unsafe { pool.as_ref() }.map_or(0, |p| p.pool.len())
    })
}

// ---------------------------------------------------------------------------------------
// Least-used pools and leases on a Redis server (the core's native Redis code)

/// Connect, read and write timeout of `keyroute_least_used_open()` and
/// `keyroute_leases_open()` when `timeout_ms` is 0.
pub const KEYROUTE_DEFAULT_TIMEOUT_MS: u32 = 2000;

/// A least-used pool on a Redis server (opaque): a sorted set at the pool key (member =
/// proxy id, score = assignments) and its side hash of removed members' counts, driven
/// by atomic scripts (`EVALSHA`). Same semantics as `keyroute_pool`: lowest count first,
/// ties to the byte-wise smallest member, cumulative counts.
///
/// The handle holds one connection to one standalone server, reconnected on the next
/// call after a connection error (a request is never resent on its own).
///
/// Thread safety: not thread-safe. No two calls may run concurrently on the same handle;
/// open one handle per thread (handles on the same pool key share the pool through the
/// server, atomically). A handle may be moved between threads.
#[derive(Debug)]
pub struct keyroute_least_used {
    pool: LeastUsed,
    con: Reconnecting,
    /// A member picked (and counted on the server) that did not fit the caller's buffer;
    /// the next `keyroute_least_used_pick()` returns it instead of picking again.
    pending: Option<Vec<u8>>,
}

/// Least-concurrency selection on a Redis server (opaque): acquire a lease on the member
/// with the fewest leases in flight, release it when the work is done, reclaim leases
/// abandoned past their deadline. Time is the server's clock (milliseconds since the Unix
/// epoch). This is not the cumulative least-used counter.
///
/// Thread safety: as `keyroute_least_used` (one connection: one handle per thread).
#[derive(Debug)]
pub struct keyroute_leases {
    leases: Leases,
    con: Reconnecting,
    /// A lease acquired that did not fit the caller's buffer; the next
    /// `keyroute_leases_acquire()` returns it instead of acquiring another.
    pending: Option<Lease>,
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

/// A Redis call's outcome: its value written through the optional out-pointer `out` and
/// `KEYROUTE_OK`, or the error's status.
///
/// # Safety
/// `out` is NULL or valid for writing a `T`.
unsafe fn redis_done<T>(result: Result<T, RedisError>, out: *mut T) -> keyroute_status {
    match result {
        Ok(v) => {
            // SAFETY: as the caller promises.
            unsafe { put(out, v) };
            KEYROUTE_OK
        }
        Err(e) => redis_status(&e),
    }
}

fn redis_status(e: &RedisError) -> keyroute_status {
    match e {
        RedisError::Key(_) => KEYROUTE_BAD_KEY,
        RedisError::Pool(_) => KEYROUTE_BAD_COUNT,
        // Connection, timeout, error reply, unexpected reply (and future variants).
        _ => KEYROUTE_REDIS,
    }
}

/// The URL and pool key of an `*_open` call, and a connection already established.
unsafe fn open_parts<'a>(
    url: *const c_char,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
) -> Result<(&'a [u8], Reconnecting), keyroute_status> {
    let url = unsafe { name_str(url) }?;
    let Some(key) = (unsafe { key_slice(pool_key, key_len) }) else {
        return Err(KEYROUTE_NULL_ARGUMENT);
    };
    // Checked before connecting (nothing is sent for a bad key).
    side_key(key).map_err(|_| KEYROUTE_BAD_KEY)?;
    let ms = if timeout_ms == 0 {
        KEYROUTE_DEFAULT_TIMEOUT_MS
    } else {
        timeout_ms
    };
    let timeouts = Timeouts::uniform(Duration::from_millis(u64::from(ms)));
    let mut con = Reconnecting::new(url, timeouts).map_err(|e| redis_status(&e))?;
    con.ensure_connected().map_err(|e| redis_status(&e))?;
    Ok((key, con))
}

/// The shared part of `keyroute_least_used_open()` and `keyroute_leases_open()`: checks
/// the arguments, connects, builds the handle with `make` and writes it to `*out`.
///
/// # Safety
/// `out` is NULL or writable; the other pointers as `open_parts` requires.
unsafe fn open_handle<T>(
    out: *mut *mut T,
    url: *const c_char,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    make: impl FnOnce(&[u8], Reconnecting) -> Result<T, keyroute_status>,
) -> keyroute_status {
    guard(move || {
        if out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        // SAFETY: the caller's contract.
        let handle = match unsafe { open_parts(url, pool_key, key_len, timeout_ms) }
            .and_then(|(key, con)| make(key, con))
        {
            Ok(h) => h,
            Err(e) => return e,
        };
        // SAFETY: non-NULL out-pointer.
        unsafe { *out = Box::into_raw(Box::new(handle)) };
        KEYROUTE_OK
    })
}

/// Boxes `make()` and hands it out through `*out`: the `keyroute_*_new()` calls.
///
/// # Safety
/// `out` is NULL or writable.
unsafe fn new_handle<T>(out: *mut *mut T, make: impl FnOnce() -> T) -> keyroute_status {
    guard(move || {
        if out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        // SAFETY: non-NULL out-pointer.
        unsafe { *out = Box::into_raw(Box::new(make())) };
        KEYROUTE_OK
    })
}

/// Frees a boxed handle (the `keyroute_*_free()` calls); NULL is ignored; a panic in a
/// destructor stops here.
///
/// # Safety
/// `p` is NULL or a handle this library boxed (`new_handle`, `open_handle`, ...), freed
/// once.
unsafe fn free_handle<T>(p: *mut T) {
    if !p.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: the caller's contract.
            drop(unsafe { Box::from_raw(p) });
        }));
    }
}

/// `(members[i], lens[i])` for `i < count`; `None` for a NULL pointer that must not be.
unsafe fn member_list<'a>(
    members: *const *const u8,
    lens: *const usize,
    count: usize,
) -> Option<Vec<&'a [u8]>> {
    if count == 0 {
        return Some(Vec::new());
    }
    if members.is_null() || lens.is_null() {
        return None;
    }
    // SAFETY: `count` entries each (documented contract).
    let (ms, ls) = unsafe {
        (
            std::slice::from_raw_parts(members, count),
            std::slice::from_raw_parts(lens, count),
        )
    };
    ms.iter()
        .zip(ls)
        .map(|(&m, &l)| unsafe { key_slice(m, l) })
        .collect()
}

/// Copies `member` into `(buf, cap)` and writes its length to `*len_out`; when it does
/// not fit, writes the length needed and gives the member back.
unsafe fn deliver(
    member: Vec<u8>,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> Result<(), Vec<u8>> {
    // SAFETY: `len_out` is non-NULL (checked by the callers); `buf` holds `cap` bytes.
    unsafe {
        *len_out = member.len();
        if member.len() > cap {
            return Err(member);
        }
        if !member.is_empty() {
            ptr::copy_nonoverlapping(member.as_ptr(), buf, member.len());
        }
    }
    Ok(())
}

/// Opens a least-used pool handle on the Redis server at `url` (NUL-terminated,
/// `redis://[:password@]host:port[/db]`) for the pool at `(pool_key, key_len)` (bytes;
/// hash-tag it for Redis Cluster, e.g. `{proxies}:pool`), connects now, and writes the
/// handle to `*out`. `timeout_ms` bounds connecting and each read and write
/// (0 = `KEYROUTE_DEFAULT_TIMEOUT_MS`). Free it with `keyroute_least_used_free()`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_UTF8` (url), `KEYROUTE_BAD_KEY`
/// (checked before connecting), `KEYROUTE_REDIS` (bad URL, server unreachable or not
/// answering within the timeout).
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_open(
    url: *const c_char,
    pool_key: *const u8,
    key_len: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_least_used,
) -> keyroute_status {
    // SAFETY: as documented above; `out` is checked by `open_handle`.
    unsafe {
        open_handle(out, url, pool_key, key_len, timeout_ms, |key, con| {
            let pool = LeastUsed::new(key).map_err(|e| redis_status(&e))?;
            Ok(keyroute_least_used {
                pool,
                con,
                pending: None,
            })
        })
    }
}

/// Closes the connection and frees the handle (the pool stays on the server). A member
/// held back by `KEYROUTE_BUFFER_TOO_SMALL` was counted but is dropped. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_free(lu: *mut keyroute_least_used) {
    // SAFETY: NULL or made by keyroute_least_used_open, freed once.
    unsafe { free_handle(lu) };
}

/// Adds `count` members `(members[i], lens[i])` with count `initial` (at most 2^53) in
/// one atomic script call; members already in the pool keep their count unless
/// `overwrite` is non-zero. Writes the number of new members to `*added_out` if not NULL.
/// `members` and `lens` may be NULL only when `count` is 0.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_COUNT` (nothing sent),
/// `KEYROUTE_REDIS`.
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
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let Some(h) = (unsafe { lu.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let Some(ms) = (unsafe { member_list(members, lens, count) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe {
            redis_done(
                h.pool.seed(&mut h.con, ms, initial, overwrite != 0),
                added_out,
            )
        }
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
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS` (after a connection error or a
/// timeout the pick may or may not have been counted).
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_pick(
    lu: *mut keyroute_least_used,
    buf: *mut u8,
    cap: usize,
    len_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let Some(h) = (unsafe { lu.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if len_out.is_null() || (buf.is_null() && cap != 0) {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let member = match h.pending.take() {
            Some(m) => m,
            None => match h.pool.pick(&mut h.con) {
                Ok(Some(m)) => m,
                Ok(None) => return KEYROUTE_EMPTY,
                Err(e) => return redis_status(&e),
            },
        };
        match unsafe { deliver(member, buf, cap, len_out) } {
            Ok(()) => KEYROUTE_OK,
            Err(m) => {
                h.pending = Some(m);
                KEYROUTE_BUFFER_TOO_SMALL
            }
        }
    })
}

/// Takes `member` out of the pool, remembering its count in the side hash (written to
/// `*count_out` if not NULL). Returns `KEYROUTE_UNKNOWN_NODE` (nothing changed) if it is
/// not in the pool. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_remove(
    lu: *mut keyroute_least_used,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let (Some(h), Some(m)) = (unsafe { lu.as_mut() }, unsafe { key_slice(member, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        match h.pool.remove(&mut h.con, m) {
            Ok(Some(c)) => {
                // SAFETY: NULL or a valid out-pointer (documented contract).
                unsafe { put(count_out, c) };
                KEYROUTE_OK
            }
            Ok(None) => KEYROUTE_UNKNOWN_NODE,
            Err(e) => redis_status(&e),
        }
    })
}

/// Puts `member` back with the count chosen by `mode` (a `keyroute_restore` value;
/// others give `KEYROUTE_BAD_OPTION`, nothing sent): `KEYROUTE_RESTORE_KEEP` its
/// remembered count, `KEYROUTE_RESTORE_AT_MINIMUM` the pool's current minimum (never 0
/// in a busy pool, which would herd every pick onto it). A member already in the pool
/// keeps its count. The count afterwards is written to `*count_out` if not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_OPTION`, `KEYROUTE_REDIS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_restore(
    lu: *mut keyroute_least_used,
    member: *const u8,
    len: usize,
    mode: i32,
    count_out: *mut u64,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let (Some(h), Some(m)) = (unsafe { lu.as_mut() }, unsafe { key_slice(member, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let Some(mode) = restore_mode(mode) else {
            return KEYROUTE_BAD_OPTION;
        };
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { redis_done(h.pool.restore(&mut h.con, m, mode), count_out) }
    })
}

/// The count of `member` in the pool (`ZSCORE`-like, from one `ZRANGE`), written to
/// `*count_out`; `KEYROUTE_UNKNOWN_NODE` if it is not in the pool.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_least_used_count(
    lu: *mut keyroute_least_used,
    member: *const u8,
    len: usize,
    count_out: *mut u64,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let (Some(h), Some(m)) = (unsafe { lu.as_mut() }, unsafe { key_slice(member, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if count_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        match h.pool.counts(&mut h.con) {
            Ok(counts) => match counts.into_iter().find(|(x, _)| x == m) {
                Some((_, c)) => {
                    // SAFETY: non-NULL out-pointer.
                    unsafe { *count_out = c };
                    KEYROUTE_OK
                }
                None => KEYROUTE_UNKNOWN_NODE,
            },
            Err(e) => redis_status(&e),
        }
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
    // SAFETY: as documented above; `out` is checked by `open_handle`.
    unsafe {
        open_handle(out, url, pool_key, key_len, timeout_ms, |key, con| {
            let leases = Leases::new(key).map_err(|e| redis_status(&e))?;
            Ok(keyroute_leases {
                leases,
                con,
                pending: None,
            })
        })
    }
}

/// Closes the connection and frees the handle. A lease held back by
/// `KEYROUTE_BUFFER_TOO_SMALL` stays in flight until reclaimed. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_free(leases: *mut keyroute_leases) {
    // SAFETY: NULL or made by keyroute_leases_open, freed once.
    unsafe { free_handle(leases) };
}

/// Adds `count` members with no lease in flight; members already there keep their
/// counts. Writes the number of new members to `*added_out` if not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_seed(
    leases: *mut keyroute_leases,
    members: *const *const u8,
    lens: *const usize,
    count: usize,
    added_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let Some(h) = (unsafe { leases.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let Some(ms) = (unsafe { member_list(members, lens, count) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { redis_done(h.leases.seed(&mut h.con, ms), added_out) }
    })
}

/// Takes `member` out of the lease pool (no new lease goes to it; its leases in flight
/// stay valid). Returns `KEYROUTE_UNKNOWN_NODE` if it was not there.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_remove(
    leases: *mut keyroute_leases,
    member: *const u8,
    len: usize,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let (Some(h), Some(m)) = (unsafe { leases.as_mut() }, unsafe {
            key_slice(member, len)
        }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        match h.leases.remove(&mut h.con, m) {
            Ok(true) => KEYROUTE_OK,
            Ok(false) => KEYROUTE_UNKNOWN_NODE,
            Err(e) => redis_status(&e),
        }
    })
}

/// Acquires a lease of `ttl_ms` milliseconds (at least 1) on the member with the fewest
/// leases in flight (ties: byte-wise smallest), in one atomic script call. Copies the
/// member into `buf` (`cap` bytes, not NUL-terminated), its length to `*len_out`, the
/// lease id to `*lease_id_out` and its deadline (ms since the Unix epoch, server clock)
/// to `*deadline_ms_out` (these two may be NULL).
///
/// Returns `KEYROUTE_EMPTY` when the pool is empty or missing: make no request then.
/// Returns `KEYROUTE_BUFFER_TOO_SMALL` (the length needed in `*len_out`) when the member
/// does not fit: the lease, already in flight, is held by the handle and the next
/// `keyroute_leases_acquire()` returns it (without acquiring another; its deadline is
/// unchanged, `ttl_ms` of that call is ignored). `buf` may be NULL when `cap` is 0.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS`.
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
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let Some(h) = (unsafe { leases.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if len_out.is_null() || (buf.is_null() && cap != 0) {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let mut lease = match h.pending.take() {
            Some(l) => l,
            None => match h.leases.acquire(&mut h.con, Duration::from_millis(ttl_ms)) {
                Ok(Some(l)) => l,
                Ok(None) => return KEYROUTE_EMPTY,
                Err(e) => return redis_status(&e),
            },
        };
        let member = std::mem::take(&mut lease.member);
        match unsafe { deliver(member, buf, cap, len_out) } {
            Ok(()) => {
                // SAFETY: each out-pointer is checked for NULL.
                unsafe {
                    put(lease_id_out, lease.id);
                    put(deadline_ms_out, lease.deadline_ms);
                }
                KEYROUTE_OK
            }
            Err(m) => {
                lease.member = m;
                h.pending = Some(lease);
                KEYROUTE_BUFFER_TOO_SMALL
            }
        }
    })
}

/// Ends lease `lease_id`, at most once; what happened is written to `*result_out` if not
/// NULL (`KEYROUTE_RELEASE_NOT_IN_FLIGHT` is not an error).
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_release(
    leases: *mut keyroute_leases,
    lease_id: u64,
    result_out: *mut keyroute_release,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let Some(h) = (unsafe { leases.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        // The release script needs the id only.
        let lease = Lease {
            member: Vec::new(),
            id: lease_id,
            deadline_ms: 0,
        };
        let r = match h.leases.release(&mut h.con, &lease) {
            Ok(Release::Released) => keyroute_release::KEYROUTE_RELEASE_RELEASED,
            Ok(Release::Expired) => keyroute_release::KEYROUTE_RELEASE_EXPIRED,
            Ok(_) => keyroute_release::KEYROUTE_RELEASE_NOT_IN_FLIGHT,
            Err(e) => return redis_status(&e),
        };
        // SAFETY: NULL or a valid out-pointer (documented contract).
        unsafe { put(result_out, r) };
        KEYROUTE_OK
    })
}

/// Ends every lease past its deadline (server clock) and writes how many were ended to
/// `*count_out` if not NULL. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_REDIS` (leases
/// ended by earlier batches of this call are then not counted).
#[no_mangle]
pub unsafe extern "C" fn keyroute_leases_reclaim(
    leases: *mut keyroute_leases,
    count_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live handle with exclusive access.
        let Some(h) = (unsafe { leases.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        match h.leases.reclaim(&mut h.con, Now::Server) {
            Ok(v) => {
                // SAFETY: NULL or a valid out-pointer (documented contract).
                unsafe { put(count_out, v.len()) };
                KEYROUTE_OK
            }
            Err(e) => redis_status(&e),
        }
    })
}

// ---------------------------------------------------------------------------------------
// Slot maps (Redis Cluster routing tables) and redirections

/// A Redis Cluster slot map (opaque): 16384 slots -> master, and the known nodes (id,
/// address, role). Nodes are numbered 0..len in the order they are added.
///
/// Thread safety: as `keyroute_ring`: concurrent reads (`_owner*`, `_node`, `_len`,
/// `_slot_count`, `_is_complete`) are safe; modifying calls (`_add_*`, `_assign`,
/// `_unassign`, `_apply_redirect`) and `_free` need exclusive access.
#[derive(Debug)]
pub struct keyroute_slot_map {
    map: SlotMap,
    /// NUL-terminated (id, host) of every node, in index order.
    names: Vec<(CString, CString)>,
}

impl keyroute_slot_map {
    fn sync_names(&mut self) {
        let c = |s: &str| CString::new(s).unwrap_or_default();
        self.names = self
            .map
            .nodes()
            .iter()
            .map(|n| (c(n.id()), c(&n.addr().host)))
            .collect();
    }

    fn index(&self, i: usize) -> Option<NodeIndex> {
        // Core has no public NodeIndex constructor; indexes are dense, so take the i-th.
        self.map.iter().nth(i).map(|(ix, _)| ix)
    }
}

fn map_status(e: &MapError) -> keyroute_status {
    match e {
        MapError::BadRange { .. } => KEYROUTE_BAD_RANGE,
        MapError::UnknownNode(_) => KEYROUTE_UNKNOWN_NODE,
        MapError::NotAMaster(_) => KEYROUTE_NOT_A_MASTER,
        MapError::DuplicateId(_) => KEYROUTE_DUPLICATE_NODE,
        MapError::TooManyNodes => KEYROUTE_OUT_OF_RANGE,
        _ => KEYROUTE_PANIC,
    }
}

fn redirect_status(e: &RedirectError) -> keyroute_status {
    match e {
        RedirectError::NotARedirect => KEYROUTE_NOT_A_REDIRECT,
        RedirectError::NotUtf8 => KEYROUTE_INVALID_UTF8,
        _ => KEYROUTE_BAD_REDIRECT,
    }
}

/// What a `MOVED` or `ASK` error says, and (after `keyroute_slot_map_apply_redirect`)
/// what to do about it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct keyroute_redirect {
    /// 1 for `MOVED` (the map changed for that slot; send the command to `node` and
    /// refresh the whole map soon), 0 for `ASK` (send `ASKING` then the command to
    /// `host:port`, once; the map is unchanged).
    pub moved: i32,
    /// The slot, 0..=16383.
    pub slot: u16,
    /// Target port.
    pub port: u16,
    /// Target host (not NUL-terminated; `host_len` bytes, IPv6 without brackets). It
    /// points into the message given, or into `current_host` when the message's host is
    /// empty: it lives as long as those buffers.
    pub host: *const c_char,
    /// Length of `host` in bytes.
    pub host_len: usize,
    /// The target's node index in the map, or `SIZE_MAX` when the map does not know it
    /// (always `SIZE_MAX` from `keyroute_redirect_parse`).
    pub node: usize,
    /// 1 when `MOVED` added a new master (unknown id) for an address the map did not
    /// know, else 0.
    pub added: i32,
}

unsafe fn redirect_of<'a>(
    message: *const u8,
    len: usize,
    current_host: *const c_char,
) -> Result<(Redirect<'a>, &'a str), keyroute_status> {
    let Some(msg) = (unsafe { key_slice(message, len) }) else {
        return Err(KEYROUTE_NULL_ARGUMENT);
    };
    let current = if current_host.is_null() {
        ""
    } else {
        unsafe { name_str(current_host) }?
    };
    let r = Redirect::parse_bytes(msg).map_err(|e| redirect_status(&e))?;
    Ok((r, current))
}

fn fill_redirect(
    r: &Redirect<'_>,
    current: &str,
    node: Option<usize>,
    added: bool,
) -> keyroute_redirect {
    let host = r.host_or(current);
    keyroute_redirect {
        moved: i32::from(r.kind == RedirectKind::Moved),
        slot: r.slot,
        port: r.port,
        host: host.as_ptr().cast(),
        host_len: host.len(),
        node: node.unwrap_or(usize::MAX),
        added: i32::from(added),
    }
}

/// Parses a redirection error (`MOVED 3999 127.0.0.1:6381`, `-ASK 1 [::1]:7000\r\n`,
/// empty host allowed) without a map. `current_host` (NUL-terminated, may be NULL = "")
/// replaces an empty host. Errors: `KEYROUTE_NOT_A_REDIRECT` for any other error text,
/// `KEYROUTE_BAD_REDIRECT`, `KEYROUTE_INVALID_UTF8`, `KEYROUTE_NULL_ARGUMENT`.
/// Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn keyroute_redirect_parse(
    message: *const u8,
    len: usize,
    current_host: *const c_char,
    out: *mut keyroute_redirect,
) -> keyroute_status {
    guard(move || {
        if out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        match unsafe { redirect_of(message, len, current_host) } {
            Ok((r, current)) => {
                // SAFETY: non-NULL out-pointer.
                unsafe { *out = fill_redirect(&r, current, None, false) };
                KEYROUTE_OK
            }
            Err(e) => e,
        }
    })
}

/// Makes an empty slot map (no nodes, every slot unowned) and writes it to `*out`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_new(
    out: *mut *mut keyroute_slot_map,
) -> keyroute_status {
    // SAFETY: NULL or a writable out-pointer (documented contract).
    unsafe {
        new_handle(out, || keyroute_slot_map {
            map: SlotMap::new(),
            names: Vec::new(),
        })
    }
}

/// Frees a slot map. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_free(map: *mut keyroute_slot_map) {
    // SAFETY: NULL or made by keyroute_slot_map_new, freed once (documented contract).
    unsafe { free_handle(map) };
}

unsafe fn add_node(
    map: *mut keyroute_slot_map,
    master: Option<usize>,
    id: *const c_char,
    host: *const c_char,
    port: u16,
    index_out: *mut usize,
) -> keyroute_status {
    // SAFETY: NULL or a live map with exclusive access.
    let Some(m) = (unsafe { map.as_mut() }) else {
        return KEYROUTE_NULL_ARGUMENT;
    };
    let (id, host) = match (unsafe { name_str(id) }, unsafe { name_str(host) }) {
        (Ok(i), Ok(h)) => (i, h),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let addr = Address::new(host, port);
    let res = match master {
        None => m.map.add_master(id, addr),
        Some(i) => match m.index(i) {
            Some(ix) => m.map.add_replica(ix, id, addr),
            None => return KEYROUTE_UNKNOWN_NODE,
        },
    };
    m.sync_names();
    match res {
        Ok(ix) => {
            // SAFETY: NULL or a valid out-pointer (documented contract).
            unsafe { put(index_out, ix.get()) };
            KEYROUTE_OK
        }
        Err(e) => map_status(&e),
    }
}

/// Adds a master with cluster node id `id` (`""` if unknown; non-empty ids are unique)
/// at `host:port`, owning no slots yet; its index is written to `*index_out` if not NULL.
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_UTF8`, `KEYROUTE_DUPLICATE_NODE`,
/// `KEYROUTE_OUT_OF_RANGE` (more than 65535 nodes).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_add_master(
    map: *mut keyroute_slot_map,
    id: *const c_char,
    host: *const c_char,
    port: u16,
    index_out: *mut usize,
) -> keyroute_status {
    guard(move || unsafe { add_node(map, None, id, host, port, index_out) })
}

/// Adds a replica of master `master` (an index). Errors as
/// `keyroute_slot_map_add_master()`, plus `KEYROUTE_UNKNOWN_NODE` and
/// `KEYROUTE_NOT_A_MASTER`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_add_replica(
    map: *mut keyroute_slot_map,
    master: usize,
    id: *const c_char,
    host: *const c_char,
    port: u16,
    index_out: *mut usize,
) -> keyroute_status {
    guard(move || unsafe { add_node(map, Some(master), id, host, port, index_out) })
}

/// Gives slots `first..=last` to master `node`. Errors: `KEYROUTE_BAD_RANGE`,
/// `KEYROUTE_UNKNOWN_NODE`, `KEYROUTE_NOT_A_MASTER` (nothing changes).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_assign(
    map: *mut keyroute_slot_map,
    first: u16,
    last: u16,
    node: usize,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live map with exclusive access.
        let Some(m) = (unsafe { map.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let Some(ix) = m.index(node) else {
            return KEYROUTE_UNKNOWN_NODE;
        };
        match m.map.assign(first..=last, ix) {
            Ok(()) => KEYROUTE_OK,
            Err(e) => map_status(&e),
        }
    })
}

/// Makes slots `first..=last` unowned. Errors: `KEYROUTE_BAD_RANGE`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_unassign(
    map: *mut keyroute_slot_map,
    first: u16,
    last: u16,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live map with exclusive access.
        let Some(m) = (unsafe { map.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        match m.map.unassign(first..=last) {
            Ok(()) => KEYROUTE_OK,
            Err(e) => map_status(&e),
        }
    })
}

/// The index of the master owning `slot`, written to `*index_out`. Returns
/// `KEYROUTE_EMPTY` when the slot is unowned, `KEYROUTE_BAD_RANGE` for `slot >= 16384`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_owner(
    map: *const keyroute_slot_map,
    slot: u16,
    index_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live map.
        let Some(m) = (unsafe { map.as_ref() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if index_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        if slot >= KEYROUTE_SLOT_COUNT {
            return KEYROUTE_BAD_RANGE;
        }
        match m.map.owner(slot) {
            Some(ix) => {
                // SAFETY: non-NULL out-pointer.
                unsafe { *index_out = ix.get() };
                KEYROUTE_OK
            }
            None => KEYROUTE_EMPTY,
        }
    })
}

/// The index of the master owning `key`'s slot, written to `*index_out`; the slot to
/// `*slot_out` if not NULL. Returns `KEYROUTE_EMPTY` when that slot is unowned.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_owner_of_key(
    map: *const keyroute_slot_map,
    key: *const u8,
    len: usize,
    index_out: *mut usize,
    slot_out: *mut u16,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live map.
        let (Some(m), Some(k)) = (unsafe { map.as_ref() }, unsafe { key_slice(key, len) }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if index_out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let slot = slot::key_slot(k);
        match m.map.owner(slot) {
            Some(ix) => {
                // SAFETY: non-NULL out-pointers.
                unsafe {
                    *index_out = ix.get();
                    put(slot_out, slot);
                }
                KEYROUTE_OK
            }
            None => KEYROUTE_EMPTY,
        }
    })
}

/// Node `index`: its NUL-terminated id (`""` if unknown) and host, port, whether it is a
/// master (1) or replica (0), and its master's index (`SIZE_MAX` for a master). Every
/// out-pointer may be NULL. Strings stay valid until the map is next modified or freed.
/// Returns `KEYROUTE_OUT_OF_RANGE` for an index >= len.
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_node(
    map: *const keyroute_slot_map,
    index: usize,
    id_out: *mut *const c_char,
    host_out: *mut *const c_char,
    port_out: *mut u16,
    is_master_out: *mut i32,
    master_out: *mut usize,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live map.
        let Some(m) = (unsafe { map.as_ref() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        let (Some(node), Some((id, host))) = (m.map.nodes().get(index), m.names.get(index)) else {
            return KEYROUTE_OUT_OF_RANGE;
        };
        // SAFETY: each out-pointer is checked for NULL.
        unsafe {
            put(id_out, id.as_ptr());
            put(host_out, host.as_ptr());
            put(port_out, node.addr().port);
            put(is_master_out, i32::from(node.role() == Role::Master));
            put(master_out, node.master().map_or(usize::MAX, |x| x.get()));
        }
        KEYROUTE_OK
    })
}

/// The number of nodes (masters and replicas; 0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_len(map: *const keyroute_slot_map) -> usize {
    // SAFETY: NULL or a live map.
    guard_or(0, move || {
        unsafe { map.as_ref() }.map_or(0, |m| m.map.nodes().len())
    })
}

/// The number of slots master `node` owns (0 for NULL or an unknown index).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_slot_count(
    map: *const keyroute_slot_map,
    node: usize,
) -> usize {
    guard_or(0, move || {
        // SAFETY: NULL or a live map.
        let Some(m) = (unsafe { map.as_ref() }) else {
            return 0;
        };
        m.index(node).map_or(0, |ix| m.map.slot_count(ix))
    })
}

/// 1 when every slot has an owner, else 0 (0 for NULL).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_is_complete(map: *const keyroute_slot_map) -> i32 {
    // SAFETY: NULL or a live map.
    guard_or(0, move || {
        i32::from(unsafe { map.as_ref() }.is_some_and(|m| m.map.is_complete()))
    })
}

/// Follows a redirection error `message` (bytes, as in `keyroute_redirect_parse()`)
/// received from `current_host` (NUL-terminated; fills an empty host; may be NULL = "").
/// `MOVED` gives that one slot to the node at the target address (adding a master with an
/// empty id if the address is new; promoting it if it was a replica); `ASK` never changes
/// the map. The result, with the node index, is written to `*out`.
/// Errors as `keyroute_redirect_parse()`, plus `KEYROUTE_OUT_OF_RANGE` (too many nodes).
#[no_mangle]
pub unsafe extern "C" fn keyroute_slot_map_apply_redirect(
    map: *mut keyroute_slot_map,
    message: *const u8,
    len: usize,
    current_host: *const c_char,
    out: *mut keyroute_redirect,
) -> keyroute_status {
    guard(move || {
        // SAFETY: NULL or a live map with exclusive access.
        let Some(m) = (unsafe { map.as_mut() }) else {
            return KEYROUTE_NULL_ARGUMENT;
        };
        if out.is_null() {
            return KEYROUTE_NULL_ARGUMENT;
        }
        let (r, current) = match unsafe { redirect_of(message, len, current_host) } {
            Ok(x) => x,
            Err(e) => return e,
        };
        let res = m.map.apply_redirect(&r, current);
        m.sync_names();
        match res {
            Ok(slot::RedirectAction::Moved { node, added }) => {
                // SAFETY: non-NULL out-pointer.
                unsafe { *out = fill_redirect(&r, current, Some(node.get()), added) };
                KEYROUTE_OK
            }
            Ok(slot::RedirectAction::Ask { node, .. }) => {
                // SAFETY: non-NULL out-pointer.
                unsafe { *out = fill_redirect(&r, current, node.map(|n| n.get()), false) };
                KEYROUTE_OK
            }
            Ok(_) => KEYROUTE_PANIC,
            Err(e) => map_status(&e),
        }
    })
}
