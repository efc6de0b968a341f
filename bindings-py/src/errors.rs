//! The exception hierarchy, the mapping of the core's error codes onto it, and the guard
//! that keeps panics from reaching Python.
//!
//! Every exception keyroute raises carries `.code`, the core's `ErrorCode::as_str()`;
//! the class is chosen from that code (and, for codes every area shares, from the area
//! the error came from):
//!
//! ```text
//! KeyrouteError(Exception)
//! ├── RingError(KeyrouteError, ValueError)          ring codes (weights, names, profiles, node lists)
//! ├── NodeNotFoundError(KeyrouteError, KeyError, IndexError)   UNKNOWN_NODE
//! ├── SlotMapError(KeyrouteError, ValueError)       slot, range, address and topology codes
//! ├── RedirectError(KeyrouteError, ValueError)      NOT_A_REDIRECT, BAD_REDIRECT
//! ├── PlanError(KeyrouteError, ValueError)          BAD_PLAN, STALE_PLAN, NOT_A_MASTER (plans)
//! ├── PoolError(KeyrouteError, ValueError)          BAD_POOL_KEY, BAD_COUNT, BAD_RESTORE_MODE, EMPTY_MEMBER, BAD_TTL
//! ├── BadTypeError(KeyrouteError, TypeError)        BAD_TYPE
//! ├── BadUtf8Error(KeyrouteError, UnicodeError)     BAD_UTF8
//! ├── OutOfRangeError(KeyrouteError, ValueError, OverflowError)   OUT_OF_RANGE
//! ├── TooLargeError(KeyrouteError, ValueError)      TOO_LARGE
//! ├── InternalError(KeyrouteError, RuntimeError)    INTERNAL (a caught panic)
//! ├── CacheInputError(KeyrouteError, ValueError)    smart-cache arguments (BAD_CLIENT_ID, BAD_KIND, ...)
//! ├── CacheTimeout(KeyrouteError, TimeoutError)     CACHE_TIMEOUT
//! ├── BackendError(KeyrouteError)                   BACKEND_ERROR (+ backend_code, backend_message, cached)
//! ├── SessionExpired(KeyrouteError)                 SESSION_EXPIRED
//! ├── SessionVersionMismatch(KeyrouteError)         VERSION_MISMATCH (+ stored_version)
//! └── RedisError(KeyrouteError)                     cluster codes, BUSY
//!     ├── RedisBadUrlError(RedisError, ValueError)          REDIS_BAD_URL
//!     ├── RedisConnectionError(RedisError, ConnectionError) REDIS_CONNECT, REDIS_CONNECTION_LOST
//!     ├── RedisTimeoutError(RedisError, TimeoutError)       REDIS_TIMEOUT
//!     ├── RedisAuthError(RedisError)                        REDIS_AUTH
//!     ├── RedisWrongTypeError(RedisError)                   REDIS_WRONGTYPE
//!     ├── RedisServerError(RedisError)                      REDIS_SERVER
//!     └── RedisProtocolError(RedisError)                    REDIS_PROTOCOL
//! ```

use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{
    PyConnectionError, PyException, PyIndexError, PyKeyError, PyOverflowError, PyRuntimeError,
    PyTimeoutError, PyTypeError, PyUnicodeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use keyroute::engine::EngineError;
use keyroute::error::ErrorCode;
use keyroute::frame::HeaderError;
use keyroute::ring::RingError;
use keyroute::select::{KeyError, PoolError, UnknownRestoreMode};
use keyroute::slot::{AddressError, MapError, PlanError, RedirectError};
use keyroute_redis::Error as CoreRedisError;

/// Where an error came from: picks the class for the codes several areas share (an
/// address error is a `SlotMapError`, a weight error a `RingError`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Area {
    Ring,
    SlotMap,
    Redirect,
    Plan,
    Pool,
    Redis,
    Cache,
}

/// One exception class: its static cell, name, bases (by cell or builtin), class-level
/// `code` and docstring.
struct Class {
    cell: PyOnceLock<Py<PyType>>,
    name: &'static str,
    code: &'static str,
    doc: &'static str,
}

