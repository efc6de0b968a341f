//! `keyroute.LeastUsed` and `keyroute.Leases`: the core's native Redis pools
//! (`keyroute_redis`) over one reconnecting connection each, or, with `cluster=True`,
//! over keyroute's Redis Cluster client (slot routing, MOVED/ASK, failovers, pipelines
//! split per pick).
//!
//! Thin: each method converts its arguments, releases the GIL, locks the connection,
//! calls the core, and converts the answer (or the core's error) back. The connection is
//! behind a mutex, so one object can be shared by threads (their calls take turns on the
//! connection); it is locked only while the GIL is released, so a thread waiting for it
//! never blocks the interpreter.

use std::sync::{Mutex, MutexGuard};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};

use keyroute::error::ErrorCode;
use keyroute_redis::affinity::{Cap, MAX_AFFINITY_CANDIDATES};
use keyroute_redis::{self as core_redis, Link, Now, Release, Timeouts};

use crate::args::{flag, int_in, opt_int, seconds, text, type_name};
use crate::errors::{bad_type, from_redis, guard, out_of_range, raise, too_large, Area};
use crate::keys::{collect, key_bytes, slices};
use crate::select::{initial_arg, member, member_dict, member_list, picks_arg, restore_arg};

/// The most seed URLs `cluster=True` takes (as `SmartCache`: a seed list is a handful of
/// nodes; a longer list is refused with `TOO_LARGE` before anything is allocated for it).
const MAX_SEEDS: usize = 1024;

/// The connection behind a mutex.
struct Conn {
    con: Mutex<Link>,
    timeout: f64,
    cluster: bool,
    read_from_replicas: bool,
}

fn opt_flag(obj: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<bool> {
    match obj {
        Some(o) if !o.is_none() => flag(o, what),
        _ => Ok(false),
    }
}

/// The seed URLs of `cluster=True`: one str, or a list/tuple of them (the convention of
/// `SmartCache`).
fn seeds(url: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
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
    // No seed at all is refused by keyroute-redis (CLUSTER_UNREACHABLE, as in C).
    items
        .iter()
        .map(|item| text(item, "a seed URL").map(str::to_owned))
        .collect()
}

impl Conn {
    fn new(
        url: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
        cluster: Option<&Bound<'_, PyAny>>,
        read_from_replicas: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Conn> {
        let cluster = opt_flag(cluster, "cluster")?;
        let replicas = opt_flag(read_from_replicas, "read_from_replicas")?;
        let (t, secs) = match timeout {
            Some(t) if !t.is_none() => (seconds(t, "timeout")?, t.extract::<f64>()?),
            _ => (std::time::Duration::from_secs(2), 2.0),
        };
        let timeouts = Timeouts::uniform(t);
        // Only checks the URL or the seeds: the first call connects or fetches the
        // topology.
        let link = if cluster {
            let seeds = seeds(url)?;
            let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
            Link::cluster(&seeds, timeouts, replicas).map_err(from_redis)?
        } else {
            if !url.is_instance_of::<PyString>() {
                return Err(bad_type(format!(
                    "url must be a str, not {} (a list of seed URLs of a Redis Cluster needs \
                     cluster=True)",
                    type_name(url)
                )));
            }
            if replicas {
                return Err(raise(
                    Area::Redis,
                    ErrorCode::BadOption,
                    "read_from_replicas=True needs cluster=True (a standalone server has no \
                     replicas to route to)",
                ));
            }
            Link::single(text(url, "the Redis URL")?, timeouts).map_err(from_redis)?
        };
        Ok(Conn {
            con: Mutex::new(link),
            timeout: secs,
            cluster,
            read_from_replicas: replicas,
        })
    }

    /// Call with the GIL released only.
    fn lock(&self) -> MutexGuard<'_, Link> {
        self.con.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the connection with the GIL released. A failure of the connect made on
    /// the call's behalf (or of the cluster routing) is reported as itself (a refused
    /// password is REDIS_AUTH, not a lost connection; no node reachable is
    /// CLUSTER_UNREACHABLE).
    fn run<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Link) -> core_redis::Result<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut link = self.lock();
            f(&mut link).map_err(|e| link.explain(e))
        })
        .map_err(from_redis)
    }

    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.lock().ensure_connected())
            .map_err(from_redis)
    }

    fn describe(&self) -> String {
        if self.cluster {
            format!(
                ", cluster=True, read_from_replicas={}",
                if self.read_from_replicas {
                    "True"
                } else {
                    "False"
                }
            )
        } else {
            String::new()
        }
    }
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

