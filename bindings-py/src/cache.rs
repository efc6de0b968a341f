//! `keyroute.SmartCache`, `keyroute.Sessions`, `keyroute.Devices`: the smart cache on
//! Redis (`keyroute_redis::cache`), standalone or Cluster.
//!
//! Thin: each method converts its arguments (coded errors for wrong types and values),
//! releases the GIL and calls the native client, which does everything else (single
//! flight, leases, heartbeats, fences, wake-ups). The loader is the one piece of Python
//! the native side calls back: `get_or_load` runs it in the calling thread, taking the GIL
//! back only for the call; `warm` runs one per kind in parallel threads, each taking the
//! GIL for its call.
//!
//! Nothing starts when the module is imported. Each object opens its connections and
//! loads the scripts when it is made; it belongs to the process that made it (after a
//! `fork` the child makes its own: using the parent's raises `INVALID_HANDLE`, because
//! the connections would be shared with the parent).

use std::time::{Duration, Instant};

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use keyroute::cache::{checked_ms, InputError, Touch, MAX_WARM_KINDS};
use keyroute::error::ErrorCode;
use keyroute_redis::cache::{
    CacheConfig, Devices, LoadError, SessionConfig, Sessions, SmartCache, Store, WarmReport,
};
use keyroute_redis::cluster::ClusterConfig;
use keyroute_redis::{Error as CoreError, Timeouts};

use crate::args::{flag, int, seconds, text, type_name};
use crate::errors::{bad_type, from_redis, guard, raise, too_large, Area};

/// The most seed URLs a cluster constructor takes (a seed list is a handful of nodes;
/// a longer list is refused with `TOO_LARGE` before anything is allocated for it).
const MAX_SEEDS: usize = 1024;

/// `get_or_load`'s deadline when none is given.
const DEFAULT_TIMEOUT_MS: u64 = 5000;

/// A duration in ms given as a Python int: `BAD_TYPE` for other types (floats included),
/// `OUT_OF_RANGE` beyond 128 bits, `BAD_TTL` outside `min..=2**48` (the core's check).
fn ms_arg(obj: &Bound<'_, PyAny>, what: &'static str, min: u64) -> PyResult<u64> {
    let v = int(obj, what)?;
    checked_ms(what, v, min).map_err(|e| from_redis(e.into()))
}

/// The bytes of a `bytes` argument: `BAD_TYPE` for anything else.
fn bytes_arg<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a [u8]> {
    obj.cast::<PyBytes>()
        .map(|b| b.as_bytes())
        .map_err(|_| bad_type(format!("{what} must be bytes, not {}", type_name(obj))))
}

fn opt_ms(
    obj: Option<&Bound<'_, PyAny>>,
    what: &'static str,
    min: u64,
    default: u64,
) -> PyResult<u64> {
    match obj {
        Some(o) if !o.is_none() => ms_arg(o, what, min),
        _ => Ok(default),
    }
}

fn opt_flag(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<bool> {
    match obj {
        Some(o) if !o.is_none() => flag(o, what),
        _ => Ok(false),
    }
}

/// Opens the store: `url` is one URL (`redis://...` or `host:port`); with `cluster`, one
/// seed URL or a list/tuple of them. Connections open and scripts load here, with the
/// GIL released.
fn open_store(
    py: Python<'_>,
    url: &Bound<'_, PyAny>,
    cluster: Option<&Bound<'_, PyAny>>,
    timeout: Option<&Bound<'_, PyAny>>,
) -> PyResult<Store> {
    let cluster = opt_flag(cluster, "cluster")?;
    let timeout = match timeout {
        Some(t) if !t.is_none() => Some(seconds(t, "timeout")?),
        _ => None,
    };
    if !cluster {
        if !url.is_instance_of::<PyString>() {
            return Err(bad_type(format!(
                "url must be a str, not {} (a list of seed URLs of a Redis Cluster needs \
                 cluster=True)",
                type_name(url)
            )));
        }
        let url = text(url, "the Redis URL")?;
        let timeouts = timeout.map(Timeouts::uniform).unwrap_or_default();
        return py
            .detach(|| Store::standalone(url, timeouts))
            .map_err(from_redis);
    }
    let items: Vec<Bound<'_, PyAny>> = if url.is_instance_of::<PyString>() {
        vec![url.clone()]
    } else if url.is_instance_of::<PyList>() || url.is_instance_of::<PyTuple>() {
        let n = url.len()?;
        if n > MAX_SEEDS {
            return Err(too_large(format!(
                "{n} seed URLs given; at most {MAX_SEEDS} are taken (a few seeds suffice: \
                 the rest of the cluster is discovered)"
            )));
        }
        url.try_iter()?.collect::<PyResult<_>>()?
    } else {
        return Err(bad_type(format!(
            "with cluster=True, url is a seed URL (str) or a list of them, not {}",
            type_name(url)
        )));
    };
    let seeds = items
        .iter()
        .map(|s| text(s, "a seed URL"))
        .collect::<PyResult<Vec<&str>>>()?;
    if seeds.is_empty() {
        return Err(raise(
            Area::Redis,
            ErrorCode::RedisBadUrl,
            "cluster=True needs at least one seed URL",
        ));
    }
    let mut config = ClusterConfig::default();
    if let Some(t) = timeout {
        config.connect_timeout = t;
        config.io_timeout = t;
    }
    py.detach(|| Store::cluster(&seeds, config))
        .map_err(from_redis)
}

