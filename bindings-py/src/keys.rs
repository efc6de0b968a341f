//! Keys as Python gives them: `str` (hashed as UTF-8) or `bytes` (hashed as is).

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use pyo3::{ffi, Borrowed};

use keyroute::keys::PackedKeys;

use crate::args::{type_name, utf8_error};
use crate::errors::{bad_type, too_large};

/// The most keys (or members) one batch call takes: 2^28 = 268,435,456. A call whose
/// iterable reports a longer `len()`, or yields more, is refused with `TOO_LARGE` (the
/// limit is checked before anything is allocated for the reported length; results grow
/// only as keys actually arrive).
pub(crate) use keyroute::keys::MAX_KEYS_PER_CALL;

fn too_many(what: &str, n: &dyn std::fmt::Display) -> PyErr {
    too_large(format!(
        "{n} {what} given to one call; one call takes at most {MAX_KEYS_PER_CALL} \
         (keyroute.MAX_KEYS_PER_CALL): split the batch"
    ))
}

/// The length an iterable reports, checked against [`MAX_KEYS_PER_CALL`]; `None` when it
/// reports none (a generator) or its `__len__` fails (a hint only: items are counted as
/// they arrive).
fn reported_len(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<usize>> {
    match obj.len() {
        Ok(n) if n > MAX_KEYS_PER_CALL => Err(too_many(what, &n)),
        Ok(n) => Ok(Some(n)),
        Err(_) => Ok(None),
    }
}

/// A single key where an iterable of keys is meant, or an object that cannot be iterated:
/// `BAD_TYPE`.
fn iterate<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Bound<'py, pyo3::types::PyIterator>> {
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(bad_type(format!(
            "expected an iterable of {what}, got a single {} (wrap it in a list)",
            type_name(obj)
        )));
    }
    obj.try_iter().map_err(|_| {
        bad_type(format!(
            "expected an iterable of {what}, not {}",
            type_name(obj)
        ))
    })
}

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
                return Err(utf8_error(obj.py(), PyErr::fetch(obj.py()), "a key"));
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
        return s
            .to_str()
            .map(str::as_bytes)
            .map_err(|e| utf8_error(obj.py(), e, "a key"));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    Err(bad_type(format!(
        "keys must be str or bytes, not {}",
        type_name(obj)
    )))
}

