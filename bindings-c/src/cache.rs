//! The smart cache, sessions and devices on Redis, standalone or Cluster
//! (`keyroute_redis::cache`): `keyroute_cache` (a value loaded once across every process
//! sharing the store, by a C loader callback), `keyroute_sessions`, `keyroute_devices`,
//! the values they hand out (`keyroute_value_free`) and the loader's sink
//! (`keyroute_load`).
//!
//! The logic is the Rust crate's; this module converts arguments, runs the C loader and
//! turns answers into statuses: an expired session is `KEYROUTE_SESSION_EXPIRED`, a version
//! mismatch `KEYROUTE_VERSION_MISMATCH` (the stored version handed out), an unknown device
//! `KEYROUTE_NOT_FOUND`.

use std::alloc::{alloc, dealloc, Layout};
use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;
use std::time::{Duration, Instant};

use keyroute_core::cache::{
    check_kind, check_warm_count, checked_max_value_len, checked_ms, Touch,
};
use keyroute_core::error::ErrorCode;
use keyroute_redis::cache::{
    CacheConfig, Devices, LoadError, SessionConfig, Sessions, SmartCache, Stats, Store,
};
use keyroute_redis::cluster::ClusterConfig;
use keyroute_redis::{Error as RedisError, Timeouts};

use crate::ffi::{
    array, array_mut, bytes, free, get, get_mut, guard, hand_out, put, required, tag, text, Fail,
    Handle, Res,
};
use crate::redis::KEYROUTE_DEFAULT_TIMEOUT_MS;
use crate::status::keyroute_status;

/// The length of a session id (`T.R`, two base32 parts), without a terminating NUL.
pub const KEYROUTE_SESSION_ID_LEN: usize = 53;

/// The size of a buffer holding a session id and its NUL: `KEYROUTE_SESSION_ID_LEN + 1`.
pub const KEYROUTE_SESSION_ID_SIZE: usize = 54;

/// The most kinds one `keyroute_cache_warm()` takes (one script call, one slot).
pub const KEYROUTE_MAX_WARM_KINDS: usize = 64;

// ---------------------------------------------------------------------------------------
// Values handed out

/// The tag before every value this module hands out, cleared when it is freed.
const VALUE_TAG: u64 = tag(b"kr-value");
/// The tag of a freed value.
const VALUE_FREED: u64 = 0;
/// What precedes a value's bytes: its tag and its length.
const VALUE_HEADER: usize = 16;

fn value_layout(len: usize) -> Option<Layout> {
    let size = VALUE_HEADER.checked_add(len)?.checked_add(1)?;
    Layout::from_size_align(size, 8).ok()
}

/// A copy of `bytes` for C: its length is in the 16 bytes before it, and a NUL follows it
/// (not counted). Freed by `keyroute_value_free()`.
fn hand_out_bytes(bytes: &[u8]) -> Res<*mut u8> {
    let no_memory = || {
        Fail::new(
            ErrorCode::TooLarge,
            format!("cannot allocate {} bytes for the value", bytes.len()),
        )
    };
    let layout = value_layout(bytes.len()).ok_or_else(no_memory)?;
    // SAFETY: the layout has a non-zero size (at least the header).
    let base = unsafe { alloc(layout) };
    if base.is_null() {
        return Err(no_memory());
    }
    // SAFETY: `base` holds header + len + 1 bytes, aligned to 8.
    unsafe {
        base.cast::<u64>().write(VALUE_TAG);
        base.cast::<u64>().add(1).write(bytes.len() as u64);
        let data = base.add(VALUE_HEADER);
        ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
        data.add(bytes.len()).write(0);
        Ok(data)
    }
}

/// Frees a value handed out by keyroute: the value of `keyroute_cache_get_or_load()`, the
/// client of `keyroute_devices_client_of()`, the fields of a `keyroute_session_info` (or
/// call `keyroute_session_info_clear()` for those). NULL is ignored.
///
/// Returns `KEYROUTE_INVALID_HANDLE` (nothing freed) for a pointer that is not the start
/// of a live value keyroute handed out, as far as that can be seen (a value freed
/// already, a pointer into a value): the same limits as for handles ("Handles" in the
/// header's introduction), and a pointer that never was a value may crash.
///
/// Thread safety: any thread may free a value, once.
#[no_mangle]
pub unsafe extern "C" fn keyroute_value_free(value: *mut u8) -> keyroute_status {
    guard(|| {
        if value.is_null() {
            return Ok(());
        }
        let not_a_value = |why: &str| {
            Fail::new(
                ErrorCode::InvalidHandle,
                format!("`value` is not a live keyroute value: {why}"),
            )
        };
        if !(value as usize).is_multiple_of(8) {
            return Err(not_a_value("misaligned"));
        }
        // SAFETY: a value starts VALUE_HEADER bytes into its allocation (documented: the
        // pointer is one keyroute handed out, possibly freed since).
        let base = unsafe { value.sub(VALUE_HEADER) };
        // SAFETY: as above; volatile because a freed block may have been rewritten.
        let tag = unsafe { base.cast::<u64>().read_volatile() };
        if tag != VALUE_TAG {
            return Err(not_a_value(if tag == VALUE_FREED {
                "it was freed"
            } else {
                "it was freed, or keyroute did not hand it out"
            }));
        }
        // SAFETY: a live value: its header holds the length it was allocated with.
        let len = unsafe { base.cast::<u64>().add(1).read() };
        let layout = usize::try_from(len)
            .ok()
            .and_then(value_layout)
            .ok_or_else(|| not_a_value("its header is damaged"))?;
        // SAFETY: allocated by `hand_out_bytes` with this layout; the tag is cleared
        // first, so a second free is refused while the memory is not reused.
        unsafe {
            base.cast::<u64>().write_volatile(VALUE_FREED);
            dealloc(base, layout);
        }
        Ok(())
    })
}

