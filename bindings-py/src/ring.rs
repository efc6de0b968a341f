//! `keyroute.Ring`, `keyroute.RingDiff`, `keyroute.MovedArc`.

use std::sync::{Arc, RwLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use keyroute::ring::{
    self as core_ring, checked_weight, Profile, ProfileName, ProfileOptions, RingError, NO_NODE,
};

use crate::errors::{from_ring, ring_error};
use crate::keys::{batch, key_bytes};

/// A ring and the Python `str` of each node name, built once so lookups return them
/// without allocating.
struct State {
    ring: core_ring::Ring,
    names: Vec<Py<PyString>>,
}

impl State {
    fn new(py: Python<'_>, ring: core_ring::Ring) -> State {
        let names = ring
            .nodes()
            .iter()
            .map(|n| PyString::new(py, n.name()).unbind())
            .collect();
        State { ring, names }
    }
}

/// A consistent-hash ring.
///
/// Lookups read a shared snapshot; a change (add, remove, set_weight) swaps in a new one,
/// so a `get_many` running without the GIL never sees a half-changed ring.
#[pyclass(module = "keyroute", frozen, name = "Ring")]
pub(crate) struct PyRing {
    state: RwLock<Arc<State>>,
}

fn weight_of(name: &str, w: &Bound<'_, PyAny>) -> PyResult<u32> {
    if w.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "weight of node {name:?} must be an int, not bool"
        )));
    }
    let w: i64 = match w.extract::<i64>() {
        Ok(w) => w,
        Err(_) if w.is_instance_of::<pyo3::types::PyInt>() => i64::MAX,
        Err(_) => {
            return Err(PyTypeError::new_err(format!(
                "weight of node {name:?} must be an int, not {}",
                w.get_type().name()?
            )))
        }
    };
    checked_weight(name, w.into()).map_err(from_ring)
}

fn node_name(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    match obj.cast::<PyString>() {
        Ok(s) => Ok(s.to_str()?.to_owned()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "node names must be str, not {}",
            obj.get_type().name()?
        ))),
    }
}

/// `nodes` as (name, weight): a mapping name → weight, or an iterable whose items are
/// names (weight 1) or (name, weight) pairs.
fn nodes_arg(nodes: &Bound<'_, PyAny>) -> PyResult<Vec<(String, u32)>> {
    if nodes.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "nodes must be an iterable of names or a mapping name -> weight, not a str; \
             use Ring.from_spec(\"a:1,b:2\") to parse a node list",
        ));
    }
    let mut out = Vec::new();
    if let Ok(map) = nodes.cast::<pyo3::types::PyMapping>() {
        for item in map.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let name = node_name(&k)?;
            let w = weight_of(&name, &v)?;
            out.push((name, w));
        }
        return Ok(out);
    }
    for item in nodes.try_iter()? {
        let item = item?;
        if let Ok(t) = item.cast::<PyTuple>() {
            if t.len() != 2 {
                return Err(ring_error(format!(
                    "node entries must be a name or a (name, weight) pair, got a tuple of {}",
                    t.len()
                )));
            }
            let name = node_name(&t.get_item(0)?)?;
            let w = weight_of(&name, &t.get_item(1)?)?;
            out.push((name, w));
        } else {
            out.push((node_name(&item)?, 1));
        }
    }
    Ok(out)
}

fn profile_arg(
    profile: &str,
    vnodes: Option<i64>,
    default_port: Option<i64>,
    points_per_digest: Option<i64>,
) -> PyResult<Profile> {
    let options = ProfileOptions {
        vnodes: vnodes.map(i128::from),
        points_per_digest: points_per_digest.map(i128::from),
        default_port: default_port.map(i128::from),
    };
    Profile::from_options(profile, &options).map_err(from_ring)
}

impl PyRing {
    fn snapshot(&self) -> Arc<State> {
        Arc::clone(&self.state.read().unwrap_or_else(|e| e.into_inner()))
    }

    fn from_core(py: Python<'_>, ring: core_ring::Ring) -> PyRing {
        PyRing {
            state: RwLock::new(Arc::new(State::new(py, ring))),
        }
    }

