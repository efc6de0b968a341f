//! `keyroute.Router`: every engine and fleet profile of `keyroute::engine`, and proxy
//! configurations read by `keyroute::config`. Conversion only: the core builds, checks
//! and answers.

use std::sync::{Arc, RwLock};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt, PyList, PyMapping, PyString, PyTuple};

use keyroute::config::{read_config_with, ReadOptions};
use keyroute::engine::{Bounded as CoreBounded, Engine, Router as CoreRouter, NAMES};
use keyroute::ring::NodeSpec;

use crate::args::{flag, int, text, type_name};
use crate::errors::{bad_type, err, guard, out_of_range};
use crate::keys::{batch, key_bytes};

/// Options and configuration sizes above this are refused (TOO_LARGE) before anything is
/// read: a configuration text or an options list this large is a mistake.
const MAX_OPTIONS: usize = 64;

/// Any engine or fleet profile by name, or the pool of a proxy configuration.
///
/// Lookups read a shared snapshot; `add` and `remove` swap in a changed one, so a
/// `get_many` running without the GIL never sees a half-changed router.
#[pyclass(module = "keyroute", frozen, name = "Router")]
pub(crate) struct PyRouter {
    state: RwLock<Arc<State>>,
    config: Option<ConfigInfo>,
}

/// A router and its node names as Python strings.
struct State {
    router: CoreRouter,
    names: Vec<Py<PyString>>,
}

impl State {
    fn new(py: Python<'_>, router: CoreRouter) -> State {
        let names = (0..router.len())
            .map(|i| PyString::new(py, router.node_name(i)).unbind())
            .collect();
        State { router, names }
    }
}

struct ConfigInfo {
    format: &'static str,
    pool: String,
    key: String,
    servers: Vec<(String, String, u32, usize)>,
    notes: Vec<String>,
}

/// An option value as text: str as is, int in decimal, bool as true/false.
fn option_value(name: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(if flag(v, name)? { "true" } else { "false" }.into());
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(int(v, &format!("option {name:?}"))?.to_string());
    }
    if v.is_instance_of::<PyString>() {
        return Ok(text(v, &format!("option {name:?}"))?.to_owned());
    }
    Err(bad_type(format!(
        "option {name:?} must be a str, int or bool, not {}",
        type_name(v)
    )))
}

/// `options` as (name, value) text: a mapping or an iterable of pairs; None is none.
fn options_arg(options: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(options) = options.filter(|o| !o.is_none()) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut push = |k: &Bound<'_, PyAny>, v: &Bound<'_, PyAny>| -> PyResult<()> {
        if out.len() == MAX_OPTIONS {
            return Err(crate::errors::too_large(format!(
                "more than {MAX_OPTIONS} options"
            )));
        }
        let k = text(k, "an option name")?.to_owned();
        let v = option_value(&k, v)?;
        out.push((k, v));
        Ok(())
    };
    if let Ok(map) = options.cast::<PyMapping>() {
        for item in map.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            push(&k, &v)?;
        }
        return Ok(out);
    }
    if options.is_instance_of::<PyString>() {
        return Err(bad_type(
            "options must be a mapping name -> value or (name, value) pairs, not a str",
        ));
    }
    let it = options.try_iter().map_err(|_| {
        bad_type(format!(
            "options must be a mapping name -> value or (name, value) pairs, not {}",
            type_name(options)
        ))
    })?;
    for item in it {
        let item = item?;
        let pair = item
            .cast::<PyTuple>()
            .ok()
            .filter(|t| t.len() == 2)
            .map(|t| (t.get_item(0), t.get_item(1)));
        match pair {
            Some((Ok(k), Ok(v))) => push(&k, &v)?,
            _ => {
                return Err(bad_type(format!(
                    "options items must be (name, value) tuples, not {}",
                    type_name(&item)
                )))
            }
        }
    }
    Ok(out)
}

impl PyRouter {
    fn new_inner(py: Python<'_>, router: CoreRouter, config: Option<ConfigInfo>) -> PyRouter {
        PyRouter {
            state: RwLock::new(Arc::new(State::new(py, router))),
            config,
        }
    }

