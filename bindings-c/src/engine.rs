//! Engines and fleet profiles (`keyroute::engine`) and proxy configurations
//! (`keyroute::config`) behind one handle, `keyroute_router`.

use std::ffi::{c_char, CString};
use std::ptr;

use keyroute_core::config::{read_config_with, ReadOptions};
use keyroute_core::engine::{Engine, Router};
use keyroute_core::ring::{checked_weight, NodeSpec};

use crate::ffi::{
    array, array_mut, bytes, free, get, guard, guard_or, hand_out, put, required, tag, text,
    ByteList, Fail, Handle, Packed, Res,
};
use crate::status::keyroute_status;

/// Any engine or fleet profile (jump, guava-jump, rendezvous, maglev, nginx, haproxy,
/// twemproxy, jedis, envoy-ring, go-redis, ..., and the ketama family), or the pool of a
/// proxy configuration (opaque). Reading calls may run from any number of threads at
/// once; the changing calls (`keyroute_router_add()`, `keyroute_router_remove()`) and
/// `keyroute_router_free()` need exclusive access (no concurrent call of any kind on the
/// same router).
#[derive(Debug)]
pub struct keyroute_router {
    _opaque: [u8; 0],
}

/// What a `keyroute_router` holds.
#[derive(Debug)]
pub(crate) struct RouterState {
    router: Router,
    names: Vec<CString>,
    engine: CString,
    /// From a configuration: the format, the key the proxy hashes, and each node's
    /// address as written.
    config: Option<(CString, CString, Vec<CString>)>,
}

impl Handle for keyroute_router {
    type State = RouterState;
    const TAG: u64 = tag(b"kr-routr");
    const NAME: &'static str = "keyroute_router";
}

/// A C string of text that holds no NUL (names and addresses come from NUL-terminated
/// input or configuration text split at NUL-free separators).
fn c(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

impl RouterState {
    fn new(router: Router, config: Option<(&str, &str, Vec<String>)>) -> Self {
        let mut state = RouterState {
            engine: c(router.name()),
            names: Vec::new(),
            config: config.map(|(f, k, a)| (c(f), c(k), a.iter().map(|s| c(s)).collect())),
            router,
        };
        state.sync_names();
        state
    }

    /// The node names after a change.
    fn sync_names(&mut self) {
        let r = &self.router;
        self.names = (0..r.len()).map(|i| c(r.node_name(i))).collect();
    }
}

/// The most options (and resolved hosts, and included files) one call takes:
/// `KEYROUTE_TOO_LARGE` above.
const MAX_OPTIONS: usize = 64;

/// `count` NUL-terminated strings at `ptrs`.
///
/// # Safety
/// `ptrs` NULL (with `count` 0) or `count` valid NUL-terminated strings.
unsafe fn texts<'a>(ptrs: *const *const c_char, count: usize, arg: &str) -> Res<Vec<&'a str>> {
    // SAFETY: as the caller promises.
    let ptrs = unsafe { array(ptrs, count, arg) }?;
    ptrs.iter()
        .enumerate()
        // SAFETY: each entry NUL-terminated per the caller.
        .map(|(i, &p)| unsafe { text(p, &format!("{arg}[{i}]")) })
        .collect()
}

fn too_many(what: &str, count: usize) -> Fail {
    Fail::new(
        keyroute_core::error::ErrorCode::TooLarge,
        format!("{count} {what}: at most {MAX_OPTIONS}"),
    )
}

/// Builds the engine or profile `engine` over `count` nodes `names[i]` (NUL-terminated
/// UTF-8) with `weights[i]` (NULL = all 1; else each 1..=UINT32_MAX, checked as
/// `keyroute_ring_add()` does), and `option_count` options `option_names[i]` =
/// `option_values[i]` (text, e.g. `"table_size"` = `"65537"`, `"version"` = `"2"`;
/// at most 64), and writes it to `*out`. Free it with `keyroute_router_free()`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_UTF8`, `KEYROUTE_UNKNOWN_PROFILE` (an
/// engine keyroute does not know), `KEYROUTE_BAD_OPTION`, `KEYROUTE_TOO_LARGE`, the node
/// errors (`KEYROUTE_EMPTY_NODE_NAME`, `KEYROUTE_ZERO_WEIGHT`,
/// `KEYROUTE_NEGATIVE_WEIGHT`, `KEYROUTE_WEIGHT_TOO_LARGE`, `KEYROUTE_DUPLICATE_NODE`,
/// `KEYROUTE_TOO_MANY_POINTS`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn keyroute_router_new(
    engine: *const c_char,
    names: *const *const c_char,
    weights: *const i64,
    count: usize,
    option_names: *const *const c_char,
    option_values: *const *const c_char,
    option_count: usize,
    out: *mut *mut keyroute_router,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        if option_count > MAX_OPTIONS {
            return Err(too_many("options", option_count));
        }
        // SAFETY: as documented.
        let (engine, names, opt_names, opt_values) = unsafe {
            (
                text(engine, "engine")?,
                texts(names, count, "names")?,
                texts(option_names, option_count, "option_names")?,
                texts(option_values, option_count, "option_values")?,
            )
        };
        let weights = if weights.is_null() {
            None
        } else {
            // SAFETY: `count` entries per the caller.
            Some(unsafe { array(weights, count, "weights") }?)
        };
        let mut nodes = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let weight = match weights {
                Some(w) => checked_weight(name, w[i].into())?,
                None => 1,
            };
            nodes.push(NodeSpec {
                name: (*name).to_owned(),
                weight,
                address: None,
            });
        }
        let options: Vec<(&str, &str)> = opt_names.into_iter().zip(opt_values).collect();
        let router = Router::build(engine, &nodes, &options)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, RouterState::new(router, None)) };
        Ok(())
    })
}