    /// Applies a change to a copy of the ring and swaps it in (readers keep the old one).
    fn change(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut core_ring::Ring) -> Result<(), RingError>,
    ) -> PyResult<()> {
        let mut guard = self.state.write().unwrap_or_else(|e| e.into_inner());
        let mut ring = guard.ring.clone();
        f(&mut ring).map_err(from_ring)?;
        // Reuse the str objects of nodes that stay.
        let old = &guard.names;
        let names = ring
            .nodes()
            .iter()
            .map(|n| {
                old.iter()
                    .find(|s| s.bind(py).to_str().is_ok_and(|s| s == n.name()))
                    .map(|s| s.clone_ref(py))
                    .unwrap_or_else(|| PyString::new(py, n.name()).unbind())
            })
            .collect();
        *guard = Arc::new(State { ring, names });
        Ok(())
    }
}

#[pymethods]
impl PyRing {
    #[new]
    #[pyo3(signature = (nodes=None, *, profile="native", vnodes=None, default_port=None, points_per_digest=None))]
    fn new(
        py: Python<'_>,
        nodes: Option<&Bound<'_, PyAny>>,
        profile: &str,
        vnodes: Option<i64>,
        default_port: Option<i64>,
        points_per_digest: Option<i64>,
    ) -> PyResult<PyRing> {
        let p = profile_arg(profile, vnodes, default_port, points_per_digest)?;
        let nodes = match nodes {
            Some(n) => nodes_arg(n)?,
            None => Vec::new(),
        };
        let ring = core_ring::Ring::with_nodes(p, nodes).map_err(from_ring)?;
        Ok(PyRing::from_core(py, ring))
    }

    /// A ring from a node list as people type it: "a:1,b:2" or "host:port=3".
    #[classmethod]
    #[pyo3(signature = (spec, *, profile="native", vnodes=None, default_port=None, points_per_digest=None))]
    fn from_spec(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        spec: &str,
        profile: &str,
        vnodes: Option<i64>,
        default_port: Option<i64>,
        points_per_digest: Option<i64>,
    ) -> PyResult<PyRing> {
        let p = profile_arg(profile, vnodes, default_port, points_per_digest)?;
        let nodes = core_ring::parse_nodes(spec).map_err(from_ring)?;
        let ring = core_ring::Ring::with_nodes(p, nodes.into_iter().map(|n| (n.name, n.weight)))
            .map_err(from_ring)?;
        Ok(PyRing::from_core(py, ring))
    }

    /// The node owning `key`, or None on an empty ring.
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyString>>> {
        let k = key_bytes(key)?;
        let st = self.state.read().unwrap_or_else(|e| e.into_inner());
        Ok(st.ring.get_index(k).map(|i| st.names[i].clone_ref(py)))
    }

    /// Up to `n` distinct nodes for `key`, clockwise from its point (owner first).
    fn get_n(&self, py: Python<'_>, key: &Bound<'_, PyAny>, n: i64) -> PyResult<Py<PyList>> {
        let n = usize::try_from(n)
            .map_err(|_| PyValueError::new_err(format!("n must be >= 0, got {n}")))?;
        let k = key_bytes(key)?;
        let st = self.snapshot();
        let mut idx = Vec::new();
        st.ring.get_n_into(k, n, &mut idx);
        Ok(PyList::new(py, idx.iter().map(|&i| st.names[i].bind(py)))?.unbind())
    }

