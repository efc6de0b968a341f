//! `keyroute.Pool` (the in-memory least-used model) and the script texts.

use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use keyroute::select::{self as core_select, Restore};

use crate::errors::pool_error;
use crate::keys::{collect, key_bytes, slices};

/// A least-used pool in memory, answering exactly as the least-used script on a Redis
/// sorted set does: pick() takes the lowest count (ties: byte-wise smallest member) and
/// increments it; None when the pool is empty.
#[pyclass(module = "keyroute", frozen, name = "Pool")]
pub(crate) struct PyPool {
    pool: Mutex<core_select::Pool>,
}

impl PyPool {
    fn lock(&self) -> std::sync::MutexGuard<'_, core_select::Pool> {
        self.pool.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub(crate) fn restore_arg(mode: &str) -> PyResult<Restore> {
    mode.parse::<Restore>()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl PyPool {
    #[new]
    #[pyo3(signature = (members=None, *, initial=0))]
    fn new(members: Option<&Bound<'_, PyAny>>, initial: u64) -> PyResult<PyPool> {
        let p = PyPool {
            pool: Mutex::new(core_select::Pool::new()),
        };
        if let Some(m) = members {
            p.seed(m, initial, false)?;
        }
        Ok(p)
    }

    /// Adds members at `initial` (members already in keep their count unless
    /// `overwrite`); forgets them from the removed set. Returns how many were added.
    #[pyo3(signature = (members, initial=0, overwrite=false))]
    fn seed(&self, members: &Bound<'_, PyAny>, initial: u64, overwrite: bool) -> PyResult<usize> {
        let owned = collect(members)?;
        let ms = slices(&owned)?;
        self.lock()
            .seed(ms, initial, overwrite)
            .map_err(|e| pool_error(e.to_string()))
    }

    /// The least-used member (its count is incremented), or None when the pool is
    /// empty: then make no request.
    fn pick<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.lock().pick().map(|m| PyBytes::new(py, &m))
    }

    /// `n` picks in a row (fewer only when the pool is empty).
    fn pick_many<'py>(&self, py: Python<'py>, n: usize) -> PyResult<Bound<'py, PyList>> {
        let picked = self.lock().pick_many(n);
        PyList::new(py, picked.iter().map(|m| PyBytes::new(py, m)))
    }

    /// Removes a member, remembering its count; returns that count, or None if it was
    /// not in the pool.
    fn remove(&self, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        Ok(self.lock().remove(key_bytes(member)?))
    }

    /// Puts a member back: mode "keep" (its remembered count) or "at_minimum" (the
    /// pool's current lowest count). Returns its count.
    #[pyo3(signature = (member, mode="at_minimum"))]
    fn restore(&self, member: &Bound<'_, PyAny>, mode: &str) -> PyResult<u64> {
        let mode = restore_arg(mode)?;
        self.lock()
            .restore(key_bytes(member)?, mode)
            .map_err(|e| pool_error(e.to_string()))
    }

    /// A member's count, or None if it is not in the pool.
    fn count(&self, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        Ok(self.lock().count(key_bytes(member)?))
    }

    /// The count remembered for a removed member, or None.
    fn removed_count(&self, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        Ok(self.lock().removed_count(key_bytes(member)?))
    }

    /// The lowest count in the pool, or None when it is empty.
    fn min_count(&self) -> Option<u64> {
        self.lock().min_count()
    }

    /// member -> count, in pick order (lowest count first, ties by member bytes).
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (m, c) in self.lock().counts() {
            d.set_item(PyBytes::new(py, m), c)?;
        }
        Ok(d)
    }

    /// member -> remembered count of removed members, by member bytes.
    fn removed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (m, c) in self.lock().removed() {
            d.set_item(PyBytes::new(py, m), c)?;
        }
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.lock().len()
    }

    fn __contains__(&self, member: &Bound<'_, PyAny>) -> bool {
        key_bytes(member).is_ok_and(|m| self.lock().contains(m))
    }

    fn __repr__(&self) -> String {
        let p = self.lock();
        format!("Pool(<{} members, {} removed>)", p.len(), p.removed().len())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPool>()?;
    m.add("LEAST_USED_SCRIPT", core_select::LEAST_USED_SCRIPT)?;
    m.add("LEAST_USED_SHA1", core_select::LEAST_USED_SHA1)?;
    m.add("SEED_SCRIPT", core_select::SEED_SCRIPT)?;
    m.add("SEED_SHA1", core_select::SEED_SHA1)?;
    m.add("REMOVE_SCRIPT", core_select::REMOVE_SCRIPT)?;
    m.add("REMOVE_SHA1", core_select::REMOVE_SHA1)?;
    m.add("RESTORE_SCRIPT", core_select::RESTORE_SCRIPT)?;
    m.add("RESTORE_SHA1", core_select::RESTORE_SHA1)?;
    m.add("MAX_EXACT_COUNT", core_select::MAX_EXACT_COUNT)?;
    Ok(())
}