/// What `keyroute_router_from_config()` needs beyond the text; `{0}` (or NULL) means none
/// of it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct keyroute_config_options {
    /// The file's name for messages (NULL: none).
    pub file: *const c_char,
    /// Non-zero: accept nginx `down` servers (`hash ... consistent` keeps their points).
    pub allow_down: i32,
    /// `resolved_count` hostnames and how many addresses each resolves to (nginx plain
    /// `hash` walks one peer per address). At most 64.
    pub resolved_hosts: *const *const c_char,
    /// The address counts of `resolved_hosts` (1..=UINT32_MAX).
    pub resolved_counts: *const u32,
    /// The number of resolved hosts.
    pub resolved_count: usize,
    /// `include_count` nginx `include` names and their texts. At most 64.
    pub include_names: *const *const c_char,
    /// The texts of `include_names`.
    pub include_texts: *const *const c_char,
    /// The number of included files.
    pub include_count: usize,
}

/// Reads pool `pool` (an nginx upstream, HAProxy backend or twemproxy pool; NULL: the
/// only one) from the configuration `text` (`len` bytes of UTF-8; the format is
/// detected) with `options` (NULL = none), and writes a router answering as the proxy
/// does to `*out`. Node names are the twemproxy alias (else `host:port`), the nginx server
/// as written, the HAProxy server name; `keyroute_router_node_address()` gives each
/// address.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_UTF8`, `KEYROUTE_TOO_LARGE`,
/// `KEYROUTE_BAD_CONFIG` (not valid text of its format, no such pool),
/// `KEYROUTE_UNSUPPORTED_CONFIG` (a configuration keyroute cannot reproduce exactly: the
/// message gives the file, the line and the reason), the node errors.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_from_config(
    text_ptr: *const u8,
    len: usize,
    pool: *const c_char,
    options: *const keyroute_config_options,
    out: *mut *mut keyroute_router,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        // SAFETY: `len` readable bytes per the caller.
        let body = unsafe { bytes(text_ptr, len, "text") }?;
        let body = std::str::from_utf8(body).map_err(|e| {
            Fail::new(
                keyroute_core::error::ErrorCode::BadUtf8,
                format!(
                    "`text` is not valid UTF-8 (invalid byte at offset {})",
                    e.valid_up_to()
                ),
            )
        })?;
        let pool = if pool.is_null() {
            None
        } else {
            // SAFETY: NUL-terminated per the caller.
            Some(unsafe { text(pool, "pool") }?)
        };
        let mut file = "";
        let mut allow_down = false;
        let mut addresses = Vec::new();
        let mut includes: Vec<(&str, &str)> = Vec::new();
        // SAFETY: NULL or a valid struct.
        if let Some(o) = unsafe { options.as_ref() } {
            if o.resolved_count > MAX_OPTIONS {
                return Err(too_many("resolved hosts", o.resolved_count));
            }
            if o.include_count > MAX_OPTIONS {
                return Err(too_many("included files", o.include_count));
            }
            if !o.file.is_null() {
                // SAFETY: NUL-terminated per the caller.
                file = unsafe { text(o.file, "file") }?;
            }
            allow_down = o.allow_down != 0;
            // SAFETY: arrays of the given counts per the caller.
            let (hosts, counts, names, texts_) = unsafe {
                (
                    texts(o.resolved_hosts, o.resolved_count, "resolved_hosts")?,
                    array(o.resolved_counts, o.resolved_count, "resolved_counts")?,
                    texts(o.include_names, o.include_count, "include_names")?,
                    texts(o.include_texts, o.include_count, "include_texts")?,
                )
            };
            for (h, &n) in hosts.iter().zip(counts) {
                addresses.push(((*h).to_owned(), n));
            }
            includes = names.into_iter().zip(texts_).collect();
        }
        let mut resolve = |name: &str| -> Option<String> {
            includes
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        };
        let cfg = read_config_with(
            body,
            file,
            pool,
            &mut ReadOptions {
                resolve: &mut resolve,
                addresses: &addresses,
                allow_down,
            },
        )?;
        let router = cfg.router;
        let addrs: Vec<String> = (0..router.len())
            .map(|i| {
                let name = router.node_name(i);
                cfg.servers
                    .iter()
                    .find(|s| s.name == name)
                    .map_or_else(String::new, |s| s.address.clone())
            })
            .collect();
        let state = RouterState::new(router, Some((cfg.format.as_str(), &cfg.key, addrs)));
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, state) };
        Ok(())
    })
}