/// `INVALID_HANDLE` when an object is used in another process than the one that made it
/// (a `fork` copied it: its connections are the parent's).
fn same_process(pid: u32, what: &str) -> PyResult<()> {
    let now = std::process::id();
    if now == pid {
        return Ok(());
    }
    Err(raise(
        Area::Cache,
        ErrorCode::InvalidHandle,
        format!(
            "this {what} was made in process {pid} and this is process {now} (a fork): its \
             connections belong to the parent; make a new {what} in this process"
        ),
    ))
}

/// How a loader call went wrong, for the caller that ran it.
enum Failure {
    /// The loader raised this exception (the others get `BackendError`).
    Raised(PyErr),
    /// The loader returned something keyroute refuses (`BAD_TYPE`, `VALUE_TOO_LARGE`):
    /// this exception.
    Refused(PyErr),
}

/// The loader's exception as the native side caches it: its `code` attribute when that
/// is a non-empty str (a KeyrouteError, an application error with codes), else the
/// exception's class name; its `str()` as the message.
fn load_error(py: Python<'_>, e: &PyErr) -> LoadError {
    let value = e.value(py);
    let code = value
        .getattr("code")
        .ok()
        .and_then(|c| c.cast_into::<PyString>().ok())
        .and_then(|s| s.to_str().ok().map(str::to_string))
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| type_name(value.as_any()));
    let message = value
        .str()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    LoadError::new(code, message)
}

/// The bytes a loader returned, copied for Redis: `bytes` only (`BAD_TYPE` otherwise),
/// at most `max` of them (`VALUE_TOO_LARGE`, checked before the copy).
fn loaded_value(v: &Bound<'_, PyAny>, max: usize) -> Result<Vec<u8>, (LoadError, PyErr)> {
    let Ok(b) = v.cast::<PyBytes>() else {
        let msg = format!(
            "the loader returned {}, not bytes (encode text first, e.g. \
             json.dumps(value).encode())",
            type_name(v)
        );
        return Err((LoadError::new("BAD_TYPE", msg.clone()), bad_type(msg)));
    };
    let bytes = b.as_bytes();
    if let Err(e) = keyroute::cache::check_value_len(bytes.len(), max) {
        let msg = e.to_string();
        return Err((
            LoadError::new("VALUE_TOO_LARGE", msg),
            from_redis(CoreError::Input(e)),
        ));
    }
    Ok(bytes.to_vec())
}

/// Calls `loader(*args)` with the GIL, recording a failure for the caller.
fn call_loader(
    py: Python<'_>,
    loader: &Py<PyAny>,
    args: Option<(&str, &str)>,
    max: usize,
) -> Result<Vec<u8>, (LoadError, Failure)> {
    let result = match args {
        None => loader.call0(py),
        Some(a) => loader.call1(py, a),
    };
    match result {
        Ok(v) => loaded_value(v.bind(py), max).map_err(|(le, e)| (le, Failure::Refused(e))),
        // KeyboardInterrupt, SystemExit: nothing is known of the backend; the lease is
        // released and nothing cached for the other processes.
        Err(e) if !e.is_instance_of::<PyException>(py) => {
            Err((load_error(py, &e).uncached(), Failure::Raised(e)))
        }
        Err(e) => Err((load_error(py, &e), Failure::Raised(e))),
    }
}