macro_rules! classes {
    ($($id:ident = $name:literal, $code:literal, $doc:literal;)*) => {
        $(static $id: Class = Class { cell: PyOnceLock::new(), name: $name, code: $code, doc: $doc };)*
    };
}

classes! {
    BASE = "KeyrouteError", "",
        "Base class of every error keyroute raises. `code` is the error code (see \
         ERROR_CODES), the same in every language keyroute speaks.";
    RING = "RingError", "",
        "A ring or node list was refused: empty or duplicate node name, bad weight, unknown \
         profile, bad vnodes/points_per_digest/default_port, too many points, an ambiguous \
         node entry, or rings that hash keys differently. Also a ValueError.";
    NOT_FOUND = "NodeNotFoundError", "UNKNOWN_NODE",
        "The node is not on the ring (or in the slot map). Also a KeyError and an IndexError.";
    SLOT_MAP = "SlotMapError", "",
        "A slot map could not be built or changed (bad slot, range or address, a replica \
         where a master is needed, an inconsistent reply). Also a ValueError.";
    REDIRECT = "RedirectError", "",
        "A MOVED/ASK error message could not be parsed. Also a ValueError.";
    PLAN = "PlanError", "",
        "A resharding plan could not be made or applied (weights, a stale map). Also a \
         ValueError.";
    POOL = "PoolError", "",
        "A pool argument was refused (pool key, initial count, restore mode, empty member, \
         TTL or timeout); nothing was changed. Also a ValueError.";
    BAD_TYPE = "BadTypeError", "BAD_TYPE",
        "An argument has the wrong type (a str where a list is meant, a float where an int \
         is). Also a TypeError.";
    BAD_UTF8 = "BadUtf8Error", "BAD_UTF8",
        "Text that must be UTF-8 is not (a str with a lone surrogate, a member that is not \
         UTF-8: use the *_bytes variant). Also a UnicodeError.";
    OUT_OF_RANGE = "OutOfRangeError", "OUT_OF_RANGE",
        "A number is outside the range its parameter accepts. Also a ValueError and an \
         OverflowError.";
    TOO_LARGE = "TooLargeError", "TOO_LARGE",
        "A count or size is above the stated limit; nothing was allocated. Also a ValueError.";
    INTERNAL = "InternalError", "INTERNAL",
        "A bug in keyroute (a caught panic); please report it. Also a RuntimeError.";
    CACHE_INPUT = "CacheInputError", "",
        "A smart-cache, session or device argument was refused (BAD_CLIENT_ID, BAD_KIND, \
         BAD_DEVICE_ID, BAD_SESSION_ID, BAD_VERSION, BAD_TTL), or a value or session data is \
         larger than the maximum (VALUE_TOO_LARGE); nothing was stored. Also a ValueError.";
    CACHE_TIMEOUT = "CacheTimeout", "CACHE_TIMEOUT",
        "The deadline (timeout_ms) passed before a value was served; another instance may \
         still be loading it. Also a TimeoutError.";
    BACKEND = "BackendError", "BACKEND_ERROR",
        "The loader failed, here or in another instance (its failure is cached for the \
         negative TTL). `backend_code` is the loader's code (its exception's `code` \
         attribute, else its class name), `backend_message` its text, `cached` whether it \
         came from the cache rather than this call's loader; the exception the loader raised \
         is the `__cause__` for the caller that ran it.";
    SESSION_EXPIRED = "SessionExpired", "SESSION_EXPIRED",
        "The session expired (idle, or past its maximum age), was destroyed or never \
         existed: log in again.";
    VERSION_MISMATCH = "SessionVersionMismatch", "VERSION_MISMATCH",
        "The session was created by another service version (`stored_version`); it was \
         left as it was.";
    REDIS = "RedisError", "",
        "Talking to Redis failed. The subclass and `code` say how; the message says what was \
         being done (passwords are never shown). After a connection error the next call \
         reconnects; a pick whose reply was lost may or may not have been counted.";
    REDIS_BAD_URL = "RedisBadUrlError", "REDIS_BAD_URL",
        "A Redis URL cannot be used; nothing was sent. Also a ValueError.";
    REDIS_CONNECTION = "RedisConnectionError", "",
        "The server refused the connection or cannot be reached (REDIS_CONNECT), or the \
         connection broke mid-call (REDIS_CONNECTION_LOST). Also a ConnectionError.";
    REDIS_TIMEOUT = "RedisTimeoutError", "REDIS_TIMEOUT",
        "Connecting or waiting for a reply took longer than the timeout. Also a TimeoutError.";
    REDIS_AUTH = "RedisAuthError", "REDIS_AUTH",
        "The server refused the credentials.";
    REDIS_WRONGTYPE = "RedisWrongTypeError", "REDIS_WRONGTYPE",
        "A key holds another type (WRONGTYPE); the script changed nothing.";
    REDIS_SERVER = "RedisServerError", "REDIS_SERVER",
        "Redis answered an error.";
    REDIS_PROTOCOL = "RedisProtocolError", "REDIS_PROTOCOL",
        "The reply is not what the command gives, or the peer does not speak Redis.";
}

