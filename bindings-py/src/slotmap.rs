//! `keyroute.SlotMap`: 16384 slots -> master, with redirects and grouping;
//! `keyroute.Plan`: resharding plans; `group_by_slot`, `parse_redirect`.
//!
//! Nodes are referred to by their index (an int, in the order they were added).

use std::sync::RwLock;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyInt, PyList, PyMapping, PyString, PyTuple};

use keyroute::error::ErrorCode;
use keyroute::slot::{
    self as core_slot, Address, Health, NodeIndex, Plan, PlanError, Redirect, RedirectAction,
    RedirectKind, Role, Shard, ShardNode, SlotsEntry, SlotsNode,
};

use crate::args::{int, text, type_name};
use crate::errors::{bad_type, err, guard, raise, Area};
use crate::keys::{collect, key_bytes, slices};

/// A Redis Cluster slot map: nodes (id, address, role, replicas, health) and the master
/// owning each of the 16384 slots.
#[pyclass(module = "keyroute", frozen, name = "SlotMap")]
pub(crate) struct PySlotMap {
    map: RwLock<core_slot::SlotMap>,
}

fn map_error(code: ErrorCode, message: String) -> PyErr {
    raise(Area::SlotMap, code, message)
}

/// A slot: 0..=16383 (`BAD_SLOT` otherwise).
fn slot_arg(slot: &Bound<'_, PyAny>) -> PyResult<u16> {
    let s = int(slot, "slot")?;
    u16::try_from(s)
        .ok()
        .filter(|s| *s < core_slot::SLOT_COUNT)
        .ok_or_else(|| map_error(ErrorCode::BadSlot, format!("a slot is 0..=16383, got {s}")))
}

/// A slot range start..=end (`BAD_RANGE` unless 0 <= start <= end <= 16383; the core
/// checks what fits in 16 bits).
fn range_arg(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<(u16, u16)> {
    let (s, e) = (int(start, "start")?, int(end, "end")?);
    match (u16::try_from(s), u16::try_from(e)) {
        (Ok(s), Ok(e)) => Ok((s, e)),
        _ => Err(map_error(
            ErrorCode::BadRange,
            format!(
                "slot range {s}-{e} is invalid; ranges are START-END with START <= END <= 16383"
            ),
        )),
    }
}

/// The map's node `node` (an int index): `UNKNOWN_NODE` when it has none.
fn index(map: &core_slot::SlotMap, node: &Bound<'_, PyAny>) -> PyResult<NodeIndex> {
    let i = int(node, "node")?;
    usize::try_from(i)
        .ok()
        .and_then(|i| map.node_index(i))
        .ok_or_else(|| {
            map_error(
                ErrorCode::UnknownNode,
                format!(
                    "node #{i} is not in the slot map ({} nodes)",
                    map.nodes().len()
                ),
            )
        })
}

/// An address: "host:port" ("[v6]:port" or an unbracketed IPv6 split on the last ":")
/// or a (host, port) pair.
fn address_arg(address: &Bound<'_, PyAny>) -> PyResult<Address> {
    if let Ok(t) = address.cast::<PyTuple>() {
        if t.len() == 2 {
            let host = text(&t.get_item(0)?, "the host")?.to_owned();
            let port = int(&t.get_item(1)?, "the port")?;
            return Address::checked(&host, port).map_err(err);
        }
    }
    if address.is_instance_of::<PyString>() {
        return Address::parse(text(address, "the address")?).map_err(err);
    }
    Err(bad_type(format!(
        "an address is \"host:port\" or a (host, port) tuple, not {}",
        type_name(address)
    )))
}

/// str or bytes as a String (`BAD_UTF8` for bytes that are not UTF-8).
fn string(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    let b = key_bytes(obj)?;
    String::from_utf8(b.to_vec()).map_err(|_| {
        raise(
            Area::SlotMap,
            ErrorCode::BadUtf8,
            format!(
                "{what} {} is not valid UTF-8",
                obj.repr().map(|r| r.to_string()).unwrap_or_default()
            ),
        )
    })
}

/// A port from a reply: 0..=65535 (the core refuses 0 where a port is needed).
fn port(obj: &Bound<'_, PyAny>) -> PyResult<u16> {
    let p = int(obj, "port")?;
    u16::try_from(p)
        .map_err(|_| map_error(ErrorCode::BadPort, format!("a port is 1..=65535, got {p}")))
}

/// The items of a sequence in a reply (a list or tuple; `BAD_TYPE` otherwise).
fn items<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<Bound<'py, PyAny>>> {
    if let Ok(l) = obj.cast::<PyList>() {
        return Ok(l.iter().collect());
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return Ok(t.iter().collect());
    }
    Err(bad_type(format!(
        "{what} must be a list or tuple, not {}",
        type_name(obj)
    )))
}