/// Writes a value to `(*value_out, *len_out)`.
///
/// # Safety
/// Both pointers are non-NULL and writable.
unsafe fn deliver_value(bytes: &[u8], value_out: *mut *mut u8, len_out: *mut usize) -> Res {
    let p = hand_out_bytes(bytes)?;
    // SAFETY: as the caller promises.
    unsafe {
        value_out.write(p);
        len_out.write(bytes.len());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Arguments

/// The bytes of a NUL-terminated string (any bytes but NUL; not checked for UTF-8: client
/// ids, kinds, device ids and session ids are checked by the core).
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string valid for `'a`.
unsafe fn cstr<'a>(ptr: *const c_char, arg: &str) -> Res<&'a CStr> {
    if ptr.is_null() {
        return Err(Fail::null(arg));
    }
    // SAFETY: non-NULL and NUL-terminated per the caller.
    Ok(unsafe { CStr::from_ptr(ptr) })
}

/// A duration in ms given by the caller, range-checked by the core (`KEYROUTE_BAD_TTL`).
fn millis(what: &'static str, value: i64, min: u64) -> Res<Duration> {
    Ok(Duration::from_millis(checked_ms(
        what,
        i128::from(value),
        min,
    )?))
}

/// A size limit given by the caller (`KEYROUTE_TOO_LARGE` when 0 or above 512 MiB).
fn max_len(value: u64) -> Res<usize> {
    Ok(checked_max_value_len(
        usize::try_from(value).unwrap_or(usize::MAX),
    )?)
}

/// The connect and I/O bound of an open call (0 = `KEYROUTE_DEFAULT_TIMEOUT_MS`).
fn io_bound(timeout_ms: u32) -> Duration {
    Duration::from_millis(u64::from(if timeout_ms == 0 {
        KEYROUTE_DEFAULT_TIMEOUT_MS
    } else {
        timeout_ms
    }))
}

/// Where a store is: a standalone URL or cluster seeds.
enum Target<'a> {
    Url(&'a str),
    Seeds(Vec<&'a str>),
}

impl Target<'_> {
    /// # Safety
    /// `url` is NULL or a NUL-terminated string.
    unsafe fn url<'a>(url: *const c_char) -> Res<Target<'a>> {
        // SAFETY: as the caller promises.
        Ok(Target::Url(unsafe { text(url, "url") }?))
    }

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

    /// Opens the store (connections, scripts loaded).
    fn open(&self, timeout_ms: u32) -> Res<Store> {
        let t = io_bound(timeout_ms);
        Ok(match self {
            Target::Url(url) => Store::standalone(url, Timeouts::uniform(t))?,
            Target::Seeds(seeds) => Store::cluster(
                seeds,
                ClusterConfig {
                    connect_timeout: t,
                    io_timeout: t,
                    ..ClusterConfig::default()
                },
            )?,
        })
    }
}

// ---------------------------------------------------------------------------------------
// The cache

/// How a `keyroute_cache` caches. Fill it with `keyroute_cache_options_default()`, then
/// change what you need; every value is taken as given (and checked when the cache is
/// opened). Every process sharing a store should use the same values.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct keyroute_cache_options {
    /// How long a loader holds a key before another caller may take over, in ms; extended
    /// every third of it while the loader runs (server time). Default 2000; make it at
    /// least the backend's timeout. 1..=2^48.
    pub lease_ms: i64,
    /// How long a value is fresh, in ms. Default 60000. 1..=2^48.
    pub soft_ttl_ms: i64,
    /// How long a value is kept, in ms (served stale between the soft and the hard TTL
    /// while one caller refreshes it, when `serve_stale`). Default 600000. 1..=2^48.
    pub hard_ttl_ms: i64,
    /// How long a loader's failure is cached, in ms, so that waiters fail at once instead
    /// of calling the backend again. Default 1000; 0 caches nothing. 0..=2^48.
    pub neg_ttl_ms: i64,
    /// XFetch β: refresh early with a probability that grows near the soft expiry (one
    /// caller, under a lease); 0 turns it off. Default 1.0; finite and >= 0.
    pub xfetch_beta: f64,
    /// The largest value a loader may write, in bytes. Default 1 MiB (1048576);
    /// 1..=512 MiB.
    pub max_value_len: u64,
    /// Non-zero: serve a stale value while one caller refreshes it; 0: callers wait for
    /// the fresh one. Default 1.
    pub serve_stale: i32,
    /// Bounds connecting and each Redis reply, in ms (0 = `KEYROUTE_DEFAULT_TIMEOUT_MS`,
    /// as every open call). Default 0.
    pub timeout_ms: u32,
}

impl keyroute_cache_options {
    fn defaults() -> Self {
        let c = CacheConfig::default();
        let ms = |d: Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        keyroute_cache_options {
            lease_ms: ms(c.lease),
            soft_ttl_ms: ms(c.soft_ttl),
            hard_ttl_ms: ms(c.hard_ttl),
            neg_ttl_ms: ms(c.neg_ttl),
            xfetch_beta: c.xfetch_beta,
            max_value_len: c.max_value_len as u64,
            serve_stale: i32::from(c.serve_stale),
            timeout_ms: 0,
        }
    }

    /// The Rust configuration, every field checked (nothing is sent before).
    fn config(&self) -> Res<CacheConfig> {
        if !(self.xfetch_beta.is_finite() && self.xfetch_beta >= 0.0) {
            return Err(Fail::new(
                ErrorCode::BadTtl,
                format!(
                    "xfetch_beta is {}: it must be a finite number >= 0 (0 turns XFetch off)",
                    self.xfetch_beta
                ),
            ));
        }
        Ok(CacheConfig {
            lease: millis("lease_ms", self.lease_ms, 1)?,
            soft_ttl: millis("soft_ttl_ms", self.soft_ttl_ms, 1)?,
            hard_ttl: millis("hard_ttl_ms", self.hard_ttl_ms, 1)?,
            neg_ttl: millis("neg_ttl_ms", self.neg_ttl_ms, 0)?,
            serve_stale: self.serve_stale != 0,
            xfetch_beta: self.xfetch_beta,
            max_value_len: max_len(self.max_value_len)?,
            ..CacheConfig::default()
        })
    }
}

/// Fills `*options` with the defaults: lease 2000 ms, soft TTL 60000 ms, hard TTL
/// 600000 ms, negative TTL 1000 ms, XFetch β 1.0, values up to 1 MiB, stale values
/// served, `timeout_ms` 0 (`KEYROUTE_DEFAULT_TIMEOUT_MS`). Errors:
/// `KEYROUTE_NULL_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_options_default(
    options: *mut keyroute_cache_options,
) -> keyroute_status {
    guard(|| {
        let out = required(options, "options")?;
        // SAFETY: non-NULL and writable (documented).
        unsafe { out.write(keyroute_cache_options::defaults()) };
        Ok(())
    })
}

/// A smart cache on Redis (opaque): `keyroute_cache_get_or_load()` serves a value from
/// Redis, or has exactly one caller across every process sharing the store run its loader
/// while the others wait for the wake-up.
///
/// Thread safety: thread-safe. Any number of threads may call `keyroute_cache_*` on one
/// handle at once (share one handle per process: concurrent callers of one key then cost
/// one Redis round trip); only `keyroute_cache_free()` needs exclusive access. The
/// handle holds a pool of connections; nothing runs in the background except, while a
/// loader runs, the thread that extends its lease.
///
/// Processes: opening a handle starts nothing before it, so a program may `fork()`
/// before opening its handles (each process opens its own). A handle opened before a
/// `fork()` must not be used in the child (its connections are the parent's).
#[derive(Debug)]
pub struct keyroute_cache {
    _opaque: [u8; 0],
}

impl Handle for keyroute_cache {
    type State = SmartCache;
    const TAG: u64 = tag(b"kr-cache");
    const NAME: &'static str = "keyroute_cache";
}

/// # Safety
/// As the open exports.
unsafe fn open_cache(
    target: impl FnOnce() -> Res<Target<'static>>,
    options: *const keyroute_cache_options,
    out: *mut *mut keyroute_cache,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        let options = if options.is_null() {
            keyroute_cache_options::defaults()
        } else {
            // SAFETY: non-NULL and readable (documented).
            unsafe { options.read() }
        };
        let config = options.config()?;
        let store = target()?.open(options.timeout_ms)?;
        let cache = SmartCache::new(store, config)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, cache) };
        Ok(())
    })
}

/// Opens a smart cache on the standalone Redis at `url` (NUL-terminated,
/// `redis://[[user]:password@]host:port[/db]` or `host:port`) with `options` (NULL = the
/// defaults of `keyroute_cache_options_default()`): connects and loads the scripts now,
/// so the first call pays no set-up, and writes the handle to `*out`. Free it with
/// `keyroute_cache_free()`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_BAD_UTF8` (url), `KEYROUTE_BAD_TTL` (a TTL,
/// the lease or `xfetch_beta` out of range) and `KEYROUTE_TOO_LARGE` (`max_value_len`),
/// checked before connecting; `KEYROUTE_REDIS_BAD_URL`, `KEYROUTE_REDIS_CONNECT`,
/// `KEYROUTE_REDIS_AUTH` (the password is never shown), `KEYROUTE_REDIS_TIMEOUT`,
/// `KEYROUTE_REDIS_PROTOCOL`, `KEYROUTE_REDIS_SERVER`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_open(
    url: *const c_char,
    options: *const keyroute_cache_options,
    out: *mut *mut keyroute_cache,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { open_cache(|| Target::url(url), options, out) }
}

/// Opens a smart cache on a Redis Cluster, from `count` seed nodes (`seeds[i]`:
/// `host:port` or `redis://host:port`; any node of the cluster will do): reads the
/// topology, loads the scripts on every master, and writes the handle to `*out`. Every
/// key of one client is in one slot; wake-ups are shard channels. Otherwise as
/// `keyroute_cache_open()`; also `KEYROUTE_CLUSTER_UNREACHABLE` (no seed answered, or
/// `count` is 0) and `KEYROUTE_TOO_LARGE` (`count` above `KEYROUTE_MAX_BATCH`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_open_cluster(
    seeds: *const *const c_char,
    count: usize,
    options: *const keyroute_cache_options,
    out: *mut *mut keyroute_cache,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { open_cache(|| Target::seeds(seeds, count), options, out) }
}

/// Closes the connections and frees the handle (the entries stay in Redis). NULL is
/// ignored; `KEYROUTE_INVALID_HANDLE` as `keyroute_ring_free()`. No other call may use
/// the handle during or after this one (a loader still running in another thread
/// included).
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_free(cache: *mut keyroute_cache) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(cache, "cache") }
}

/// The sink a loader writes its value to (opaque), valid only while the loader runs.
/// See `keyroute_loader`.
///
/// Thread safety: for the loader's call only; not concurrently from several threads.
#[derive(Debug)]
pub struct keyroute_load {
    _opaque: [u8; 0],
}

