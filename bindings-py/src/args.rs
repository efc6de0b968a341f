//! Arguments as Python gives them, checked before anything is converted or allocated.
//!
//! Every entry point takes its arguments as Python objects and converts them here, so
//! that a wrong type, a number that fits no integer, or text that is not UTF-8 raises a
//! keyroute exception with its code (`BAD_TYPE`, `OUT_OF_RANGE`, `BAD_UTF8`) rather than
//! pyo3's uncoded `TypeError`/`OverflowError`. Integers go to the core as `i128`, where
//! their range is checked (`Profile::from_options`, `checked_weight`, `checked_initial`,
//! `checked_picks`, `Address::checked`).

use std::time::Duration;

use pyo3::exceptions::{PyOverflowError, PyUnicodeEncodeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use keyroute::error::ErrorCode;
use keyroute::ring::{checked_weight, RingError};

use crate::errors::{bad_type, bad_utf8, err, out_of_range, raise, Area};

/// The type name of `obj`, for messages.
pub(crate) fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".to_string())
}

/// An `int` (or an object with `__index__`, not `bool`) as `i128`: `BAD_TYPE` for other
/// types, `OUT_OF_RANGE` beyond 128 bits.
pub(crate) fn int(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i128> {
    if obj.is_instance_of::<PyBool>() {
        return Err(bad_type(format!("{what} must be an int, not bool")));
    }
    match obj.extract::<i64>() {
        Ok(v) => Ok(v.into()),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => {
            obj.extract::<i128>().map_err(|_| {
                let bits = obj
                    .call_method0("bit_length")
                    .and_then(|b| b.extract::<u64>())
                    .map(|b| format!(" (it has {b} bits)"))
                    .unwrap_or_default();
                out_of_range(format!(
                    "{what} is outside the range of a 128-bit integer{bits}"
                ))
            })
        }
        Err(_) => Err(bad_type(format!(
            "{what} must be an int, not {}",
            type_name(obj)
        ))),
    }
}

/// `None` (or a missing argument) as `None`, else as [`int`].
pub(crate) fn opt_int(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<i128>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => int(o, what).map(Some),
    }
}

/// An int that must fit `T` (a count, an index, a timestamp): `OUT_OF_RANGE` otherwise.
pub(crate) fn int_in<T: TryFrom<i128>>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    range: &str,
) -> PyResult<T> {
    let v = int(obj, what)?;
    T::try_from(v).map_err(|_| out_of_range(format!("{what} must be {range}, got {v}")))
}

/// A weight: an int checked by the core (`ZERO_WEIGHT`, `NEGATIVE_WEIGHT`,
/// `WEIGHT_TOO_LARGE`), a float is `BAD_WEIGHT`, anything else `BAD_TYPE`.
pub(crate) fn weight(node: &str, obj: &Bound<'_, PyAny>) -> PyResult<i128> {
    if obj.is_instance_of::<PyFloat>() {
        return Err(err(RingError::BadWeight {
            node: node.into(),
            given: obj.repr().map(|r| r.to_string()).unwrap_or_default(),
            entry: String::new(),
        }));
    }
    int(obj, &format!("the weight of node {node:?}"))
}

/// An optional weight for an added node: 1 when not given (or None), else [`weight`]
/// checked by the core into 1..=2^32-1.
pub(crate) fn added_weight(node: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
    match obj {
        Some(w) if !w.is_none() => checked_weight(node, weight(node, w)?).map_err(err),
        _ => Ok(1),
    }
}

/// A `str` as UTF-8: `BAD_TYPE` for other types, `BAD_UTF8` for lone surrogates.
pub(crate) fn text<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a str> {
    let s = obj
        .cast::<PyString>()
        .map_err(|_| bad_type(format!("{what} must be a str, not {}", type_name(obj))))?;
    s.to_str().map_err(|e| utf8_error(obj.py(), e, what))
}

/// A `UnicodeEncodeError` (a lone surrogate) as `BAD_UTF8`; other errors unchanged.
pub(crate) fn utf8_error(py: Python<'_>, e: PyErr, what: &str) -> PyErr {
    if e.is_instance_of::<PyUnicodeEncodeError>(py) {
        bad_utf8(format!(
            "{what} is not valid UTF-8 ({}); a str passed to keyroute must not hold lone \
             surrogates",
            e.value(py)
        ))
    } else {
        e
    }
}

/// A `bool` (only): `BAD_TYPE` otherwise.
pub(crate) fn flag(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<bool> {
    obj.cast::<PyBool>()
        .map(|b| b.is_true())
        .map_err(|_| bad_type(format!("{what} must be a bool, not {}", type_name(obj))))
}

/// Seconds (an int or float, positive and finite) as a `Duration`: `BAD_TYPE` for other
/// types, `BAD_TTL` for 0, negative, NaN, infinite or too large.
pub(crate) fn seconds(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Duration> {
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>())
    {
        return Err(bad_type(format!(
            "{what} must be a number of seconds (int or float), not {}",
            type_name(obj)
        )));
    }
    let s: f64 = obj.extract().map_err(|_| {
        raise(
            Area::Pool,
            ErrorCode::BadTtl,
            format!("{what} is too large a number of seconds"),
        )
    })?;
    if !(s.is_finite() && s > 0.0) {
        return Err(raise(
            Area::Pool,
            ErrorCode::BadTtl,
            format!("{what} must be a positive, finite number of seconds, got {s}"),
        ));
    }
    Duration::try_from_secs_f64(s).map_err(|e| {
        raise(
            Area::Pool,
            ErrorCode::BadTtl,
            format!("{what} = {s} seconds: {e}"),
        )
    })
}