/// One node of a CLUSTER SLOTS entry: `[host, port, id?, ...]` (host and id str or bytes).
fn slots_node(obj: &Bound<'_, PyAny>) -> PyResult<SlotsNode> {
    let items = items(obj, "a CLUSTER SLOTS node")?;
    if items.len() < 2 {
        return Err(bad_type(format!(
            "a CLUSTER SLOTS node is [host, port, id, ...], got {} items",
            items.len()
        )));
    }
    Ok(SlotsNode {
        endpoint: string(&items[0], "the host")?,
        port: port(&items[1])?,
        id: match items.get(2) {
            Some(id) if !id.is_none() => string(id, "the node id")?,
            _ => String::new(),
        },
        ip: None,
        hostname: None,
    })
}

/// `(start, end)` of a slot-range key or entry.
fn slot_pair(start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<(u16, u16)> {
    Ok((slot_arg(start)?, slot_arg(end)?))
}

/// The entries of a CLUSTER SLOTS reply: as the server sends it (`[start, end, master,
/// *replicas]`, each node `[host, port, id, ...]`), or as redis-py's
/// `RedisCluster.cluster_slots()` returns it (`{(start, end): {"primary": (host, port),
/// "replicas": [(host, port), ...]}}`, without node ids).
fn slots_entries(reply: &Bound<'_, PyAny>) -> PyResult<Vec<SlotsEntry>> {
    let mut entries = Vec::new();
    if let Ok(map) = reply.cast::<PyMapping>() {
        for item in map.items()?.iter() {
            let (range, nodes): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let r = items(&range, "a slot range")?;
            let [start, end] = <[_; 2]>::try_from(r).map_err(|_| {
                bad_type("a redis-py cluster_slots() key is (start, end)".to_string())
            })?;
            let (start, end) = slot_pair(&start, &end)?;
            let get = |k: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
                nodes.get_item(k).map(Some).or_else(|e| {
                    if e.is_instance_of::<pyo3::exceptions::PyKeyError>(reply.py()) {
                        Ok(None)
                    } else {
                        Err(e)
                    }
                })
            };
            let primary = get("primary")?.or(get("master")?).ok_or_else(|| {
                bad_type("a redis-py cluster_slots() value has \"primary\"".to_string())
            })?;
            let replicas = match get("replicas")? {
                Some(r) => items(&r, "replicas")?
                    .iter()
                    .map(slots_node)
                    .collect::<PyResult<_>>()?,
                None => Vec::new(),
            };
            entries.push(SlotsEntry {
                start,
                end,
                master: slots_node(&primary)?,
                replicas,
            });
        }
        return Ok(entries);
    }
    if reply.is_instance_of::<PyString>() || reply.is_instance_of::<PyBytes>() {
        return Err(bad_type(
            "a CLUSTER SLOTS reply is a list, not a str".to_string(),
        ));
    }
    let it = reply.try_iter().map_err(|_| {
        bad_type(format!(
            "a CLUSTER SLOTS reply is a list, not {}",
            type_name(reply)
        ))
    })?;
    for entry in it {
        let entry = entry?;
        let items = items(&entry, "a CLUSTER SLOTS entry")?;
        if items.len() < 3 {
            return Err(bad_type(format!(
                "a CLUSTER SLOTS entry is [start, end, master, *replicas], got {} items",
                items.len()
            )));
        }
        let (start, end) = slot_pair(&items[0], &items[1])?;
        entries.push(SlotsEntry {
            start,
            end,
            master: slots_node(&items[2])?,
            replicas: items[3..].iter().map(slots_node).collect::<PyResult<_>>()?,
        });
    }
    Ok(entries)
}

