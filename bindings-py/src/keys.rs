//! Keys as Python gives them: `str` (hashed as UTF-8) or `bytes` (hashed as is).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

/// The bytes of a `str` (UTF-8, read in place: no copy, no allocation) or `bytes` key.
#[inline]
pub(crate) fn key_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    // Exact types first: a pointer comparison each, no call into the interpreter.
    if let Ok(b) = obj.cast_exact::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    if let Ok(s) = obj.cast_exact::<PyString>() {
        return Ok(s.to_str()?.as_bytes());
    }
    // Subclasses of str and bytes.
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(s.to_str()?.as_bytes());
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    Err(PyTypeError::new_err(format!(
        "keys must be str or bytes, not {}",
        obj.get_type().name()?
    )))
}

/// Strong references to every key of an iterable (so the slices stay valid while the
/// GIL is released, whatever other threads do to the container).
pub(crate) fn collect<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if keys.is_instance_of::<PyString>() || keys.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "expected an iterable of keys, got a single str/bytes key; wrap it in a list",
        ));
    }
    let it = keys.try_iter()?;
    let mut out = Vec::with_capacity(keys.len().unwrap_or(0));
    for k in it {
        out.push(k?);
    }
    Ok(out)
}

/// The byte slices of collected keys.
pub(crate) fn slices<'a>(owned: &'a [Bound<'_, PyAny>]) -> PyResult<Vec<&'a [u8]>> {
    owned.iter().map(key_bytes).collect()
}

/// Keys are converted and processed this many at a time, so each key object is still in
/// cache when it is hashed and released (a big batch does not fit in cache).
pub(crate) const CHUNK: usize = 2048;

/// Runs `f` over the byte slices of every key of `keys` (an iterable of str/bytes), in
/// chunks of [`CHUNK`], with the GIL released while `f` runs (batches of
/// [`DETACH_MIN`] keys or more). `f` appends one result per key to `out`.
///
/// Each chunk holds strong references to its keys while the GIL is released, so other
/// threads changing the container cannot free a key under us.
pub(crate) fn batch<T, F>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    out: &mut Vec<T>,
    f: F,
) -> PyResult<()>
where
    T: Send,
    F: Fn(&[&[u8]], &mut Vec<T>) + Sync,
{
    if keys.is_instance_of::<PyString>() || keys.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "expected an iterable of keys, got a single str/bytes key; wrap it in a list",
        ));
    }
    let hint = keys.len().ok();
    let detach = hint.is_none_or(|n| n >= DETACH_MIN);
    out.reserve(hint.unwrap_or(0));
    let mut it = keys.try_iter()?;
    let mut owned: Vec<Bound<'_, PyAny>> = Vec::with_capacity(hint.unwrap_or(CHUNK).min(CHUNK));
    loop {
        owned.clear();
        for k in it.by_ref() {
            owned.push(k?);
            if owned.len() == CHUNK {
                break;
            }
        }
        if owned.is_empty() {
            return Ok(());
        }
        let chunk = slices(&owned)?;
        if detach {
            py.detach(|| f(&chunk, out));
        } else {
            f(&chunk, out);
        }
        if owned.len() < CHUNK {
            return Ok(());
        }
    }
}

/// Batches below this size are served without releasing the GIL (the release and
/// re-acquire cost more than the lookups).
pub(crate) const DETACH_MIN: usize = 256;
