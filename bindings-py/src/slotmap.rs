//! `keyroute.SlotMap`: 16384 slots -> master, with redirects and grouping.
//!
//! Nodes are referred to by their index (an int, in the order they were added).

use std::sync::RwLock;

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use keyroute::slot::{
    self as core_slot, Address, Health, MapError, NodeIndex, Redirect, RedirectAction, Role,
    SlotsEntry, SlotsNode,
};

use crate::errors::{not_found, redirect_error, slot_map_error};
use crate::keys::{collect, key_bytes, slices};

/// A Redis Cluster slot map: nodes (id, address, role, replicas, health) and the master
/// owning each of the 16384 slots.
#[pyclass(module = "keyroute", frozen, name = "SlotMap")]
pub(crate) struct PySlotMap {
    map: RwLock<core_slot::SlotMap>,
}

fn map_err(e: MapError) -> PyErr {
    match e {
        MapError::UnknownNode(_) => not_found(e.to_string()),
        _ => slot_map_error(e.to_string()),
    }
}

fn parse_address(s: &str) -> PyResult<Address> {
    Address::parse(s).map_err(|e| slot_map_error(format!("address {s:?}: {e}")))
}

fn slot_arg(slot: i64) -> PyResult<u16> {
    u16::try_from(slot)
        .ok()
        .filter(|s| *s < core_slot::SLOT_COUNT)
        .ok_or_else(|| PyValueError::new_err(format!("slot must be in 0..=16383, got {slot}")))
}

/// The map's NodeIndex for a Python int (the core offers no public constructor).
fn index(map: &core_slot::SlotMap, node: i64) -> PyResult<NodeIndex> {
    usize::try_from(node)
        .ok()
        .and_then(|i| map.iter().nth(i))
        .map(|(ix, _)| ix)
        .ok_or_else(|| not_found(format!("node #{node} is not in the slot map")))
}

fn role_str(r: Role) -> &'static str {
    match r {
        Role::Master => "master",
        Role::Replica => "replica",
    }
}

fn health_str(h: Health) -> &'static str {
    match h {
        Health::Online => "online",
        Health::Loading => "loading",
        Health::Failed => "failed",
        _ => "unknown",
    }
}

/// str or bytes (UTF-8) as a String.
fn text(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let b = key_bytes(obj)?;
    String::from_utf8(b.to_vec()).map_err(|_| slot_map_error(format!("{obj} is not valid UTF-8")))
}

/// One node of a CLUSTER SLOTS entry: [host, port, id?, ...].
fn slots_node(obj: &Bound<'_, PyAny>) -> PyResult<SlotsNode> {
    let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
    if items.len() < 2 {
        return Err(slot_map_error(format!(
            "a CLUSTER SLOTS node needs host and port, got {} items",
            items.len()
        )));
    }
    let port: i64 = items[1].extract()?;
    let port = u16::try_from(port)
        .map_err(|_| slot_map_error(format!("port must be in 0..=65535, got {port}")))?;
    Ok(SlotsNode {
        endpoint: text(&items[0])?,
        port,
        id: match items.get(2) {
            Some(id) => text(id)?,
            None => String::new(),
        },
        ip: None,
        hostname: None,
    })
}

impl PySlotMap {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, core_slot::SlotMap> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, core_slot::SlotMap> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[pymethods]
impl PySlotMap {
    #[new]
    fn new() -> PySlotMap {
        PySlotMap {
            map: RwLock::new(core_slot::SlotMap::new()),
        }
    }