/// A map with str-or-bytes keys, as a list of (key, value); a flat RESP2 list
/// `[k1, v1, k2, v2, ...]` is read the same way.
fn fields<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Vec<(String, Bound<'py, PyAny>)>> {
    let mut out = Vec::new();
    if let Ok(map) = obj.cast::<PyMapping>() {
        for item in map.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            out.push((string(&k, "a field name")?, v));
        }
        return Ok(out);
    }
    let flat = items(obj, what)?;
    if flat.len() % 2 != 0 {
        return Err(bad_type(format!("{what} has an odd number of items")));
    }
    for kv in flat.chunks(2) {
        out.push((string(&kv[0], "a field name")?, kv[1].clone()));
    }
    Ok(out)
}

fn optional_text(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<String>> {
    if v.is_none() {
        Ok(None)
    } else {
        string(v, what).map(Some)
    }
}

/// One node of a CLUSTER SHARDS shard (a map, str or bytes keys and values).
fn shard_node(obj: &Bound<'_, PyAny>) -> PyResult<ShardNode> {
    let mut node = ShardNode {
        id: String::new(),
        port: None,
        tls_port: None,
        ip: String::new(),
        endpoint: String::new(),
        hostname: None,
        role: Role::Master,
        replication_offset: 0,
        health: Health::Unknown,
    };
    let mut role = None;
    for (k, v) in fields(obj, "a CLUSTER SHARDS node")? {
        match k.as_str() {
            "id" => node.id = string(&v, "the node id")?,
            "port" => node.port = Some(port(&v)?),
            "tls-port" => node.tls_port = Some(port(&v)?),
            "ip" => node.ip = string(&v, "the ip")?,
            "endpoint" => node.endpoint = string(&v, "the endpoint")?,
            "hostname" => {
                node.hostname = optional_text(&v, "the hostname")?.filter(|h| !h.is_empty())
            }
            "role" => role = Some(string(&v, "the role")?),
            "replication-offset" => {
                node.replication_offset = u64::try_from(int(&v, "replication-offset")?).unwrap_or(0)
            }
            "health" => node.health = Health::from_redis(&string(&v, "the health")?),
            _ => {}
        }
    }
    let role = role.unwrap_or_default();
    node.role = Role::from_redis(&role).ok_or_else(|| {
        map_error(
            ErrorCode::InconsistentTopology,
            format!(
                "node {:?} has role {role:?}; expected master or replica",
                node.id
            ),
        )
    })?;
    Ok(node)
}

/// The shards of a CLUSTER SHARDS reply: as redis-py returns it (a list of
/// `{"slots": [(start, end), ...], "nodes": [{...}, ...]}`, str or bytes keys) or as the
/// server sends it (flat `["slots", [s, e, ...], "nodes", [[k, v, ...], ...]]`).
fn shards(reply: &Bound<'_, PyAny>) -> PyResult<Vec<Shard>> {
    let mut out = Vec::new();
    for shard in items(reply, "a CLUSTER SHARDS reply")? {
        let mut s = Shard::default();
        for (k, v) in fields(&shard, "a CLUSTER SHARDS shard")? {
            match k.as_str() {
                "slots" => {
                    let list = items(&v, "slots")?;
                    // [(s, e), ...] or flat [s, e, s, e, ...]
                    if list.iter().all(|x| x.is_instance_of::<PyInt>()) {
                        if list.len() % 2 != 0 {
                            return Err(bad_type("slots has an odd number of items".to_string()));
                        }
                        for se in list.chunks(2) {
                            s.slots.push(slot_pair(&se[0], &se[1])?);
                        }
                    } else {
                        for pair in list {
                            let p = items(&pair, "a slot range")?;
                            let [a, b] = <[_; 2]>::try_from(p).map_err(|_| {
                                bad_type("a slot range is (start, end)".to_string())
                            })?;
                            s.slots.push(slot_pair(&a, &b)?);
                        }
                    }
                }
                "nodes" => {
                    for n in items(&v, "nodes")? {
                        s.nodes.push(shard_node(&n)?);
                    }
                }
                _ => {}
            }
        }
        out.push(s);
    }
    Ok(out)
}

impl PySlotMap {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, core_slot::SlotMap> {
        self.map.read().unwrap_or_else(|e| e.into_inner())
    }
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, core_slot::SlotMap> {
        self.map.write().unwrap_or_else(|e| e.into_inner())
    }
    fn of(map: core_slot::SlotMap) -> PySlotMap {
        PySlotMap {
            map: RwLock::new(map),
        }
    }
}

/// A node as a dict: index, id, address, role, master, replicas, health.
fn node_dict<'py>(
    py: Python<'py>,
    m: &core_slot::SlotMap,
    ix: NodeIndex,
) -> PyResult<Bound<'py, PyDict>> {
    let n = &m[ix];
    let d = PyDict::new(py);
    d.set_item("index", ix.get())?;
    d.set_item("id", n.id())?;
    d.set_item("address", n.addr().to_string())?;
    d.set_item("role", n.role().as_str())?;
    d.set_item("master", n.master().map(NodeIndex::get))?;
    d.set_item(
        "replicas",
        n.replicas().iter().map(|r| r.get()).collect::<Vec<_>>(),
    )?;
    d.set_item("health", n.health().as_str())?;
    Ok(d)
}

