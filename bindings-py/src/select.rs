//! `keyroute.Pool` (the in-memory least-used model), the scripts (`SCRIPTS`, `Script`),
//! and the conversion of members to Python (`str`, or `bytes` for the `*_bytes` calls)
//! shared with `LeastUsed` and `Leases`.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use keyroute::error::ErrorCode;
use keyroute::script::SCRIPTS;
use keyroute::select::{self as core_select, checked_initial, checked_picks, Restore};

use crate::args::{flag, int, text};
use crate::errors::{err, guard, raise, Area};
use crate::keys::{collect, key_bytes, slices};

/// A member as `str`: `BAD_UTF8` when it is not UTF-8 (`bytes_call` names the variant
/// that returns bytes).
pub(crate) fn member_str<'py>(
    py: Python<'py>,
    m: &[u8],
    bytes_call: &str,
) -> PyResult<Bound<'py, PyAny>> {
    match std::str::from_utf8(m) {
        Ok(s) => Ok(PyString::new(py, s).into_any()),
        Err(e) => Err(raise(
            Area::Pool,
            ErrorCode::BadUtf8,
            format!(
                "pool member {} is not UTF-8 ({e}); use {bytes_call}() for members that are \
                 not text",
                PyBytes::new(py, m).repr()?
            ),
        )),
    }
}

/// A member as `str` or, with `as_bytes`, `bytes`.
pub(crate) fn member<'py>(
    py: Python<'py>,
    m: &[u8],
    as_bytes: bool,
    bytes_call: &str,
) -> PyResult<Bound<'py, PyAny>> {
    if as_bytes {
        Ok(PyBytes::new(py, m).into_any())
    } else {
        member_str(py, m, bytes_call)
    }
}

/// Picks as a list; each distinct member becomes one Python object, shared by its picks.
pub(crate) fn member_list<'py>(
    py: Python<'py>,
    picks: &[Vec<u8>],
    as_bytes: bool,
    bytes_call: &str,
) -> PyResult<Bound<'py, PyList>> {
    let mut made: HashMap<&[u8], Bound<'py, PyAny>> = HashMap::new();
    let mut items = Vec::with_capacity(picks.len());
    for m in picks {
        let obj = match made.get(m.as_slice()) {
            Some(o) => o.clone(),
            None => {
                let o = member(py, m, as_bytes, bytes_call)?;
                made.insert(m, o.clone());
                o
            }
        };
        items.push(obj);
    }
    PyList::new(py, items)
}

/// `{member: count}` in the given order.
pub(crate) fn member_dict<'py, 'a>(
    py: Python<'py>,
    pairs: impl IntoIterator<Item = (&'a [u8], u64)>,
    as_bytes: bool,
    bytes_call: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (m, c) in pairs {
        d.set_item(member(py, m, as_bytes, bytes_call)?, c)?;
    }
    Ok(d)
}

/// A restore mode: "keep" or "at_minimum" (`BAD_RESTORE_MODE` otherwise).
pub(crate) fn restore_arg(mode: &Bound<'_, PyAny>) -> PyResult<Restore> {
    text(mode, "the restore mode")?
        .parse::<Restore>()
        .map_err(err)
}

/// An initial count (0..=2^53, `BAD_COUNT` otherwise).
pub(crate) fn initial_arg(initial: &Bound<'_, PyAny>) -> PyResult<u64> {
    checked_initial(int(initial, "the initial count")?).map_err(err)
}

/// A number of picks (0..=MAX_PICKS_PER_CALL, `TOO_LARGE` above, checked before anything
/// is allocated).
pub(crate) fn picks_arg(n: &Bound<'_, PyAny>) -> PyResult<usize> {
    checked_picks(int(n, "the number of picks")?).map_err(err)
}

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

    fn picks<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
        as_bytes: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = picks_arg(n)?;
        let picked = if n >= 4096 {
            py.detach(|| self.lock().pick_many(n))
        } else {
            self.lock().pick_many(n)
        };
        member_list(py, &picked, as_bytes, "pick_many_bytes")
    }
}

#[pymethods]
impl PyPool {
    #[new]
    #[pyo3(signature = (members=None, *, initial=None))]
    fn new(
        members: Option<&Bound<'_, PyAny>>,
        initial: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyPool> {
        guard(|| {
            let p = PyPool {
                pool: Mutex::new(core_select::Pool::new()),
            };
            if let Some(m) = members.filter(|m| !m.is_none()) {
                p.seed_impl(m, initial, None)?;
            }
            Ok(p)
        })
    }

    /// Adds members at `initial` (members already in keep their count unless
    /// `overwrite`); forgets them from the removed set. Returns how many were added.
    /// Empty members are refused (EMPTY_MEMBER); a refused seed changes nothing.
    #[pyo3(signature = (members, initial=None, overwrite=None))]
    fn seed(
        &self,
        members: &Bound<'_, PyAny>,
        initial: Option<&Bound<'_, PyAny>>,
        overwrite: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        guard(|| self.seed_impl(members, initial, overwrite))
    }

    /// The least-used member as str (its count is incremented), or None when the pool
    /// is empty: then make no request. A member that is not UTF-8 raises BadUtf8Error
    /// (after it was counted): use pick_bytes().
    fn pick<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        guard(|| {
            let m = self.lock().pick();
            m.map(|m| member_str(py, &m, "pick_bytes")).transpose()
        })
    }

