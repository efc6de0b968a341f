//! `keyroute.LeastUsed` and `keyroute.Leases`: the core's native Redis pools
//! (`keyroute_redis`) over one reconnecting connection each.
//!
//! Thin: each method converts its arguments, releases the GIL, locks the connection,
//! calls the core, and converts the answer (or the core's error) back. The connection is
//! behind a mutex, so one object can be shared by threads (their calls take turns on the
//! connection); it is locked only while the GIL is released, so a thread waiting for it
//! never blocks the interpreter.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use pyo3::exceptions::{PyUnicodeDecodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};

use keyroute_redis::{self as core_redis, Now, Reconnecting, Release, Timeouts};

use crate::errors::from_redis;
use crate::keys::{collect, key_bytes, slices};
use crate::select::restore_arg;

/// Seconds (a positive, finite float) as a `Duration`; `what` names the argument.
fn seconds(what: &str, s: f64) -> PyResult<Duration> {
    if !(s.is_finite() && s > 0.0) {
        return Err(PyValueError::new_err(format!(
            "{what} must be a positive number of seconds, got {s}"
        )));
    }
    Duration::try_from_secs_f64(s)
        .map_err(|e| PyValueError::new_err(format!("{what} = {s} seconds: {e}")))
}

/// A reconnecting connection to `url` behind a mutex.
struct Conn {
    con: Mutex<Reconnecting>,
    timeout: f64,
}

impl Conn {
    fn new(url: &str, timeout: f64) -> PyResult<Conn> {
        let t = seconds("timeout", timeout)?;
        // Only parses the URL (the connection opens on the first call).
        let con = Reconnecting::new(url, Timeouts::uniform(t))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Conn {
            con: Mutex::new(con),
            timeout,
        })
    }

    /// Call with the GIL released only.
    fn lock(&self) -> MutexGuard<'_, Reconnecting> {
        self.con.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the connection with the GIL released.
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Reconnecting) -> core_redis::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| f(&mut self.lock())).map_err(from_redis)
    }

    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        self.run(py, Reconnecting::ensure_connected)
    }
}

/// A member as `str` (strict UTF-8) or, with `raw`, as `bytes`.
fn member<'py>(py: Python<'py>, m: &[u8], raw: bool) -> PyResult<Bound<'py, PyAny>> {
    if raw {
        return Ok(PyBytes::new(py, m).into_any());
    }
    match std::str::from_utf8(m) {
        Ok(s) => Ok(PyString::new(py, s).into_any()),
        Err(e) => Err(PyErr::from_value(
            PyUnicodeDecodeError::new_utf8(py, m, e)?.into_any(),
        )),
    }
}

fn pairs<'py>(
    py: Python<'py>,
    pairs: &[(Vec<u8>, u64)],
    raw: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (m, c) in pairs {
        d.set_item(member(py, m, raw)?, c)?;
    }
    Ok(d)
}

fn pool_key(key: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(key_bytes(key)?.to_vec())
}

/// A least-used pool on a Redis server (the sorted set at `key`), picked with EVALSHA of
/// `LEAST_USED_SCRIPT`; the same answers as `keyroute.Pool`.
#[pyclass(module = "keyroute", frozen, name = "LeastUsed")]
pub(crate) struct PyLeastUsed {
    inner: core_redis::LeastUsed,
    conn: Conn,
}

#[pymethods]
impl PyLeastUsed {
    #[new]
    #[pyo3(signature = (url, key, *, timeout=2.0))]
    fn new(url: &str, key: &Bound<'_, PyAny>, timeout: f64) -> PyResult<PyLeastUsed> {
        let inner = core_redis::LeastUsed::new(pool_key(key)?).map_err(from_redis)?;
        Ok(PyLeastUsed {
            inner,
            conn: Conn::new(url, timeout)?,
        })
    }

