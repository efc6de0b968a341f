//! `keyroute.key_slot`, `key_slots`, `hash_tag`, `SLOT_COUNT` (and `SlotMap` in slotmap.rs).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyInt, PyList};

use keyroute::slot as core_slot;

use crate::keys::{batch, key_bytes};

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
    let s = core_slot::key_slot(key_bytes(key)?);
    Ok(slot_ints(py)[usize::from(s)].clone_ref(py))
}

/// The slot of every key, computed without the GIL for batches of 256 keys or more.
#[pyfunction]
fn key_slots(py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
    let mut out: Vec<u16> = Vec::new();
    batch(py, keys, &mut out, |ks, out| {
        out.extend(ks.iter().map(core_slot::key_slot));
    })?;
    let ints = slot_ints(py);
    Ok(PyList::new(py, out.iter().map(|&s| ints[usize::from(s)].bind(py)))?.unbind())
}

/// The part of a key that is hashed: the bytes between the first "{" and the first "}"
/// after it when non-empty, else the whole key.
#[pyfunction]
fn hash_tag<'py>(py: Python<'py>, key: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    Ok(PyBytes::new(py, core_slot::hash_tag(key_bytes(key)?)))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(key_slot, m)?)?;
    m.add_function(wrap_pyfunction!(key_slots, m)?)?;
    m.add_function(wrap_pyfunction!(hash_tag, m)?)?;
    m.add("SLOT_COUNT", core_slot::SLOT_COUNT)?;
    Ok(())
}