impl PyLeastUsed {
    fn picks<'py>(
        &self,
        py: Python<'py>,
        n: &Bound<'py, PyAny>,
        as_bytes: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let n = picks_arg(n)?;
        let picked = self.conn.run(py, |con| self.inner.pick_many(con, n))?;
        member_list(py, &picked, as_bytes, "pick_many_bytes")
    }

    fn pairs<'py>(
        &self,
        py: Python<'py>,
        removed: bool,
        as_bytes: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let got = self.conn.run(py, |con| {
            if removed {
                self.inner.removed(con)
            } else {
                self.inner.counts(con)
            }
        })?;
        let call = if removed {
            "removed_bytes"
        } else {
            "counts_bytes"
        };
        member_dict(
            py,
            got.iter().map(|(m, c)| (m.as_slice(), *c)),
            as_bytes,
            call,
        )
    }
}

#[pymethods]
impl PyLeastUsed {
    #[new]
    #[pyo3(
        signature = (url, key, *, timeout=None, cluster=None, read_from_replicas=None),
        text_signature = "(url, key, *, timeout=None, cluster=False, read_from_replicas=False)"
    )]
    fn new(
        url: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
        cluster: Option<&Bound<'_, PyAny>>,
        read_from_replicas: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyLeastUsed> {
        guard(|| {
            let inner = core_redis::LeastUsed::new(pool_key(key)?).map_err(from_redis)?;
            Ok(PyLeastUsed {
                inner,
                conn: Conn::new(url, timeout, cluster, read_from_replicas)?,
            })
        })
    }

    /// Opens the connection now (it otherwise opens on the first call), so that an
    /// unreachable server is reported early.
    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        guard(|| self.conn.connect(py))
    }

    /// Adds members at `initial` (members already in keep their count unless
    /// `overwrite`); forgets them from the removed set. Returns how many were added.
    #[pyo3(signature = (members, initial=None, overwrite=None))]
    fn seed(
        &self,
        py: Python<'_>,
        members: &Bound<'_, PyAny>,
        initial: Option<&Bound<'_, PyAny>>,
        overwrite: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        guard(|| {
            let initial = match initial {
                Some(i) if !i.is_none() => initial_arg(i)?,
                _ => 0,
            };
            let overwrite = match overwrite {
                Some(o) if !o.is_none() => crate::args::flag(o, "overwrite")?,
                _ => false,
            };
            let owned = collect(members, "members")?;
            let ms = slices(&owned)?;
            self.conn.run(py, |con| {
                self.inner.seed(con, ms.iter().copied(), initial, overwrite)
            })
        })
    }

    /// The least-used member as str (its count is incremented), or None when the pool is
    /// empty or missing: then make no request. A member that is not UTF-8 raises
    /// BadUtf8Error after it was counted: use pick_bytes().
    fn pick<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        guard(|| {
            let got = self.conn.run(py, |con| self.inner.pick(con))?;
            got.map(|m| member(py, &m, false, "pick_bytes")).transpose()
        })
    }

    /// As pick(), as bytes.
    fn pick_bytes<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        guard(|| {
            let got = self.conn.run(py, |con| self.inner.pick(con))?;
            Ok(got.map(|m| PyBytes::new(py, &m)))
        })
    }

    /// `n` picks, pipelined (fewer only when the pool is or becomes empty), as str; `n`
    /// is at most MAX_PICKS_PER_CALL.
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
    fn remove(&self, py: Python<'_>, member: &Bound<'_, PyAny>) -> PyResult<Option<u64>> {
        guard(|| {
            let m = key_bytes(member)?;
            self.conn.run(py, |con| self.inner.remove(con, m))
        })
    }

    /// Puts a member back: mode "keep" (its remembered count) or "at_minimum" (the
    /// pool's current lowest count). Returns its count.
    #[pyo3(signature = (member, mode=None))]
    fn restore(
        &self,
        py: Python<'_>,
        member: &Bound<'_, PyAny>,
        mode: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        guard(|| {
            let mode = match mode {
                Some(m) if !m.is_none() => restore_arg(m)?,
                _ => keyroute::select::Restore::AtMinimum,
            };
            let m = key_bytes(member)?;
            self.conn.run(py, |con| self.inner.restore(con, m, mode))
        })
    }

    /// member (str) -> count, in pick order (lowest count first, ties by member bytes).
    fn counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| self.pairs(py, false, false))
    }

    /// As counts(), with bytes members.
    fn counts_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| self.pairs(py, false, true))
    }

    /// member (str) -> remembered count of removed members, by member bytes.
    fn removed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| self.pairs(py, true, false))
    }

    /// As removed(), with bytes members.
    fn removed_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| self.pairs(py, true, true))
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

    /// Whether it talks to a Redis Cluster (`cluster=True`).
    #[getter]
    fn cluster(&self) -> bool {
        self.conn.cluster
    }

    /// Whether reads (counts, removed, in_flight, outstanding) go to replicas.
    #[getter]
    fn read_from_replicas(&self) -> bool {
        self.conn.read_from_replicas
    }

    fn __repr__(&self) -> String {
        format!(
            "LeastUsed(key={:?}, timeout={}{})",
            String::from_utf8_lossy(self.inner.pool_key()),
            self.conn.timeout,
            self.conn.describe()
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
    fn new(
        member: &Bound<'_, PyAny>,
        id: &Bound<'_, PyAny>,
        deadline_ms: &Bound<'_, PyAny>,
    ) -> PyResult<PyLease> {
        guard(|| {
            Ok(PyLease {
                lease: core_redis::Lease {
                    member: key_bytes(member)?.to_vec(),
                    id: int_in(id, "the lease id", "0..=2**64-1")?,
                    deadline_ms: int_in(deadline_ms, "deadline_ms", "0..=2**64-1")?,
                },
            })
        })
    }

    /// The member leased, as str (BadUtf8Error if it is not UTF-8: use `member_bytes`).
    #[getter]
    fn member<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guard(|| member(py, &self.lease.member, false, "member_bytes"))
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

impl PyLeases {
    fn in_flight_as<'py>(&self, py: Python<'py>, as_bytes: bool) -> PyResult<Bound<'py, PyDict>> {
        let got = self.conn.run(py, |con| self.inner.in_flight(con))?;
        member_dict(
            py,
            got.iter().map(|(m, c)| (m.as_slice(), *c)),
            as_bytes,
            "in_flight_bytes",
        )
    }
}