/// Adds node `name` (NUL-terminated UTF-8) with `weight` (1..=UINT32_MAX, as
/// `keyroute_ring_add()` checks it) last, as the engine's peer does at run time: for most
/// engines the router a new build over the new node list gives; `java-hashcode` and
/// `redis-rb` change their map in place as their peers do (a later node wins a shared
/// point). Name pointers obtained before become invalid (the names are made again).
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_UTF8`,
/// `KEYROUTE_EMPTY_NODE_NAME`, `KEYROUTE_ZERO_WEIGHT`, `KEYROUTE_NEGATIVE_WEIGHT`,
/// `KEYROUTE_WEIGHT_TOO_LARGE`, `KEYROUTE_DUPLICATE_NODE`, `KEYROUTE_TOO_MANY_POINTS`,
/// `KEYROUTE_BAD_OPTION` (a weight for a peer without weights), `KEYROUTE_UNSUPPORTED_CONFIG`
/// (a router read from a configuration: change the configuration and read it again); the
/// router is unchanged on error (and names handed out stay valid).
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_add(
    router: *mut keyroute_router,
    name: *const c_char,
    weight: i64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a router used exclusively; a NUL-terminated name (documented).
        let (r, name) = unsafe { (crate::ffi::get_mut(router, "router")?, text(name, "name")?) };
        let weight = checked_weight(name, weight.into())?;
        r.router.add(NodeSpec {
            name: name.to_owned(),
            weight,
            address: None,
        })?;
        r.sync_names();
        Ok(())
    })
}

/// Removes node `name` (its own name, also under `java-hashcode`'s `node=prefix`), as the
/// engine's peer does at run time (`java-hashcode` and `redis-rb`: every position the
/// node's points hash to goes, whoever holds it). The later nodes move down one index;
/// name pointers obtained before become invalid.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_UTF8`,
/// `KEYROUTE_UNKNOWN_NODE`, `KEYROUTE_UNSUPPORTED_CONFIG`; the router is unchanged on error.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_remove(
    router: *mut keyroute_router,
    name: *const c_char,
) -> keyroute_status {
    guard(|| {
        // SAFETY: as keyroute_router_add.
        let (r, name) = unsafe { (crate::ffi::get_mut(router, "router")?, text(name, "name")?) };
        r.router.remove(name)?;
        r.sync_names();
        Ok(())
    })
}

/// Frees a router. NULL is ignored (`KEYROUTE_OK`); `KEYROUTE_INVALID_HANDLE` (nothing
/// freed) for a handle of another kind or one already freed, where detectable. Every name
/// pointer obtained from the router becomes invalid.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_free(router: *mut keyroute_router) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(router, "router") }
}