/// The class for `code` coming from `area`.
fn class_of(area: Area, code: ErrorCode) -> &'static Class {
    use ErrorCode as C;
    match code {
        C::BadType => &BAD_TYPE,
        C::CacheTimeout => &CACHE_TIMEOUT,
        C::BackendError => &BACKEND,
        C::SessionExpired => &SESSION_EXPIRED,
        C::VersionMismatch => &VERSION_MISMATCH,
        // An object used in another process than the one that made it (after a fork).
        C::InvalidHandle if area == Area::Cache => &BASE,
        C::BadUtf8 => &BAD_UTF8,
        C::OutOfRange => &OUT_OF_RANGE,
        C::TooLarge => &TOO_LARGE,
        C::Internal | C::NullArgument | C::BufferTooSmall | C::InvalidHandle => &INTERNAL,
        C::UnknownNode => &NOT_FOUND,
        C::RedisBadUrl => &REDIS_BAD_URL,
        C::RedisConnect | C::RedisConnectionLost => &REDIS_CONNECTION,
        C::RedisTimeout => &REDIS_TIMEOUT,
        C::RedisAuth => &REDIS_AUTH,
        C::RedisWrongType => &REDIS_WRONGTYPE,
        C::RedisServer => &REDIS_SERVER,
        C::RedisProtocol => &REDIS_PROTOCOL,
        C::ClusterNoOwner | C::ClusterRetriesExhausted | C::ClusterUnreachable | C::Busy => &REDIS,
        _ => match area {
            Area::Ring => &RING,
            Area::SlotMap => &SLOT_MAP,
            Area::Redirect => &REDIRECT,
            Area::Plan => &PLAN,
            Area::Pool => &POOL,
            Area::Redis => &REDIS,
            Area::Cache => &CACHE_INPUT,
        },
    }
}

/// Creates `class name(*bases)` in module `keyroute` with its docstring and class-level
/// `code` (multiple inheritance, which `create_exception!` does not offer).
fn new_class<'py>(
    py: Python<'py>,
    class: &Class,
    bases: &[Bound<'py, PyType>],
) -> PyResult<Bound<'py, PyType>> {
    let ns = PyDict::new(py);
    ns.set_item("__module__", "keyroute")?;
    ns.set_item("__doc__", class.doc)?;
    ns.set_item("code", class.code)?;
    let bases = PyTuple::new(py, bases)?;
    py.get_type::<PyType>()
        .call1((class.name, bases, ns))?
        .cast_into::<PyType>()
        .map_err(PyErr::from)
}

fn get<'py>(py: Python<'py>, class: &'static Class) -> PyResult<Bound<'py, PyType>> {
    class
        .cell
        .get(py)
        .map(|t| t.bind(py).clone())
        .ok_or_else(|| PyRuntimeError::new_err("keyroute's exception classes are not set up"))
}