#[pymethods]
impl PyLeases {
    #[new]
    #[pyo3(
        signature = (url, key, *, timeout=None, cluster=None, read_from_replicas=None),
        text_signature = "(url, key, *, timeout=None, cluster=False, read_from_replicas=False)"
    )]
    fn new(
        url: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
        cluster: Option<&Bound<'_, PyAny>>,
        read_from_replicas: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyLeases> {
        guard(|| {
            let inner = core_redis::Leases::new(pool_key(key)?).map_err(from_redis)?;
            Ok(PyLeases {
                inner,
                conn: Conn::new(url, timeout, cluster, read_from_replicas)?,
            })
        })
    }

    /// Opens the connection now (it otherwise opens on the first call).
    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        guard(|| self.conn.connect(py))
    }

    /// Adds members with no lease in flight (members already in keep their counts).
    /// Returns how many were added.
    fn seed(&self, py: Python<'_>, members: &Bound<'_, PyAny>) -> PyResult<usize> {
        guard(|| {
            let owned = collect(members, "members")?;
            let ms = slices(&owned)?;
            self.conn
                .run(py, |con| self.inner.seed(con, ms.iter().copied()))
        })
    }

    /// Takes a member out of the pool (no new lease goes to it; its leases in flight stay
    /// valid). Returns whether it was there.
    fn remove(&self, py: Python<'_>, member: &Bound<'_, PyAny>) -> PyResult<bool> {
        guard(|| {
            let m = key_bytes(member)?;
            self.conn.run(py, |con| self.inner.remove(con, m))
        })
    }

    /// A lease of `ttl` seconds (at least 1 ms) on the member with the fewest leases in
    /// flight (ties: byte-wise smallest), or None when the pool is empty or missing.
    fn acquire(&self, py: Python<'_>, ttl: &Bound<'_, PyAny>) -> PyResult<Option<PyLease>> {
        guard(|| {
            let ttl = seconds(ttl, "ttl")?;
            let got = self.conn.run(py, |con| self.inner.acquire(con, ttl))?;
            Ok(got.map(|lease| PyLease { lease }))
        })
    }

    /// Ends a lease, at most once: "released", "expired" (it was past its deadline but
    /// not yet reclaimed) or "already_released_or_expired" (nothing changed).
    fn release(&self, py: Python<'_>, lease: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        guard(|| {
            let lease = lease.cast::<PyLease>().map_err(|_| {
                bad_type(format!("release takes a Lease, not {}", type_name(lease)))
            })?;
            let lease = &lease.get().lease;
            let got = self.conn.run(py, |con| self.inner.release(con, lease))?;
            Ok(match got {
                Release::Released => "released",
                Release::Expired => "expired",
                _ => "already_released_or_expired",
            })
        })
    }

    /// Ends every lease whose deadline is at or before now (the server's clock, or
    /// `now_ms`, milliseconds since the Unix epoch) and returns them.
    #[pyo3(signature = (*, now_ms=None))]
    fn reclaim(&self, py: Python<'_>, now_ms: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<PyLease>> {
        guard(|| {
            let now =
                match opt_int(now_ms, "now_ms")? {
                    None => Now::Server,
                    Some(ms) => Now::At(u64::try_from(ms).map_err(|_| {
                        out_of_range(format!("now_ms must be 0..=2**64-1, got {ms}"))
                    })?),
                };
            let got = self.conn.run(py, |con| self.inner.reclaim(con, now))?;
            Ok(got.into_iter().map(|lease| PyLease { lease }).collect())
        })
    }

    /// member (str) -> leases in flight, in acquire order.
    fn in_flight<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| self.in_flight_as(py, false))
    }

    /// As in_flight(), with bytes members.
    fn in_flight_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| self.in_flight_as(py, true))
    }

    /// How many leases are in flight.
    fn outstanding(&self, py: Python<'_>) -> PyResult<u64> {
        guard(|| self.conn.run(py, |con| self.inner.outstanding(con)))
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

    /// Whether it talks to a Redis Cluster (`cluster=True`).
    #[getter]
    fn cluster(&self) -> bool {
        self.conn.cluster
    }

    /// Whether reads (counts, removed, in_flight, outstanding) go to replicas.
    #[getter]
    fn read_from_replicas(&self) -> bool {
        self.conn.read_from_replicas
    }

    fn __repr__(&self) -> String {
        format!(
            "Leases(key={:?}, timeout={}{})",
            String::from_utf8_lossy(&self.inner.keys()[0]),
            self.conn.timeout,
            self.conn.describe()
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLeastUsed>()?;
    m.add_class::<PyLeases>()?;
    m.add_class::<PyAffinity>()?;
    m.add_class::<PyLease>()?;
    Ok(())
}

/// A node name from the affinity map as `str`; `BAD_UTF8` (never a mangled name) for one
/// that is not text.
fn node_text(node: &[u8]) -> PyResult<String> {
    String::from_utf8(node.to_vec()).map_err(|e| {
        raise(
            Area::Pool,
            ErrorCode::BadUtf8,
            format!(
                "affinity node {:?} is not UTF-8 ({e}); name nodes with text",
                String::from_utf8_lossy(node)
            ),
        )
    })
}

/// Affinity with a cap on a Redis server: bounded-load consistent hashing shared by every
/// worker. `take` gives an item to the node holding it, else to the first of its
/// candidates (its nodes in preference order, e.g. `Router.get_n(item, n)`) holding
/// fewer items than the cap, atomically; `release` frees it.
#[pyclass(module = "keyroute", frozen, name = "Affinity")]
pub(crate) struct PyAffinity {
    inner: core_redis::Affinity,
    conn: Conn,
}

#[pymethods]
impl PyAffinity {
    #[new]
    #[pyo3(
        signature = (url, key, *, timeout=None, cluster=None, read_from_replicas=None),
        text_signature = "(url, key, *, timeout=None, cluster=False, read_from_replicas=False)"
    )]
    fn new(
        url: &Bound<'_, PyAny>,
        key: &Bound<'_, PyAny>,
        timeout: Option<&Bound<'_, PyAny>>,
        cluster: Option<&Bound<'_, PyAny>>,
        read_from_replicas: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyAffinity> {
        guard(|| {
            let inner = core_redis::Affinity::new(pool_key(key)?).map_err(from_redis)?;
            Ok(PyAffinity {
                inner,
                conn: Conn::new(url, timeout, cluster, read_from_replicas)?,
            })
        })
    }

    /// Opens the connection now (it otherwise opens on the first call).
    fn connect(&self, py: Python<'_>) -> PyResult<()> {
        guard(|| self.conn.connect(py))
    }

    /// Gives `item` to its holder or the first candidate under the cap: `cap` items per
    /// node, or the bounded-loads factor `c` (ceil(c * (held + 1) / len(candidates))).
    /// Returns (node, its load, the cap, whether this call placed the item), or None when
    /// every candidate is at the cap (nothing changed).
    #[pyo3(signature = (item, candidates, *, cap=None, c=None))]
    fn take(
        &self,
        py: Python<'_>,
        item: &Bound<'_, PyAny>,
        candidates: &Bound<'_, PyAny>,
        cap: Option<&Bound<'_, PyAny>>,
        c: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<(String, u64, u64, bool)>> {
        guard(|| {
            let item = key_bytes(item)?;
            let cap =
                match (cap.filter(|v| !v.is_none()), c.filter(|v| !v.is_none())) {
                    (Some(v), None) => Cap::Fixed(int_in(v, "cap", "1..=2**53")?),
                    (None, Some(v)) => Cap::Factor(v.extract::<f64>().map_err(|_| {
                        bad_type(format!("c must be a number, not {}", type_name(v)))
                    })?),
                    _ => {
                        return Err(bad_type(
                            "give exactly one of cap= (items per node) and c= (the balance factor)",
                        ))
                    }
                };
            if let Ok(n) = candidates.len() {
                if n > MAX_AFFINITY_CANDIDATES {
                    return Err(too_large(format!(
                        "{n} candidates given; one take accepts at most {MAX_AFFINITY_CANDIDATES}"
                    )));
                }
            }
            let owned = collect(candidates, "candidates")?;
            let cs = slices(&owned)?;
            // Names come back as str: a candidate that is not text is refused before
            // anything is sent, so a take never places an item it could not name.
            for c in &cs {
                node_text(c)?;
            }
            let got = self
                .conn
                .run(py, |con| self.inner.take(con, item, &cs, cap))?;
            got.map(|t| Ok((node_text(&t.node)?, t.load, t.cap, t.new)))
                .transpose()
        })
    }

    /// Frees `item` once: the node that held it, or None when it was not held.
    fn release(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        guard(|| {
            let item = key_bytes(item)?;
            let got = self.conn.run(py, |con| self.inner.release(con, item))?;
            got.map(|n| node_text(&n)).transpose()
        })
    }

    /// The node holding `item`, or None.
    fn holder(&self, py: Python<'_>, item: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        guard(|| {
            let item = key_bytes(item)?;
            let got = self.conn.run(py, |con| self.inner.holder(con, item))?;
            got.map(|n| node_text(&n)).transpose()
        })
    }

    /// node (str) -> items held, for every node holding at least one.
    fn loads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let got = self.conn.run(py, |con| self.inner.loads(con))?;
            member_dict(
                py,
                got.iter().map(|(m, c)| (m.as_slice(), *c)),
                false,
                "loads",
            )
        })
    }

    /// How many items are held.
    fn held(&self, py: Python<'_>) -> PyResult<u64> {
        guard(|| self.conn.run(py, |con| self.inner.held(con)))
    }

    /// The affinity key and its loads key.
    #[getter]
    fn keys<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.inner.keys().iter().map(|k| PyBytes::new(py, k)))
    }

    fn __repr__(&self) -> String {
        format!(
            "Affinity(key={:?}, timeout={}{})",
            String::from_utf8_lossy(&self.inner.keys()[0]),
            self.conn.timeout,
            self.conn.describe()
        )
    }
}