/// The exception for a failed load, for the caller whose loader failed: the refusal
/// itself; the loader's exception when it is not an `Exception` (KeyboardInterrupt,
/// SystemExit); else `BackendError` caused by it.
fn failed_load(py: Python<'_>, error: CoreError, failure: Option<Failure>) -> PyErr {
    match (error, failure) {
        (e @ CoreError::Backend { cached: false, .. }, Some(Failure::Raised(orig))) => {
            if !orig.is_instance_of::<PyException>(py) {
                return orig;
            }
            let err = from_redis(e);
            err.set_cause(py, Some(orig));
            err
        }
        (CoreError::Backend { cached: false, .. }, Some(Failure::Refused(refused))) => refused,
        (e, _) => from_redis(e),
    }
}

fn utf8<'a>(b: &'a [u8], what: &str) -> PyResult<&'a str> {
    std::str::from_utf8(b).map_err(|e| {
        raise(
            Area::Cache,
            ErrorCode::BadUtf8,
            format!("{what} is not UTF-8 ({e}); it was stored by a caller that used bytes"),
        )
    })
}

/// A cache on Redis shared by every process and server: a cold key is loaded once.
#[pyclass(module = "keyroute", frozen, name = "SmartCache")]
pub(crate) struct PySmartCache {
    cache: SmartCache,
    pid: u32,
    lease_ms: u64,
    soft_ttl_ms: u64,
    hard_ttl_ms: u64,
    neg_ttl_ms: u64,
}

impl PySmartCache {
    fn max_value_len(&self) -> usize {
        self.cache.config().max_value_len
    }
}

#[pymethods]
impl PySmartCache {
    #[new]
    #[pyo3(
        signature = (url, *, lease_ms=None, soft_ttl_ms=None, hard_ttl_ms=None, neg_ttl_ms=None, cluster=None, timeout=None),
        text_signature = "(url, *, lease_ms=2000, soft_ttl_ms=60000, hard_ttl_ms=600000, neg_ttl_ms=1000, cluster=False, timeout=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        lease_ms: Option<&Bound<'_, PyAny>>,
        soft_ttl_ms: Option<&Bound<'_, PyAny>>,
        hard_ttl_ms: Option<&Bound<'_, PyAny>>,
        neg_ttl_ms: Option<&Bound<'_, PyAny>>,
        cluster: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySmartCache> {
        guard(|| {
            let d = keyroute::cache::CacheSettings::DEFAULT;
            let lease_ms = opt_ms(lease_ms, "lease_ms", 1, d.lease_ms)?;
            let soft_ttl_ms = opt_ms(soft_ttl_ms, "soft_ttl_ms", 1, d.soft_ttl_ms)?;
            let hard_ttl_ms = opt_ms(hard_ttl_ms, "hard_ttl_ms", 1, d.hard_ttl_ms)?;
            let neg_ttl_ms = opt_ms(neg_ttl_ms, "neg_ttl_ms", 0, d.neg_ttl_ms)?;
            let config = CacheConfig {
                lease: Duration::from_millis(lease_ms),
                soft_ttl: Duration::from_millis(soft_ttl_ms),
                hard_ttl: Duration::from_millis(hard_ttl_ms),
                neg_ttl: Duration::from_millis(neg_ttl_ms),
                ..CacheConfig::default()
            };
            let store = open_store(py, url, cluster, timeout)?;
            let cache = SmartCache::new(store, config).map_err(from_redis)?;
            Ok(PySmartCache {
                cache,
                pid: std::process::id(),
                lease_ms,
                soft_ttl_ms,
                hard_ttl_ms,
                neg_ttl_ms,
            })
        })
    }

