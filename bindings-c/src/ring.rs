//! Rings (`keyroute::ring`): build, change, look up, the node-list grammar, and what a
//! change moves (`diff`).

use std::ffi::{c_char, CStr, CString};
use std::ptr;
use std::sync::OnceLock;

use keyroute_core::ring::{
    checked_weight, diff, parse_nodes, Diff, Profile, ProfileName, ProfileOptions, Ring, NO_NODE,
};

use crate::ffi::{
    array_mut, bytes, free, get, get_mut, guard, guard_or, hand_out, out_of_range, put, required,
    tag, text, too_small, ByteList, Fail, Handle, Packed, Res,
};
use crate::status::keyroute_status;

/// Options for `keyroute_ring_new()` and `keyroute_ring_from_spec()`. A zero-initialised
/// struct (`{0}`) means "the profile's defaults" for every field. Values are passed on as
/// given and checked by the core (so 2^32 + 160 vnodes is refused, never wrapped).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct keyroute_ring_options {
    /// Virtual nodes: points per unit of weight for `native` (default 160), digests per
    /// server at equal weights for the ketama family (default 40). 0 = default;
    /// otherwise 1..=65536 (else `KEYROUTE_BAD_VNODES`).
    pub vnodes: i64,
    /// Points per MD5 digest, 1..=4 (ketama family only; 3 = npm hashring's
    /// `compatibility: 'hash_ring'`). 0 = default. Else `KEYROUTE_BAD_POINTS_PER_DIGEST`,
    /// or `KEYROUTE_BAD_OPTION` on `native`.
    pub points_per_digest: i64,
    /// The port whose `:port` suffix is left out of the hashed server string (npm
    /// hashring's `default port`; libmemcached and twemproxy use 11211). 0 = the
    /// profile's default, -1 = none, 1..=65535 = that port (else `KEYROUTE_BAD_PORT`;
    /// `KEYROUTE_BAD_OPTION` on `native`).
    pub default_port: i64,
}

/// A consistent-hash ring (opaque).
///
/// Thread safety: a ring may be read (`keyroute_ring_get*`, `_len`, `_node`,
/// `_point_count`, `_profile`, `keyroute_ring_diff`) from any number of threads at once;
/// modifying calls (`_add`, `_remove`, `_set_weight`) and `_free` need exclusive access
/// (no concurrent call of any kind on the same ring). A ring may be moved between threads.
#[derive(Debug)]
pub struct keyroute_ring {
    _opaque: [u8; 0],
}

/// What a `keyroute_ring` holds.
#[derive(Debug)]
pub(crate) struct RingState {
    ring: Ring,
    /// `names[i]` is `ring.nodes()[i]` NUL-terminated, so lookups hand out C strings
    /// without copying.
    names: Vec<CString>,
}

impl Handle for keyroute_ring {
    type State = RingState;
    const TAG: u64 = tag(b"kr-ring");
    const NAME: &'static str = "keyroute_ring";
}

impl RingState {
    fn new(ring: Ring) -> Self {
        let mut s = RingState {
            ring,
            names: Vec::new(),
        };
        s.sync_names();
        s
    }

    fn sync_names(&mut self) {
        self.names = self
            .ring
            .nodes()
            .iter()
            // Names come from C strings or the node-list grammar: they hold no NUL.
            .map(|n| CString::new(n.name()).unwrap_or_default())
            .collect();
    }
}

/// The profile named `profile` with `options` (NULL = defaults).
///
/// # Safety
/// `profile` NULL or NUL-terminated; `options` NULL or valid.
unsafe fn profile_of(
    profile: *const c_char,
    options: *const keyroute_ring_options,
) -> Res<Profile> {
    // SAFETY: as the caller promises.
    let name = unsafe { text(profile, "profile") }?;
    // SAFETY: NULL or a valid options struct.
    let o = unsafe { options.as_ref() }.copied().unwrap_or_default();
    let given = |v: i64| (v != 0).then_some(i128::from(v));
    let options = ProfileOptions {
        vnodes: given(o.vnodes),
        points_per_digest: given(o.points_per_digest),
        default_port: match o.default_port {
            -1 => Some(0),
            port => given(port),
        },
    };
    Ok(Profile::from_options(name, &options)?)
}

