//! `keyroute.Ring`, `keyroute.RingDiff`, `keyroute.MovedArc`.

use std::sync::{Arc, RwLock};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyMapping, PyString, PyTuple};

use keyroute::ring::{
    self as core_ring, checked_weight, Profile, ProfileName, ProfileOptions, RingError, NO_NODE,
};

use crate::args::{self, int, opt_int, text, type_name};
use crate::errors::{bad_type, err, guard, out_of_range};
use crate::keys::{batch, key_bytes, native_array};

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

/// What a change did to the node list (core keeps the order of the nodes that stay).
enum Edit {
    /// One node appended.
    Added,
    /// The node at this index dropped.
    Removed(usize),
    /// The same nodes (a weight changed).
    Weight,
}

/// A consistent-hash ring.
///
/// Lookups read a shared snapshot; a change (add, remove, set_weight) swaps in a new one,
/// so a `get_many` running without the GIL never sees a half-changed ring.
#[pyclass(module = "keyroute", frozen, name = "Ring")]
pub(crate) struct PyRing {
    state: RwLock<Arc<State>>,
}

/// A node name: a `str` (`BAD_TYPE` otherwise, `BAD_UTF8` for lone surrogates).
fn node_name(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    text(obj, "a node name").map(str::to_owned)
}

/// A `(name, weight)` entry: a 2-tuple or 2-list.
fn pair<'py>(item: &Bound<'py, PyAny>) -> PyResult<Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let items = if let Ok(t) = item.cast::<PyTuple>() {
        t.iter().collect::<Vec<_>>()
    } else if let Ok(l) = item.cast::<PyList>() {
        l.iter().collect::<Vec<_>>()
    } else {
        return Ok(None);
    };
    match <[_; 2]>::try_from(items) {
        Ok([name, weight]) => Ok(Some((name, weight))),
        Err(items) => Err(bad_type(format!(
            "node entries must be a name or a (name, weight) pair, got a {} of {}",
            type_name(item),
            items.len()
        ))),
    }
}

/// `nodes` as (name, weight): a mapping name -> weight, or an iterable whose items are
/// names (weight 1) or (name, weight) pairs. Weights are checked by the core.
pub(crate) fn nodes_arg(nodes: &Bound<'_, PyAny>) -> PyResult<Vec<(String, u32)>> {
    if nodes.is_instance_of::<PyString>() || nodes.is_instance_of::<PyBytes>() {
        return Err(bad_type(format!(
            "nodes must be an iterable of names or a mapping name -> weight, not a {}; \
             use Ring.from_spec(\"a=1,b=2\") or keyroute.parse_nodes to read a node list",
            type_name(nodes)
        )));
    }
    let one = |name: &Bound<'_, PyAny>, w: Option<&Bound<'_, PyAny>>| -> PyResult<(String, u32)> {
        let name = node_name(name)?;
        let w = match w {
            Some(w) => checked_weight(&name, args::weight(&name, w)?).map_err(err)?,
            None => 1,
        };
        Ok((name, w))
    };
    let mut out = Vec::new();
    if let Ok(map) = nodes.cast::<PyMapping>() {
        for item in map.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            out.push(one(&k, Some(&v))?);
        }
        return Ok(out);
    }
    let it = nodes.try_iter().map_err(|_| {
        bad_type(format!(
            "nodes must be an iterable of names or a mapping name -> weight, not {}",
            type_name(nodes)
        ))
    })?;
    for item in it {
        let item = item?;
        match pair(&item)? {
            Some((name, w)) => out.push(one(&name, Some(&w))?),
            None => out.push(one(&item, None)?),
        }
    }
    Ok(out)
}

/// The profile `profile` with its options, checked by the core (`Profile::from_options`).
fn profile_arg(
    profile: Option<&Bound<'_, PyAny>>,
    vnodes: Option<&Bound<'_, PyAny>>,
    default_port: Option<&Bound<'_, PyAny>>,
    points_per_digest: Option<&Bound<'_, PyAny>>,
) -> PyResult<Profile> {
    let options = ProfileOptions {
        vnodes: opt_int(vnodes, "vnodes")?,
        points_per_digest: opt_int(points_per_digest, "points_per_digest")?,
        default_port: opt_int(default_port, "default_port")?,
    };
    let name = match profile {
        Some(p) if !p.is_none() => text(p, "profile")?,
        _ => ProfileName::Native.as_str(),
    };
    Profile::from_options(name, &options).map_err(err)
}