/// What a `keyroute_load` holds.
#[derive(Debug, Default)]
pub(crate) struct LoadState {
    value: Vec<u8>,
    max: usize,
    /// A write was refused: the value would have been this long.
    too_large: Option<usize>,
    /// `keyroute_load_fail()` was called.
    failure: Option<LoadError>,
}

impl Handle for keyroute_load {
    type State = LoadState;
    const TAG: u64 = tag(b"kr-load");
    const NAME: &'static str = "keyroute_load";
}

/// A loader: loads the value of `kind` for `client` from the backend and writes it to
/// `load` with `keyroute_load_write()` (once or in pieces; nothing written is an empty
/// value). Returns 0 when the value is complete; any other number means the load
/// failed, with the code and message given to `keyroute_load_fail()` (if it was not
/// called: code `BACKEND_ERROR` and a message naming the number).
///
/// `client` and `kind` are NUL-terminated and valid during the call; `ctx` is the
/// `loader_ctx` given with the loader. The loader runs in the thread that called
/// `keyroute_cache_get_or_load()`; `keyroute_cache_warm()` runs one loader per kind, in
/// parallel threads of its own, so a warm-up loader must be thread-safe.
///
/// A failure (or a value over `max_value_len`) is cached for the negative TTL and
/// reaches every caller waiting for the key, in this process and in others, as
/// `KEYROUTE_BACKEND_ERROR` with the loader's code and message in
/// `keyroute_last_error_message()`.
///
/// Out of contract (undefined behaviour): a loader that `longjmp`s out of the call, throws
/// a C++ exception through it, or keeps `load` past its return. A loader that never
/// returns keeps its lease (extended while it runs): its call never returns and every
/// other caller of the key times out at its own deadline. Bound your backend call by a
/// timeout shorter than the callers' deadlines. A loader may call keyroute functions, but
/// not `keyroute_cache_get_or_load()` for its own key (it would wait for itself until its
/// deadline).
pub type keyroute_loader = Option<
    unsafe extern "C" fn(
        ctx: *mut c_void,
        client: *const c_char,
        kind: *const c_char,
        load: *mut keyroute_load,
    ) -> i32,
>;

/// Appends `len` bytes at `data` to the value being loaded (`data` may be NULL when `len`
/// is 0). The bytes are copied: the loader keeps ownership of `data`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE` (`load` is not the sink
/// of a running loader), `KEYROUTE_VALUE_TOO_LARGE` (the value would exceed the cache's
/// `max_value_len`: nothing was appended, and the load fails with `VALUE_TOO_LARGE`
/// whatever the loader returns; the caller of `keyroute_cache_get_or_load()` gets
/// `KEYROUTE_VALUE_TOO_LARGE`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_load_write(
    load: *mut keyroute_load,
    data: *const u8,
    len: usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a sink used by its loader only; `len` bytes at `data`.
        let (l, data) = unsafe { (get_mut(load, "load")?, bytes(data, len, "data")?) };
        let total = l.value.len().saturating_add(data.len());
        if total > l.max {
            l.too_large = Some(total);
            return Err(Fail::new(
                ErrorCode::ValueTooLarge,
                format!(
                    "the value would be {total} bytes, above the cache's max_value_len of {} \
                     bytes; nothing was appended and the load fails",
                    l.max
                ),
            ));
        }
        l.value.extend_from_slice(data);
        Ok(())
    })
}

/// Marks the load failed, with `code` (NUL-terminated; NULL or "" = `BACKEND_ERROR`; cut
/// to 64 bytes) and `message` (NUL-terminated, cut to 1024 bytes): what every waiting
/// caller reads in `keyroute_last_error_message()`. The load fails whatever the loader
/// then returns; a second call replaces the first.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT` (`load`, `message`), `KEYROUTE_INVALID_HANDLE`,
/// `KEYROUTE_BAD_UTF8` (`code` or `message`; nothing recorded, the load still fails if
/// the loader returns non-zero).
#[no_mangle]
pub unsafe extern "C" fn keyroute_load_fail(
    load: *mut keyroute_load,
    code: *const c_char,
    message: *const c_char,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a sink used by its loader only; strings NUL-terminated.
        let (l, message) = unsafe { (get_mut(load, "load")?, text(message, "message")?) };
        let code = if code.is_null() {
            ""
        } else {
            // SAFETY: NUL-terminated (documented).
            unsafe { text(code, "code") }?
        };
        l.failure = Some(LoadError::new(code, message));
        Ok(())
    })
}

/// A C loader and its context, callable from the threads of a warm-up.
#[derive(Clone, Copy)]
struct CLoader {
    f: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut keyroute_load) -> i32,
    ctx: *mut c_void,
}

// SAFETY: the loader's contract (documented on `keyroute_loader`): a loader given to
// `keyroute_cache_warm()` is thread-safe, and `get_or_load` runs it in the calling thread.
unsafe impl Send for CLoader {}
// SAFETY: as above.
unsafe impl Sync for CLoader {}

impl CLoader {
    fn new(f: keyroute_loader, ctx: *mut c_void) -> Res<CLoader> {
        f.map(|f| CLoader { f, ctx })
            .ok_or_else(|| Fail::null("loader"))
    }

    /// Runs the loader with a fresh sink; `too_large` is set when a write was refused.
    fn call(
        &self,
        client: &CStr,
        kind: &CStr,
        max: usize,
        too_large: &mut bool,
    ) -> Result<Vec<u8>, LoadError> {
        let mut sink: *mut keyroute_load = ptr::null_mut();
        let state = LoadState {
            max,
            ..LoadState::default()
        };
        // SAFETY: a valid out-pointer.
        unsafe { hand_out(&mut sink, state) };
        // SAFETY: the loader's contract; the sink is live during the call.
        let rc = unsafe { (self.f)(self.ctx, client.as_ptr(), kind.as_ptr(), sink) };
        // SAFETY: our own live sink (a loader keeping it is out of contract), freed once.
        let state = unsafe { get_mut(sink, "load").map(std::mem::take) };
        // SAFETY: as above.
        let _ = unsafe { free(sink, "load") };
        let state = state.unwrap_or_default();
        if let Some(total) = state.too_large {
            *too_large = true;
            return Err(LoadError::new(
                "VALUE_TOO_LARGE",
                format!("the loader's value would be {total} bytes, above max_value_len ({max})"),
            ));
        }
        if let Some(failure) = state.failure {
            return Err(failure);
        }
        if rc != 0 {
            let name = status_name(rc);
            return Err(LoadError::new(
                "BACKEND_ERROR",
                format!("the loader returned {rc}{name} without calling keyroute_load_fail"),
            ));
        }
        Ok(state.value)
    }
}

/// ` (NAME)` for a status number, or nothing.
fn status_name(n: i32) -> String {
    u16::try_from(n)
        .ok()
        .and_then(ErrorCode::from_number)
        .map(|c| format!(" ({})", c.as_str()))
        .unwrap_or_default()
}

/// The deadline `timeout_ms` from now (`KEYROUTE_BAD_TTL` outside 1..=2^48).
fn deadline(timeout_ms: i64) -> Res<Instant> {
    let d = millis("timeout_ms", timeout_ms, 1)?;
    Instant::now().checked_add(d).ok_or_else(|| {
        Fail::new(
            ErrorCode::BadTtl,
            format!("timeout_ms {timeout_ms} reaches past what this clock can represent"),
        )
    })
}

/// The value of `kind` for `client`, the loader a Rust closure (tested with one that
/// panics). A failure of this call's own loader with a value over the maximum is
/// `KEYROUTE_VALUE_TOO_LARGE`.
pub(crate) fn get_or_load_with(
    cache: &SmartCache,
    client: &[u8],
    kind: &[u8],
    deadline: Instant,
    loader: &mut dyn FnMut(&mut bool) -> Result<Vec<u8>, LoadError>,
) -> Res<Vec<u8>> {
    let mut too_large = false;
    match cache.get_or_load(client, kind, deadline, || loader(&mut too_large)) {
        Ok(v) => Ok(v),
        Err(RedisError::Backend { message, .. }) if too_large => {
            Err(Fail::new(ErrorCode::ValueTooLarge, message))
        }
        Err(e) => Err(e.into()),
    }
}