    /// Opens the connection now (it otherwise opens on the first call), so that an
    /// unreachable server is reported early.
    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        self.conn.connect(py)
    }

    /// Adds members at `initial` (members already in keep their count unless
    /// `overwrite`); forgets them from the removed set. Returns how many were added.
    #[pyo3(signature = (members, initial=0, overwrite=false))]
    fn seed(
        &self,
        py: Python<'_>,
        members: &Bound<'_, PyAny>,
        initial: u64,
        overwrite: bool,
    ) -> PyResult<usize> {
        let owned = collect(members)?;
        let ms = slices(&owned)?;
        self.conn.run(py, |con| {
            self.inner.seed(con, ms.iter().copied(), initial, overwrite)
        })
    }

    /// The least-used member (its count is incremented), or None when the pool is empty
    /// or missing: then make no request. `raw=True` returns bytes.
    #[pyo3(signature = (*, raw=false))]
    fn pick<'py>(&self, py: Python<'py>, raw: bool) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.conn.run(py, |con| self.inner.pick(con))? {
            Some(m) => Ok(Some(member(py, &m, raw)?)),
            None => Ok(None),
        }
    }

    /// `n` picks, pipelined (fewer only when the pool is or becomes empty).
    #[pyo3(signature = (n, *, raw=false))]
    fn pick_many<'py>(&self, py: Python<'py>, n: usize, raw: bool) -> PyResult<Bound<'py, PyList>> {
        let picked = self.conn.run(py, |con| self.inner.pick_many(con, n))?;
        let items = picked
            .iter()
            .map(|m| member(py, m, raw))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// Removes a member, remembering its count; returns that count, or None if it was
    /// not in the pool.
    fn remove(&self, py: Python<'_>, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        let m = key_bytes(member)?;
        self.conn.run(py, |con| self.inner.remove(con, m))
    }

    /// Puts a member back: mode "keep" (its remembered count) or "at_minimum" (the
    /// pool's current lowest count). Returns its count.
    #[pyo3(signature = (member, mode="at_minimum"))]
    fn restore(&self, py: Python<'_>, member: &Bound<'_, PyAny>, mode: &str) -> PyResult<u64> {
        let mode = restore_arg(mode)?;
        let m = key_bytes(member)?;
        self.conn.run(py, |con| self.inner.restore(con, m, mode))
    }

    /// member -> count, in pick order (lowest count first, ties by member bytes).
    #[pyo3(signature = (*, raw=false))]
    fn counts<'py>(&self, py: Python<'py>, raw: bool) -> PyResult<Bound<'py, PyDict>> {
        let got = self.conn.run(py, |con| self.inner.counts(con))?;
        pairs(py, &got, raw)
    }

    /// member -> remembered count of removed members, by member bytes.
    #[pyo3(signature = (*, raw=false))]
    fn removed<'py>(&self, py: Python<'py>, raw: bool) -> PyResult<Bound<'py, PyDict>> {
        let got = self.conn.run(py, |con| self.inner.removed(con))?;
        pairs(py, &got, raw)
    }

    /// The pool key (a sorted set).
    #[getter]
    fn key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.pool_key())
    }

    /// The side key (a hash of removed members' counts).
    #[getter]
    fn side_key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.side_key())
    }

    /// The connect/read/write timeout, seconds.
    #[getter]
    fn timeout(&self) -> f64 {
        self.conn.timeout
    }

    fn __repr__(&self) -> String {
        format!(
            "LeastUsed(key={:?}, timeout={})",
            String::from_utf8_lossy(self.inner.pool_key()),
            self.conn.timeout
        )
    }
}

/// A lease on a member of a `Leases` pool: in flight until released or reclaimed.
#[pyclass(module = "keyroute", frozen, eq, hash, name = "Lease")]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyLease {
    lease: core_redis::Lease,
}

#[pymethods]
impl PyLease {
    /// A lease from its parts (for example kept elsewhere, to release it later).
    #[new]
    fn new(member: &Bound<'_, PyAny>, id: u64, deadline_ms: u64) -> PyResult<PyLease> {
        Ok(PyLease {
            lease: core_redis::Lease {
                member: key_bytes(member)?.to_vec(),
                id,
                deadline_ms,
            },
        })
    }

    /// The member leased, as str (UnicodeDecodeError if it is not UTF-8: use
    /// `member_bytes`).
    #[getter]
    fn member<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        member(py, &self.lease.member, false)
    }

    /// The member leased, as bytes.
    #[getter]
    fn member_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.lease.member)
    }

    /// The lease id, unique within the pool.
    #[getter]
    fn id(&self) -> u64 {
        self.lease.id
    }

    /// When it expires: milliseconds since the Unix epoch, on the server's clock.
    #[getter]
    fn deadline_ms(&self) -> u64 {
        self.lease.deadline_ms
    }

    fn __getnewargs__<'py>(&self, py: Python<'py>) -> (Bound<'py, PyBytes>, u64, u64) {
        (
            PyBytes::new(py, &self.lease.member),
            self.lease.id,
            self.lease.deadline_ms,
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "Lease(member={:?}, id={}, deadline_ms={})",
            String::from_utf8_lossy(&self.lease.member),
            self.lease.id,
            self.lease.deadline_ms
        )
    }
}