/// Builds an empty ring of profile `profile` (`"native"`, `"libketama"`,
/// `"libmemcached"`, `"uhashring"`, `"node-hashring"`, `"hash_ring"`, and `"twemproxy"`,
/// the old name of `"libmemcached"`; case-insensitive, `-` and `_` interchangeable) with `options` (NULL = defaults), and
/// writes it to `*out`. Free it with `keyroute_ring_free()`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_UTF8`, `KEYROUTE_UNKNOWN_PROFILE`,
/// `KEYROUTE_BAD_VNODES`, `KEYROUTE_BAD_POINTS_PER_DIGEST`, `KEYROUTE_BAD_PORT`,
/// `KEYROUTE_BAD_OPTION`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_new(
    profile: *const c_char,
    options: *const keyroute_ring_options,
    out: *mut *mut keyroute_ring,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        // SAFETY: as documented.
        let p = unsafe { profile_of(profile, options) }?;
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, RingState::new(Ring::new(p))) };
        Ok(())
    })
}

/// Builds a ring of profile `profile` (as `keyroute_ring_new()`) from a node list
/// `spec` (NUL-terminated UTF-8) in keyroute's one node-list grammar, the one of the
/// command line's `--nodes` and every binding's `from_spec`: entries separated by commas
/// or line breaks, `#` comments; `host:port` (kept whole, weight 1), `NAME=WEIGHT`,
/// `NAME WEIGHT` (libketama's `ketama.servers`), twemproxy's `host:port:weight [alias]`
/// (the alias is the node's name). `X:N` where `X` does not look like a host is refused
/// (`KEYROUTE_AMBIGUOUS_NODE_SPEC`; the message shows both readings).
///
/// Errors: as `keyroute_ring_new()`, plus `KEYROUTE_BAD_NODE_SPEC`,
/// `KEYROUTE_AMBIGUOUS_NODE_SPEC`, the weight errors (`KEYROUTE_ZERO_WEIGHT`, ...),
/// `KEYROUTE_DUPLICATE_NODE`, `KEYROUTE_TOO_MANY_POINTS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_from_spec(
    profile: *const c_char,
    options: *const keyroute_ring_options,
    spec: *const c_char,
    out: *mut *mut keyroute_ring,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        // SAFETY: as documented.
        let p = unsafe { profile_of(profile, options) }?;
        // SAFETY: as documented.
        let nodes = parse_nodes(unsafe { text(spec, "spec") }?)?;
        let ring = Ring::with_nodes(p, nodes.iter().map(|n| (n.name.as_str(), n.weight)))?;
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, RingState::new(ring)) };
        Ok(())
    })
}

/// Frees a ring. NULL is ignored (`KEYROUTE_OK`); `KEYROUTE_INVALID_HANDLE` (nothing freed)
/// for a handle of another kind or one already freed, where detectable. Every name
/// pointer obtained from the ring becomes invalid.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_free(ring: *mut keyroute_ring) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(ring, "ring") }
}