    /// The value of `kind` for `client`, from Redis, or from `loader()` (bytes), which one
    /// caller across every process sharing the Redis runs while the others wait.
    #[pyo3(
        signature = (client, kind, loader, *, timeout_ms=None),
        text_signature = "($self, client, kind, loader, *, timeout_ms=5000)"
    )]
    fn get_or_load<'py>(
        &self,
        py: Python<'py>,
        client: &Bound<'py, PyAny>,
        kind: &Bound<'py, PyAny>,
        loader: &Bound<'py, PyAny>,
        timeout_ms: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        guard(|| {
            same_process(self.pid, "SmartCache")?;
            let client = text(client, "client")?;
            let kind = text(kind, "kind")?;
            if !loader.is_callable() {
                return Err(bad_type(format!(
                    "loader must be a callable returning bytes, not {}",
                    type_name(loader)
                )));
            }
            let timeout = opt_ms(timeout_ms, "timeout_ms", 1, DEFAULT_TIMEOUT_MS)?;
            let now = Instant::now();
            let deadline = now
                .checked_add(Duration::from_millis(timeout))
                .unwrap_or(now + Duration::from_secs(86_400 * 365 * 100));
            let loader = loader.clone().unbind();
            let max = self.max_value_len();
            let mut failure: Option<Failure> = None;
            let result = py.detach(|| {
                self.cache.get_or_load(client, kind, deadline, || {
                    Python::attach(|py| {
                        call_loader(py, &loader, None, max).map_err(|(le, f)| {
                            failure = Some(f);
                            le
                        })
                    })
                })
            });
            match result {
                Ok(value) => Ok(PyBytes::new(py, &value)),
                Err(e) => Err(failed_load(py, e, failure)),
            }
        })
    }

    /// Drops the value of `kind` for `client` and discards a load in progress; whether an
    /// entry was there.
    fn invalidate(
        &self,
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        kind: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        guard(|| {
            same_process(self.pid, "SmartCache")?;
            let client = text(client, "client")?;
            let kind = text(kind, "kind")?;
            py.detach(|| self.cache.invalidate(client, kind))
                .map_err(from_redis)
        })
    }

    /// Stores `value` (bytes) for `kind` of `client` directly, without a loader: the
    /// entry's fence is bumped in the same atomic call, so a load in flight for it (here or
    /// in another process) is discarded and its callers get `value`. Fresh for `ttl_ms`
    /// and kept as long (default: the soft and hard TTLs).
    #[pyo3(
        signature = (client, kind, value, *, ttl_ms=None),
        text_signature = "($self, client, kind, value, *, ttl_ms=None)"
    )]
    fn put(
        &self,
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        kind: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        ttl_ms: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        guard(|| {
            same_process(self.pid, "SmartCache")?;
            let client = text(client, "client")?;
            let kind = text(kind, "kind")?;
            let value = bytes_arg(value, "value")?;
            let ttl = match ttl_ms {
                Some(t) if !t.is_none() => Some(Duration::from_millis(ms_arg(t, "ttl_ms", 1)?)),
                _ => None,
            };
            py.detach(|| self.cache.put(client, kind, value, ttl))
                .map_err(from_redis)
        })
    }

    /// Warms the kinds of the client bound to `device`: every cold kind is leased in one
    /// call, then `loader(client, kind)` runs for each, in parallel threads.
    fn warm(
        &self,
        py: Python<'_>,
        device: &Bound<'_, PyAny>,
        kinds: &Bound<'_, PyAny>,
        loader: &Bound<'_, PyAny>,
    ) -> PyResult<PyWarmReport> {
        guard(|| {
            same_process(self.pid, "SmartCache")?;
            let device = text(device, "device")?;
            let held = kind_list(kinds)?;
            let kinds = held
                .iter()
                .map(|k| text(k, "a kind"))
                .collect::<PyResult<Vec<&str>>>()?;
            if !loader.is_callable() {
                return Err(bad_type(format!(
                    "loader must be a callable (client, kind) -> bytes, not {}",
                    type_name(loader)
                )));
            }
            let loader = loader.clone().unbind();
            let max = self.max_value_len();
            let failures: std::sync::Mutex<Vec<(Vec<u8>, Failure)>> = Default::default();
            let report = py.detach(|| {
                self.cache.warm(device, &kinds, |client, kind| {
                    Python::attach(|py| {
                        let result = std::str::from_utf8(client)
                            .map_err(|e| {
                                let msg =
                                    format!("the client id bound to the device is not UTF-8 ({e})");
                                (
                                    LoadError::new("BAD_UTF8", msg.clone()),
                                    Failure::Refused(raise(Area::Cache, ErrorCode::BadUtf8, msg)),
                                )
                            })
                            .and_then(|c| {
                                // Kinds came from Python str: always UTF-8.
                                let k = std::str::from_utf8(kind).unwrap_or_default();
                                call_loader(py, &loader, Some((c, k)), max)
                            });
                        result.map_err(|(le, f)| {
                            failures
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((kind.to_vec(), f));
                            le
                        })
                    })
                })
            });
            let report = report.map_err(from_redis)?;
            let failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
            PyWarmReport::new(py, report, failures)
        })
    }

    /// What this cache did so far, in this process.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.cache.stats();
        let d = PyDict::new(py);
        for (name, v) in [
            ("hits", s.hits),
            ("refreshes", s.refreshes),
            ("leases", s.leases),
            ("waits", s.waits),
            ("takeovers", s.takeovers),
            ("fenced_fills", s.fenced_fills),
            ("backend_calls", s.backend_calls),
            ("backend_errors", s.backend_errors),
            ("cached_errors", s.cached_errors),
            ("coalesced", s.coalesced),
        ] {
            d.set_item(name, v)?;
        }
        Ok(d)
    }

    /// The lease, ms.
    #[getter]
    fn lease_ms(&self) -> u64 {
        self.lease_ms
    }

    /// The soft TTL (fresh for this long), ms.
    #[getter]
    fn soft_ttl_ms(&self) -> u64 {
        self.soft_ttl_ms
    }

    /// The hard TTL (kept for this long), ms.
    #[getter]
    fn hard_ttl_ms(&self) -> u64 {
        self.hard_ttl_ms
    }

    /// The negative TTL (a backend error is cached for this long), ms.
    #[getter]
    fn neg_ttl_ms(&self) -> u64 {
        self.neg_ttl_ms
    }

    /// The largest value a loader may return, bytes.
    #[getter]
    fn max_value_bytes(&self) -> usize {
        self.max_value_len()
    }

    /// Whether the store is a Redis Cluster.
    #[getter]
    fn cluster(&self) -> bool {
        self.cache.store().is_cluster()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "SmartCache({}, cluster={}, lease_ms={}, soft_ttl_ms={}, hard_ttl_ms={}, \
             neg_ttl_ms={})",
            PyString::new(py, self.cache.store().describe()).repr()?,
            if self.cache.store().is_cluster() {
                "True"
            } else {
                "False"
            },
            self.lease_ms,
            self.soft_ttl_ms,
            self.hard_ttl_ms,
            self.neg_ttl_ms
        ))
    }
}