    fn snapshot(&self) -> Arc<State> {
        Arc::clone(&self.state.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Applies a change to a copy of the router and swaps it in (readers keep the old
    /// one); on error nothing changed.
    fn change<T>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut CoreRouter) -> Result<T, keyroute::engine::EngineError>,
    ) -> PyResult<T> {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let mut router = state.router.clone();
        let out = f(&mut router).map_err(err)?;
        *state = Arc::new(State::new(py, router));
        Ok(out)
    }
}

#[pymethods]
impl PyRouter {
    /// `Router(engine, nodes, options=None)`: `nodes` as for Ring (names, (name, weight)
    /// pairs or a mapping), `options` a mapping name -> str/int/bool.
    #[new]
    #[pyo3(signature = (engine, nodes, options=None))]
    fn new(
        py: Python<'_>,
        engine: &Bound<'_, PyAny>,
        nodes: &Bound<'_, PyAny>,
        options: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRouter> {
        guard(|| {
            let engine = text(engine, "engine")?.to_owned();
            let nodes: Vec<NodeSpec> = crate::ring::nodes_arg(nodes)?
                .into_iter()
                .map(|(name, weight)| NodeSpec {
                    name,
                    weight,
                    address: None,
                })
                .collect();
            let options = options_arg(options)?;
            let pairs: Vec<(&str, &str)> = options
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            let router = CoreRouter::build(&engine, &nodes, &pairs).map_err(err)?;
            Ok(PyRouter::new_inner(py, router, None))
        })
    }

    /// The pool `pool` of a twemproxy, nginx or HAProxy configuration `text` (format
    /// detected). `includes` maps an nginx `include` name to its text; `resolved` maps a
    /// hostname to its address count; `allow_down` accepts nginx `down` servers.
    #[staticmethod]
    #[pyo3(signature = (text, pool=None, *, file=None, allow_down=None, resolved=None, includes=None))]
    fn from_config(
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        pool: Option<&Bound<'_, PyAny>>,
        file: Option<&Bound<'_, PyAny>>,
        allow_down: Option<&Bound<'_, PyAny>>,
        resolved: Option<&Bound<'_, PyAny>>,
        includes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRouter> {
        guard(|| {
            let body = crate::args::text(text, "text")?;
            let pool = match pool.filter(|p| !p.is_none()) {
                Some(p) => Some(crate::args::text(p, "pool")?.to_owned()),
                None => None,
            };
            let file = match file.filter(|p| !p.is_none()) {
                Some(f) => crate::args::text(f, "file")?.to_owned(),
                None => String::new(),
            };
            let allow_down = match allow_down.filter(|a| !a.is_none()) {
                Some(a) => flag(a, "allow_down")?,
                None => false,
            };
            let mut addresses = Vec::new();
            for (host, n) in options_arg(resolved)? {
                let count: u32 = n.parse().map_err(|_| {
                    out_of_range(format!(
                        "resolved[{host:?}] must be an address count (1 to 2^32-1), got {n}"
                    ))
                })?;
                addresses.push((host, count));
            }
            let includes = options_arg(includes)?;
            let mut resolve = |name: &str| -> Option<String> {
                includes
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            };
            let cfg = read_config_with(
                body,
                &file,
                pool.as_deref(),
                &mut ReadOptions {
                    resolve: &mut resolve,
                    addresses: &addresses,
                    allow_down,
                },
            )
            .map_err(err)?;
            let info = ConfigInfo {
                format: cfg.format.as_str(),
                pool: cfg.pool,
                key: cfg.key,
                servers: cfg
                    .servers
                    .into_iter()
                    .map(|s| (s.name, s.address, s.weight, s.line))
                    .collect(),
                notes: cfg.notes,
            };
            Ok(PyRouter::new_inner(py, cfg.router, Some(info)))
        })
    }

    /// Every engine and profile name.
    #[staticmethod]
    fn engines() -> Vec<&'static str> {
        NAMES.to_vec()
    }

    /// The engine or profile name.
    #[getter]
    fn engine(&self) -> &'static str {
        self.snapshot().router.name()
    }