/// Whether `e` is redis-py's ResponseError (the server refused the command).
fn is_response_error(py: Python<'_>, e: &PyErr) -> bool {
    py.import("redis.exceptions")
        .and_then(|m| m.getattr("ResponseError"))
        .is_ok_and(|t| e.matches(py, t).unwrap_or(false))
}

#[pymethods]
impl PySlotMap {
    #[new]
    fn new() -> PySlotMap {
        PySlotMap::of(core_slot::SlotMap::new())
    }

    /// A map from a CLUSTER SLOTS reply: as the server sends it (entries
    /// `[start, end, master, *replicas]`, each node `[host, port, id, ...]`, str or bytes),
    /// or as redis-py's `RedisCluster.cluster_slots()` returns it
    /// (`{(start, end): {"primary": (host, port), "replicas": [...]}}`, nodes known by
    /// address). Raises SlotMapError on overlapping ranges or conflicting listings.
    #[classmethod]
    fn from_slots(
        _cls: &Bound<'_, pyo3::types::PyType>,
        reply: &Bound<'_, PyAny>,
    ) -> PyResult<PySlotMap> {
        guard(|| {
            let entries = slots_entries(reply)?;
            core_slot::SlotMap::from_slots(&entries)
                .map(PySlotMap::of)
                .map_err(err)
        })
    }

    /// A map from a CLUSTER SHARDS reply (Redis 7+): as redis-py's `cluster_shards()`
    /// returns it (a list of {"slots": [(start, end), ...], "nodes": [{...}]}, str or
    /// bytes keys), or as the server sends it (flat RESP2 lists). Nodes keep their ids,
    /// roles and health; masters without slots are kept.
    #[classmethod]
    fn from_shards(
        _cls: &Bound<'_, pyo3::types::PyType>,
        reply: &Bound<'_, PyAny>,
    ) -> PyResult<PySlotMap> {
        guard(|| {
            let shards = shards(reply)?;
            core_slot::SlotMap::from_shards(&shards)
                .map(PySlotMap::of)
                .map_err(err)
        })
    }