/// The node owning `key`: a pointer to its NUL-terminated name in `*node_out` (valid until
/// the router is freed) and, if `node_len_out` is not NULL, its length. Returns
/// `KEYROUTE_EMPTY` without nodes. Errors: `KEYROUTE_NULL_ARGUMENT`,
/// `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_get(
    router: *const keyroute_router,
    key: *const u8,
    len: usize,
    node_out: *mut *const c_char,
    node_len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live router; `len` readable bytes at `key` (documented).
        let (r, k) = unsafe { (get(router, "router")?, bytes(key, len, "key")?) };
        let node_out = required(node_out, "node_out")?;
        let name = &r.names[r.router.get_index(k).ok_or(Fail::EMPTY)?];
        // SAFETY: non-NULL (or optional) out-pointers.
        unsafe {
            node_out.write(name.as_ptr());
            put(node_len_out, name.as_bytes().len());
        }
        Ok(())
    })
}

/// The index (see `keyroute_router_node()`) of the node owning `key`. Returns
/// `KEYROUTE_EMPTY` without nodes.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_get_index(
    router: *const keyroute_router,
    key: *const u8,
    len: usize,
    index_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: as keyroute_router_get.
        let (r, k) = unsafe { (get(router, "router")?, bytes(key, len, "key")?) };
        let index_out = required(index_out, "index_out")?;
        let i = r.router.get_index(k).ok_or(Fail::EMPTY)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { index_out.write(i) };
        Ok(())
    })
}

/// Batch lookup: `indexes_out[i]` = the index of the node owning `(keys[i], lens[i])`, or
/// `SIZE_MAX` without nodes. As `keyroute_ring_get_many()` (at most
/// `KEYROUTE_MAX_BATCH`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_get_many(
    router: *const keyroute_router,
    keys: *const *const u8,
    lens: *const usize,
    count: usize,
    indexes_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live router; arrays of `count` entries (documented).
        let (r, keys, out) = unsafe {
            (
                get(router, "router")?,
                ByteList::new(keys, lens, count, "keys")?,
                array_mut(indexes_out, count, "indexes_out")?,
            )
        };
        for (o, k) in out.iter_mut().zip(keys.iter()) {
            *o = r.router.get_index(k).unwrap_or(usize::MAX);
        }
        Ok(())
    })
}

/// Batch lookup over keys stored back to back (as `keyroute_ring_get_many_packed()`):
/// `indexes_out[i]` = the index of the node owning key `i`, or `KEYROUTE_NO_NODE`
/// without nodes.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_get_many_packed(
    router: *const keyroute_router,
    data: *const u8,
    data_len: usize,
    ends: *const u32,
    count: usize,
    indexes_out: *mut u32,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live router; `data_len` bytes and `count` entries (documented).
        let (r, keys, out) = unsafe {
            (
                get(router, "router")?,
                Packed::new(data, data_len, ends, count, "keys")?,
                array_mut(indexes_out, count, "indexes_out")?,
            )
        };
        for (o, k) in out.iter_mut().zip(keys.iter()) {
            *o = r
                .router
                .get_index(k)
                .and_then(|i| u32::try_from(i).ok())
                .unwrap_or(crate::ring::KEYROUTE_NO_NODE);
        }
        Ok(())
    })
}

/// Up to `n` distinct candidates for `key`, the owner first (the ring walk, the
/// rendezvous ranking, or the owner then the next nodes in list order): their indexes in
/// `indexes_out[0..*count_out]` (capacity `n`). Returns `KEYROUTE_EMPTY` without nodes
/// (`*count_out` = 0).
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_get_n(
    router: *const keyroute_router,
    key: *const u8,
    len: usize,
    n: usize,
    indexes_out: *mut usize,
    count_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: as keyroute_router_get.
        let (r, k) = unsafe { (get(router, "router")?, bytes(key, len, "key")?) };
        let count_out = required(count_out, "count_out")?;
        if r.router.is_empty() {
            // SAFETY: non-NULL out-pointer.
            unsafe { count_out.write(0) };
            return Err(Fail::EMPTY);
        }
        let mut idx = Vec::new();
        r.router.get_n_into(k, n, &mut idx);
        // SAFETY: capacity `n` >= idx.len() per the caller; checked for NULL.
        let out = unsafe { array_mut(indexes_out, idx.len(), "indexes_out") }?;
        out.copy_from_slice(&idx);
        // SAFETY: non-NULL out-pointer.
        unsafe { count_out.write(idx.len()) };
        Ok(())
    })
}

