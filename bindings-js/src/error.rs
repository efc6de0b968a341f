//! Errors and the checks every raw export shares.
//!
//! Every failure reaches JavaScript as an `Error` whose `code` is the name of a core
//! [`ErrorCode`] (`ZERO_WEIGHT`, `BAD_RANGE`, `TOO_LARGE`, …; the table is
//! `docs/errors.md`): core errors keep their own `code()`, and the checks of this crate
//! use the generic entrance codes (`BAD_TYPE`, `OUT_OF_RANGE`, `TOO_LARGE`, `BAD_UTF8`).
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU32, Ordering};

#[cfg(feature = "cache")]
use keyroute::cache::{InputError, ReplyError};
use keyroute::error::{ErrorCode, Int};
#[cfg(any(feature = "routing", feature = "cluster"))]
use keyroute::ring::RingError;
#[cfg(any(feature = "routing", feature = "cache"))]
use keyroute::select::{KeyError, PoolError, UnknownRestoreMode};
#[cfg(feature = "cluster")]
use keyroute::slot::{AddressError, MapError, PlanError, RedirectError};
use wasm_bindgen::prelude::*;

/// An error on its way to JavaScript: a `code` and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsError {
    /// The code, e.g. [`ErrorCode::ZeroWeight`].
    pub code: ErrorCode,
    /// Human-readable message (core's `Display`, or this crate's text).
    pub message: String,
}

impl JsError {
    /// An error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        JsError {
            code,
            message: message.into(),
        }
    }
}

/// `args` as a string: `format!` without its `expect` (writing to a `String` cannot fail),
/// whose panic message would bring `&str` padding code into the .wasm.
pub fn text(args: fmt::Arguments<'_>) -> String {
    let mut s = String::new();
    let _ = s.write_fmt(args);
    s
}

/// An integer as decimal text.
pub fn decimal(n: i128) -> String {
    text(format_args!("{}", Int(n)))
}

// `new Error(message)` and `error.code = code`, declared here: js-sys would bring its
// futures runtime into the .wasm (see Cargo.toml).
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = Error)]
    type JsErrorObject;
    #[wasm_bindgen(constructor, js_class = "Error")]
    fn new(message: &str) -> JsErrorObject;
    #[wasm_bindgen(method, setter = code)]
    fn set_code(this: &JsErrorObject, code: &str);
}

impl From<JsError> for JsValue {
    fn from(e: JsError) -> JsValue {
        let err = JsErrorObject::new(&e.message);
        err.set_code(e.code.as_str());
        err.into()
    }
}

/// Core errors: each keeps its own code.
macro_rules! coded {
    ($($t:ty),*) => {$(
        impl From<$t> for JsError {
            fn from(e: $t) -> Self {
                JsError::new(e.code(), text(format_args!("{e}")))
            }
        }
    )*};
}
#[cfg(feature = "routing")]
coded!(RingError, PoolError, KeyError, UnknownRestoreMode);
#[cfg(feature = "cluster")]
coded!(MapError, PlanError, RedirectError, AddressError);
#[cfg(all(feature = "cluster", not(feature = "routing")))]
coded!(RingError);
#[cfg(feature = "cache")]
coded!(InputError, ReplyError);
// The pools on Redis and the frame codec of `keyroute serve` (the Node module).
#[cfg(feature = "cache")]
coded!(
    keyroute::select::AffinityError,
    keyroute::frame::HeaderError
);
#[cfg(all(feature = "cache", not(feature = "routing")))]
coded!(PoolError, KeyError, UnknownRestoreMode);
#[cfg(feature = "fleet")]
coded!(keyroute::engine::EngineError);
#[cfg(all(feature = "fleet", not(any(feature = "routing", feature = "cluster"))))]
coded!(keyroute::ring::RingError);

/// Every error code as `[name, number, name, number, …]` (`ERROR_CODES` in JavaScript).
#[wasm_bindgen(js_name = rawErrorCodes)]
pub fn raw_error_codes() -> Vec<String> {
    let mut out = Vec::with_capacity(2 * ErrorCode::ALL.len());
    for c in ErrorCode::ALL {
        out.push(String::from(c.as_str()));
        out.push(decimal(c.number().into()));
    }
    out
}