    /// The owner of every key (None for each on an empty ring), computed without the GIL
    /// for batches of 256 keys or more.
    fn get_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
        let st = self.snapshot();
        let ring = &st.ring;
        let mut out: Vec<u32> = Vec::new();
        batch(py, keys, &mut out, |ks, out| {
            let start = out.len();
            out.resize(start + ks.len(), NO_NODE);
            ring.get_many_to_slice(ks, &mut out[start..]);
        })?;
        let none = py.None();
        let list = PyList::new(
            py,
            out.iter().map(|&i| match st.names.get(i as usize) {
                Some(name) => name.bind(py).as_any().clone(),
                None => none.bind(py).clone(), // NO_NODE: an empty ring
            }),
        )?;
        Ok(list.unbind())
    }

    /// Adds a node (weight >= 1). Raises RingError if it is already on the ring.
    #[pyo3(signature = (node, weight=None))]
    fn add(&self, py: Python<'_>, node: &str, weight: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let w = match weight {
            Some(w) => weight_of(node, w)?,
            None => 1,
        };
        self.change(py, |r| r.add(node, w))
    }

    /// Removes a node. Raises NodeNotFoundError (a KeyError) if it is not on the ring.
    fn remove(&self, py: Python<'_>, node: &str) -> PyResult<()> {
        self.change(py, |r| r.remove(node).map(|_| ()))
    }

    /// Changes a node's weight (>= 1).
    fn set_weight(&self, py: Python<'_>, node: &str, weight: &Bound<'_, PyAny>) -> PyResult<()> {
        let w = weight_of(node, weight)?;
        self.change(py, |r| r.set_weight(node, w))
    }

    /// A node's weight. Raises NodeNotFoundError if it is not on the ring.
    fn weight(&self, node: &str) -> PyResult<u32> {
        let st = self.snapshot();
        st.ring
            .nodes()
            .iter()
            .find(|n| n.name() == node)
            .map(|n| n.weight())
            .ok_or_else(|| from_ring(RingError::UnknownNode(node.into())))
    }

    /// name -> weight, in the order the nodes were added.
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.snapshot();
        let d = PyDict::new(py);
        for (n, s) in st.ring.nodes().iter().zip(&st.names) {
            d.set_item(s.bind(py), n.weight())?;
        }
        Ok(d)
    }

    /// (position, node) of every point, clockwise from 0.
    fn points<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let st = self.snapshot();
        let items = st
            .ring
            .positions()
            .iter()
            .zip(st.ring.owners())
            .map(|(&p, &o)| (p, st.names[o as usize].bind(py)).into_pyobject(py))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// (start, end, node) of every arc, clockwise; positions start..=end belong to node
    /// (an arc may wrap past the top: start > end).
    fn arcs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let st = self.snapshot();
        let items = st
            .ring
            .arcs()
            .iter()
            .map(|a| (a.start, a.end, st.names[a.owner].bind(py)).into_pyobject(py))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The exact fraction of the circle each node owns (sums to 1 on a non-empty ring).
    fn shares<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let st = self.snapshot();
        let d = PyDict::new(py);
        for (s, name) in st.ring.shares().into_iter().zip(&st.names) {
            d.set_item(name.bind(py), s)?;
        }
        Ok(d)
    }

    /// What moves going from this ring to `other`: the moved arcs and the fraction of
    /// keys that change owner. Raises RingError if the rings hash keys differently.
    fn diff(&self, other: &Bound<'_, PyRing>) -> PyResult<RingDiff> {
        let (a, b) = (self.snapshot(), other.get().snapshot());
        let d = core_ring::diff(&a.ring, &b.ring).map_err(from_ring)?;
        Ok(RingDiff {
            moved: d
                .moved
                .into_iter()
                .map(|m| MovedArc {
                    start: m.start,
                    end: m.end,
                    old_node: m.from,
                    new_node: m.to,
                })
                .collect(),
            moved_fraction: d.moved_fraction,
            ideal_fraction: d.ideal_fraction,
        })
    }

    /// Pickle support: the ring is rebuilt from its nodes and profile options.
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        let st = self.snapshot();
        let p = st.ring.profile();
        let nodes = st
            .ring
            .nodes()
            .iter()
            .map(|n| (n.name(), n.weight()))
            .collect::<Vec<_>>();
        let kw = PyDict::new(py);
        kw.set_item("profile", p.name().as_str())?;
        kw.set_item("vnodes", p.vnodes())?;
        kw.set_item("default_port", p.default_port())?;
        if p.name() != ProfileName::Native {
            kw.set_item("points_per_digest", p.points_per_digest())?;
        }
        Ok((PyTuple::new(py, [nodes])?, kw))
    }

    /// An independent copy.
    fn copy(&self, py: Python<'_>) -> PyRing {
        PyRing::from_core(py, self.snapshot().ring.clone())
    }

    fn __copy__(&self, py: Python<'_>) -> PyRing {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyRing {
        self.copy(py)
    }

    /// The profile name ("native", "libketama", ...).
    #[getter]
    fn profile(&self) -> &'static str {
        self.snapshot().ring.profile().name().as_str()
    }

    /// Virtual nodes: points per unit of weight (native) or digests per server at equal
    /// weights (ketama family).
    #[getter]
    fn vnodes(&self) -> u32 {
        self.snapshot().ring.profile().vnodes()
    }

    /// The port left out of hashed server strings, if any.
    #[getter]
    fn default_port(&self) -> Option<u16> {
        self.snapshot().ring.profile().default_port()
    }

    /// Points per MD5 digest (1 for native).
    #[getter]
    fn points_per_digest(&self) -> u8 {
        self.snapshot().ring.profile().points_per_digest()
    }

    /// The number of points on the circle.
    #[getter]
    fn point_count(&self) -> usize {
        self.snapshot().ring.point_count()
    }

    /// The node names, in the order they were added.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let st = self.snapshot();
        PyList::new(py, st.names.iter().map(|s| s.bind(py)))
    }

    fn __len__(&self) -> usize {
        self.snapshot().ring.len()
    }

    fn __contains__(&self, node: &Bound<'_, PyAny>) -> bool {
        match node.cast::<PyString>() {
            Ok(s) => s.to_str().is_ok_and(|s| self.snapshot().ring.contains(s)),
            Err(_) => false,
        }
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.nodes(py)?.try_iter().map(|i| i.into_any())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let st = self.snapshot();
        let nodes = st.ring.nodes();
        let shown: Vec<String> = nodes
            .iter()
            .take(8)
            .map(|n| {
                Ok(format!(
                    "{}: {}",
                    PyString::new(py, n.name()).repr()?.to_str()?,
                    n.weight()
                ))
            })
            .collect::<PyResult<_>>()?;
        let more = if nodes.len() > 8 {
            format!(", ...{} more", nodes.len() - 8)
        } else {
            String::new()
        };
        Ok(format!(
            "Ring({{{}{more}}}, profile='{}', points={})",
            shown.join(", "),
            st.ring.profile().name().as_str(),
            st.ring.point_count()
        ))
    }
}