/// The number of nodes (0 for NULL or an invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_len(router: *const keyroute_router) -> usize {
    // SAFETY: NULL or a live router.
    guard_or(0, || Ok(unsafe { get(router, "router") }?.router.len()))
}

/// Node `index`: its NUL-terminated name (valid until the router is freed) and, if the
/// pointers are not NULL, its length and weight. `KEYROUTE_OUT_OF_RANGE` for an index >=
/// len.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_node(
    router: *const keyroute_router,
    index: usize,
    name_out: *mut *const c_char,
    name_len_out: *mut usize,
    weight_out: *mut u32,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live router.
        let r = unsafe { get(router, "router") }?;
        let name_out = required(name_out, "name_out")?;
        let name = r.names.get(index).ok_or_else(|| {
            Fail::new(
                keyroute_core::error::ErrorCode::OutOfRange,
                format!("node index {index} >= {} nodes", r.names.len()),
            )
        })?;
        // SAFETY: non-NULL (or optional) out-pointers.
        unsafe {
            name_out.write(name.as_ptr());
            put(name_len_out, name.as_bytes().len());
            put(weight_out, r.router.node_weight(index));
        }
        Ok(())
    })
}

/// The engine or profile name (valid until the router is freed), NULL for NULL or an
/// invalid handle.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_engine(router: *const keyroute_router) -> *const c_char {
    guard_or(ptr::null(), || {
        // SAFETY: NULL or a live router.
        Ok(unsafe { get(router, "router") }?.engine.as_ptr())
    })
}

/// For a router read from a configuration: its format (`"twemproxy"`, `"nginx"`,
/// `"haproxy"`), else NULL.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_format(router: *const keyroute_router) -> *const c_char {
    guard_or(ptr::null(), || {
        // SAFETY: NULL or a live router.
        let r = unsafe { get(router, "router") }?;
        Ok(r.config.as_ref().map_or(ptr::null(), |c| c.0.as_ptr()))
    })
}

/// For a router read from a configuration: what the proxy hashes (the nginx `hash`
/// expression, the HAProxy balance mode, twemproxy's key), else NULL.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_config_key(
    router: *const keyroute_router,
) -> *const c_char {
    guard_or(ptr::null(), || {
        // SAFETY: NULL or a live router.
        let r = unsafe { get(router, "router") }?;
        Ok(r.config.as_ref().map_or(ptr::null(), |c| c.1.as_ptr()))
    })
}

/// For a router read from a configuration: node `index`'s address as written, else (or
/// for an index >= len) NULL.
#[no_mangle]
pub unsafe extern "C" fn keyroute_router_node_address(
    router: *const keyroute_router,
    index: usize,
) -> *const c_char {
    guard_or(ptr::null(), || {
        // SAFETY: NULL or a live router.
        let r = unsafe { get(router, "router") }?;
        Ok(r.config
            .as_ref()
            .and_then(|c| c.2.get(index))
            .map_or(ptr::null(), |a| a.as_ptr()))
    })
}

/// Consistent hashing with bounded loads over a router (opaque): no node above
/// ⌈c·m/n⌉ of the m assigned keys. Calls that change it (`_assign`, `_release`) and
/// `_free` need exclusive access; reads may run at once from several threads.
#[derive(Debug)]
pub struct keyroute_bounded {
    _opaque: [u8; 0],
}

/// What a `keyroute_bounded` holds: the overlay, the node names and the last release's
/// moves.
#[derive(Debug)]
pub(crate) struct BoundedState {
    inner: keyroute_core::engine::Bounded<Router>,
    names: Vec<CString>,
    moved: Vec<keyroute_core::engine::Load>,
}

impl Handle for keyroute_bounded {
    type State = BoundedState;
    const TAG: u64 = tag(b"kr-bound");
    const NAME: &'static str = "keyroute_bounded";
}

/// Makes the bounded-loads overlay over a copy of `router` with balance factor `c` (at
/// least 1; e.g. 1.25: no node above 125% of the mean, rounded up), written to `*out`.
/// The router may be freed afterwards. Errors: `KEYROUTE_NULL_ARGUMENT`,
/// `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_OPTION` (`c` below 1, NaN or infinite).
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_new(
    router: *const keyroute_router,
    c: f64,
    out: *mut *mut keyroute_bounded,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        // SAFETY: NULL or a live router.
        let r = unsafe { get(router, "router") }?;
        let inner = keyroute_core::engine::Bounded::new(r.router.clone(), c)?;
        let state = BoundedState {
            inner,
            names: r.names.clone(),
            moved: Vec::new(),
        };
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, state) };
        Ok(())
    })
}