/// The kinds of a warm-up: a list or tuple of str (a single str is `BAD_TYPE`), at most
/// `MAX_WARM_KINDS` (`TOO_LARGE`, checked before anything is collected).
fn kind_list<'py>(kinds: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if !(kinds.is_instance_of::<PyList>() || kinds.is_instance_of::<PyTuple>()) {
        return Err(bad_type(format!(
            "kinds must be a list or tuple of str, not {}",
            type_name(kinds)
        )));
    }
    let n = kinds.len()?;
    if n > MAX_WARM_KINDS {
        return Err(from_redis(CoreError::Input(InputError::TooManyKinds(n))));
    }
    let mut out = Vec::with_capacity(n);
    for k in kinds.try_iter()? {
        if out.len() == MAX_WARM_KINDS {
            return Err(from_redis(CoreError::Input(InputError::TooManyKinds(
                MAX_WARM_KINDS + 1,
            ))));
        }
        out.push(k?);
    }
    Ok(out)
}

/// What a warm-up did: `client` (the client the device names, None for an unknown
/// device: nothing was loaded), `granted` (kinds that were cold and loaded), `skipped`
/// (fresh, loading elsewhere, or with a cached error), `failed` ((kind, exception)
/// pairs: the loader raised or returned a bad value; cached for the negative TTL).
#[pyclass(module = "keyroute", frozen, name = "WarmReport")]
pub(crate) struct PyWarmReport {
    client: Option<String>,
    granted: Vec<String>,
    skipped: Vec<String>,
    failed: Vec<(String, Py<PyAny>)>,
}

fn kind_str(k: &[u8]) -> String {
    String::from_utf8_lossy(k).into_owned()
}

