//! The exception hierarchy and the mapping of core error enums onto it.
//!
//! ```text
//! KeyrouteError(Exception)
//! ├── RingError(KeyrouteError, ValueError)        bad node, weight, profile, vnodes, ...
//! ├── NodeNotFoundError(KeyrouteError, KeyError)  the node is not on the ring / map
//! ├── SlotMapError(KeyrouteError, ValueError)     a slot map could not be built or changed
//! ├── RedirectError(KeyrouteError, ValueError)    a MOVED/ASK message could not be parsed
//! ├── PoolError(KeyrouteError, ValueError)        a pool operation was refused (also a
//! │                                               bad pool key for LeastUsed / Leases)
//! └── RedisError(KeyrouteError)                   a Redis connection or server problem
//! ```

use pyo3::exceptions::{PyException, PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use keyroute::ring::RingError;
use keyroute_redis::Error as CoreRedisError;

static BASE: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static RING: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static NOT_FOUND: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static SLOT_MAP: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REDIRECT: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static POOL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static REDIS: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Creates `class name(*bases)` in module `keyroute` (multiple inheritance, which
/// `create_exception!` does not offer).
fn new_class<'py>(
    py: Python<'py>,
    name: &str,
    doc: &str,
    bases: &[Bound<'py, PyType>],
) -> PyResult<Bound<'py, PyType>> {
    let ns = PyDict::new(py);
    ns.set_item("__module__", "keyroute")?;
    ns.set_item("__doc__", doc)?;
    let bases = PyTuple::new(py, bases)?;
    let ty = py
        .get_type::<PyType>()
        .call1((name, bases, ns))?
        .cast_into::<PyType>()?;
    Ok(ty)
}

fn cell<'py>(py: Python<'py>, lock: &'static PyOnceLock<Py<PyType>>) -> Bound<'py, PyType> {
    #[allow(clippy::expect_used)]
    lock.get(py)
        .expect("exception types are created when the module is imported")
        .bind(py)
        .clone()
}

pub(crate) fn register<'py>(m: &Bound<'py, PyModule>) -> PyResult<()> {
    let py = m.py();
    let base = new_class(
        py,
        "KeyrouteError",
        "Base class of every error keyroute raises itself.",
        &[py.get_type::<PyException>()],
    )?;
    let value = py.get_type::<PyValueError>();
    let key = py.get_type::<PyKeyError>();
    let mk = |name: &str, doc: &str, other: &Bound<'py, PyType>| {
        new_class(py, name, doc, &[base.clone(), other.clone()])
    };
    let ring = mk(
        "RingError",
        "A ring could not be built or changed: empty or duplicate node name, weight below 1 \
         or above 2**32-1, unknown profile, bad vnodes or points_per_digest, too many points, \
         or rings that hash keys differently. Also a ValueError.",
        &value,
    )?;
    let not_found = mk(
        "NodeNotFoundError",
        "The node is not on the ring (or in the slot map). Also a KeyError.",
        &key,
    )?;
    let slot_map = mk(
        "SlotMapError",
        "A slot map could not be built or changed (bad range, unknown or non-master node, \
         conflicting reply). Also a ValueError.",
        &value,
    )?;
    let redirect = mk(
        "RedirectError",
        "A MOVED/ASK error message could not be parsed. Also a ValueError.",
        &value,
    )?;
    let pool = mk(
        "PoolError",
        "A pool operation was refused (for example an initial count above 2**53). Also a \
         ValueError.",
        &value,
    )?;
    let redis = new_class(
        py,
        "RedisError",
        "Talking to Redis failed: the server is unreachable or refused the connection, a \
         connect/read/write timed out, the connection broke, or the server answered an \
         error (or an unexpected reply). The message says what was being done. After a \
         connection error the next call reconnects; a pick whose reply was lost may or may \
         not have been counted.",
        std::slice::from_ref(&base),
    )?;
    for (lock, ty) in [
        (&BASE, &base),
        (&RING, &ring),
        (&NOT_FOUND, &not_found),
        (&SLOT_MAP, &slot_map),
        (&REDIRECT, &redirect),
        (&POOL, &pool),
        (&REDIS, &redis),
    ] {
        let _ = lock.set(py, ty.clone().unbind());
        m.add(ty.name()?, ty)?;
    }
    Ok(())
}

pub(crate) fn ring_error(msg: String) -> PyErr {
    Python::attach(|py| PyErr::from_type(cell(py, &RING), msg))
}

pub(crate) fn not_found(msg: String) -> PyErr {
    Python::attach(|py| PyErr::from_type(cell(py, &NOT_FOUND), msg))
}

pub(crate) fn slot_map_error(msg: String) -> PyErr {
    Python::attach(|py| PyErr::from_type(cell(py, &SLOT_MAP), msg))
}

pub(crate) fn redirect_error(msg: String) -> PyErr {
    Python::attach(|py| PyErr::from_type(cell(py, &REDIRECT), msg))
}

pub(crate) fn pool_error(msg: String) -> PyErr {
    Python::attach(|py| PyErr::from_type(cell(py, &POOL), msg))
}

/// `RingError::UnknownNode` → `NodeNotFoundError` (a `KeyError`); every other variant →
/// `RingError` (a `ValueError`). The message is the core's, which says what to fix.
pub(crate) fn from_ring(e: RingError) -> PyErr {
    match e {
        RingError::UnknownNode(_) => not_found(e.to_string()),
        _ => ring_error(e.to_string()),
    }
}

pub(crate) fn redis_error(msg: String) -> PyErr {
    Python::attach(|py| PyErr::from_type(cell(py, &REDIS), msg))
}

/// A bad pool key or a refused argument (nothing was sent) -> `PoolError` (a
/// `ValueError`); everything else (connection, timeout, server error, unexpected reply)
/// -> `RedisError`. The message is the core's, with what was being done.
pub(crate) fn from_redis(e: CoreRedisError) -> PyErr {
    match e {
        CoreRedisError::Key(_) | CoreRedisError::Pool(_) => pool_error(e.to_string()),
        _ => redis_error(e.to_string()),
    }
}