    /// A map from a `CLUSTER SLOTS` reply as the server sends it: entries
    /// `[start, end, master, *replicas]`, each node `[host, port, id, ...]` (host and id
    /// str or bytes; the id may be missing). Raises SlotMapError on overlapping ranges or
    /// conflicting listings of one node.
    #[classmethod]
    fn from_slots(
        _cls: &Bound<'_, pyo3::types::PyType>,
        reply: &Bound<'_, PyAny>,
    ) -> PyResult<PySlotMap> {
        let mut entries = Vec::new();
        for entry in reply.try_iter()? {
            let entry = entry?;
            let items: Vec<Bound<'_, PyAny>> = entry.try_iter()?.collect::<PyResult<_>>()?;
            if items.len() < 3 {
                return Err(slot_map_error(format!(
                    "a CLUSTER SLOTS entry needs start, end and a master, got {} items",
                    items.len()
                )));
            }
            let start = slot_arg(items[0].extract()?)?;
            let end = slot_arg(items[1].extract()?)?;
            let master = slots_node(&items[2])?;
            let replicas = items[3..].iter().map(slots_node).collect::<PyResult<_>>()?;
            entries.push(SlotsEntry {
                start,
                end,
                master,
                replicas,
            });
        }
        let map = core_slot::SlotMap::from_slots(&entries).map_err(map_err)?;
        Ok(PySlotMap {
            map: RwLock::new(map),
        })
    }

    /// Adds a master ("host:port"; IPv6 splits on the last ":") and returns its index.
    fn add_master(&self, id: &str, address: &str) -> PyResult<usize> {
        let a = parse_address(address)?;
        Ok(self.write().add_master(id, a).map_err(map_err)?.get())
    }

    /// Adds a replica of master `master` and returns its index.
    fn add_replica(&self, master: i64, id: &str, address: &str) -> PyResult<usize> {
        let a = parse_address(address)?;
        let mut m = self.write();
        let ix = index(&m, master)?;
        Ok(m.add_replica(ix, id, a).map_err(map_err)?.get())
    }

    /// Gives slots start..=end to master `node`.
    fn assign(&self, start: i64, end: i64, node: i64) -> PyResult<()> {
        let (s, e) = (slot_arg(start)?, slot_arg(end)?);
        let mut m = self.write();
        let ix = index(&m, node)?;
        m.assign(s..=e, ix).map_err(map_err)
    }

    /// Leaves slots start..=end without an owner.
    fn unassign(&self, start: i64, end: i64) -> PyResult<()> {
        let (s, e) = (slot_arg(start)?, slot_arg(end)?);
        self.write().unassign(s..=e).map_err(map_err)
    }

    /// Sets a node's health: "online", "loading", "failed" (anything else: "unknown").
    fn set_health(&self, node: i64, health: &str) -> PyResult<()> {
        let mut m = self.write();
        let ix = index(&m, node)?;
        m.set_health(ix, Health::from_redis(health))
            .map_err(map_err)
    }

    /// The index of the master owning `slot`, or None.
    fn owner(&self, slot: i64) -> PyResult<Option<usize>> {
        Ok(self.read().owner(slot_arg(slot)?).map(NodeIndex::get))
    }

    /// The index of the master owning `key`'s slot, or None.
    fn owner_of_key(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        Ok(self
            .read()
            .owner_of_key(key_bytes(key)?)
            .map(NodeIndex::get))
    }

    /// The address ("host:port") of the master owning `slot`, or None.
    fn address_for_slot(&self, slot: i64) -> PyResult<Option<String>> {
        let s = slot_arg(slot)?;
        Ok(self.read().node_for_slot(s).map(|n| n.addr().to_string()))
    }

    /// The address ("host:port") of the master owning `key`'s slot, or None.
    fn address_for_key(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let k = key_bytes(key)?;
        Ok(self.read().node_for_key(k).map(|n| n.addr().to_string()))
    }