    /// The node names, in list (or configuration) order.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.snapshot().names.iter().map(|n| n.bind(py)))
    }

    /// Adds a node (weight >= 1, default 1) last, as the engine's peer does at run time
    /// (see `docs/design.md`). Raises RingError (DUPLICATE_NODE, BAD_OPTION for a weight
    /// the peer has not, UNSUPPORTED_CONFIG for a router read from a configuration, ...).
    #[pyo3(signature = (node, weight=None))]
    fn add(
        &self,
        py: Python<'_>,
        node: &Bound<'_, PyAny>,
        weight: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        guard(|| {
            let name = text(node, "a node name")?;
            let weight = crate::args::added_weight(name, weight)?;
            let node = NodeSpec {
                name: name.to_owned(),
                weight,
                address: None,
            };
            self.change(py, |r| r.add(node))
        })
    }

    /// Removes a node by its own name, as the engine's peer does at run time. Raises
    /// NodeNotFoundError (a KeyError) if it is not there.
    fn remove(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let name = text(node, "a node name")?;
            self.change(py, |r| r.remove(name).map(|_| ()))
        })
    }

    /// The configuration's format (twemproxy, nginx, haproxy); None unless from_config.
    #[getter]
    fn format(&self) -> Option<&'static str> {
        self.config.as_ref().map(|c| c.format)
    }

    /// The pool, upstream or backend name; None unless from_config.
    #[getter]
    fn pool(&self) -> Option<String> {
        self.config.as_ref().map(|c| c.pool.clone())
    }

    /// What the proxy hashes (the nginx hash expression, the HAProxy balance mode); the
    /// caller supplies its value as the key. None unless from_config.
    #[getter]
    fn key(&self) -> Option<String> {
        self.config.as_ref().map(|c| c.key.clone())
    }

    /// The servers as (name, address, weight, line); None unless from_config.
    #[getter]
    fn servers(&self) -> Option<Vec<(String, String, u32, usize)>> {
        self.config.as_ref().map(|c| c.servers.clone())
    }

    /// Assumptions and version differences that apply; None unless from_config.
    #[getter]
    fn notes(&self) -> Option<Vec<String>> {
        self.config.as_ref().map(|c| c.notes.clone())
    }

    /// The node owning `key` (str or bytes), or None without nodes.
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyString>>> {
        guard(|| {
            let k = key_bytes(key)?;
            let st = self.snapshot();
            Ok(st.router.get_index(k).map(|i| st.names[i].clone_ref(py)))
        })
    }

    /// The index of the node owning `key`, or None without nodes.
    fn get_index(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        guard(|| Ok(self.snapshot().router.get_index(key_bytes(key)?)))
    }

    /// Up to `n` distinct candidates for `key`, the owner first.
    fn get_n(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        n: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyList>> {
        guard(|| {
            let n = int(n, "n")?;
            if n < 0 {
                return Err(out_of_range(format!("n must be >= 0, got {n}")));
            }
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            let mut idx = Vec::new();
            let st = self.snapshot();
            st.router.get_n_into(key_bytes(key)?, n, &mut idx);
            Ok(PyList::new(py, idx.iter().map(|&i| st.names[i].bind(py)))?.unbind())
        })
    }

    /// The owner of every key (at most MAX_KEYS_PER_CALL), computed without the GIL for
    /// large batches.
    fn get_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
        guard(|| {
            let st = self.snapshot();
            let r = &st.router;
            let mut out: Vec<Option<usize>> = Vec::new();
            batch(py, keys, &mut out, |ks, out| {
                for k in ks {
                    out.push(r.get_index(k));
                }
            })?;
            let none = py.None();
            Ok(PyList::new(
                py,
                out.iter().map(|i| match i {
                    Some(i) => st.names[*i].bind(py).as_any().clone(),
                    None => none.bind(py).clone(),
                }),
            )?
            .unbind())
        })
    }

    fn __len__(&self) -> usize {
        self.snapshot().router.len()
    }

    fn __repr__(&self) -> String {
        let st = self.snapshot();
        match &self.config {
            Some(c) => format!(
                "Router.from_config({} {:?}: {}, {} nodes)",
                c.format,
                c.pool,
                st.router.name(),
                st.router.len()
            ),
            None => format!("Router({:?}, {} nodes)", st.router.name(), st.router.len()),
        }
    }
}