/// Adds node `name` (NUL-terminated UTF-8) with `weight` (1..=UINT32_MAX). In the ketama
/// profiles every node's share is recomputed from the new total weight, as the peers do.
/// Nodes are kept in the order added (the order decides ties in the ketama family).
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_UTF8`,
/// `KEYROUTE_EMPTY_NODE_NAME`, `KEYROUTE_ZERO_WEIGHT`, `KEYROUTE_NEGATIVE_WEIGHT`,
/// `KEYROUTE_WEIGHT_TOO_LARGE`, `KEYROUTE_DUPLICATE_NODE`, `KEYROUTE_TOO_MANY_POINTS`;
/// the ring is unchanged on error (and names handed out stay valid).
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_add(
    ring: *mut keyroute_ring,
    name: *const c_char,
    weight: i64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a ring used exclusively; a NUL-terminated name (documented).
        let (r, name) = unsafe { (get_mut(ring, "ring")?, text(name, "name")?) };
        r.ring.add(name, checked_weight(name, weight.into())?)?;
        r.sync_names();
        Ok(())
    })
}

/// Removes node `name`. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`,
/// `KEYROUTE_BAD_UTF8`, `KEYROUTE_UNKNOWN_NODE`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_remove(
    ring: *mut keyroute_ring,
    name: *const c_char,
) -> keyroute_status {
    guard(|| {
        // SAFETY: as keyroute_ring_add.
        let (r, name) = unsafe { (get_mut(ring, "ring")?, text(name, "name")?) };
        r.ring.remove(name)?;
        r.sync_names();
        Ok(())
    })
}

/// Changes the weight of node `name`. Errors: `KEYROUTE_NULL_ARGUMENT`,
/// `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_UTF8`, the weight errors of
/// `keyroute_ring_add()`, `KEYROUTE_UNKNOWN_NODE`, `KEYROUTE_TOO_MANY_POINTS`; the ring is
/// unchanged on error.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_set_weight(
    ring: *mut keyroute_ring,
    name: *const c_char,
    weight: i64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: as keyroute_ring_add.
        let (r, name) = unsafe { (get_mut(ring, "ring")?, text(name, "name")?) };
        r.ring
            .set_weight(name, checked_weight(name, weight.into())?)?;
        Ok(())
    })
}

/// `KEYROUTE_EMPTY` for lookups on a ring without nodes.
#[inline(always)]
fn owner(r: &RingState, key: &[u8]) -> Res<usize> {
    r.ring.get_index(key).ok_or(Fail::EMPTY)
}

/// The node owning `key`: writes a pointer to its NUL-terminated name to `*node_out`
/// and, if `node_len_out` is not NULL, the name's length (without the NUL) to
/// `*node_len_out`. The name is not copied: it stays valid until the ring is next
/// modified (`_add`, `_remove`, `_set_weight`) or freed.
///
/// Returns `KEYROUTE_EMPTY` on a ring without nodes (nothing written; make no request).
/// Errors: `KEYROUTE_NULL_ARGUMENT` (`ring` or `node_out` NULL, or `key` NULL with a
/// non-zero `len`), `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE` (`len` above
/// PTRDIFF_MAX).
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_get(
    ring: *const keyroute_ring,
    key: *const u8,
    len: usize,
    node_out: *mut *const c_char,
    node_len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live ring; `len` readable bytes at `key` (documented).
        let (r, k) = unsafe { (get(ring, "ring")?, bytes(key, len, "key")?) };
        let node_out = required(node_out, "node_out")?;
        let name = &r.names[owner(r, k)?];
        // SAFETY: non-NULL (or optional) out-pointers.
        unsafe {
            node_out.write(name.as_ptr());
            put(node_len_out, name.as_bytes().len());
        }
        Ok(())
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
    guard(|| {
        // SAFETY: as keyroute_ring_get.
        let (r, k) = unsafe { (get(ring, "ring")?, bytes(key, len, "key")?) };
        let index_out = required(index_out, "index_out")?;
        let i = owner(r, k)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { index_out.write(i) };
        Ok(())
    })
}