/// A node list as (name, weight) tuples (see `parse_nodes`).
fn spec_pairs<'py>(
    py: Python<'py>,
    nodes: impl IntoIterator<Item = (String, u32)>,
) -> PyResult<Bound<'py, PyList>> {
    let items = nodes
        .into_iter()
        .map(|(n, w)| (n, w).into_pyobject(py))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

/// Parses a node list as people write it (one grammar in every language: `host:port`
/// keeps its port, `NAME=WEIGHT`, twemproxy's `host:port:weight [alias]`, `NAME WEIGHT`
/// lines, `#` comments) into `[(name, weight), ...]`.
#[pyfunction]
fn parse_nodes<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    guard(|| {
        let t = args::text(text, "the node list")?;
        let nodes = core_ring::parse_nodes(t).map_err(err)?;
        spec_pairs(py, nodes.into_iter().map(|n| (n.name, n.weight)))
    })
}

/// Parses target weights for a resharding plan (the grammar of `parse_nodes`, where a
/// weight may be 0: drain the node) into `[(name, weight), ...]`.
#[pyfunction]
fn parse_weights<'py>(py: Python<'py>, text: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    guard(|| {
        let t = args::text(text, "the weight list")?;
        spec_pairs(py, core_ring::parse_weights(t).map_err(err)?)
    })
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

    /// Applies a change. When no reader holds the current snapshot (no `get_many` in
    /// flight without the GIL), the ring changes in place: core's incremental add/remove,
    /// and one str added or dropped (a copy of a 30k-node ring costs milliseconds). Else
    /// the change goes to a copy that is swapped in (readers keep the old one). On error
    /// nothing changed (core leaves the ring as it was).
    fn change(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut core_ring::Ring) -> Result<Edit, RingError>,
    ) -> PyResult<()> {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        if let Some(st) = Arc::get_mut(&mut state) {
            match f(&mut st.ring).map_err(err)? {
                Edit::Added => {
                    if let Some(n) = st.ring.nodes().last() {
                        st.names.push(PyString::new(py, n.name()).unbind());
                    }
                }
                Edit::Removed(i) => {
                    st.names.remove(i);
                }
                Edit::Weight => {}
            }
            debug_assert_eq!(st.names.len(), st.ring.nodes().len());
            return Ok(());
        }
        let mut ring = state.ring.clone();
        f(&mut ring).map_err(err)?;
        // Reuse the str objects of nodes that stay: a change keeps the order of the nodes
        // that stay (add appends, remove drops one), so one walk over both lists finds
        // them; a name not found there gets a new str.
        let old = state.ring.nodes();
        let mut j = 0;
        let names = ring
            .nodes()
            .iter()
            .map(|n| {
                if old.get(j).is_some_and(|o| o.name() != n.name())
                    && old.get(j + 1).is_some_and(|o| o.name() == n.name())
                {
                    j += 1; // the node at j left
                }
                match old.get(j) {
                    Some(o) if o.name() == n.name() => {
                        j += 1;
                        state.names[j - 1].clone_ref(py)
                    }
                    _ => PyString::new(py, n.name()).unbind(),
                }
            })
            .collect();
        *state = Arc::new(State { ring, names });
        Ok(())
    }
}