    /// As pick(), as bytes.
    fn pick_bytes<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        guard(|| Ok(self.lock().pick().map(|m| PyBytes::new(py, &m))))
    }

    /// `n` picks in a row (fewer only when the pool is empty), as str; `n` is at most
    /// MAX_PICKS_PER_CALL.
    fn pick_many<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| self.picks(py, n, false))
    }

    /// As pick_many(), as bytes.
    fn pick_many_bytes<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| self.picks(py, n, true))
    }

    /// Removes a member, remembering its count; returns that count, or None if it was
    /// not in the pool.
    fn remove(&self, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        guard(|| Ok(self.lock().remove(key_bytes(member)?)))
    }

    /// Puts a member back: mode "keep" (its remembered count) or "at_minimum" (the
    /// pool's current lowest count). Returns its count.
    #[pyo3(signature = (member, mode=None))]
    fn restore(&self, member: &Bound<'_, PyAny>, mode: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
        guard(|| {
            let mode = match mode {
                Some(m) if !m.is_none() => restore_arg(m)?,
                _ => Restore::AtMinimum,
            };
            self.lock().restore(key_bytes(member)?, mode).map_err(err)
        })
    }

    /// A member's count, or None if it is not in the pool.
    fn count(&self, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        guard(|| Ok(self.lock().count(key_bytes(member)?)))
    }

    /// The count remembered for a removed member, or None.
    fn removed_count(&self, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        guard(|| Ok(self.lock().removed_count(key_bytes(member)?)))
    }

    /// The lowest count in the pool, or None when it is empty.
    fn min_count(&self) -> PyResult<Option<u64>> {
        guard(|| Ok(self.lock().min_count()))
    }

    /// member (str) -> count, in pick order (lowest count first, ties by member bytes).
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| member_dict(py, self.lock().counts(), false, "counts_bytes"))
    }

    /// As counts(), with bytes members.
    fn counts_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| member_dict(py, self.lock().counts(), true, "counts_bytes"))
    }

    /// member (str) -> remembered count of removed members, by member bytes.
    fn removed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| member_dict(py, self.lock().removed(), false, "removed_bytes"))
    }

    /// As removed(), with bytes members.
    fn removed_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| member_dict(py, self.lock().removed(), true, "removed_bytes"))
    }

    fn __len__(&self) -> PyResult<usize> {
        guard(|| Ok(self.lock().len()))
    }

    fn __contains__(&self, member: &Bound<'_, PyAny>) -> PyResult<bool> {
        guard(|| Ok(key_bytes(member).is_ok_and(|m| self.lock().contains(m))))
    }

    fn __repr__(&self) -> PyResult<String> {
        guard(|| {
            let p = self.lock();
            Ok(format!(
                "Pool(<{} members, {} removed>)",
                p.len(),
                p.removed().len()
            ))
        })
    }
}

impl PyPool {
    fn seed_impl(
        &self,
        members: &Bound<'_, PyAny>,
        initial: Option<&Bound<'_, PyAny>>,
        overwrite: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let initial = match initial {
            Some(i) if !i.is_none() => initial_arg(i)?,
            _ => 0,
        };
        let overwrite = match overwrite {
            Some(o) if !o.is_none() => flag(o, "overwrite")?,
            _ => false,
        };
        let owned = collect(members, "members")?;
        let ms = slices(&owned)?;
        self.lock().seed(ms, initial, overwrite).map_err(err)
    }
}

/// A Lua script keyroute runs on Redis: `EVALSHA sha1 num_keys keys... args...`, loading
/// `text` on NOSCRIPT.
#[pyclass(module = "keyroute", frozen, get_all, name = "Script")]
pub(crate) struct PyScript {
    /// The name, as `keyroute script` spells it (e.g. "least-used").
    name: &'static str,
    /// One line on what it does and takes.
    summary: &'static str,
    /// The Lua text (ends with one newline).
    text: &'static str,
    /// The SHA1 of the text, as EVALSHA takes it.
    sha1: &'static str,
    /// How many keys it takes.
    num_keys: usize,
}

#[pymethods]
impl PyScript {
    fn __repr__(&self) -> String {
        format!(
            "Script(name={:?}, sha1={:?}, num_keys={})",
            self.name, self.sha1, self.num_keys
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyPool>()?;
    m.add_class::<PyScript>()?;
    let scripts = SCRIPTS
        .iter()
        .map(|s| {
            Py::new(
                py,
                PyScript {
                    name: s.name(),
                    summary: s.summary(),
                    text: s.text(),
                    sha1: s.sha1(),
                    num_keys: s.num_keys(),
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    m.add("SCRIPTS", PyTuple::new(py, scripts)?)?;
    m.add("LEAST_USED_SCRIPT", core_select::LEAST_USED_SCRIPT)?;
    m.add("LEAST_USED_SHA1", core_select::LEAST_USED_SHA1)?;
    m.add("SEED_SCRIPT", core_select::SEED_SCRIPT)?;
    m.add("SEED_SHA1", core_select::SEED_SHA1)?;
    m.add("REMOVE_SCRIPT", core_select::REMOVE_SCRIPT)?;
    m.add("REMOVE_SHA1", core_select::REMOVE_SHA1)?;
    m.add("RESTORE_SCRIPT", core_select::RESTORE_SCRIPT)?;
    m.add("RESTORE_SHA1", core_select::RESTORE_SHA1)?;
    m.add("MAX_EXACT_COUNT", core_select::MAX_EXACT_COUNT)?;
    m.add("MAX_PICKS_PER_CALL", core_select::MAX_PICKS_PER_CALL)?;
    Ok(())
}
