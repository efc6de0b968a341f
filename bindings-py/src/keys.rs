//! Keys as Python gives them: `str` (hashed as UTF-8) or `bytes` (hashed as is).

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use pyo3::{ffi, Borrowed};

use keyroute::keys::PackedKeys;

/// The bytes of a `str` (UTF-8, read in place: no copy, no allocation) or `bytes` key.
#[inline(always)]
pub(crate) fn key_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    // Exact types first: a pointer comparison each, then one call into the interpreter.
    let ptr = obj.as_ptr();
    let mut len: ffi::Py_ssize_t = 0;
    if obj.is_exact_instance_of::<PyBytes>() {
        let mut buf: *mut core::ffi::c_char = core::ptr::null_mut();
        // SAFETY: `obj` is an exact bytes object; its buffer is immutable and lives as
        // long as `obj`, which outlives the returned slice.
        return unsafe {
            if ffi::PyBytes_AsStringAndSize(ptr, &mut buf, &mut len) != 0 {
                return Err(PyErr::fetch(obj.py()));
            }
            Ok(core::slice::from_raw_parts(buf.cast::<u8>(), len as usize))
        };
    }
    if obj.is_exact_instance_of::<PyString>() {
        // SAFETY: `obj` is an exact str; its UTF-8 form is cached in the object (for
        // ASCII it is the string's own buffer) and lives as long as `obj`.
        return unsafe {
            let data = ffi::PyUnicode_AsUTF8AndSize(ptr, &mut len);
            if data.is_null() {
                return Err(PyErr::fetch(obj.py()));
            }
            Ok(core::slice::from_raw_parts(data.cast::<u8>(), len as usize))
        };
    }
    key_bytes_slow(obj)
}

/// Subclasses of str and bytes, and the error for anything else.
#[inline(never)]
fn key_bytes_slow<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
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

/// Keys are copied and processed this many at a time, so each batch of copies is still
/// in cache when it is hashed (a big batch does not fit in cache).
pub(crate) const CHUNK: usize = 4096;

/// Runs `f` over every key of `keys` (an iterable of str/bytes), in chunks of [`CHUNK`]
/// keys copied into one [`PackedKeys`] buffer, with the GIL released while `f` runs
/// (batches of [`DETACH_MIN`] keys or more). `f` appends one result per key to `out`.
///
/// The key bytes are copied while the GIL is held, so no key object is referenced while
/// it is released: other threads may change the container meanwhile. Lists and tuples
/// are read by index (borrowed items, no reference counting); other iterables through
/// the iterator protocol.
pub(crate) fn batch<T, F>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    out: &mut Vec<T>,
    f: F,
) -> PyResult<()>
where
    T: Send,
    F: Fn(&PackedKeys, &mut Vec<T>) + Sync,
{
    if keys.is_instance_of::<PyString>() || keys.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "expected an iterable of keys, got a single str/bytes key; wrap it in a list",
        ));
    }
    let hint = keys.len().ok();
    let detach = hint.is_none_or(|n| n >= DETACH_MIN);
    out.reserve(hint.unwrap_or(0));
    let mut packed = PackedKeys::with_capacity(hint.unwrap_or(CHUNK).min(CHUNK), 0);
    let run = |packed: &PackedKeys, out: &mut Vec<T>| {
        if detach {
            py.detach(|| f(packed, out));
        } else {
            f(packed, out);
        }
    };
    let sequence = if keys.is_exact_instance_of::<PyList>() {
        Some(ffi::PyList_GetItem as unsafe extern "C" fn(_, _) -> _)
    } else if keys.is_exact_instance_of::<PyTuple>() {
        Some(ffi::PyTuple_GetItem as unsafe extern "C" fn(_, _) -> _)
    } else {
        None
    };
    if let Some(get_item) = sequence {
        let mut i: ffi::Py_ssize_t = 0;
        // The length is read again after each chunk: the list may change while the GIL
        // is released; the keys copied so far are looked up as they were.
        while (i as usize) < keys.len()? {
            packed.clear();
            let end = (i as usize).saturating_add(CHUNK).min(keys.len()?) as ffi::Py_ssize_t;
            while i < end {
                // SAFETY: `keys` is an exact list or tuple and we hold the GIL; the item
                // is a borrowed reference, valid until Python code runs or the GIL is
                // released, and we only copy its bytes before either happens (reading a
                // str/bytes runs no Python code).
                let key = unsafe { Borrowed::from_ptr_or_err(py, get_item(keys.as_ptr(), i))? };
                packed.push(key_bytes(&key)?);
                i += 1;
            }
            run(&packed, out);
        }
        return Ok(());
    }
    let mut it = keys.try_iter()?;
    loop {
        packed.clear();
        for k in it.by_ref() {
            packed.push(key_bytes(&k?)?);
            if packed.len() == CHUNK {
                break;
            }
        }
        if packed.is_empty() {
            return Ok(());
        }
        run(&packed, out);
        if packed.len() < CHUNK {
            return Ok(());
        }
    }
}

/// Batches below this size are served without releasing the GIL (the release and
/// re-acquire cost more than the lookups).
pub(crate) const DETACH_MIN: usize = 256;