/// Batch lookup without allocation: `indexes_out[i]` = index of the node owning
/// `(keys[i], lens[i])`, or `SIZE_MAX` when the ring is empty. `keys`, `lens` and
/// `indexes_out` may be NULL only when `count` is 0; `keys[i]` may be NULL only when
/// `lens[i]` is 0 (else `KEYROUTE_NULL_ARGUMENT`, nothing written). `count` above
/// `KEYROUTE_MAX_BATCH` is `KEYROUTE_TOO_LARGE`. Resolve indexes with
/// `keyroute_ring_node()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_get_many(
    ring: *const keyroute_ring,
    keys: *const *const u8,
    lens: *const usize,
    count: usize,
    indexes_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live ring; arrays of `count` entries (documented).
        let (r, keys, out) = unsafe {
            (
                get(ring, "ring")?,
                ByteList::new(keys, lens, count, "keys")?,
                array_mut(indexes_out, count, "indexes_out")?,
            )
        };
        // Through core's batch lookup (MD5 profiles hash many keys at once), 256 keys at
        // a time into a stack buffer.
        let mut idx = [NO_NODE; 256];
        let mut keys = keys.iter();
        for out in out.chunks_mut(idx.len()) {
            let n = r
                .ring
                .get_many_to_slice(keys.by_ref().take(out.len()), &mut idx[..out.len()]);
            for (o, &i) in out.iter_mut().zip(&idx[..n]) {
                *o = if i == NO_NODE { usize::MAX } else { i as usize };
            }
        }
        Ok(())
    })
}

/// The value `keyroute_ring_get_many_packed()` and `keyroute_router_get_many_packed()`
/// write for a key when there is no node (an empty ring or router).
pub const KEYROUTE_NO_NODE: u32 = u32::MAX;

/// Batch lookup over keys stored back to back in `data` (`data_len` bytes, at most
/// 2^30): key `i` is `data[ends[i - 1]..ends[i]]` (key 0 starts at 0), and
/// `indexes_out[i]` gets the index of its node, or `KEYROUTE_NO_NODE` when the ring is
/// empty. One contiguous buffer and 4-byte indexes: what a binding that copies its keys
/// once hands over (Java's `Ring.getManyIndexes`). `KEYROUTE_OUT_OF_RANGE` when an end
/// goes down or past `data_len`; otherwise as `keyroute_ring_get_many()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_get_many_packed(
    ring: *const keyroute_ring,
    data: *const u8,
    data_len: usize,
    ends: *const u32,
    count: usize,
    indexes_out: *mut u32,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live ring; `data_len` bytes and `count` entries (documented).
        let (r, keys, out) = unsafe {
            (
                get(ring, "ring")?,
                Packed::new(data, data_len, ends, count, "keys")?,
                array_mut(indexes_out, count, "indexes_out")?,
            )
        };
        // Core's batch lookup writes the 4-byte indexes (and NO_NODE) as they are.
        r.ring.get_many_to_slice(keys.iter(), out);
        Ok(())
    })
}

/// Up to `n` distinct nodes for `key`, walking clockwise from its point: the owner
/// first, then the replicas. Writes `*count_out` names to `nodes_out[0..]` (capacity
/// `n`) and, if `lens_out` is not NULL, their lengths to `lens_out[0..]`. Fewer than `n`
/// when the ring has fewer nodes (so `n` may be `SIZE_MAX` with arrays as long as the
/// ring). Names live as in `keyroute_ring_get()`.
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
    guard(|| {
        // SAFETY: as keyroute_ring_get.
        let (r, k) = unsafe { (get(ring, "ring")?, bytes(key, len, "key")?) };
        let count_out = required(count_out, "count_out")?;
        if n > 0 {
            required(nodes_out, "nodes_out")?;
        }
        if r.ring.is_empty() {
            // SAFETY: non-NULL out-pointer.
            unsafe { count_out.write(0) };
            return Err(Fail::EMPTY);
        }
        // At most one entry per node: never more than the ring holds, whatever `n` is.
        let mut idx = Vec::new();
        r.ring.get_n_into(k, n, &mut idx);
        for (j, &i) in idx.iter().enumerate() {
            let name = &r.names[i];
            // SAFETY: capacity `n` >= idx.len() (documented contract).
            unsafe {
                nodes_out.add(j).write(name.as_ptr());
                if !lens_out.is_null() {
                    lens_out.add(j).write(name.as_bytes().len());
                }
            }
        }
        // SAFETY: non-NULL out-pointer.
        unsafe { count_out.write(idx.len()) };
        Ok(())
    })
}