    /// The map of the cluster a redis-py client talks to: `redis.RedisCluster` (or a
    /// `redis.Redis` connected to one cluster node). Asks CLUSTER SHARDS, and CLUSTER
    /// SLOTS when the server does not know it (before Redis 7). Errors of the client
    /// (connection, timeout) are redis-py's own.
    #[classmethod]
    fn from_redis_py(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
    ) -> PyResult<PySlotMap> {
        guard(|| {
            let cluster = client.hasattr("cluster_shards")?;
            let ask = |command: &str| -> PyResult<Bound<'_, PyAny>> {
                if cluster {
                    client.call_method0(if command == "SHARDS" {
                        "cluster_shards"
                    } else {
                        "cluster_slots"
                    })
                } else {
                    client.call_method1("execute_command", ("CLUSTER", command))
                }
            };
            if !cluster && !client.hasattr("execute_command")? {
                return Err(bad_type(format!(
                    "from_redis_py takes a redis-py client (redis.RedisCluster or redis.Redis), not {}",
                    type_name(client)
                )));
            }
            match ask("SHARDS") {
                Ok(reply) => {
                    let shards = shards(&reply)?;
                    core_slot::SlotMap::from_shards(&shards)
                        .map(PySlotMap::of)
                        .map_err(err)
                }
                Err(e) if is_response_error(py, &e) => {
                    let reply = ask("SLOTS")?;
                    let entries = slots_entries(&reply)?;
                    core_slot::SlotMap::from_slots(&entries)
                        .map(PySlotMap::of)
                        .map_err(err)
                }
                Err(e) => Err(e),
            }
        })
    }

    /// Adds a master ("host:port", "[v6]:port", or a (host, port) tuple) and returns its
    /// index. `id` is the cluster node id, or "" when unknown.
    fn add_master(&self, id: &Bound<'_, PyAny>, address: &Bound<'_, PyAny>) -> PyResult<usize> {
        guard(|| {
            let id = text(id, "the node id")?;
            let a = address_arg(address)?;
            Ok(self.write().add_master(id, a).map_err(err)?.get())
        })
    }

    /// Adds a replica of master `master` and returns its index.
    fn add_replica(
        &self,
        master: &Bound<'_, PyAny>,
        id: &Bound<'_, PyAny>,
        address: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        guard(|| {
            let id = text(id, "the node id")?;
            let a = address_arg(address)?;
            let mut m = self.write();
            let ix = index(&m, master)?;
            Ok(m.add_replica(ix, id, a).map_err(err)?.get())
        })
    }

    /// Gives slots start..=end to master `node`.
    fn assign(
        &self,
        start: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        node: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        guard(|| {
            let (s, e) = range_arg(start, end)?;
            let mut m = self.write();
            let ix = index(&m, node)?;
            m.assign(s..=e, ix).map_err(err)
        })
    }

    /// Leaves slots start..=end without an owner.
    fn unassign(&self, start: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let (s, e) = range_arg(start, end)?;
            self.write().unassign(s..=e).map_err(err)
        })
    }

    /// Sets a node's health: "online", "loading", "failed" (anything else: "unknown").
    fn set_health(&self, node: &Bound<'_, PyAny>, health: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let h = Health::from_redis(text(health, "the health")?);
            let mut m = self.write();
            let ix = index(&m, node)?;
            m.set_health(ix, h).map_err(err)
        })
    }

    /// The index of the master owning `slot`, or None.
    fn owner(&self, slot: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        guard(|| Ok(self.read().owner(slot_arg(slot)?).map(NodeIndex::get)))
    }

    /// The index of the master owning `key`'s slot, or None.
    fn owner_of_key(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        guard(|| {
            Ok(self
                .read()
                .owner_of_key(key_bytes(key)?)
                .map(NodeIndex::get))
        })
    }

    /// The address ("host:port") of the master owning `slot`, or None.
    fn address_for_slot(&self, slot: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        guard(|| {
            let s = slot_arg(slot)?;
            Ok(self.read().node_for_slot(s).map(|n| n.addr().to_string()))
        })
    }

    /// The address ("host:port") of the master owning `key`'s slot, or None.
    fn address_for_key(&self, key: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        guard(|| {
            let k = key_bytes(key)?;
            Ok(self.read().node_for_key(k).map(|n| n.addr().to_string()))
        })
    }

    /// A node as a dict: index, id, address, role, master, replicas, health.
    fn node<'py>(&self, py: Python<'py>, node: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let m = self.read();
            let ix = index(&m, node)?;
            node_dict(py, &m, ix)
        })
    }

    /// The index of the node with this cluster id, or None.
    fn find_id(&self, id: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        guard(|| {
            Ok(self
                .read()
                .find_id(text(id, "the node id")?)
                .map(NodeIndex::get))
        })
    }

    /// The index of the node at this address ("host:port" or (host, port)), or None.
    fn find_address(&self, address: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        guard(|| {
            let a = address_arg(address)?;
            Ok(self.read().find_addr(&a.host, a.port).map(NodeIndex::get))
        })
    }

    /// Slots owned by each node, indexed like the nodes.
    fn slot_counts(&self) -> PyResult<Vec<usize>> {
        guard(|| Ok(self.read().slot_counts()))
    }

    /// (start, end, owner index or None) runs covering all 16384 slots.
    fn ranges(&self) -> PyResult<Vec<(u16, u16, Option<usize>)>> {
        guard(|| {
            Ok(self
                .read()
                .ranges()
                .map(|r| (r.start, r.end, r.owner.map(NodeIndex::get)))
                .collect())
        })
    }

    /// Whether every slot has an owner.
    fn is_complete(&self) -> PyResult<bool> {
        guard(|| Ok(self.read().is_complete()))
    }

    /// Follows a MOVED/ASK error message (str or bytes). `current_host` replaces an
    /// empty host. Returns (kind, address, node): kind "moved" (the map now routes the
    /// slot to node; refresh the whole map soon) or "ask" (send ASKING then the command
    /// to address, once; the map is unchanged; node is None if the map does not know it).
    fn apply_redirect(
        &self,
        message: &Bound<'_, PyAny>,
        current_host: &Bound<'_, PyAny>,
    ) -> PyResult<(&'static str, String, Option<usize>)> {
        guard(|| {
            let msg = key_bytes(message)?;
            let host = text(current_host, "current_host")?;
            let r = Redirect::parse_bytes(msg).map_err(err)?;
            let mut m = self.write();
            match m.apply_redirect(&r, host).map_err(err)? {
                RedirectAction::Moved { node, .. } => {
                    Ok(("moved", m[node].addr().to_string(), Some(node.get())))
                }
                RedirectAction::Ask { addr, node } => {
                    Ok(("ask", addr.to_string(), node.map(NodeIndex::get)))
                }
                #[allow(unreachable_patterns)]
                _ => Err(raise(
                    Area::Redirect,
                    ErrorCode::BadRedirect,
                    "a redirect this version does not follow",
                )),
            }
        })
    }

    /// Groups keys by the master owning their slot: [(node or None, [key indexes])],
    /// ascending by node, unowned keys last. Use it to split a pipeline per connection.
    fn group_by_node<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let owned = collect(keys, "keys")?;
            let ks = slices(&owned)?;
            let g = self.read().group_by_node(&ks);
            let items = g
                .iter()
                .map(|(n, idx)| (n.map(NodeIndex::get), idx.to_vec()).into_pyobject(py))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        guard(|| Ok(self.read().nodes().len()))
    }

    /// `map[i]` is `map.node(i)`; a missing node raises NodeNotFoundError, which is also
    /// an IndexError (so iteration stops there).
    fn __getitem__<'py>(
        &self,
        py: Python<'py>,
        node: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.node(py, node)
    }

    fn __repr__(&self) -> PyResult<String> {
        guard(|| {
            let m = self.read();
            Ok(format!(
                "SlotMap(<{} nodes, {} masters, {} unassigned slots>)",
                m.nodes().len(),
                m.masters().count(),
                m.unassigned_count()
            ))
        })
    }
}