/// The value of `kind` for `client` (NUL-terminated: a client id is 1 to 512 bytes, a kind
/// 1 to 128 bytes without `{`, `}` or control bytes): from Redis if it is there, else from
/// `loader(loader_ctx, client, kind, load)`, called by exactly one caller across every
/// process sharing the store while the others wait, at most `timeout_ms` ms (1..=2^48).
///
/// On `KEYROUTE_OK`, `*value_out` is a new buffer of `*len_out` bytes followed by a NUL
/// (not counted), owned by the caller until `keyroute_value_free(*value_out)` (also for
/// an empty value). Nothing is written otherwise.
///
/// * In this process, concurrent callers of one key share one Redis round trip.
/// * The loader runs in the calling thread while a keyroute thread extends its lease
///   every lease/3; its value is stored only if the lease is still current (not
///   invalidated, not taken over), then every waiter is woken.
/// * A stale value (soft TTL passed) is served while one caller refreshes it, when
///   `serve_stale`; that caller gets the fresh value.
/// * A loader that runs past the deadline is not interrupted: the call returns when it
///   does.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_CLIENT_ID`,
/// `KEYROUTE_BAD_KIND`, `KEYROUTE_BAD_TTL` (timeout; all checked before anything is sent);
/// `KEYROUTE_CACHE_TIMEOUT` (the deadline passed first; another caller may still be
/// loading); `KEYROUTE_BACKEND_ERROR` (the loader failed, here or, cached for the
/// negative TTL, in another caller: the message holds its code and message);
/// `KEYROUTE_VALUE_TOO_LARGE` (this call's loader wrote more than `max_value_len`; the
/// other waiters get `KEYROUTE_BACKEND_ERROR` with code `VALUE_TOO_LARGE`); a
/// `KEYROUTE_REDIS_*` or `KEYROUTE_CLUSTER_*` status (Redis unavailable; while waiting, a
/// broken connection is retried until the deadline); `KEYROUTE_BUSY` (in this process,
/// the caller loading the key stopped on a caught panic); `KEYROUTE_INTERNAL`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_get_or_load(
    cache: *const keyroute_cache,
    client: *const c_char,
    kind: *const c_char,
    timeout_ms: i64,
    loader: keyroute_loader,
    loader_ctx: *mut c_void,
    value_out: *mut *mut u8,
    len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; NUL-terminated strings (documented).
        let (c, client, kind) = unsafe {
            (
                get(cache, "cache")?,
                cstr(client, "client")?,
                cstr(kind, "kind")?,
            )
        };
        let value_out = required(value_out, "value_out")?;
        let len_out = required(len_out, "len_out")?;
        let loader = CLoader::new(loader, loader_ctx)?;
        let deadline = deadline(timeout_ms)?;
        let max = c.config().max_value_len;
        let value = get_or_load_with(
            c,
            client.to_bytes(),
            kind.to_bytes(),
            deadline,
            &mut |too_large| loader.call(client, kind, max, too_large),
        )?;
        // SAFETY: checked out-pointers.
        unsafe { deliver_value(&value, value_out, len_out) }
    })
}

/// Drops the value of `kind` for `client` and bumps its fence, so a load in progress is
/// discarded (its value is not stored) and the next caller loads afresh; waiters are
/// woken. Writes 1 to `*existed_out` (if not NULL) when an entry was there, else 0.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_CLIENT_ID`,
/// `KEYROUTE_BAD_KIND` (nothing sent), the `KEYROUTE_REDIS_*` and `KEYROUTE_CLUSTER_*`
/// statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_invalidate(
    cache: *const keyroute_cache,
    client: *const c_char,
    kind: *const c_char,
    existed_out: *mut i32,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; NUL-terminated strings (documented).
        let (c, client, kind) = unsafe {
            (
                get(cache, "cache")?,
                cstr(client, "client")?,
                cstr(kind, "kind")?,
            )
        };
        let existed = c.invalidate(client.to_bytes(), kind.to_bytes())?;
        // SAFETY: NULL or writable (documented).
        unsafe { put(existed_out, i32::from(existed)) };
        Ok(())
    })
}

/// Stores `value_len` bytes at `value` (NULL when `value_len` is 0; at most the cache's
/// `max_value_bytes`) as the value of `kind` for `client`, directly: no loader. The
/// entry's fence is bumped in the same atomic call (the `sc-put` script), so a load in
/// flight for that key, in this process or another, has its value refused and its callers
/// get this one; waiters are woken. Fresh for `ttl_ms` and kept as long; `ttl_ms` 0: the
/// cache's soft and hard TTLs.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_CLIENT_ID`,
/// `KEYROUTE_BAD_KIND`, `KEYROUTE_VALUE_TOO_LARGE`, `KEYROUTE_BAD_TTL` (`ttl_ms` negative
/// or above 2^48) (all checked before anything is sent); the `KEYROUTE_REDIS_*` and
/// `KEYROUTE_CLUSTER_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_put(
    cache: *const keyroute_cache,
    client: *const c_char,
    kind: *const c_char,
    value: *const u8,
    value_len: usize,
    ttl_ms: i64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; NUL-terminated strings; `value_len` bytes.
        let (c, client, kind, value) = unsafe {
            (
                get(cache, "cache")?,
                cstr(client, "client")?,
                cstr(kind, "kind")?,
                bytes(value, value_len, "value")?,
            )
        };
        let ttl = match ttl_ms {
            0 => None,
            t => Some(millis("ttl_ms", t, 1)?),
        };
        c.put(client.to_bytes(), kind.to_bytes(), value, ttl)?;
        Ok(())
    })
}

/// What `keyroute_cache_warm()` did with one kind.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum keyroute_warm_outcome {
    /// Not loaded: fresh already, being loaded by another caller, or with a cached error.
    KEYROUTE_WARM_SKIPPED = 0,
    /// Cold: leased and loaded by this call (stored unless invalidated meanwhile).
    KEYROUTE_WARM_GRANTED = 1,
    /// Cold and leased, but the loader failed (the failure is cached for the negative
    /// TTL).
    KEYROUTE_WARM_FAILED = 2,
}

/// Warms the kinds of the client bound to `device` (see `keyroute_devices_bind()`): one
/// script call leases every cold kind among `kinds[0..count]` (at most
/// `KEYROUTE_MAX_WARM_KINDS`), then `loader(loader_ctx, client, kind, load)` runs for each
/// leased kind, in parallel threads (so the loader must be thread-safe), each under its
/// lease. A login right after finds the values, or waits on the warm-up's leases instead
/// of calling the backend again. The device id is not authenticated: never serve data
/// before login.
///
/// On `KEYROUTE_OK`, `outcomes[i]` (`count` entries; NULL only when `count` is 0) says
/// what became of `kinds[i]`: `KEYROUTE_WARM_GRANTED`, `_SKIPPED` or `_FAILED`.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE`
/// (more than `KEYROUTE_MAX_WARM_KINDS` kinds), `KEYROUTE_BAD_KIND`,
/// `KEYROUTE_BAD_DEVICE_ID` (all checked before anything is sent); `KEYROUTE_NOT_FOUND`
/// (the device is bound to no client: nothing was loaded, `outcomes` untouched);
/// `KEYROUTE_BAD_CLIENT_ID` (the bound client id holds a NUL byte, which a C loader cannot
/// be given; nothing was loaded); the `KEYROUTE_REDIS_*` and `KEYROUTE_CLUSTER_*`
/// statuses. A loader's failure is no error of the call: its kind is
/// `KEYROUTE_WARM_FAILED`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_warm(
    cache: *const keyroute_cache,
    device: *const c_char,
    kinds: *const *const c_char,
    count: usize,
    loader: keyroute_loader,
    loader_ctx: *mut c_void,
    outcomes: *mut keyroute_warm_outcome,
) -> keyroute_status {
    guard(|| {
        check_warm_count(count)?;
        // SAFETY: NULL or a live handle; a NUL-terminated string; arrays of `count`
        // entries (documented).
        let (c, device, ptrs, outcomes) = unsafe {
            (
                get(cache, "cache")?,
                cstr(device, "device")?,
                array(kinds, count, "kinds")?,
                array_mut(outcomes, count, "outcomes")?,
            )
        };
        let mut names: Vec<&CStr> = Vec::with_capacity(ptrs.len());
        for (i, &p) in ptrs.iter().enumerate() {
            // SAFETY: NUL-terminated strings (documented).
            let k = unsafe { cstr(p, &format!("kinds[{i}]")) }?;
            check_kind(k.to_bytes())?;
            names.push(k);
        }
        let loader = CLoader::new(loader, loader_ctx)?;
        let devices = Devices::new(c.store().clone());
        let client = devices
            .client_of(device.to_bytes())?
            .ok_or_else(|| unknown_device(device))?;
        let client_c = CString::new(client.clone()).map_err(|_| {
            Fail::new(
                ErrorCode::BadClientId,
                "the client id bound to the device holds a NUL byte, which a C loader cannot \
                 be given; nothing was loaded",
            )
        })?;
        let max = c.config().max_value_len;
        let raw: Vec<&[u8]> = names.iter().map(|k| k.to_bytes()).collect();
        let report = c.warm_client(&client, &raw, |_, kind| {
            let kind = CString::new(kind).unwrap_or_default();
            loader.call(&client_c, &kind, max, &mut false)
        })?;
        // Back to positions; a kind listed twice is matched in order.
        let (mut granted, mut skipped) = (report.granted, report.skipped);
        let mut failed: Vec<Vec<u8>> = report.failed.into_iter().map(|(k, _)| k).collect();
        fn take(list: &mut Vec<Vec<u8>>, k: &[u8]) -> bool {
            list.iter()
                .position(|x| x == k)
                .map(|i| list.remove(i))
                .is_some()
        }
        for (slot, name) in outcomes.iter_mut().zip(&names) {
            let k = name.to_bytes();
            *slot = if take(&mut failed, k) {
                keyroute_warm_outcome::KEYROUTE_WARM_FAILED
            } else if take(&mut granted, k) {
                keyroute_warm_outcome::KEYROUTE_WARM_GRANTED
            } else if take(&mut skipped, k) {
                keyroute_warm_outcome::KEYROUTE_WARM_SKIPPED
            } else {
                // Leased, but its loader's thread stopped on a caught panic.
                keyroute_warm_outcome::KEYROUTE_WARM_FAILED
            };
        }
        Ok(())
    })
}