/// Frees an overlay (NULL is ignored; as `keyroute_router_free()`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_free(bounded: *mut keyroute_bounded) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(bounded, "bounded") }
}

/// Assigns `key` (or gives where it already is): the index of the first of its
/// candidates under the cap, in `*index_out` (`keyroute_bounded_node()` names it).
/// `KEYROUTE_EMPTY` without nodes.
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_assign(
    bounded: *mut keyroute_bounded,
    key: *const u8,
    len: usize,
    index_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or an overlay used exclusively; `len` readable bytes.
        let (b, k) = unsafe {
            (
                crate::ffi::get_mut(bounded, "bounded")?,
                bytes(key, len, "key")?,
            )
        };
        let index_out = required(index_out, "index_out")?;
        let i = b.inner.assign(k).ok_or(Fail::EMPTY)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { index_out.write(i) };
        Ok(())
    })
}

/// Frees `key`; `*moved_out` (if not NULL) gets the number of keys moved to keep every
/// node under the new cap (read them with `keyroute_bounded_moved()`). `KEYROUTE_EMPTY`
/// when the key was not assigned.
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_release(
    bounded: *mut keyroute_bounded,
    key: *const u8,
    len: usize,
    moved_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: as keyroute_bounded_assign.
        let (b, k) = unsafe {
            (
                crate::ffi::get_mut(bounded, "bounded")?,
                bytes(key, len, "key")?,
            )
        };
        match b.inner.release(k) {
            Some(m) => {
                // SAFETY: NULL or a valid out-pointer.
                unsafe { put(moved_out, m.len()) };
                b.moved = m;
                Ok(())
            }
            None => {
                b.moved.clear();
                Err(Fail::EMPTY)
            }
        }
    })
}

/// Move `i` of the last release: the key (`*key_out`, `*key_len_out`; valid until the
/// next `_assign`, `_release` or `_free`) and the indexes of the nodes it left and went
/// to. `KEYROUTE_OUT_OF_RANGE` for `i` beyond the moves.
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_moved(
    bounded: *const keyroute_bounded,
    i: usize,
    key_out: *mut *const u8,
    key_len_out: *mut usize,
    from_out: *mut usize,
    to_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live overlay.
        let b = unsafe { get(bounded, "bounded") }?;
        let key_out = required(key_out, "key_out")?;
        let m = b.moved.get(i).ok_or_else(|| {
            Fail::new(
                keyroute_core::error::ErrorCode::OutOfRange,
                format!("move {i} of {}", b.moved.len()),
            )
        })?;
        // SAFETY: non-NULL (or optional) out-pointers.
        unsafe {
            key_out.write(m.key.as_ptr());
            put(key_len_out, m.key.len());
            put(from_out, m.from);
            put(to_out, m.to);
        }
        Ok(())
    })
}

/// Node `index`: its name (valid until the overlay is freed) and load.
/// `KEYROUTE_OUT_OF_RANGE` for an index >= the node count.
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_node(
    bounded: *const keyroute_bounded,
    index: usize,
    name_out: *mut *const c_char,
    load_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live overlay.
        let b = unsafe { get(bounded, "bounded") }?;
        let name = b.names.get(index).ok_or_else(|| {
            Fail::new(
                keyroute_core::error::ErrorCode::OutOfRange,
                format!("node index {index} >= {} nodes", b.names.len()),
            )
        })?;
        // SAFETY: optional out-pointers.
        unsafe {
            put(name_out, name.as_ptr());
            put(load_out, b.inner.loads()[index]);
        }
        Ok(())
    })
}

/// The cap now (⌈c·m/n⌉), 0 for NULL or an invalid handle.
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_cap(bounded: *const keyroute_bounded) -> u64 {
    // SAFETY: NULL or a live overlay.
    guard_or(0, || Ok(unsafe { get(bounded, "bounded") }?.inner.cap()))
}

/// The number of assigned keys, 0 for NULL or an invalid handle.
#[no_mangle]
pub unsafe extern "C" fn keyroute_bounded_assigned(bounded: *const keyroute_bounded) -> u64 {
    // SAFETY: NULL or a live overlay.
    guard_or(0, || {
        Ok(unsafe { get(bounded, "bounded") }?.inner.assigned())
    })
}