#[pymethods]
impl PyRing {
    #[new]
    #[pyo3(signature = (nodes=None, *, profile=None, vnodes=None, default_port=None, points_per_digest=None))]
    fn new(
        py: Python<'_>,
        nodes: Option<&Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
        vnodes: Option<&Bound<'_, PyAny>>,
        default_port: Option<&Bound<'_, PyAny>>,
        points_per_digest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRing> {
        guard(|| {
            let p = profile_arg(profile, vnodes, default_port, points_per_digest)?;
            let nodes = match nodes {
                Some(n) if !n.is_none() => nodes_arg(n)?,
                _ => Vec::new(),
            };
            let ring = core_ring::Ring::with_nodes(p, nodes).map_err(err)?;
            Ok(PyRing::from_core(py, ring))
        })
    }

    /// A ring from a node list as people write it (see `keyroute.parse_nodes`):
    /// "10.0.0.1:11211,10.0.0.2:11211" (host:port keeps its port), "a=1,b=2",
    /// twemproxy's "host:port:weight [alias]", or one "NAME WEIGHT" per line.
    #[classmethod]
    #[pyo3(signature = (spec, *, profile=None, vnodes=None, default_port=None, points_per_digest=None))]
    fn from_spec(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        spec: &Bound<'_, PyAny>,
        profile: Option<&Bound<'_, PyAny>>,
        vnodes: Option<&Bound<'_, PyAny>>,
        default_port: Option<&Bound<'_, PyAny>>,
        points_per_digest: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyRing> {
        guard(|| {
            let p = profile_arg(profile, vnodes, default_port, points_per_digest)?;
            let nodes = core_ring::parse_nodes(text(spec, "the node list")?).map_err(err)?;
            let ring =
                core_ring::Ring::with_nodes(p, nodes.into_iter().map(|n| (n.name, n.weight)))
                    .map_err(err)?;
            Ok(PyRing::from_core(py, ring))
        })
    }

    /// The node owning `key`, or None on an empty ring.
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyString>>> {
        guard(|| {
            let k = key_bytes(key)?;
            let st = self.state.read().unwrap_or_else(|e| e.into_inner());
            Ok(st.ring.get_index(k).map(|i| st.names[i].clone_ref(py)))
        })
    }

    /// Up to `n` distinct nodes for `key`, clockwise from its point (owner first).
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
            // More than the ring's nodes is the ring's nodes.
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            let k = key_bytes(key)?;
            let st = self.snapshot();
            let mut idx = Vec::new();
            st.ring.get_n_into(k, n, &mut idx);
            Ok(PyList::new(py, idx.iter().map(|&i| st.names[i].bind(py)))?.unbind())
        })
    }

    /// The owner of every key (None for each on an empty ring), computed without the GIL
    /// for batches of 256 keys or more. At most MAX_KEYS_PER_CALL keys.
    fn get_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyList>> {
        guard(|| {
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
        })
    }

    /// The owner index (into `nodes`) of every key as an `array.array('i')`, -1 for each
    /// on an empty ring: shard numbers without a str per key (as JS `getManyIndexes`).
    /// Computed without the GIL for batches of 256 keys or more. At most
    /// MAX_KEYS_PER_CALL keys.
    fn get_many_indexes<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        guard(|| {
            let st = self.snapshot();
            let ring = &st.ring;
            let mut out: Vec<u32> = Vec::new();
            batch(py, keys, &mut out, |ks, out| {
                let start = out.len();
                out.resize(start + ks.len(), NO_NODE);
                ring.get_many_to_slice(ks, &mut out[start..]);
            })?;
            // NO_NODE (u32::MAX) reads as -1 in a signed array.
            native_array(py, "i", &out)
        })
    }

    /// Adds a node (weight >= 1). Raises RingError if it is already on the ring.
    #[pyo3(signature = (node, weight=None))]
    fn add(
        &self,
        py: Python<'_>,
        node: &Bound<'_, PyAny>,
        weight: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        guard(|| {
            let node = text(node, "a node name")?;
            let w = args::added_weight(node, weight)?;
            self.change(py, |r| r.add(node, w).map(|()| Edit::Added))
        })
    }

    /// Removes a node. Raises NodeNotFoundError (a KeyError) if it is not on the ring.
    fn remove(&self, py: Python<'_>, node: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let node = text(node, "a node name")?;
            self.change(py, |r| {
                let at = r.node_index(node);
                r.remove(node)?;
                Ok(at.map_or(Edit::Weight, Edit::Removed))
            })
        })
    }

    /// Changes a node's weight (>= 1).
    fn set_weight(
        &self,
        py: Python<'_>,
        node: &Bound<'_, PyAny>,
        weight: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guard(|| {
            let node = text(node, "a node name")?;
            let w = checked_weight(node, args::weight(node, weight)?).map_err(err)?;
            self.change(py, |r| r.set_weight(node, w).map(|()| Edit::Weight))
        })
    }

    /// A node's weight. Raises NodeNotFoundError if it is not on the ring.
    fn weight(&self, node: &Bound<'_, PyAny>) -> PyResult<u32> {
        guard(|| {
            let node = text(node, "a node name")?;
            self.snapshot()
                .ring
                .weight(node)
                .ok_or_else(|| err(RingError::UnknownNode(node.into())))
        })
    }

    /// name -> weight, in the order the nodes were added.
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let st = self.snapshot();
            let d = PyDict::new(py);
            for (n, s) in st.ring.nodes().iter().zip(&st.names) {
                d.set_item(s.bind(py), n.weight())?;
            }
            Ok(d)
        })
    }

    /// (position, node) of every point, clockwise from 0.
    fn points<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let st = self.snapshot();
            let items = st
                .ring
                .positions()
                .iter()
                .zip(st.ring.owners())
                .map(|(p, o)| (p, st.names[o as usize].bind(py)).into_pyobject(py))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)
        })
    }

    /// (start, end, node) of every arc, clockwise; positions start..=end belong to node
    /// (an arc may wrap past the top: start > end).
    fn arcs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let st = self.snapshot();
            let items = st
                .ring
                .arcs()
                .iter()
                .map(|a| (a.start, a.end, st.names[a.owner].bind(py)).into_pyobject(py))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)
        })
    }

    /// The exact fraction of the circle each node owns (sums to 1 on a non-empty ring).
    fn shares<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let st = self.snapshot();
            let d = PyDict::new(py);
            for (s, name) in st.ring.shares().into_iter().zip(&st.names) {
                d.set_item(name.bind(py), s)?;
            }
            Ok(d)
        })
    }

    /// What moves going from this ring to `other`: the moved arcs and the fraction of
    /// keys that change owner. Raises RingError if the rings hash keys differently.
    fn diff(&self, other: &Bound<'_, PyAny>) -> PyResult<RingDiff> {
        guard(|| {
            let other = other
                .cast::<PyRing>()
                .map_err(|_| bad_type(format!("diff takes a Ring, not {}", type_name(other))))?;
            let (a, b) = (self.snapshot(), other.get().snapshot());
            let d = core_ring::diff(&a.ring, &b.ring).map_err(err)?;
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
        })
    }

    /// Pickle support: the ring is rebuilt from its nodes and profile options.
    fn __getnewargs_ex__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyTuple>, Bound<'py, PyDict>)> {
        guard(|| {
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
            if p.name() != ProfileName::Native {
                // 0: no default port (hash every host:port whole).
                kw.set_item("default_port", p.default_port().unwrap_or(0))?;
                kw.set_item("points_per_digest", p.points_per_digest())?;
            }
            Ok((PyTuple::new(py, [nodes])?, kw))
        })
    }

    /// An independent copy.
    fn copy(&self, py: Python<'_>) -> PyResult<PyRing> {
        guard(|| Ok(PyRing::from_core(py, self.snapshot().ring.clone())))
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<PyRing> {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<PyRing> {
        self.copy(py)
    }

    /// The profile name ("native", "libketama", ...).
    #[getter]
    fn profile(&self) -> PyResult<&'static str> {
        guard(|| Ok(self.snapshot().ring.profile().name().as_str()))
    }

    /// Virtual nodes: points per unit of weight (native) or digests per server at equal
    /// weights (ketama family).
    #[getter]
    fn vnodes(&self) -> PyResult<u32> {
        guard(|| Ok(self.snapshot().ring.profile().vnodes()))
    }

    /// The port left out of hashed server strings, if any.
    #[getter]
    fn default_port(&self) -> PyResult<Option<u16>> {
        guard(|| Ok(self.snapshot().ring.profile().default_port()))
    }

    /// Points per MD5 digest (1 for native).
    #[getter]
    fn points_per_digest(&self) -> PyResult<u8> {
        guard(|| Ok(self.snapshot().ring.profile().points_per_digest()))
    }

    /// The number of points on the circle.
    #[getter]
    fn point_count(&self) -> PyResult<usize> {
        guard(|| Ok(self.snapshot().ring.point_count()))
    }

    /// The node names, in the order they were added.
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let st = self.snapshot();
            PyList::new(py, st.names.iter().map(|s| s.bind(py)))
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        guard(|| Ok(self.snapshot().ring.len()))
    }

    fn __contains__(&self, node: &Bound<'_, PyAny>) -> PyResult<bool> {
        guard(|| {
            Ok(match node.cast::<PyString>() {
                Ok(s) => s.to_str().is_ok_and(|s| self.snapshot().ring.contains(s)),
                Err(_) => false,
            })
        })
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        guard(|| self.nodes(py)?.try_iter().map(|i| i.into_any()))
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        guard(|| {
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
        })
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
    m.add_function(wrap_pyfunction!(parse_nodes, m)?)?;
    m.add_function(wrap_pyfunction!(parse_weights, m)?)?;
    m.add_class::<RingDiff>()?;
    m.add_class::<MovedArc>()?;
    m.add(
        "PROFILES",
        PyTuple::new(m.py(), ProfileName::ALL.iter().map(|p| p.as_str()))?,
    )?;
    m.add("DEFAULT_NATIVE_VNODES", core_ring::DEFAULT_NATIVE_VNODES)?;
    Ok(())
}