/// `KEYROUTE_NOT_FOUND` for a device bound to no client.
fn unknown_device(device: &CStr) -> Fail {
    Fail::new(
        ErrorCode::NotFound,
        format!(
            "device {:?} is bound to no client (unknown, or its binding expired)",
            String::from_utf8_lossy(device.to_bytes())
        ),
    )
}

/// What a `keyroute_cache` did since it was opened, in this process.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct keyroute_cache_counters {
    /// Values served from Redis without loading (fresh, or stale while refreshed).
    pub hits: u64,
    /// Values served, then refreshed by this caller (soft TTL passed, or XFetch).
    pub refreshes: u64,
    /// Leases granted to this process (loads it did), warm-ups included.
    pub leases: u64,
    /// Calls that waited for another process's load.
    pub waits: u64,
    /// Leases that took over an expired lease (its holder died or stalled).
    pub takeovers: u64,
    /// Loaded values not stored because the lease was no longer current.
    pub fenced_fills: u64,
    /// Loader calls.
    pub backend_calls: u64,
    /// Loader calls that failed.
    pub backend_errors: u64,
    /// Calls answered with a cached loader failure.
    pub cached_errors: u64,
    /// Calls served by another thread's call for the same key (no Redis round trip).
    pub coalesced: u64,
}

impl From<Stats> for keyroute_cache_counters {
    fn from(s: Stats) -> Self {
        keyroute_cache_counters {
            hits: s.hits,
            refreshes: s.refreshes,
            leases: s.leases,
            waits: s.waits,
            takeovers: s.takeovers,
            fenced_fills: s.fenced_fills,
            backend_calls: s.backend_calls,
            backend_errors: s.backend_errors,
            cached_errors: s.cached_errors,
            coalesced: s.coalesced,
        }
    }
}

/// Writes the cache's counters (this process, since it was opened) to `*out`. Errors:
/// `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_cache_stats(
    cache: *const keyroute_cache,
    out: *mut keyroute_cache_counters,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle.
        let c = unsafe { get(cache, "cache") }?;
        let out = required(out, "out")?;
        // SAFETY: non-NULL and writable (documented).
        unsafe { out.write(c.stats().into()) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Sessions

/// How `keyroute_sessions` keep sessions. Fill it with
/// `keyroute_session_options_default()`, then change what you need; every value is taken
/// as given (checked when the handle is opened).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct keyroute_session_options {
    /// The sliding lifetime: a session expires this long after its last touch, in ms.
    /// Default 1800000 (30 min). 1..=2^48.
    pub ttl_ms: i64,
    /// The longest a session lives however often it is touched, in ms; 0 = no limit.
    /// Default 0. 0..=2^48.
    pub max_age_ms: i64,
    /// The largest session data, in bytes. Default 1 MiB; 1..=512 MiB.
    pub max_data_len: u64,
    /// Bounds connecting and each Redis reply, in ms (0 = `KEYROUTE_DEFAULT_TIMEOUT_MS`).
    /// Default 0.
    pub timeout_ms: u32,
}

impl keyroute_session_options {
    fn defaults() -> Self {
        let c = SessionConfig::default();
        keyroute_session_options {
            ttl_ms: i64::try_from(c.ttl.as_millis()).unwrap_or(i64::MAX),
            max_age_ms: 0,
            max_data_len: c.max_data_len as u64,
            timeout_ms: 0,
        }
    }

    fn config(&self) -> Res<SessionConfig> {
        let max_age = millis("max_age_ms", self.max_age_ms, 0)?;
        Ok(SessionConfig {
            ttl: millis("ttl_ms", self.ttl_ms, 1)?,
            max_age: (!max_age.is_zero()).then_some(max_age),
            max_data_len: max_len(self.max_data_len)?,
            ..SessionConfig::default()
        })
    }
}

/// Fills `*options` with the defaults: TTL 1800000 ms, no maximum age, data up to 1 MiB,
/// `timeout_ms` 0. Errors: `KEYROUTE_NULL_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_session_options_default(
    options: *mut keyroute_session_options,
) -> keyroute_status {
    guard(|| {
        let out = required(options, "options")?;
        // SAFETY: non-NULL and writable (documented).
        unsafe { out.write(keyroute_session_options::defaults()) };
        Ok(())
    })
}

/// Client sessions on Redis (opaque): any process reads any session from its id alone,
/// with a sliding TTL, an optional maximum age and a service-version check.
///
/// Thread safety: as `keyroute_cache` (thread-safe; `_free` needs exclusive access; open
/// after `fork()`, not before).
#[derive(Debug)]
pub struct keyroute_sessions {
    _opaque: [u8; 0],
}

impl Handle for keyroute_sessions {
    type State = Sessions;
    const TAG: u64 = tag(b"kr-sessn");
    const NAME: &'static str = "keyroute_sessions";
}

/// # Safety
/// As the open exports.
unsafe fn open_sessions(
    target: impl FnOnce() -> Res<Target<'static>>,
    options: *const keyroute_session_options,
    out: *mut *mut keyroute_sessions,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        let options = if options.is_null() {
            keyroute_session_options::defaults()
        } else {
            // SAFETY: non-NULL and readable (documented).
            unsafe { options.read() }
        };
        let config = options.config()?;
        let store = target()?.open(options.timeout_ms)?;
        let sessions = Sessions::new(store, config)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, sessions) };
        Ok(())
    })
}

/// Opens sessions on the standalone Redis at `url` with `options` (NULL = the defaults),
/// connecting now. Errors as `keyroute_cache_open()` (`KEYROUTE_BAD_TTL` for `ttl_ms` or
/// `max_age_ms`, `KEYROUTE_TOO_LARGE` for `max_data_len`). Free with
/// `keyroute_sessions_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_sessions_open(
    url: *const c_char,
    options: *const keyroute_session_options,
    out: *mut *mut keyroute_sessions,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { open_sessions(|| Target::url(url), options, out) }
}

/// Opens sessions on a Redis Cluster from `count` seed nodes; as
/// `keyroute_cache_open_cluster()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_sessions_open_cluster(
    seeds: *const *const c_char,
    count: usize,
    options: *const keyroute_session_options,
    out: *mut *mut keyroute_sessions,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { open_sessions(|| Target::seeds(seeds, count), options, out) }
}

/// Closes the connections and frees the handle (the sessions stay in Redis). NULL is
/// ignored; `KEYROUTE_INVALID_HANDLE` as `keyroute_ring_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_sessions_free(
    sessions: *mut keyroute_sessions,
) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(sessions, "sessions") }
}