pub(crate) fn register<'py>(m: &Bound<'py, PyModule>) -> PyResult<()> {
    let py = m.py();
    let value = || py.get_type::<PyValueError>();
    let add = |class: &'static Class,
               parent: Option<&'static Class>,
               others: &[Bound<'py, PyType>]|
     -> PyResult<()> {
        let mut bases = Vec::new();
        if let Some(parent) = parent {
            bases.push(get(py, parent)?);
        }
        bases.extend(others.iter().cloned());
        let ty = new_class(py, class, &bases)?;
        let _ = class.cell.set(py, ty.clone().unbind());
        m.add(class.name, ty)
    };
    add(&BASE, None, &[py.get_type::<PyException>()])?;
    add(&RING, Some(&BASE), &[value()])?;
    let lookup = [py.get_type::<PyKeyError>(), py.get_type::<PyIndexError>()];
    add(&NOT_FOUND, Some(&BASE), &lookup)?;
    add(&SLOT_MAP, Some(&BASE), &[value()])?;
    add(&REDIRECT, Some(&BASE), &[value()])?;
    add(&PLAN, Some(&BASE), &[value()])?;
    add(&POOL, Some(&BASE), &[value()])?;
    add(&BAD_TYPE, Some(&BASE), &[py.get_type::<PyTypeError>()])?;
    add(&BAD_UTF8, Some(&BASE), &[py.get_type::<PyUnicodeError>()])?;
    add(
        &OUT_OF_RANGE,
        Some(&BASE),
        &[value(), py.get_type::<PyOverflowError>()],
    )?;
    add(&TOO_LARGE, Some(&BASE), &[value()])?;
    add(&INTERNAL, Some(&BASE), &[py.get_type::<PyRuntimeError>()])?;
    add(&CACHE_INPUT, Some(&BASE), &[value()])?;
    add(
        &CACHE_TIMEOUT,
        Some(&BASE),
        &[py.get_type::<PyTimeoutError>()],
    )?;
    add(&BACKEND, Some(&BASE), &[])?;
    add(&SESSION_EXPIRED, Some(&BASE), &[])?;
    add(&VERSION_MISMATCH, Some(&BASE), &[])?;
    add(&REDIS, Some(&BASE), &[])?;
    add(&REDIS_BAD_URL, Some(&REDIS), &[value()])?;
    add(
        &REDIS_CONNECTION,
        Some(&REDIS),
        &[py.get_type::<PyConnectionError>()],
    )?;
    add(
        &REDIS_TIMEOUT,
        Some(&REDIS),
        &[py.get_type::<PyTimeoutError>()],
    )?;
    add(&REDIS_AUTH, Some(&REDIS), &[])?;
    add(&REDIS_WRONGTYPE, Some(&REDIS), &[])?;
    add(&REDIS_SERVER, Some(&REDIS), &[])?;
    add(&REDIS_PROTOCOL, Some(&REDIS), &[])?;
    let codes = PyDict::new(py);
    for code in ErrorCode::ALL {
        codes.set_item(code.as_str(), code.number())?;
    }
    let proxy = py
        .import("types")?
        .getattr("MappingProxyType")?
        .call1((codes,))?;
    m.add("ERROR_CODES", proxy)?;
    Ok(())
}

/// The exception of `code` from `area`, with `message` and `.code` set.
pub(crate) fn raise(area: Area, code: ErrorCode, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| {
        let made = get(py, class_of(area, code)).and_then(|ty| {
            let err = ty.call1((message,))?;
            err.setattr("code", code.as_str())?;
            Ok(err)
        });
        match made {
            Ok(err) => PyErr::from_value(err),
            Err(e) => e,
        }
    })
}

/// A core error with a code, and the area whose exception class it takes.
pub(crate) trait Coded: Display {
    const AREA: Area;
    fn code(&self) -> ErrorCode;
}