/// The number of nodes on the ring (0 for NULL or an invalid handle, whose message is
/// recorded).
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_len(ring: *const keyroute_ring) -> usize {
    // SAFETY: NULL or a live ring.
    guard_or(0, || Ok(unsafe { get(ring, "ring") }?.ring.len()))
}

/// The number of points on the ring's circle (0 for NULL or an invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_point_count(ring: *const keyroute_ring) -> usize {
    // SAFETY: NULL or a live ring.
    guard_or(0, || Ok(unsafe { get(ring, "ring") }?.ring.point_count()))
}

/// The canonical name of a profile, NUL-terminated: core's `ProfileName::as_str`, made
/// once per process (the C binding keeps no list of names of its own).
fn profile_name(name: ProfileName) -> &'static CStr {
    static NAMES: OnceLock<Vec<CString>> = OnceLock::new();
    let names = NAMES.get_or_init(|| {
        ProfileName::ALL
            .iter()
            .map(|p| CString::new(p.as_str()).unwrap_or_default())
            .collect()
    });
    let i = ProfileName::ALL.iter().position(|&p| p == name);
    names.get(i.unwrap_or(0)).map_or(c"", |n| n.as_c_str())
}

/// The canonical name of the ring's profile (static storage), or NULL for NULL or an
/// invalid handle.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_profile(ring: *const keyroute_ring) -> *const c_char {
    guard_or(ptr::null(), || {
        // SAFETY: NULL or a live ring.
        let r = unsafe { get(ring, "ring") }?;
        Ok(profile_name(r.ring.profile().name()).as_ptr())
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
    guard(|| {
        // SAFETY: NULL or a live ring.
        let r = unsafe { get(ring, "ring") }?;
        let name_out = required(name_out, "name_out")?;
        let (Some(node), Some(name)) = (r.ring.nodes().get(index), r.names.get(index)) else {
            return Err(out_of_range("node index", index, r.ring.len()));
        };
        // SAFETY: non-NULL (or optional) out-pointers.
        unsafe {
            name_out.write(name.as_ptr());
            put(name_len_out, name.as_bytes().len());
            put(weight_out, node.weight());
        }
        Ok(())
    })
}

/// The exact fraction of the circle (and so of uniformly hashed keys) each node owns:
/// `shares_out[i]` for node `i` (the order of `keyroute_ring_node()`), summing to 1. Writes
/// the number of nodes to `*count_out`; `KEYROUTE_BUFFER_TOO_SMALL` (nothing else written)
/// when `cap` is below it. `shares_out` may be NULL when `cap` is 0.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_shares(
    ring: *const keyroute_ring,
    shares_out: *mut f64,
    cap: usize,
    count_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live ring.
        let r = unsafe { get(ring, "ring") }?;
        let count_out = required(count_out, "count_out")?;
        let n = r.ring.len();
        // SAFETY: non-NULL out-pointer.
        unsafe { count_out.write(n) };
        if cap < n {
            return Err(too_small());
        }
        // SAFETY: `cap` writable entries (documented contract).
        let out = unsafe { array_mut(shares_out, n, "shares_out") }?;
        out.copy_from_slice(&r.ring.shares());
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// What a ring change moves

/// What changes between two rings (opaque), from `keyroute_ring_diff()`: the fraction of
/// the key space that changes owner, the least any ring could move for the same change
/// of shares, and the moved stretches of the circle. Immutable: thread-safe.
#[derive(Debug)]
pub struct keyroute_diff {
    _opaque: [u8; 0],
}

/// What a `keyroute_diff` holds.
#[derive(Debug)]
pub(crate) struct DiffState {
    diff: Diff,
    /// (from, to) of every moved arc, NUL-terminated (`None`: no owner).
    names: Vec<(Option<CString>, Option<CString>)>,
}

impl Handle for keyroute_diff {
    type State = DiffState;
    const TAG: u64 = tag(b"kr-diff");
    const NAME: &'static str = "keyroute_diff";
}

/// Compares ring `old` with ring `new` position by position (they must hash keys the
/// same way: `native` with `native`, the ketama family with itself; else
/// `KEYROUTE_INCOMPATIBLE_RINGS`) and writes the result to `*out`; free it with
/// `keyroute_diff_free()`. The rings are only read.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`,
/// `KEYROUTE_INCOMPATIBLE_RINGS`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_ring_diff(
    old: *const keyroute_ring,
    new: *const keyroute_ring,
    out: *mut *mut keyroute_diff,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or live rings.
        let (a, b) = unsafe { (get(old, "old")?, get(new, "new")?) };
        let out = required(out, "out")?;
        let d = diff(&a.ring, &b.ring)?;
        let c = |s: &Option<String>| s.as_deref().map(|s| CString::new(s).unwrap_or_default());
        let names = d.moved.iter().map(|m| (c(&m.from), c(&m.to))).collect();
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, DiffState { diff: d, names }) };
        Ok(())
    })
}