/// Consistent hashing with bounded loads over a Router: no node above ⌈c·m/n⌉ of the m
/// assigned keys. State lives in this object (one process); a lock keeps it consistent
/// across threads.
#[pyclass(module = "keyroute", frozen, name = "Bounded")]
pub(crate) struct PyBounded {
    inner: std::sync::Mutex<CoreBounded<CoreRouter>>,
    names: Vec<Py<PyString>>,
}

impl PyBounded {
    fn lock(&self) -> std::sync::MutexGuard<'_, CoreBounded<CoreRouter>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl PyBounded {
    /// `Bounded(router, c)`: `c` (an int or float, at least 1) is the balance factor.
    #[new]
    fn new(py: Python<'_>, router: &Bound<'_, PyAny>, c: &Bound<'_, PyAny>) -> PyResult<PyBounded> {
        guard(|| {
            let r = router.cast::<PyRouter>().map_err(|_| {
                bad_type(format!(
                    "router must be a keyroute.Router, not {}",
                    type_name(router)
                ))
            })?;
            if c.is_instance_of::<PyBool>()
                || !(c.is_instance_of::<PyInt>() || c.is_instance_of::<pyo3::types::PyFloat>())
            {
                return Err(bad_type(format!(
                    "c must be a number (int or float), not {}",
                    type_name(c)
                )));
            }
            let c: f64 = c
                .extract()
                .map_err(|_| out_of_range("c is too large a number"))?;
            let st = r.get().snapshot();
            let inner = CoreBounded::new(st.router.clone(), c).map_err(err)?;
            let names = st.names.iter().map(|n| n.clone_ref(py)).collect();
            Ok(PyBounded {
                inner: std::sync::Mutex::new(inner),
                names,
            })
        })
    }

    /// Assigns `key` (or gives where it already is): the first of its candidates under the
    /// cap. None only without nodes.
    fn assign(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyString>>> {
        guard(|| {
            let k = key_bytes(key)?;
            Ok(self.lock().assign(k).map(|i| self.names[i].clone_ref(py)))
        })
    }

    /// Frees `key`: None when it was not assigned, else the keys moved to keep every node
    /// under the new cap, as (key bytes, from, to).
    #[allow(clippy::type_complexity)]
    fn release(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
    ) -> PyResult<Option<Vec<(Py<pyo3::types::PyBytes>, Py<PyString>, Py<PyString>)>>> {
        guard(|| {
            let k = key_bytes(key)?;
            let moved = self.lock().release(k);
            Ok(moved.map(|m| {
                m.into_iter()
                    .map(|l| {
                        (
                            pyo3::types::PyBytes::new(py, &l.key).unbind(),
                            self.names[l.from].clone_ref(py),
                            self.names[l.to].clone_ref(py),
                        )
                    })
                    .collect()
            }))
        })
    }

    /// The node holding `key`, or None when it is not assigned.
    fn owner_of(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyString>>> {
        guard(|| {
            let k = key_bytes(key)?;
            Ok(self.lock().owner_of(k).map(|i| self.names[i].clone_ref(py)))
        })
    }

    /// Each node's load, by name.
    #[getter]
    fn loads(&self, py: Python<'_>) -> Vec<(Py<PyString>, u64)> {
        let b = self.lock();
        b.loads()
            .iter()
            .enumerate()
            .map(|(i, &l)| (self.names[i].clone_ref(py), l))
            .collect()
    }

    /// The cap now: ⌈c·m/n⌉.
    #[getter]
    fn cap(&self) -> u64 {
        self.lock().cap()
    }

    /// The number of assigned keys.
    #[getter]
    fn assigned(&self) -> u64 {
        self.lock().assigned()
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRouter>()?;
    m.add_class::<PyBounded>()?;
    m.add("ENGINES", PyTuple::new(m.py(), NAMES)?)?;
    Ok(())
}