macro_rules! coded {
    ($($ty:ty => $area:ident),* $(,)?) => {$(
        impl Coded for $ty {
            const AREA: Area = Area::$area;
            fn code(&self) -> ErrorCode {
                <$ty>::code(self)
            }
        }
    )*};
}

coded!(
    RingError => Ring,
    EngineError => Ring,
    MapError => SlotMap,
    AddressError => SlotMap,
    RedirectError => Redirect,
    PlanError => Plan,
    PoolError => Pool,
    KeyError => Pool,
    UnknownRestoreMode => Pool,
    // Its codes (OUT_OF_RANGE, TOO_LARGE, BUFFER_TOO_SMALL) have classes of their own.
    HeaderError => Ring,
);

/// A core error as its Python exception (class from its code; the core's message).
pub(crate) fn err<E: Coded>(e: E) -> PyErr {
    raise(E::AREA, e.code(), e.to_string())
}

/// `keyroute_redis::Error` as its Python exception: the core errors it wraps keep their
/// own class (a bad pool key is a `PoolError`), the rest are `RedisError` subclasses by
/// code. Messages never hold a password (the Redis crate redacts URLs).
pub(crate) fn from_redis(e: CoreRedisError) -> PyErr {
    match e {
        CoreRedisError::Key(e) => err(e),
        CoreRedisError::Pool(e) => err(e),
        CoreRedisError::Affinity(_) => raise(Area::Pool, e.code(), e.to_string()),
        CoreRedisError::Map(e) => err(e),
        CoreRedisError::Plan(e) => err(e),
        CoreRedisError::Ring(e) => err(e),
        CoreRedisError::Address(e) => err(e),
        CoreRedisError::BadTtl(_) => raise(Area::Pool, e.code(), e.to_string()),
        CoreRedisError::Input(_) => raise(Area::Cache, e.code(), e.to_string()),
        CoreRedisError::Backend {
            ref code,
            ref message,
            cached,
        } => {
            let err = raise(Area::Cache, e.code(), e.to_string());
            let attrs = Python::attach(|py| -> PyResult<()> {
                let v = err.value(py);
                v.setattr("backend_code", code)?;
                v.setattr("backend_message", message)?;
                v.setattr("cached", cached)
            });
            match attrs {
                Ok(()) => err,
                Err(failed) => failed,
            }
        }
        e => raise(Area::Redis, e.code(), e.to_string()),
    }
}

pub(crate) fn bad_type(message: impl Into<String>) -> PyErr {
    raise(Area::Ring, ErrorCode::BadType, message)
}

pub(crate) fn bad_utf8(message: impl Into<String>) -> PyErr {
    raise(Area::Ring, ErrorCode::BadUtf8, message)
}

pub(crate) fn out_of_range(message: impl Into<String>) -> PyErr {
    raise(Area::Ring, ErrorCode::OutOfRange, message)
}

pub(crate) fn too_large(message: impl Into<String>) -> PyErr {
    raise(Area::Ring, ErrorCode::TooLarge, message)
}

pub(crate) fn internal(message: impl Into<String>) -> PyErr {
    raise(Area::Ring, ErrorCode::Internal, message)
}

/// Runs the body of a Python entry point, turning a panic into `InternalError`
/// (`INTERNAL`): Python never sees pyo3's `PanicException`, which `except Exception`
/// does not catch.
pub(crate) fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_string());
            Err(internal(format!(
                "internal error in keyroute: {what}; this is a bug, please report it"
            )))
        }
    }
}

/// For the tests: a panic inside the guard, which must arrive as `InternalError`.
#[pyfunction]
#[pyo3(name = "_panic_for_test")]
fn panic_for_test() -> PyResult<()> {
    guard(|| -> PyResult<()> { panic!("deliberate panic (keyroute._keyroute._panic_for_test)") })
}

pub(crate) fn register_test_hooks(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Not in __all__: a hook for the tests, not part of the API.
    m.setattr("_panic_for_test", wrap_pyfunction!(panic_for_test, m)?)
}