impl PyWarmReport {
    fn new(
        py: Python<'_>,
        report: WarmReport,
        mut failures: Vec<(Vec<u8>, Failure)>,
    ) -> PyResult<PyWarmReport> {
        let client = report
            .client
            .as_deref()
            .map(|c| utf8(c, "the client id bound to the device").map(str::to_string))
            .transpose()?;
        let failed = report
            .failed
            .into_iter()
            .map(|(kind, e)| {
                let own = failures
                    .iter()
                    .position(|(k, _)| *k == kind)
                    .map(|i| failures.swap_remove(i).1);
                let exc = failed_load(py, e, own).into_value(py).into_any();
                (kind_str(&kind), exc)
            })
            .collect();
        Ok(PyWarmReport {
            client,
            granted: report.granted.iter().map(|k| kind_str(k)).collect(),
            skipped: report.skipped.iter().map(|k| kind_str(k)).collect(),
            failed,
        })
    }
}

#[pymethods]
impl PyWarmReport {
    /// The client the device is bound to, or None (unknown device: nothing loaded).
    #[getter]
    fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }

    /// Kinds that were cold, leased and loaded here.
    #[getter]
    fn granted(&self) -> Vec<String> {
        self.granted.clone()
    }

    /// Kinds not loaded here: fresh, being loaded elsewhere, or with a cached error (all
    /// of them for an unknown device).
    #[getter]
    fn skipped(&self) -> Vec<String> {
        self.skipped.clone()
    }

    /// (kind, exception) for each kind whose loader failed (BackendError, or
    /// BadTypeError / CacheInputError for a bad value).
    #[getter]
    fn failed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(
            py,
            self.failed
                .iter()
                .map(|(k, e)| (k.as_str(), e.clone_ref(py))),
        )
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let failed: Vec<&str> = self.failed.iter().map(|(k, _)| k.as_str()).collect();
        Ok(format!(
            "WarmReport(client={}, granted={}, skipped={}, failed={})",
            self.client.as_deref().into_pyobject(py)?.repr()?,
            PyList::new(py, &self.granted)?.repr()?,
            PyList::new(py, &self.skipped)?.repr()?,
            PyList::new(py, failed)?.repr()?,
        ))
    }
}

/// A live session, as `Sessions.touch` returns it (its expiry already slid).
#[pyclass(module = "keyroute", frozen, name = "Session")]
pub(crate) struct PySession {
    id: String,
    client: String,
    data: Py<PyBytes>,
    version: String,
    expires_at: u64,
}

#[pymethods]
impl PySession {
    /// The session id.
    #[getter]
    fn id(&self) -> &str {
        &self.id
    }

    /// The client it was created for.
    #[getter]
    fn client(&self) -> &str {
        &self.client
    }

    /// Its data.
    #[getter]
    fn data(&self, py: Python<'_>) -> Py<PyBytes> {
        self.data.clone_ref(py)
    }

    /// The service version that created it.
    #[getter]
    fn version(&self) -> &str {
        &self.version
    }

    /// When it expires unless touched again: ms since the Unix epoch, server time.
    #[getter]
    fn expires_at(&self) -> u64 {
        self.expires_at
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        // The id is the session's secret: not shown.
        Ok(format!(
            "Session(client={}, version={}, expires_at={})",
            PyString::new(py, &self.client).repr()?,
            PyString::new(py, &self.version).repr()?,
            self.expires_at
        ))
    }
}

/// Client sessions on Redis that any server reads from their id alone.
#[pyclass(module = "keyroute", frozen, name = "Sessions")]
pub(crate) struct PySessions {
    sessions: Sessions,
    store: Store,
    pid: u32,
    ttl_ms: u64,
    max_age_ms: Option<u64>,
}