/// A node of `map` named by a weight's key: an int index, or a str that is a node's
/// address ("host:port") or cluster id.
fn plan_node(map: &core_slot::SlotMap, key: &Bound<'_, PyAny>) -> PyResult<NodeIndex> {
    if key.is_instance_of::<PyString>() {
        let name = text(key, "a node")?;
        let by_addr = Address::parse(name)
            .ok()
            .and_then(|a| map.find_addr(&a.host, a.port));
        return by_addr.or_else(|| map.find_id(name)).ok_or_else(|| {
            raise(
                Area::Plan,
                ErrorCode::UnknownNode,
                format!("node {name:?} is neither an address nor an id of the slot map"),
            )
        });
    }
    index(map, key)
}

/// A move as Python sees it: (start, end, from node or None, to node).
type MoveTuple = (u16, u16, Option<usize>, usize);

/// A resharding plan: the fewest slot moves that bring every weighted master of a slot
/// map to within one slot of its weighted share of the 16384 slots.
///
/// `weights` maps each master (an index, a "host:port" address or a node id) to a weight
/// (an int >= 0; 0 drains it). Every master that owns slots needs a weight.
#[pyclass(module = "keyroute", frozen, name = "Plan")]
pub(crate) struct PyPlan {
    plan: Plan,
}