/// Checks a caller's session id buffer before anything is sent.
fn sid_buffer(buf: *mut c_char, cap: usize) -> Res<*mut c_char> {
    let buf = required(buf, "sid_out")?;
    if cap < KEYROUTE_SESSION_ID_SIZE {
        return Err(Fail::new(
            ErrorCode::BufferTooSmall,
            format!(
                "`sid_out` holds {cap} bytes; a session id needs KEYROUTE_SESSION_ID_SIZE \
                 ({KEYROUTE_SESSION_ID_SIZE}); nothing was created"
            ),
        ));
    }
    Ok(buf)
}

/// Creates a session for `client` (NUL-terminated, 1 to 512 bytes), made by service
/// `version` (NUL-terminated UTF-8, at most 128 bytes), holding `data_len` bytes at
/// `data` (NULL when `data_len` is 0; at most `max_data_len`). Writes its id, NUL-terminated
/// (`KEYROUTE_SESSION_ID_LEN` characters), to `sid_out` (`sid_cap` bytes, at least
/// `KEYROUTE_SESSION_ID_SIZE`) and its expiry (ms since the Unix epoch, server time) to
/// `*expires_at_ms_out` if not NULL. The id is the session's only secret: give it to the
/// client, never log it.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BUFFER_TOO_SMALL`
/// (`sid_cap`), `KEYROUTE_BAD_UTF8` (version), `KEYROUTE_BAD_CLIENT_ID`,
/// `KEYROUTE_BAD_VERSION`, `KEYROUTE_VALUE_TOO_LARGE` (all checked before anything is
/// sent); `KEYROUTE_BUSY` (four random ids in a row were taken); the `KEYROUTE_REDIS_*`
/// and `KEYROUTE_CLUSTER_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_sessions_create(
    sessions: *const keyroute_sessions,
    client: *const c_char,
    version: *const c_char,
    data: *const u8,
    data_len: usize,
    sid_out: *mut c_char,
    sid_cap: usize,
    expires_at_ms_out: *mut u64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; NUL-terminated strings; `data_len` bytes.
        let (s, client, version, data) = unsafe {
            (
                get(sessions, "sessions")?,
                cstr(client, "client")?,
                text(version, "version")?,
                bytes(data, data_len, "data")?,
            )
        };
        let sid_out = sid_buffer(sid_out, sid_cap)?;
        let new = s.create(client.to_bytes(), version, data)?;
        let id = new.id.as_bytes();
        // SAFETY: `sid_out` holds at least KEYROUTE_SESSION_ID_SIZE bytes (checked).
        unsafe {
            ptr::copy_nonoverlapping(id.as_ptr().cast::<c_char>(), sid_out, id.len());
            sid_out.add(id.len()).write(0);
            put(expires_at_ms_out, new.expires_at);
        }
        Ok(())
    })
}

/// A live session, as `keyroute_sessions_touch()` writes it. The three buffers are
/// values handed out by keyroute (each followed by a NUL, not counted): release them
/// with `keyroute_session_info_clear()` (or `keyroute_value_free()` each).
///
/// Start from a zeroed struct (`keyroute_session_info s = {0};` in C, `{}` in C++):
/// clearing a zeroed struct does nothing.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct keyroute_session_info {
    /// The client id the session was created for.
    pub client: *mut u8,
    /// Its length.
    pub client_len: usize,
    /// The session's data.
    pub data: *mut u8,
    /// Its length.
    pub data_len: usize,
    /// The service version that created the session (also written, alone, with
    /// `KEYROUTE_VERSION_MISMATCH`).
    pub version: *mut u8,
    /// Its length.
    pub version_len: usize,
    /// The new expiry, ms since the Unix epoch (server time).
    pub expires_at_ms: u64,
}

/// Frees the buffers of `*info` (NULL ones are skipped) and zeroes it; NULL is ignored.
/// Errors: `KEYROUTE_INVALID_HANDLE` as `keyroute_value_free()` for a field that is not a
/// live value: that field and the ones after it (`client`, `data`, `version` in that order)
/// are left as they are; the ones before it were freed and set to NULL.
#[no_mangle]
pub unsafe extern "C" fn keyroute_session_info_clear(
    info: *mut keyroute_session_info,
) -> keyroute_status {
    guard(|| {
        if info.is_null() {
            return Ok(());
        }
        // SAFETY: non-NULL, readable and writable (documented).
        let i = unsafe { &mut *info };
        for (p, arg) in [
            (&mut i.client, "info->client"),
            (&mut i.data, "info->data"),
            (&mut i.version, "info->version"),
        ] {
            // SAFETY: NULL or a value keyroute handed out (documented).
            let st = unsafe { keyroute_value_free(*p) };
            if st != keyroute_status::KEYROUTE_OK {
                return Err(Fail::new(
                    status_code(st),
                    format!("`{arg}` is not a live keyroute value"),
                ));
            }
            *p = ptr::null_mut();
        }
        i.client_len = 0;
        i.data_len = 0;
        i.version_len = 0;
        i.expires_at_ms = 0;
        Ok(())
    })
}

/// The code of an error status (only statuses of codes reach here).
fn status_code(st: keyroute_status) -> ErrorCode {
    u16::try_from(st as i32)
        .ok()
        .and_then(ErrorCode::from_number)
        .unwrap_or(ErrorCode::Internal)
}

/// Reads session `sid` (NUL-terminated) and slides its expiry. With `version` not NULL
/// (NUL-terminated UTF-8), a session made by another service version is not touched.
///
/// * `KEYROUTE_OK`: the session is live; `*info_out` holds its client, data, version and
///   new expiry (release with `keyroute_session_info_clear()`).
/// * `KEYROUTE_SESSION_EXPIRED`: it does not exist or expired: log in again. Nothing
///   written.
/// * `KEYROUTE_VERSION_MISMATCH`: it was created by another service version, which is
///   written, alone, to `info_out->version` and `->version_len` (the other fields are
///   zeroed; release with `keyroute_session_info_clear()`) and named in the message.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_SESSION_ID`
/// (not an id keyroute gives), `KEYROUTE_BAD_UTF8` and `KEYROUTE_BAD_VERSION` (version;
/// all checked before anything is sent), the `KEYROUTE_REDIS_*` and
/// `KEYROUTE_CLUSTER_*` statuses. Messages never show the session id.
#[no_mangle]
pub unsafe extern "C" fn keyroute_sessions_touch(
    sessions: *const keyroute_sessions,
    sid: *const c_char,
    version: *const c_char,
    info_out: *mut keyroute_session_info,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; NUL-terminated strings.
        let (s, sid) = unsafe { (get(sessions, "sessions")?, cstr(sid, "sid")?) };
        let version = if version.is_null() {
            None
        } else {
            // SAFETY: NUL-terminated (documented).
            Some(unsafe { text(version, "version") }?)
        };
        let info_out = required(info_out, "info_out")?;
        match s.touch(sid.to_bytes(), version)? {
            Touch::Live {
                client,
                data,
                expires_at,
                version,
            } => {
                let mut info = keyroute_session_info {
                    client: ptr::null_mut(),
                    client_len: client.len(),
                    data: ptr::null_mut(),
                    data_len: data.len(),
                    version: ptr::null_mut(),
                    version_len: version.len(),
                    expires_at_ms: expires_at,
                };
                let made = (|| {
                    info.client = hand_out_bytes(&client)?;
                    info.data = hand_out_bytes(&data)?;
                    info.version = hand_out_bytes(&version)?;
                    Ok(())
                })();
                if let Err(e) = made {
                    // SAFETY: values made just above, or NULL.
                    unsafe {
                        let _ = keyroute_value_free(info.client);
                        let _ = keyroute_value_free(info.data);
                    }
                    return Err(e);
                }
                // SAFETY: non-NULL and writable (documented).
                unsafe { info_out.write(info) };
                Ok(())
            }
            Touch::Expired => Err(Fail::new(
                ErrorCode::SessionExpired,
                ErrorCode::SessionExpired.summary(),
            )),
            Touch::VersionMismatch { stored } => {
                let p = hand_out_bytes(&stored)?;
                // SAFETY: non-NULL and writable (documented).
                unsafe {
                    info_out.write(keyroute_session_info {
                        client: ptr::null_mut(),
                        client_len: 0,
                        data: ptr::null_mut(),
                        data_len: 0,
                        version: p,
                        version_len: stored.len(),
                        expires_at_ms: 0,
                    })
                };
                Err(Fail::new(
                    ErrorCode::VersionMismatch,
                    format!(
                        "the session was created by service version {:?}, not {:?}; it was \
                         not touched (info_out->version holds the stored version)",
                        String::from_utf8_lossy(&stored),
                        version.unwrap_or_default()
                    ),
                ))
            }
        }
    })
}