#[pymethods]
impl PySessions {
    #[new]
    #[pyo3(
        signature = (url, *, ttl_ms, max_age_ms=None, cluster=None, timeout=None),
        text_signature = "(url, *, ttl_ms, max_age_ms=None, cluster=False, timeout=None)"
    )]
    fn new(
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        ttl_ms: &Bound<'_, PyAny>,
        max_age_ms: Option<&Bound<'_, PyAny>>,
        cluster: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySessions> {
        guard(|| {
            let ttl = ms_arg(ttl_ms, "ttl_ms", 1)?;
            let max_age = match max_age_ms {
                Some(m) if !m.is_none() => Some(ms_arg(m, "max_age_ms", 1)?),
                _ => None,
            };
            let config = SessionConfig {
                ttl: Duration::from_millis(ttl),
                max_age: max_age.map(Duration::from_millis),
                ..SessionConfig::default()
            };
            let store = open_store(py, url, cluster, timeout)?;
            let sessions = Sessions::new(store.clone(), config).map_err(from_redis)?;
            Ok(PySessions {
                sessions,
                store,
                pid: std::process::id(),
                ttl_ms: ttl,
                max_age_ms: max_age,
            })
        })
    }

    /// Creates a session for `client`, made by service `version`, holding `data`; returns
    /// its id (give it to the client: it is the session's only secret).
    fn create(
        &self,
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        version: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        guard(|| {
            same_process(self.pid, "Sessions")?;
            let client = text(client, "client")?;
            let version = text(version, "version")?;
            let data = bytes_arg(data, "data")?;
            let new = py
                .detach(|| self.sessions.create(client, version, data))
                .map_err(from_redis)?;
            Ok(new.id.as_str().to_string())
        })
    }

    /// Reads session `sid` and slides its expiry. Raises SessionExpired (idle, past its
    /// max age, destroyed or unknown) and, when `version` is given and differs from the
    /// one that created it, SessionVersionMismatch.
    #[pyo3(signature = (sid, version=None))]
    fn touch(
        &self,
        py: Python<'_>,
        sid: &Bound<'_, PyAny>,
        version: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PySession> {
        guard(|| {
            same_process(self.pid, "Sessions")?;
            let sid = text(sid, "the session id")?;
            let version = match version {
                Some(v) if !v.is_none() => Some(text(v, "version")?),
                _ => None,
            };
            let touched = py
                .detach(|| self.sessions.touch(sid, version))
                .map_err(from_redis)?;
            match touched {
                Touch::Live {
                    client,
                    data,
                    expires_at,
                    version,
                } => Ok(PySession {
                    id: sid.to_string(),
                    client: utf8(&client, "the session's client id")?.to_string(),
                    data: PyBytes::new(py, &data).unbind(),
                    version: utf8(&version, "the session's version")?.to_string(),
                    expires_at,
                }),
                Touch::Expired => Err(raise(
                    Area::Cache,
                    ErrorCode::SessionExpired,
                    ErrorCode::SessionExpired.summary(),
                )),
                Touch::VersionMismatch { stored } => {
                    let stored = String::from_utf8_lossy(&stored).into_owned();
                    let err = raise(
                        Area::Cache,
                        ErrorCode::VersionMismatch,
                        format!(
                            "the session was created by service version {stored:?}, not {:?}; \
                             it was left as it was",
                            version.unwrap_or_default()
                        ),
                    );
                    err.value(py).setattr("stored_version", stored)?;
                    Err(err)
                }
            }
        })
    }

    /// Removes session `sid`; whether it was live.
    fn destroy(&self, py: Python<'_>, sid: &Bound<'_, PyAny>) -> PyResult<bool> {
        guard(|| {
            same_process(self.pid, "Sessions")?;
            let sid = text(sid, "the session id")?;
            py.detach(|| self.sessions.destroy(sid)).map_err(from_redis)
        })
    }

    /// The live sessions of `client`: [(sid, expires_at ms), ...], soonest first.
    fn list(&self, py: Python<'_>, client: &Bound<'_, PyAny>) -> PyResult<Vec<(String, u64)>> {
        guard(|| {
            same_process(self.pid, "Sessions")?;
            let client = text(client, "client")?;
            let got = py
                .detach(|| self.sessions.list(client))
                .map_err(from_redis)?;
            Ok(got
                .into_iter()
                .map(|(sid, at)| (sid.as_str().to_string(), at))
                .collect())
        })
    }

    /// The sliding lifetime, ms.
    #[getter]
    fn ttl_ms(&self) -> u64 {
        self.ttl_ms
    }

    /// The maximum age, ms (None: none).
    #[getter]
    fn max_age_ms(&self) -> Option<u64> {
        self.max_age_ms
    }

    /// Whether the store is a Redis Cluster.
    #[getter]
    fn cluster(&self) -> bool {
        self.store.is_cluster()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Sessions({}, ttl_ms={}, max_age_ms={})",
            PyString::new(py, self.store.describe()).repr()?,
            self.ttl_ms,
            self.max_age_ms
                .map_or_else(|| "None".to_string(), |m| m.to_string())
        ))
    }
}