/// A stretch of the circle whose owner changed between two rings.
#[pyclass(module = "keyroute", frozen, get_all)]
pub(crate) struct MovedArc {
    /// First position (inclusive).
    start: u64,
    /// Last position (inclusive).
    end: u64,
    /// The owner in the old ring (None if it was empty).
    old_node: Option<String>,
    /// The owner in the new ring (None if it is empty).
    new_node: Option<String>,
}

#[pymethods]
impl MovedArc {
    fn __repr__(&self) -> String {
        format!(
            "MovedArc(start={}, end={}, old_node={:?}, new_node={:?})",
            self.start, self.end, self.old_node, self.new_node
        )
    }
}

/// What changes between two rings (see Ring.diff).
#[pyclass(module = "keyroute", frozen)]
pub(crate) struct RingDiff {
    moved: Vec<MovedArc>,
    /// The fraction of the key space that changes owner.
    #[pyo3(get)]
    moved_fraction: f64,
    /// The least any ring could move for the same change of shares.
    #[pyo3(get)]
    ideal_fraction: f64,
}

#[pymethods]
impl RingDiff {
    /// The moved arcs, clockwise.
    #[getter]
    fn moved(&self) -> Vec<MovedArc> {
        self.moved
            .iter()
            .map(|m| MovedArc {
                start: m.start,
                end: m.end,
                old_node: m.old_node.clone(),
                new_node: m.new_node.clone(),
            })
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "RingDiff(moved=<{} arcs>, moved_fraction={}, ideal_fraction={})",
            self.moved.len(),
            self.moved_fraction,
            self.ideal_fraction
        )
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRing>()?;
    m.add_class::<RingDiff>()?;
    m.add_class::<MovedArc>()?;
    m.add(
        "PROFILES",
        PyTuple::new(m.py(), ProfileName::ALL.iter().map(|p| p.as_str()))?,
    )?;
    m.add("DEFAULT_NATIVE_VNODES", core_ring::DEFAULT_NATIVE_VNODES)?;
    Ok(())
}