/// Strong references to every key of an iterable (so the slices stay valid while the
/// GIL is released, whatever other threads do to the container). `what` names the items
/// in messages ("keys", "members"). At most [`MAX_KEYS_PER_CALL`]; the list grows as
/// items arrive, whatever `len()` claims.
pub(crate) fn collect<'py>(
    keys: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let it = iterate(keys, what)?;
    let hint = reported_len(keys, what)?;
    let mut out = Vec::with_capacity(hint.unwrap_or(0).min(CHUNK));
    for k in it {
        if out.len() == MAX_KEYS_PER_CALL {
            return Err(too_many(what, &format!("more than {MAX_KEYS_PER_CALL}")));
        }
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
    let sequence = sequence_getter(keys);
    let it = match sequence {
        None => Some(iterate(keys, "keys")?),
        Some(_) => None,
    };
    let hint = reported_len(keys, "keys")?;
    let detach = hint.is_none_or(|n| n >= DETACH_MIN);
    // A list or tuple holds its keys already: its length is true. Anything else may lie.
    out.reserve(match sequence {
        Some(_) => hint.unwrap_or(0),
        None => hint.unwrap_or(0).min(CHUNK),
    });
    let mut packed = PackedKeys::with_capacity(hint.unwrap_or(CHUNK).min(CHUNK), 0);
    let run = |packed: &PackedKeys, out: &mut Vec<T>| {
        if detach {
            py.detach(|| f(packed, out));
        } else {
            f(packed, out);
        }
    };
    if let Some(get_item) = sequence {
        let mut i: ffi::Py_ssize_t = 0;
        // The length is read again after each chunk: the list may change while the GIL
        // is released; the keys copied so far are looked up as they were.
        while (i as usize) < keys.len()? {
            if keys.len()? > MAX_KEYS_PER_CALL {
                return Err(too_many("keys", &keys.len()?));
            }
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
    let Some(mut it) = it else {
        return Ok(());
    };
    let mut seen = 0usize;
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
        seen += packed.len();
        if seen > MAX_KEYS_PER_CALL {
            return Err(too_many("keys", &format!("more than {MAX_KEYS_PER_CALL}")));
        }
        run(&packed, out);
        if packed.len() < CHUNK {
            return Ok(());
        }
    }
}

/// The item getter of an exact list or tuple (borrowed references, read by index); `None`
/// for anything else.
fn sequence_getter(
    keys: &Bound<'_, PyAny>,
) -> Option<unsafe extern "C" fn(*mut ffi::PyObject, ffi::Py_ssize_t) -> *mut ffi::PyObject> {
    if keys.is_exact_instance_of::<PyList>() {
        Some(ffi::PyList_GetItem)
    } else if keys.is_exact_instance_of::<PyTuple>() {
        Some(ffi::PyTuple_GetItem)
    } else {
        None
    }
}

/// `PyBUF_READ` (CPython's `memoryobject.h`: a read-only view), which pyo3's ffi only
/// exports outside the 3.10 limited API this module is built against.
const PYBUF_READ: core::ffi::c_int = 0x100;

/// Integers whose memory is exactly their native-endian bytes (no padding): what
/// [`native_array`] hands to `array.frombytes` as it is.
pub(crate) trait NativeInt: Copy {}
impl NativeInt for u16 {}
impl NativeInt for u32 {}

/// An `array.array(typecode)` of `items` (`typecode` of their size: `"H"` for `u16`, `"i"`
/// or `"I"` for `u32`), copied in once: `array.frombytes` reads them through a memoryview
/// of `items` itself, released before this returns. An intermediate `bytes` (a second
/// copy, and fresh pages to fault in: 0.4 MB per 100k indexes) measured ~3 ns/key.
pub(crate) fn native_array<'py, T: NativeInt>(
    py: Python<'py>,
    typecode: &str,
    items: &[T],
) -> PyResult<Bound<'py, PyAny>> {
    let array = py.import("array")?.getattr("array")?.call1((typecode,))?;
    let len = core::mem::size_of_val(items) as ffi::Py_ssize_t;
    // SAFETY: `items` is `len` initialized bytes (NativeInt types have no padding), alive
    // and unchanged until the view is released below; the view is read-only.
    let view = unsafe {
        let ptr = ffi::PyMemoryView_FromMemory(items.as_ptr().cast_mut().cast(), len, PYBUF_READ);
        Bound::from_owned_ptr_or_err(py, ptr)?
    };
    let filled = array.call_method1("frombytes", (&view,));
    // Released even if frombytes failed, so that nothing can read `items` after this.
    let released = view.call_method0("release");
    filled?;
    released?;
    Ok(array)
}

/// Runs `f` over every key of `keys` read in place, with the GIL held: for work cheaper
/// than copying the keys (slots). An exact list or tuple is read by index and its keys'
/// bytes are passed as they are, [`CHUNK`] at a time (no copy: the list holds them, and
/// no Python code runs until `f` returns); any other iterable goes through [`batch`].
/// `f` appends one result per key to `out`.
pub(crate) fn in_place<T, F>(
    py: Python<'_>,
    keys: &Bound<'_, PyAny>,
    out: &mut Vec<T>,
    f: F,
) -> PyResult<()>
where
    T: Send,
    F: Fn(&[&[u8]], &mut Vec<T>) + Sync,
{
    let Some(get_item) = sequence_getter(keys) else {
        return batch(py, keys, out, |packed, out| {
            let slices: Vec<&[u8]> = packed.iter().collect();
            f(&slices, out);
        });
    };
    let n = keys.len()?;
    if n > MAX_KEYS_PER_CALL {
        return Err(too_many("keys", &n));
    }
    out.reserve(n);
    let mut slices: Vec<&[u8]> = Vec::with_capacity(n.min(CHUNK));
    let mut i = 0;
    while i < n {
        slices.clear();
        let end = (i + CHUNK).min(n);
        for j in i..end {
            // SAFETY: `keys` is an exact list or tuple of `n` items (no Python code ran
            // since its length was read) and we hold the GIL; the item is borrowed.
            let key = unsafe { Borrowed::from_ptr_or_err(py, get_item(keys.as_ptr(), j as _))? };
            let bytes = key_bytes(&key)?;
            // SAFETY: the bytes belong to the key object, which the container keeps alive:
            // nothing runs Python code or releases the GIL before `f` has returned.
            slices.push(unsafe { core::slice::from_raw_parts(bytes.as_ptr(), bytes.len()) });
        }
        f(&slices, out);
        i = end;
    }
    Ok(())
}

/// Batches below this size are served without releasing the GIL (the release and
/// re-acquire cost more than the lookups).
pub(crate) const DETACH_MIN: usize = 256;