/// Core's limits of one call and its slot count: `i` = 0 `MAX_KEYS_PER_CALL`, 1
/// `MAX_BATCH_BYTES`, 2 `MAX_KEY_BYTES`, 3 `MAX_PICKS_PER_CALL`, 4 `SLOT_COUNT`, 5
/// `RECLAIM_BATCH` (the leases of `keyroute/redis`) (0 past them). Every module has it: the JS glue's `LIMITS` and `SLOT_COUNT`, and its checks
/// before a list or a key crosses. (One number per call: the smallest export, where an
/// array cost 0.1 KB gzipped in each module.)
#[wasm_bindgen(js_name = rawLimit)]
pub fn raw_limit(i: u32) -> u32 {
    use keyroute::keys::{MAX_BATCH_BYTES, MAX_KEYS_PER_CALL, MAX_KEY_BYTES};
    use keyroute::select::MAX_PICKS_PER_CALL;
    let n = match i {
        0 => MAX_KEYS_PER_CALL,
        1 => MAX_BATCH_BYTES,
        2 => MAX_KEY_BYTES,
        3 => MAX_PICKS_PER_CALL,
        4 => usize::from(keyroute::slot::SLOT_COUNT),
        5 => keyroute::select::RECLAIM_BATCH,
        _ => 0,
    };
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// An integer of an array a caller gave, as the double JavaScript passed (integer
/// parameters cross as `i128`, converted exactly from a number or a bigint): the JS glue
/// has checked its type (a number, integral, below 2^127 in magnitude, with messages
/// showing the value); this check repeats it so that no export converts a value it was
/// not meant to.
///
/// # Errors
/// `BAD_TYPE` for NaN or a fraction, `OUT_OF_RANGE` beyond ±2^127.
pub fn int(x: f64) -> Result<i128, JsError> {
    const LIMIT: f64 = 170_141_183_460_469_231_731_687_303_715_884_105_728.0; // 2^127
    if x.is_nan() || (x.is_finite() && !is_integer(x)) {
        return Err(JsError::new(
            ErrorCode::BadType,
            "an integer parameter was given a number that is not an integer",
        ));
    }
    if !(x > -LIMIT && x < LIMIT) {
        return Err(JsError::new(
            ErrorCode::OutOfRange,
            "a number is beyond the range of 128-bit integers",
        ));
    }
    Ok(x as i128)
}

/// `i128::MIN`: "not given" in an optional integer parameter (the JS glue never passes
/// it: every integer it passes is above -2^127).
pub const NONE: i128 = i128::MIN;

/// An optional integer parameter (see [`NONE`]).
pub fn given(x: i128) -> Option<i128> {
    (x != NONE).then_some(x)
}

/// Whether a finite double holds an integer (`f64::fract` needs std).
pub fn is_integer(x: f64) -> bool {
    x.is_finite() && (x.abs() >= 4_503_599_627_370_496.0 || (x as i64) as f64 == x)
}

/// Makes sure `bytes` more bytes can be allocated before an export allocates them: an
/// allocation that fails in wasm traps (and leaves the module unusable), a refused probe
/// is an error the caller can act on. The probe's memory is freed at once and serves the
/// allocations that follow.
///
/// # Errors
/// `TOO_LARGE` when the wasm memory (at most 4 GiB) cannot hold `bytes` more.
pub fn room(bytes: u64, what: &str) -> Result<(), JsError> {
    let mut probe: Vec<u8> = Vec::new();
    match usize::try_from(bytes)
        .ok()
        .filter(|&n| probe.try_reserve_exact(n).is_ok())
    {
        Some(_) => Ok(()),
        None => {
            // `what` pushed, not formatted as `{}` (no padding code in the .wasm).
            let mut message = String::from(what);
            message.push_str(&text(format_args!(
                " needs {bytes} bytes, more than the WebAssembly memory (at most 4 GiB) has \
                 left; free() rings, pools or slot maps no longer needed, or make it smaller"
            )));
            Err(JsError {
                code: ErrorCode::TooLarge,
                message,
            })
        }
    }
}

/// Probes for `bytes` (see [`room`]); the JS glue calls it before handing wasm a large
/// buffer (wasm-bindgen's own copy would trap when it cannot allocate).
#[wasm_bindgen(js_name = rawRoom)]
pub fn raw_room(bytes: f64) -> Result<(), JsError> {
    room(saturate(int(bytes)?), "this call")
}

/// `x` clamped to `0..=u64::MAX` (not `Ord::clamp`: its assertion message would bring
/// `i128`'s `Debug` and 128-bit division into the .wasm).
pub fn saturate(x: i128) -> u64 {
    u64::try_from(x.max(0)).unwrap_or(u64::MAX)
}

/// Splits a packed batch (`data` cut at the end offsets `ends`) into byte slices.
///
/// # Errors
/// As [`for_each_packed`].
pub fn unpack<'a>(data: &'a [u8], ends: &[u32]) -> Result<Vec<&'a [u8]>, JsError> {
    let mut out = Vec::with_capacity(ends.len());
    for_each_packed(data, ends, |_, k| out.push(k))?;
    Ok(out)
}

/// As [`unpack`], as strings.
///
/// # Errors
/// As [`for_each_packed`]; `BAD_UTF8` for bytes that are not UTF-8.
pub fn unpack_str<'a>(data: &'a [u8], ends: &[u32]) -> Result<Vec<&'a str>, JsError> {
    let mut out = Vec::with_capacity(ends.len());
    for k in unpack(data, ends)? {
        out.push(
            core::str::from_utf8(k).map_err(|_| {
                JsError::new(ErrorCode::BadUtf8, "a name or text is not valid UTF-8")
            })?,
        );
    }
    Ok(out)
}

/// Calls `f(i, key i)` on every key of a packed batch (`data` cut at the end offsets
/// `ends`) without collecting them.
///
/// # Errors
/// `BAD_TYPE` when the offsets decrease or run past the buffer (`f` may have run on the
/// keys before); the JS glue never builds such a batch.
pub fn for_each_packed<'a>(
    data: &'a [u8],
    ends: &[u32],
    mut f: impl FnMut(usize, &'a [u8]),
) -> Result<(), JsError> {
    let mut start = 0usize;
    for (i, &end) in ends.iter().enumerate() {
        let end = end as usize;
        if end < start || end > data.len() {
            return Err(JsError::new(
                ErrorCode::BadType,
                "batch offsets do not match the key buffer",
            ));
        }
        f(i, &data[start..end]);
        start = end;
    }
    Ok(())
}

/// Live Rust values behind JavaScript handles (rings, slot maps, plans, pools).
static LIVE: AtomicU32 = AtomicU32::new(0);

/// A field that counts its owner among the live handles while it exists.
#[derive(Debug)]
pub struct Live(());

impl Default for Live {
    fn default() -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Live(())
    }
}

impl Clone for Live {
    fn clone(&self) -> Self {
        Live::default()
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// How many rings, slot maps, plans and pools are alive in wasm memory: what `free()` and
/// the FinalizationRegistry release (`liveHandles()` in JavaScript).
#[wasm_bindgen(js_name = rawLiveHandles)]
pub fn raw_live_handles() -> u32 {
    LIVE.load(Ordering::Relaxed)
}