/// Device -> client bindings on Redis, for warm-up before login.
#[pyclass(module = "keyroute", frozen, name = "Devices")]
pub(crate) struct PyDevices {
    devices: Devices,
    store: Store,
    pid: u32,
}

#[pymethods]
impl PyDevices {
    #[new]
    #[pyo3(
        signature = (url, *, cluster=None, timeout=None),
        text_signature = "(url, *, cluster=False, timeout=None)"
    )]
    fn new(
        py: Python<'_>,
        url: &Bound<'_, PyAny>,
        cluster: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDevices> {
        guard(|| {
            let store = open_store(py, url, cluster, timeout)?;
            Ok(PyDevices {
                devices: Devices::new(store.clone()),
                store,
                pid: std::process::id(),
            })
        })
    }

    /// Binds `device` to `client` for `ttl_ms` (replacing any binding).
    fn bind(
        &self,
        py: Python<'_>,
        device: &Bound<'_, PyAny>,
        client: &Bound<'_, PyAny>,
        ttl_ms: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guard(|| {
            same_process(self.pid, "Devices")?;
            let device = text(device, "device")?;
            let client = text(client, "client")?;
            let ttl = ms_arg(ttl_ms, "ttl_ms", 1)?;
            py.detach(|| {
                self.devices
                    .bind(device, client, Duration::from_millis(ttl))
            })
            .map_err(from_redis)
        })
    }

    /// The client `device` is bound to, or None.
    fn client_of(&self, py: Python<'_>, device: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        guard(|| {
            same_process(self.pid, "Devices")?;
            let device = text(device, "device")?;
            let got = py
                .detach(|| self.devices.client_of(device))
                .map_err(from_redis)?;
            got.map(|c| utf8(&c, "the client id bound to the device").map(str::to_string))
                .transpose()
        })
    }

    /// Whether the store is a Redis Cluster.
    #[getter]
    fn cluster(&self) -> bool {
        self.store.is_cluster()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Devices({})",
            PyString::new(py, self.store.describe()).repr()?
        ))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySmartCache>()?;
    m.add_class::<PyWarmReport>()?;
    m.add_class::<PySessions>()?;
    m.add_class::<PySession>()?;
    m.add_class::<PyDevices>()?;
    m.add("MAX_WARM_KINDS", MAX_WARM_KINDS)?;
    // Core's defaults of SmartCache and Sessions (the same in every binding).
    let py = m.py();
    let d = keyroute::cache::CacheSettings::DEFAULT;
    let s = keyroute::cache::SessionSettings::DEFAULT;
    let defaults = pyo3::types::PyDict::new(py);
    defaults.set_item("lease_ms", d.lease_ms)?;
    defaults.set_item("soft_ttl_ms", d.soft_ttl_ms)?;
    defaults.set_item("hard_ttl_ms", d.hard_ttl_ms)?;
    defaults.set_item("neg_ttl_ms", d.neg_ttl_ms)?;
    defaults.set_item("serve_stale", d.serve_stale)?;
    defaults.set_item("fast_hits", d.fast_hits)?;
    defaults.set_item("xfetch_beta", d.xfetch_beta)?;
    defaults.set_item("max_value_bytes", d.max_value_len)?;
    defaults.set_item(
        "io_timeout_ms",
        keyroute::cache::CacheSettings::DEFAULT_IO_TIMEOUT_MS,
    )?;
    defaults.set_item(
        "timeout_ms",
        keyroute::cache::CacheSettings::DEFAULT_TIMEOUT_MS,
    )?;
    defaults.set_item("session_ttl_ms", s.ttl_ms)?;
    defaults.set_item("session_max_data_bytes", s.max_data_len)?;
    let proxy = py
        .import("types")?
        .getattr("MappingProxyType")?
        .call1((defaults,))?;
    m.add("CACHE_DEFAULTS", proxy)?;
    Ok(())
}