/// Removes session `sid`; writes 1 to `*was_live_out` (if not NULL) when it was live,
/// else 0. Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`,
/// `KEYROUTE_BAD_SESSION_ID` (nothing sent), the `KEYROUTE_REDIS_*` and
/// `KEYROUTE_CLUSTER_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_sessions_destroy(
    sessions: *const keyroute_sessions,
    sid: *const c_char,
    was_live_out: *mut i32,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; a NUL-terminated string.
        let (s, sid) = unsafe { (get(sessions, "sessions")?, cstr(sid, "sid")?) };
        let was = s.destroy(sid.to_bytes())?;
        // SAFETY: NULL or writable (documented).
        unsafe { put(was_live_out, i32::from(was)) };
        Ok(())
    })
}

/// One live session of a client, as `keyroute_sessions_list()` writes it.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct keyroute_session_entry {
    /// The session id, NUL-terminated.
    pub sid: [c_char; KEYROUTE_SESSION_ID_SIZE],
    /// Its expiry, ms since the Unix epoch (server time).
    pub expires_at_ms: u64,
}

/// Lists the live sessions of `client`, soonest expiry first: writes them to
/// `entries[0..n]` and `n` to `*count_out`.
///
/// When there are more than `cap`, returns `KEYROUTE_BUFFER_TOO_SMALL` with the number
/// in `*count_out` and writes no entry: call again with a larger array (the list may have
/// changed by then). `entries` may be NULL when `cap` is 0 (to ask for the number).
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE`
/// (`cap` above `KEYROUTE_MAX_BATCH`), `KEYROUTE_BAD_CLIENT_ID` (nothing sent), the
/// `KEYROUTE_REDIS_*` and `KEYROUTE_CLUSTER_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_sessions_list(
    sessions: *const keyroute_sessions,
    client: *const c_char,
    entries: *mut keyroute_session_entry,
    cap: usize,
    count_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; a NUL-terminated string; `cap` writable entries.
        let (s, client, entries) = unsafe {
            (
                get(sessions, "sessions")?,
                cstr(client, "client")?,
                array_mut(entries, cap, "entries")?,
            )
        };
        let count_out = required(count_out, "count_out")?;
        let list = s.list(client.to_bytes())?;
        // SAFETY: non-NULL and writable (documented).
        unsafe { count_out.write(list.len()) };
        if list.len() > entries.len() {
            return Err(Fail::new(
                ErrorCode::BufferTooSmall,
                format!(
                    "the client has {} live sessions, `entries` holds {}; *count_out holds \
                     the number",
                    list.len(),
                    entries.len()
                ),
            ));
        }
        for (slot, (sid, at)) in entries.iter_mut().zip(&list) {
            let mut e = keyroute_session_entry {
                sid: [0; KEYROUTE_SESSION_ID_SIZE],
                expires_at_ms: *at,
            };
            for (d, &b) in e.sid.iter_mut().zip(sid.as_bytes()) {
                *d = b as c_char;
            }
            *slot = e;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// Devices

/// Device → client bindings on Redis (opaque), for warm-up before login.
///
/// Thread safety: as `keyroute_cache` (thread-safe; `_free` needs exclusive access; open
/// after `fork()`, not before).
#[derive(Debug)]
pub struct keyroute_devices {
    _opaque: [u8; 0],
}

impl Handle for keyroute_devices {
    type State = Devices;
    const TAG: u64 = tag(b"kr-devic");
    const NAME: &'static str = "keyroute_devices";
}

/// # Safety
/// As the open exports.
unsafe fn open_devices(
    target: impl FnOnce() -> Res<Target<'static>>,
    timeout_ms: u32,
    out: *mut *mut keyroute_devices,
) -> keyroute_status {
    guard(|| {
        let out = required(out, "out")?;
        let store = target()?.open(timeout_ms)?;
        // SAFETY: non-NULL out-pointer.
        unsafe { hand_out(out, Devices::new(store)) };
        Ok(())
    })
}

/// Opens device bindings on the standalone Redis at `url`, connecting now; `timeout_ms`
/// bounds connecting and each reply (0 = `KEYROUTE_DEFAULT_TIMEOUT_MS`). Errors as
/// `keyroute_cache_open()`. Free with `keyroute_devices_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_devices_open(
    url: *const c_char,
    timeout_ms: u32,
    out: *mut *mut keyroute_devices,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { open_devices(|| Target::url(url), timeout_ms, out) }
}

/// Opens device bindings on a Redis Cluster from `count` seed nodes; as
/// `keyroute_cache_open_cluster()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_devices_open_cluster(
    seeds: *const *const c_char,
    count: usize,
    timeout_ms: u32,
    out: *mut *mut keyroute_devices,
) -> keyroute_status {
    // SAFETY: as documented.
    unsafe { open_devices(|| Target::seeds(seeds, count), timeout_ms, out) }
}

/// Closes the connections and frees the handle (the bindings stay in Redis). NULL is
/// ignored; `KEYROUTE_INVALID_HANDLE` as `keyroute_ring_free()`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_devices_free(devices: *mut keyroute_devices) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(devices, "devices") }
}

/// Binds `device` (NUL-terminated, 1 to 256 bytes without `{`, `}` or control bytes) to
/// `client` (1 to 512 bytes) for `ttl_ms` ms (1..=2^48), replacing any binding (at login).
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_DEVICE_ID`,
/// `KEYROUTE_BAD_CLIENT_ID`, `KEYROUTE_BAD_TTL` (nothing sent), the `KEYROUTE_REDIS_*` and
/// `KEYROUTE_CLUSTER_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_devices_bind(
    devices: *const keyroute_devices,
    device: *const c_char,
    client: *const c_char,
    ttl_ms: i64,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; NUL-terminated strings.
        let (d, device, client) = unsafe {
            (
                get(devices, "devices")?,
                cstr(device, "device")?,
                cstr(client, "client")?,
            )
        };
        keyroute_core::cache::check_device_id(device.to_bytes())?;
        keyroute_core::cache::check_client_id(client.to_bytes())?;
        let ttl = millis("ttl_ms", ttl_ms, 1)?;
        d.bind(device.to_bytes(), client.to_bytes(), ttl)?;
        Ok(())
    })
}