/// Frees a diff (as `keyroute_ring_free()`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_diff_free(diff: *mut keyroute_diff) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(diff, "diff") }
}

/// The fraction (0..=1) of the key space whose owner changes; 0 for NULL or an invalid
/// handle.
#[no_mangle]
pub unsafe extern "C" fn keyroute_diff_moved_fraction(diff: *const keyroute_diff) -> f64 {
    // SAFETY: NULL or a live diff.
    guard_or(0.0, || {
        Ok(unsafe { get(diff, "diff") }?.diff.moved_fraction)
    })
}

/// The least fraction any ring could move for the same change of shares (the sum of the
/// shares the nodes gain); 0 for NULL or an invalid handle. `moved - ideal` is what the
/// ring's layout costs beyond the minimum.
#[no_mangle]
pub unsafe extern "C" fn keyroute_diff_ideal_fraction(diff: *const keyroute_diff) -> f64 {
    // SAFETY: NULL or a live diff.
    guard_or(0.0, || {
        Ok(unsafe { get(diff, "diff") }?.diff.ideal_fraction)
    })
}

/// The number of moved arcs (0 for NULL or an invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_diff_len(diff: *const keyroute_diff) -> usize {
    // SAFETY: NULL or a live diff.
    guard_or(0, || Ok(unsafe { get(diff, "diff") }?.diff.moved.len()))
}

/// Moved arc `index` (0..len, clockwise): its first and last position on the circle
/// (inclusive; 32-bit positions for the ketama family, 64-bit for `native`), and its
/// owner in the old and the new ring (NUL-terminated, valid until the diff is freed; NULL
/// when that ring was empty). Every out-pointer may be NULL. `KEYROUTE_OUT_OF_RANGE` for
/// an index >= len.
#[no_mangle]
pub unsafe extern "C" fn keyroute_diff_arc(
    diff: *const keyroute_diff,
    index: usize,
    start_out: *mut u64,
    end_out: *mut u64,
    from_out: *mut *const c_char,
    to_out: *mut *const c_char,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live diff.
        let d = unsafe { get(diff, "diff") }?;
        let (Some(arc), Some((from, to))) = (d.diff.moved.get(index), d.names.get(index)) else {
            return Err(out_of_range("arc index", index, d.diff.moved.len()));
        };
        let c = |s: &Option<CString>| s.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        // SAFETY: optional out-pointers.
        unsafe {
            put(start_out, arc.start);
            put(end_out, arc.end);
            put(from_out, c(from));
            put(to_out, c(to));
        }
        Ok(())
    })
}