    /// A node as a dict: index, id, address, role, master, replicas, health.
    fn node<'py>(&self, py: Python<'py>, node: i64) -> PyResult<Bound<'py, PyDict>> {
        let m = self.read();
        let ix = index(&m, node)?;
        let n = &m[ix];
        let d = PyDict::new(py);
        d.set_item("index", ix.get())?;
        d.set_item("id", n.id())?;
        d.set_item("address", n.addr().to_string())?;
        d.set_item("role", role_str(n.role()))?;
        d.set_item("master", n.master().map(NodeIndex::get))?;
        d.set_item(
            "replicas",
            n.replicas().iter().map(|r| r.get()).collect::<Vec<_>>(),
        )?;
        d.set_item("health", health_str(n.health()))?;
        Ok(d)
    }

    /// The index of the node with this cluster id, or None.
    fn find_id(&self, id: &str) -> Option<usize> {
        self.read().find_id(id).map(NodeIndex::get)
    }

    /// The index of the node at this "host:port", or None.
    fn find_address(&self, address: &str) -> PyResult<Option<usize>> {
        let a = parse_address(address)?;
        Ok(self.read().find_addr(&a.host, a.port).map(NodeIndex::get))
    }

    /// Slots owned by each node, indexed like the nodes.
    fn slot_counts(&self) -> Vec<usize> {
        self.read().slot_counts()
    }

    /// (start, end, owner index or None) runs covering all 16384 slots.
    fn ranges(&self) -> Vec<(u16, u16, Option<usize>)> {
        self.read()
            .ranges()
            .map(|r| (r.start, r.end, r.owner.map(NodeIndex::get)))
            .collect()
    }

    /// Whether every slot has an owner.
    fn is_complete(&self) -> bool {
        self.read().is_complete()
    }

    /// Follows a MOVED/ASK error message (str or bytes). `current_host` replaces an
    /// empty host. Returns (kind, address, node): kind "moved" (the map now routes the
    /// slot to node; refresh the whole map soon) or "ask" (send ASKING then the command
    /// to address, once; the map is unchanged; node is None if the map does not know it).
    fn apply_redirect(
        &self,
        message: &Bound<'_, PyAny>,
        current_host: &str,
    ) -> PyResult<(&'static str, String, Option<usize>)> {
        let msg = key_bytes(message)?;
        let r = Redirect::parse_bytes(msg).map_err(|e| redirect_error(e.to_string()))?;
        let mut m = self.write();
        match m.apply_redirect(&r, current_host).map_err(map_err)? {
            RedirectAction::Moved { node, .. } => {
                Ok(("moved", m[node].addr().to_string(), Some(node.get())))
            }
            RedirectAction::Ask { addr, node } => {
                Ok(("ask", addr.to_string(), node.map(NodeIndex::get)))
            }
            #[allow(unreachable_patterns)]
            _ => Err(redirect_error("unsupported redirect".into())),
        }
    }

    /// Groups keys by the master owning their slot: [(node or None, [key indexes])],
    /// ascending by node, unowned keys last. Use it to split a pipeline per connection.
    fn group_by_node<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let owned = collect(keys)?;
        let ks = slices(&owned)?;
        let g = self.read().group_by_node(&ks);
        let items = g
            .iter()
            .map(|(n, idx)| (n.map(NodeIndex::get), idx.to_vec()).into_pyobject(py))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    fn __len__(&self) -> usize {
        self.read().nodes().len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, node: i64) -> PyResult<Bound<'py, PyDict>> {
        self.node(py, node)
            .map_err(|_| PyIndexError::new_err(format!("no node #{node}")))
    }

    fn __repr__(&self) -> String {
        let m = self.read();
        format!(
            "SlotMap(<{} nodes, {} masters, {} unassigned slots>)",
            m.nodes().len(),
            m.masters().count(),
            m.unassigned_count()
        )
    }
}

/// Groups keys by slot: [(slot, [key indexes])], ascending by slot. A multi-key command
/// must be split along these groups.
#[pyfunction]
fn group_by_slot<'py>(py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    let owned = collect(keys)?;
    let ks = slices(&owned)?;
    let g = core_slot::group_by_slot(&ks);
    let items = g
        .iter()
        .map(|(s, idx)| (s, idx.to_vec()).into_pyobject(py))
        .collect::<PyResult<Vec<_>>>()?;
    PyList::new(py, items)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySlotMap>()?;
    m.add_function(wrap_pyfunction!(group_by_slot, m)?)?;
    Ok(())
}