/// The client `device` is bound to: on `KEYROUTE_OK`, `*client_out` is a new buffer of
/// `*len_out` bytes followed by a NUL (not counted); free it with `keyroute_value_free()`.
///
/// Errors: `KEYROUTE_NOT_FOUND` (no binding: unknown device, or it expired; nothing
/// written), `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_BAD_DEVICE_ID`
/// (nothing sent), the `KEYROUTE_REDIS_*` and `KEYROUTE_CLUSTER_*` statuses.
#[no_mangle]
pub unsafe extern "C" fn keyroute_devices_client_of(
    devices: *const keyroute_devices,
    device: *const c_char,
    client_out: *mut *mut u8,
    len_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live handle; a NUL-terminated string.
        let (d, device) = unsafe { (get(devices, "devices")?, cstr(device, "device")?) };
        let client_out = required(client_out, "client_out")?;
        let len_out = required(len_out, "len_out")?;
        let client = d
            .client_of(device.to_bytes())?
            .ok_or_else(|| unknown_device(device))?;
        // SAFETY: checked out-pointers.
        unsafe { deliver_value(&client, client_out, len_out) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::keyroute_status::*;
    use crate::status::status_of;
    use keyroute_core::cache::{SessionId, DEFAULT_MAX_VALUE_LEN, MAX_WARM_KINDS};

    /// The status of a session-id check.
    fn parse_sid(s: &[u8]) -> keyroute_status {
        match SessionId::parse(s) {
            Ok(_) => KEYROUTE_OK,
            Err(e) => status_of(e.code()),
        }
    }

    #[test]
    fn constants_are_the_cores() {
        assert_eq!(KEYROUTE_SESSION_ID_LEN, SessionId::LEN);
        assert_eq!(KEYROUTE_SESSION_ID_SIZE, SessionId::LEN + 1);
        assert_eq!(KEYROUTE_MAX_WARM_KINDS, MAX_WARM_KINDS);
        assert_eq!(parse_sid(b"x"), KEYROUTE_BAD_SESSION_ID);
    }

    #[test]
    fn defaults_are_the_crates() {
        let mut o = keyroute_cache_options::defaults();
        assert_eq!(
            unsafe { keyroute_cache_options_default(&mut o) },
            KEYROUTE_OK
        );
        assert_eq!(
            (o.lease_ms, o.soft_ttl_ms, o.hard_ttl_ms, o.neg_ttl_ms),
            (2000, 60_000, 600_000, 1000)
        );
        assert_eq!(o.max_value_len, DEFAULT_MAX_VALUE_LEN as u64);
        assert_eq!((o.serve_stale, o.xfetch_beta, o.timeout_ms), (1, 1.0, 0));
        assert!(o.config().is_ok());
        let s = keyroute_session_options::defaults();
        assert_eq!((s.ttl_ms, s.max_age_ms), (1_800_000, 0));
        assert_eq!(s.config().expect("the defaults are valid").max_age, None);
        assert_eq!(
            unsafe { keyroute_cache_options_default(ptr::null_mut()) },
            KEYROUTE_NULL_ARGUMENT
        );
    }

    #[test]
    fn options_are_checked() {
        let o = keyroute_cache_options::defaults();
        let status = |o: keyroute_cache_options| o.config().unwrap_err().status();
        assert_eq!(
            status(keyroute_cache_options { lease_ms: 0, ..o }),
            KEYROUTE_BAD_TTL
        );
        assert_eq!(
            status(keyroute_cache_options {
                neg_ttl_ms: -1,
                ..o
            }),
            KEYROUTE_BAD_TTL
        );
        assert!(keyroute_cache_options { neg_ttl_ms: 0, ..o }
            .config()
            .is_ok());
        assert_eq!(
            status(keyroute_cache_options {
                xfetch_beta: f64::NAN,
                ..o
            }),
            KEYROUTE_BAD_TTL
        );
        assert_eq!(
            status(keyroute_cache_options {
                max_value_len: u64::MAX,
                ..o
            }),
            KEYROUTE_TOO_LARGE
        );
        let s = keyroute_session_options::defaults();
        assert!(keyroute_session_options {
            max_age_ms: -5,
            ..s
        }
        .config()
        .is_err());
    }

    /// The throwaway server `tests/with_redis.sh` started (`make test-c-rust` runs these
    /// tests under it).
    fn redis_url() -> CString {
        let url = std::env::var("KEYROUTE_TEST_REDIS_URL")
            .expect("KEYROUTE_TEST_REDIS_URL: run under bindings-c/tests/with_redis.sh");
        CString::new(url).expect("KEYROUTE_TEST_REDIS_URL has no NUL byte")
    }

    fn last_message() -> String {
        unsafe { CStr::from_ptr(crate::status::keyroute_last_error_message()) }
            .to_string_lossy()
            .into_owned()
    }

    /// Counts its calls (`ctx` is an `AtomicUsize`) and loads `b"v"`.
    unsafe extern "C" fn counting(
        ctx: *mut c_void,
        _client: *const c_char,
        _kind: *const c_char,
        load: *mut keyroute_load,
    ) -> i32 {
        let calls = unsafe { &*(ctx as *const std::sync::atomic::AtomicUsize) };
        calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        unsafe { keyroute_load_write(load, b"v".as_ptr(), 1) as i32 }
    }

    /// A panic while a loader runs (here in the Rust part around it) is caught at the
    /// boundary as `KEYROUTE_INTERNAL`; the lease is released with `LOADER_PANIC` cached,
    /// so another caller gets `KEYROUTE_BACKEND_ERROR` at once without loading, and a
    /// caller waiting in this process gets `KEYROUTE_BUSY`; nothing unwinds into C.
    #[test]
    fn a_panic_while_loading_is_internal_and_releases_the_lease() {
        let url = redis_url();
        let mut options = keyroute_cache_options::defaults();
        options.neg_ttl_ms = 60_000;
        let mut h: *mut keyroute_cache = ptr::null_mut();
        assert_eq!(
            unsafe { keyroute_cache_open(url.as_ptr(), &options, &mut h) },
            KEYROUTE_OK,
            "{}",
            last_message()
        );
        let cache = unsafe { get(h, "cache") }.expect("the handle just opened is live");
        let deadline = Instant::now() + Duration::from_secs(10);
        let follower = std::thread::scope(|s| {
            let leader = s.spawn(|| {
                guard(|| {
                    get_or_load_with(cache, b"client-panic", b"accounts", deadline, &mut |_| {
                        std::thread::sleep(Duration::from_millis(300));
                        panic!("boom in the loader")
                    })
                    .map(drop)
                })
            });
            std::thread::sleep(Duration::from_millis(100));
            let follower = s.spawn(|| {
                let st = guard(|| {
                    get_or_load_with(cache, b"client-panic", b"accounts", deadline, &mut |_| {
                        Ok(b"never".to_vec())
                    })
                    .map(drop)
                });
                (st, last_message())
            });
            let st = leader.join().expect("the panic was caught");
            assert_eq!(st, KEYROUTE_INTERNAL);
            follower.join().expect("no panic")
        });
        assert_eq!(follower.0, KEYROUTE_BUSY, "{}", follower.1);
        assert!(follower.1.contains("panicked"), "{}", follower.1);

        let calls = std::sync::atomic::AtomicUsize::new(0);
        let (client, kind) = (c"client-panic", c"accounts");
        let (mut v, mut n) = (ptr::null_mut(), 0usize);
        let st = unsafe {
            keyroute_cache_get_or_load(
                h,
                client.as_ptr(),
                kind.as_ptr(),
                5000,
                Some(counting),
                &calls as *const _ as *mut c_void,
                &mut v,
                &mut n,
            )
        };
        let msg = last_message();
        assert_eq!(st, KEYROUTE_BACKEND_ERROR, "{msg}");
        assert!(msg.contains("LOADER_PANIC"), "{msg}");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert!(v.is_null());
        // A loader that works, on another key: one call, the value handed out.
        let st = unsafe {
            keyroute_cache_get_or_load(
                h,
                client.as_ptr(),
                c"cards".as_ptr(),
                5000,
                Some(counting),
                &calls as *const _ as *mut c_void,
                &mut v,
                &mut n,
            )
        };
        assert_eq!(st, KEYROUTE_OK, "{}", last_message());
        assert_eq!(unsafe { std::slice::from_raw_parts(v, n + 1) }, b"v\0");
        assert_eq!(unsafe { keyroute_value_free(v) }, KEYROUTE_OK);
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(unsafe { keyroute_cache_free(h) }, KEYROUTE_OK);
    }

    #[test]
    fn values_are_tagged_and_nul_terminated() {
        let Ok(p) = hand_out_bytes(b"abc") else {
            panic!("hand_out_bytes refused a small value");
        };
        unsafe {
            assert_eq!(std::slice::from_raw_parts(p, 4), b"abc\0");
            assert_eq!(keyroute_value_free(p), KEYROUTE_OK);
            assert_eq!(keyroute_value_free(ptr::null_mut()), KEYROUTE_OK);
        }
        let Ok(e) = hand_out_bytes(b"") else {
            panic!("hand_out_bytes refused a small value");
        };
        assert!(!e.is_null());
        unsafe {
            assert_eq!(keyroute_value_free(e), KEYROUTE_OK);
        }
        // A pointer into a live value is refused (nothing freed).
        let Ok(v) = hand_out_bytes(&[7u8; 64]) else {
            panic!("hand_out_bytes refused a small value");
        };
        unsafe {
            assert_eq!(keyroute_value_free(v.add(1)), KEYROUTE_INVALID_HANDLE);
            assert_eq!(keyroute_value_free(v.add(16)), KEYROUTE_INVALID_HANDLE);
            assert_eq!(keyroute_value_free(v), KEYROUTE_OK);
        }
        let mut z = keyroute_session_info {
            client: ptr::null_mut(),
            client_len: 0,
            data: ptr::null_mut(),
            data_len: 0,
            version: ptr::null_mut(),
            version_len: 0,
            expires_at_ms: 0,
        };
        unsafe {
            assert_eq!(keyroute_session_info_clear(&mut z), KEYROUTE_OK);
            assert_eq!(keyroute_session_info_clear(ptr::null_mut()), KEYROUTE_OK);
        }
    }
}
