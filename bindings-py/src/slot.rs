//! `keyroute.key_slot`, `key_slots`, `key_slots_array`, `hash_tag`, `SLOT_COUNT` (and `SlotMap` in slotmap.rs).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyInt, PyList, PyString};

use keyroute::slot as core_slot;

use crate::errors::{guard, internal};
use crate::keys::{in_place, key_bytes, native_array, MAX_KEYS_PER_CALL};

/// The Python ints 0..16384, made once: slot results are shared ints, so a batch
/// allocates nothing per key beyond the result list.
static SLOT_INTS: PyOnceLock<Vec<Py<PyInt>>> = PyOnceLock::new();

fn slot_ints(py: Python<'_>) -> &[Py<PyInt>] {
    SLOT_INTS.get_or_init(py, || {
        (0..core_slot::SLOT_COUNT)
            .map(|s| PyInt::new(py, s).unbind())
            .collect()
    })
}

/// The Redis Cluster hash slot of a key (0..16383), as CLUSTER KEYSLOT answers.
#[pyfunction]
fn key_slot(py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Py<PyInt>> {
    guard(|| {
        let s = core_slot::key_slot(key_bytes(key)?);
        Ok(slot_ints(py)[usize::from(s)].clone_ref(py))
    })
}

/// The slots of `keys` in order (a list or tuple is read in place, with the GIL held:
/// slots cost less than copying the keys out).
fn slots_of(py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Vec<u16>> {
    let mut out: Vec<u16> = Vec::new();
    in_place(py, keys, &mut out, |ks, out| {
        let start = out.len();
        out.resize(start + ks.len(), 0);
        // `out[start..]` holds exactly one entry per key: this cannot fail.
        let _ = core_slot::key_slots(ks, &mut out[start..]);
    })?;
    Ok(out)
}

/// The slot of every key, as a list of ints. At most MAX_KEYS_PER_CALL keys.
#[pyfunction]
fn key_slots(py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
    guard(|| {
        let out = slots_of(py, keys)?;
        let ints = slot_ints(py);
        Ok(PyList::new(py, out.iter().map(|&s| ints[usize::from(s)].bind(py)))?.unbind())
    })
}

/// The slot of every key as an `array.array('H')`: slot numbers without an int object
/// per key (as JS `keySlots` answers a Uint16Array). At most MAX_KEYS_PER_CALL keys.
#[pyfunction]
fn key_slots_array<'py>(py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    guard(|| native_array(py, "H", &slots_of(py, keys)?))
}

/// The part of a key that is hashed: the text between the first "{" and the first "}"
/// after it when non-empty, else the whole key. Of the key's type: str for a str key,
/// bytes for a bytes key.
#[pyfunction]
fn hash_tag<'py>(py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    guard(|| {
        let k = key_bytes(key)?;
        let tag = core_slot::hash_tag(k);
        if !key.is_instance_of::<PyString>() {
            return Ok(PyBytes::new(py, tag).into_any());
        }
        if tag.len() == k.len() && key.is_exact_instance_of::<PyString>() {
            return Ok(key.clone());
        }
        // The tag is cut at ASCII braces, so it is UTF-8 when the key is.
        let tag = std::str::from_utf8(tag).map_err(|e| internal(e.to_string()))?;
        Ok(PyString::new(py, tag).into_any())
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(key_slot, m)?)?;
    m.add_function(wrap_pyfunction!(key_slots, m)?)?;
    m.add_function(wrap_pyfunction!(key_slots_array, m)?)?;
    m.add_function(wrap_pyfunction!(hash_tag, m)?)?;
    m.add("SLOT_COUNT", core_slot::SLOT_COUNT)?;
    m.add("MAX_KEYS_PER_CALL", MAX_KEYS_PER_CALL)?;
    Ok(())
}