#[pymethods]
impl PyPlan {
    #[new]
    fn new(slot_map: &Bound<'_, PyAny>, weights: &Bound<'_, PyAny>) -> PyResult<PyPlan> {
        guard(|| {
            let map = slot_map.cast::<PySlotMap>().map_err(|_| {
                bad_type(format!("Plan takes a SlotMap, not {}", type_name(slot_map)))
            })?;
            let map = map.get().read();
            let pairs: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)> =
                if let Ok(m) = weights.cast::<PyMapping>() {
                    m.items()?
                        .iter()
                        .map(|i| i.extract())
                        .collect::<PyResult<_>>()?
                } else {
                    if weights.is_instance_of::<PyString>() {
                        return Err(bad_type(
                            "weights must be a mapping or (node, weight) pairs, not a str; \
                             read a weight list with keyroute.parse_weights"
                                .to_string(),
                        ));
                    }
                    collect(weights, "weights")?
                        .iter()
                        .map(|p| {
                            let it = items(p, "a (node, weight) pair")?;
                            <[_; 2]>::try_from(it).map(|[a, b]| (a, b)).map_err(|_| {
                                bad_type("weights are (node, weight) pairs".to_string())
                            })
                        })
                        .collect::<PyResult<_>>()?
                };
            let mut ws = Vec::with_capacity(pairs.len().min(1 << 16));
            for (node, w) in &pairs {
                let ix = plan_node(&map, node)?;
                if w.is_instance_of::<pyo3::types::PyFloat>() {
                    return Err(raise(
                        Area::Plan,
                        ErrorCode::BadWeight,
                        format!(
                            "the weight of node #{} is {}, not an integer",
                            ix.get(),
                            w.repr()?
                        ),
                    ));
                }
                let v = int(w, "a weight")?;
                let v = u64::try_from(v).map_err(|_| {
                    raise(
                        Area::Plan,
                        if v < 0 {
                            ErrorCode::NegativeWeight
                        } else {
                            ErrorCode::WeightTooLarge
                        },
                        format!(
                            "the weight of node #{} must be 0..=2**64-1, got {v}",
                            ix.get()
                        ),
                    )
                })?;
                ws.push((ix, v));
            }
            Ok(PyPlan {
                plan: Plan::new(&map, &ws).map_err(err)?,
            })
        })
    }

    /// The moves, in slot order: (start, end, from node or None, to node).
    #[getter]
    fn moves(&self) -> PyResult<Vec<MoveTuple>> {
        guard(|| {
            Ok(self
                .plan
                .moves()
                .iter()
                .map(|m| (m.start, m.end, m.from.map(NodeIndex::get), m.to.get()))
                .collect())
        })
    }

    /// Each weighted master: {"node", "weight", "ideal", "before", "after"} (slot counts
    /// before and after the plan; ideal is its exact weighted share).
    #[getter]
    fn targets<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        guard(|| {
            let items = self
                .plan
                .targets()
                .iter()
                .map(|t| {
                    let d = PyDict::new(py);
                    d.set_item("node", t.node.get())?;
                    d.set_item("weight", t.weight)?;
                    d.set_item("ideal", t.ideal)?;
                    d.set_item("before", t.before)?;
                    d.set_item("after", t.after)?;
                    Ok(d)
                })
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)
        })
    }

    /// How many slots change owner (or get one).
    #[getter]
    fn slots_moved(&self) -> PyResult<usize> {
        guard(|| Ok(self.plan.slots_moved()))
    }

    /// Applies the plan to `slot_map` (all moves or none): PlanError STALE_PLAN when the
    /// map changed since planning.
    fn apply(&self, slot_map: &Bound<'_, PyAny>) -> PyResult<()> {
        guard(|| {
            let map = slot_map.cast::<PySlotMap>().map_err(|_| {
                bad_type(format!(
                    "apply takes a SlotMap, not {}",
                    type_name(slot_map)
                ))
            })?;
            let mut m = map.get().write();
            self.plan.apply(&mut m).map_err(|e: PlanError| err(e))
        })
    }

    fn __len__(&self) -> PyResult<usize> {
        guard(|| Ok(self.plan.moves().len()))
    }

    fn __repr__(&self) -> PyResult<String> {
        guard(|| {
            Ok(format!(
                "Plan(<{} moves, {} slots moved>)",
                self.plan.moves().len(),
                self.plan.slots_moved()
            ))
        })
    }
}