/// Least-concurrency selection on a Redis server: `acquire` leases the member with the
/// fewest leases in flight, `release` ends a lease, `reclaim` ends leases abandoned past
/// their deadline. Time is the server's clock.
#[pyclass(module = "keyroute", frozen, name = "Leases")]
pub(crate) struct PyLeases {
    inner: core_redis::Leases,
    conn: Conn,
}

#[pymethods]
impl PyLeases {
    #[new]
    #[pyo3(signature = (url, key, *, timeout=2.0))]
    fn new(url: &str, key: &Bound<'_, PyAny>, timeout: f64) -> PyResult<PyLeases> {
        let inner = core_redis::Leases::new(pool_key(key)?).map_err(from_redis)?;
        Ok(PyLeases {
            inner,
            conn: Conn::new(url, timeout)?,
        })
    }

    /// Opens the connection now (it otherwise opens on the first call).
    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        self.conn.connect(py)
    }

    /// Adds members with no lease in flight (members already in keep their counts).
    /// Returns how many were added.
    fn seed(&self, py: Python<'_>, members: &Bound<'_, PyAny>) -> PyResult<usize> {
        let owned = collect(members)?;
        let ms = slices(&owned)?;
        self.conn
            .run(py, |con| self.inner.seed(con, ms.iter().copied()))
    }

    /// Takes a member out of the pool (no new lease goes to it; its leases in flight stay
    /// valid). Returns whether it was there.
    fn remove(&self, py: Python<'_>, member: &Bound<'_, PyAny>) -> PyResult<bool> {
        let m = key_bytes(member)?;
        self.conn.run(py, |con| self.inner.remove(con, m))
    }

    /// A lease of `ttl` seconds (at least 1 ms) on the member with the fewest leases in
    /// flight (ties: byte-wise smallest), or None when the pool is empty or missing.
    fn acquire(&self, py: Python<'_>, ttl: f64) -> PyResult<Option<PyLease>> {
        let ttl = seconds("ttl", ttl)?;
        let got = self.conn.run(py, |con| self.inner.acquire(con, ttl))?;
        Ok(got.map(|lease| PyLease { lease }))
    }

    /// Ends a lease, at most once: "released", "expired" (it was past its deadline but
    /// not yet reclaimed) or "already_released_or_expired" (nothing changed).
    fn release(&self, py: Python<'_>, lease: &Bound<'_, PyLease>) -> PyResult<&'static str> {
        let lease = &lease.get().lease;
        let got = self.conn.run(py, |con| self.inner.release(con, lease))?;
        Ok(match got {
            Release::Released => "released",
            Release::Expired => "expired",
            _ => "already_released_or_expired",
        })
    }

    /// Ends every lease whose deadline is at or before now (the server's clock, or
    /// `now_ms`, milliseconds since the Unix epoch) and returns them.
    #[pyo3(signature = (*, now_ms=None))]
    fn reclaim(&self, py: Python<'_>, now_ms: Option<u64>) -> PyResult<Vec<PyLease>> {
        let now = now_ms.map_or(Now::Server, Now::At);
        let got = self.conn.run(py, |con| self.inner.reclaim(con, now))?;
        Ok(got.into_iter().map(|lease| PyLease { lease }).collect())
    }

    /// member -> leases in flight, in acquire order.
    #[pyo3(signature = (*, raw=false))]
    fn in_flight<'py>(&self, py: Python<'py>, raw: bool) -> PyResult<Bound<'py, PyDict>> {
        let got = self.conn.run(py, |con| self.inner.in_flight(con))?;
        pairs(py, &got, raw)
    }

    /// How many leases are in flight.
    fn outstanding(&self, py: Python<'_>) -> PyResult<u64> {
        self.conn.run(py, |con| self.inner.outstanding(con))
    }

    /// The pool key and its three companion keys.
    #[getter]
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.keys().iter().map(|k| PyBytes::new(py, k)))
    }

    /// The connect/read/write timeout, seconds.
    #[getter]
    fn timeout(&self) -> f64 {
        self.conn.timeout
    }

    fn __repr__(&self) -> String {
        format!(
            "Leases(key={:?}, timeout={})",
            String::from_utf8_lossy(&self.inner.keys()[0]),
            self.conn.timeout
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLeastUsed>()?;
    m.add_class::<PyLeases>()?;
    m.add_class::<PyLease>()?;
    Ok(())
}
