//! Errors: every failure reaches JavaScript as an `Error` whose `code` says what kind.
//!
//! | code | when |
//! |---|---|
//! | `EMPTY_NODE_NAME`, `ZERO_WEIGHT`, `NEGATIVE_WEIGHT`, `WEIGHT_TOO_LARGE`, `BAD_WEIGHT` | node weights and names |
//! | `DUPLICATE_NODE`, `UNKNOWN_NODE` | ring membership |
//! | `UNKNOWN_PROFILE`, `BAD_VNODES`, `BAD_POINTS_PER_DIGEST`, `BAD_PORT` | ring options |
//! | `TOO_MANY_POINTS`, `INCOMPATIBLE_RINGS` | ring size, `diff` of rings hashing differently |
//! | `SLOT_MAP`, `BAD_SLOT`, `BAD_ADDRESS`, `PLAN`, `REDIRECT` | slot map, resharding plan, `MOVED`/`ASK` parsing |
//! | `POOL`, `BAD_COUNT`, `BAD_RESTORE_MODE` | the in-memory pool |
//! | `INVALID_ARGUMENT` | a batch buffer that does not match its offsets |
use alloc::string::{String, ToString};
use core::fmt::Display;

use keyroute::ring::RingError;
use wasm_bindgen::prelude::*;

/// An error on its way to JavaScript: a `code` and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsError {
    /// Stable machine-readable kind, e.g. `ZERO_WEIGHT`.
    pub code: &'static str,
    /// Human-readable message (from core's `Display`).
    pub message: String,
}

impl JsError {
    /// An error with `code` and the display of `err` as message.
    pub fn new(code: &'static str, err: impl Display) -> Self {
        JsError {
            code,
            message: err.to_string(),
        }
    }
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
        err.set_code(e.code);
        err.into()
    }
}

impl From<RingError> for JsError {
    fn from(e: RingError) -> Self {
        JsError::new(e.code().as_str(), &e)
    }
}

/// Splits a packed batch (`data` cut at the end offsets `ends`) into byte slices.
///
/// # Errors
/// As [`for_each_packed`].
pub fn unpack<'a>(data: &'a [u8], ends: &[u32]) -> Result<alloc::vec::Vec<&'a [u8]>, JsError> {
    let mut out = alloc::vec::Vec::with_capacity(ends.len());
    for_each_packed(data, ends, |_, k| out.push(k))?;
    Ok(out)
}

/// Calls `f(i, key i)` on every key of a packed batch (`data` cut at the end offsets
/// `ends`) without collecting them.
///
/// # Errors
/// `INVALID_ARGUMENT` when the offsets decrease or run past the buffer (`f` may have run
/// on the keys before).
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
                "INVALID_ARGUMENT",
                "batch offsets do not match the key buffer",
            ));
        }
        f(i, &data[start..end]);
        start = end;
    }
    Ok(())
}

/// Whether a finite double holds an integer (`f64::fract` needs std).
pub fn is_integer(x: f64) -> bool {
    x.is_finite() && (x.abs() >= 4_503_599_627_370_496.0 || (x as i64) as f64 == x)
}