/// Parses a MOVED/ASK error message (str or bytes): (kind, slot, host, port), kind
/// "moved" or "ask"; host is "" when the server means "the host you asked".
#[pyfunction]
fn parse_redirect(message: &Bound<'_, PyAny>) -> PyResult<(&'static str, u16, String, u16)> {
    guard(|| {
        let r = Redirect::parse_bytes(key_bytes(message)?).map_err(err)?;
        let kind = match r.kind {
            RedirectKind::Moved => "moved",
            RedirectKind::Ask => "ask",
        };
        Ok((kind, r.slot, r.host.to_string(), r.port))
    })
}

/// Groups keys by slot: [(slot, [key indexes])], ascending by slot. A multi-key command
/// must be split along these groups. At most MAX_KEYS_PER_CALL keys.
#[pyfunction]
fn group_by_slot<'py>(py: Python<'py>, keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    guard(|| {
        let owned = collect(keys, "keys")?;
        let ks = slices(&owned)?;
        let g = core_slot::group_by_slot(&ks);
        let items = g
            .iter()
            .map(|(s, idx)| (s, idx.to_vec()).into_pyobject(py))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySlotMap>()?;
    m.add_class::<PyPlan>()?;
    m.add_function(wrap_pyfunction!(group_by_slot, m)?)?;
    m.add_function(wrap_pyfunction!(parse_redirect, m)?)?;
    Ok(())
}
