//! Fetching a Redis Cluster's topology into the core [`SlotMap`]: `CLUSTER SHARDS`
//! (Redis 7.0+), falling back to `CLUSTER SLOTS` on older servers.
//!
//! Only the wire parsing lives here; the model and its builders are
//! [`SlotMap::from_shards`] and [`SlotMap::from_slots`] in [`crate::slot`]. Replies are
//! accepted in RESP2 (flat key/value arrays) and RESP3 (maps) form.
use keyroute::slot::{Health, Role, Shard, ShardNode, SlotMap, SlotsEntry, SlotsNode};
use redis::{ConnectionLike, Value};

use crate::conn::{Endpoint, Timeouts};
use crate::error::Error;

/// Which command produced a [`SlotMap`] in [`fetch_topology`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopologySource {
    /// `CLUSTER SHARDS` (Redis 7.0+): includes masters without slots and node health.
    Shards,
    /// `CLUSTER SLOTS`: older servers; masters without slots are not listed.
    Slots,
}

/// Fetches the topology from one node: `CLUSTER SHARDS`, or `CLUSTER SLOTS` if the server
/// does not know `CLUSTER SHARDS` (before 7.0).
///
/// # Errors
/// A connection error, a server error other than "unknown subcommand" on
/// `CLUSTER SHARDS`, a malformed reply ([`Error::Protocol`]) or an inconsistent one
/// ([`Error::Map`]).
pub fn fetch_topology(con: &mut dyn ConnectionLike) -> Result<(SlotMap, TopologySource), Error> {
    fetch_topology_with(con, false)
}

/// [`fetch_topology`], with each node's TLS port where it reports one when `tls` (a
/// cluster with `tls-cluster yes` lists both; a TLS client must use the TLS port).
pub(crate) fn fetch_topology_with(
    con: &mut dyn ConnectionLike,
    tls: bool,
) -> Result<(SlotMap, TopologySource), Error> {
    match fetch_shards(con) {
        Ok(mut shards) => {
            if tls {
                for node in shards.iter_mut().flat_map(|s| s.nodes.iter_mut()) {
                    if node.tls_port.is_some() {
                        node.port = node.tls_port;
                    }
                }
            }
            Ok((SlotMap::from_shards(&shards)?, TopologySource::Shards))
        }
        Err(Error::Server { code, .. }) if code == "ERR" => {
            let entries = fetch_slots(con)?;
            Ok((SlotMap::from_slots(&entries)?, TopologySource::Slots))
        }
        Err(e) => Err(e),
    }
}

/// Connects to `seed` (`redis://[user:password@]host:port`, `rediss://...` or
/// `host:port`) with the given timeouts and runs [`fetch_topology`].
///
/// # Errors
/// A bad seed, a connection error, or as [`fetch_topology`].
pub fn fetch_topology_from(
    seed: &str,
    timeouts: Timeouts,
) -> Result<(SlotMap, TopologySource), Error> {
    let endpoint = Endpoint::parse(seed)?;
    let addr = endpoint.check_cluster_seed()?.clone();
    let mut con = endpoint.open_node_raw(&addr, timeouts)?;
    fetch_topology_with(&mut con, endpoint.is_tls())
}

/// Sends `CLUSTER SHARDS` and parses the reply.
///
/// # Errors
/// Connection or server error; [`Error::Protocol`] for a malformed reply.
pub fn fetch_shards(con: &mut dyn ConnectionLike) -> Result<Vec<Shard>, Error> {
    let v: Value = redis::cmd("CLUSTER")
        .arg("SHARDS")
        .query(con)
        .map_err(|e| Error::from_redis("CLUSTER SHARDS", &e, None))?;
    parse_shards(&v)
}

/// Sends `CLUSTER SLOTS` and parses the reply.
///
/// # Errors
/// Connection or server error; [`Error::Protocol`] for a malformed reply.
pub fn fetch_slots(con: &mut dyn ConnectionLike) -> Result<Vec<SlotsEntry>, Error> {
    let v: Value = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query(con)
        .map_err(|e| Error::from_redis("CLUSTER SLOTS", &e, None))?;
    parse_slots(&v)
}

fn bad(what: &str) -> Error {
    Error::protocol("cluster topology", what)
}

fn items(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Array(a) | Value::Set(a) => Some(a),
        _ => None,
    }
}

/// Key/value pairs of a RESP3 map or a RESP2 flat array.
fn pairs(v: &Value) -> Option<Vec<(&Value, &Value)>> {
    match v {
        Value::Map(m) => Some(m.iter().map(|(k, v)| (k, v)).collect()),
        Value::Array(a) if a.len().is_multiple_of(2) => {
            Some(a.chunks(2).map(|c| (&c[0], &c[1])).collect())
        }
        _ => None,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        Value::VerbatimString { text, .. } => Some(text.clone()),
        Value::Okay => Some("OK".to_string()),
        Value::Int(i) => Some(i.to_string()),
        _ => None,
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        Value::SimpleString(s) => s.parse().ok(),
        _ => None,
    }
}

fn slot(v: &Value) -> Result<u16, Error> {
    int(v)
        .and_then(|i| u16::try_from(i).ok())
        .ok_or_else(|| bad("slot is not an integer in 0..=65535"))
}

fn port(v: &Value) -> Result<u16, Error> {
    int(v)
        .and_then(|i| u16::try_from(i).ok())
        .ok_or_else(|| bad("port is not an integer in 0..=65535"))
}

/// Parses a `CLUSTER SHARDS` reply (RESP2 or RESP3).
///
/// # Errors
/// [`Error::Protocol`] if the shape is not that of `CLUSTER SHARDS`.
pub fn parse_shards(v: &Value) -> Result<Vec<Shard>, Error> {
    let shards = items(v).ok_or_else(|| bad("CLUSTER SHARDS: not an array"))?;
    let mut out = Vec::with_capacity(shards.len());
    for s in shards {
        let mut shard = Shard::default();
        for (k, val) in pairs(s).ok_or_else(|| bad("CLUSTER SHARDS: shard is not a map"))? {
            match text(k).as_deref() {
                Some("slots") => {
                    let bounds = items(val).ok_or_else(|| bad("shard slots: not an array"))?;
                    if !bounds.len().is_multiple_of(2) {
                        return Err(bad("shard slots: odd number of bounds"));
                    }
                    for b in bounds.chunks(2) {
                        shard.slots.push((slot(&b[0])?, slot(&b[1])?));
                    }
                }
                Some("nodes") => {
                    for n in items(val).ok_or_else(|| bad("shard nodes: not an array"))? {
                        shard.nodes.push(parse_shard_node(n)?);
                    }
                }
                _ => {}
            }
        }
        out.push(shard);
    }
    Ok(out)
}

fn parse_shard_node(v: &Value) -> Result<ShardNode, Error> {
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
    let mut role_seen = false;
    for (k, val) in pairs(v).ok_or_else(|| bad("shard node: not a map"))? {
        let Some(key) = text(k) else { continue };
        match key.as_str() {
            "id" => node.id = text(val).ok_or_else(|| bad("node id"))?,
            "port" => node.port = Some(port(val)?),
            "tls-port" => node.tls_port = Some(port(val)?),
            "ip" => node.ip = text(val).ok_or_else(|| bad("node ip"))?,
            "endpoint" => node.endpoint = text(val).ok_or_else(|| bad("node endpoint"))?,
            "hostname" => node.hostname = text(val).filter(|h| !h.is_empty()),
            "role" => {
                let r = text(val).ok_or_else(|| bad("node role"))?;
                node.role = Role::from_redis(&r).ok_or_else(|| bad("unknown node role"))?;
                role_seen = true;
            }
            "replication-offset" => {
                node.replication_offset = int(val)
                    .and_then(|i| u64::try_from(i).ok())
                    .ok_or_else(|| bad("replication-offset"))?;
            }
            "health" => {
                node.health = Health::from_redis(&text(val).ok_or_else(|| bad("health"))?);
            }
            _ => {}
        }
    }
    if node.id.is_empty() || !role_seen {
        return Err(bad("shard node without id or role"));
    }
    Ok(node)
}

/// Parses a `CLUSTER SLOTS` reply (RESP2 or RESP3).
///
/// # Errors
/// [`Error::Protocol`] if the shape is not that of `CLUSTER SLOTS`.
pub fn parse_slots(v: &Value) -> Result<Vec<SlotsEntry>, Error> {
    let entries = items(v).ok_or_else(|| bad("CLUSTER SLOTS: not an array"))?;
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        let e = items(e).ok_or_else(|| bad("CLUSTER SLOTS: entry is not an array"))?;
        if e.len() < 3 {
            return Err(bad("CLUSTER SLOTS: entry without a master"));
        }
        out.push(SlotsEntry {
            start: slot(&e[0])?,
            end: slot(&e[1])?,
            master: parse_slots_node(&e[2])?,
            replicas: e[3..]
                .iter()
                .map(parse_slots_node)
                .collect::<Result<_, _>>()?,
        });
    }
    Ok(out)
}

fn parse_slots_node(v: &Value) -> Result<SlotsNode, Error> {
    let n = items(v).ok_or_else(|| bad("CLUSTER SLOTS: node is not an array"))?;
    if n.len() < 2 {
        return Err(bad("CLUSTER SLOTS: node without endpoint and port"));
    }
    let mut node = SlotsNode {
        endpoint: text(&n[0]).unwrap_or_default(),
        port: port(&n[1])?,
        id: n.get(2).and_then(text).unwrap_or_default(),
        ip: None,
        hostname: None,
    };
    if let Some(meta) = n.get(3).and_then(pairs) {
        for (k, val) in meta {
            match text(k).as_deref() {
                Some("ip") => node.ip = text(val),
                Some("hostname") => node.hostname = text(val),
                _ => {}
            }
        }
    }
    Ok(node)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn shards_resp2_and_resp3_agree() {
        let node2 = Value::Array(vec![
            bulk("id"),
            bulk("abc"),
            bulk("port"),
            Value::Int(7000),
            bulk("ip"),
            bulk("127.0.0.1"),
            bulk("endpoint"),
            bulk("127.0.0.1"),
            bulk("role"),
            bulk("master"),
            bulk("replication-offset"),
            Value::Int(5),
            bulk("health"),
            bulk("online"),
        ]);
        let resp2 = Value::Array(vec![Value::Array(vec![
            bulk("slots"),
            Value::Array(vec![Value::Int(0), Value::Int(16383)]),
            bulk("nodes"),
            Value::Array(vec![node2.clone()]),
        ])]);
        let Value::Array(flat) = node2 else {
            unreachable!()
        };
        let node3 = Value::Map(
            flat.chunks(2)
                .map(|c| (c[0].clone(), c[1].clone()))
                .collect(),
        );
        let resp3 = Value::Array(vec![Value::Map(vec![
            (
                bulk("slots"),
                Value::Array(vec![Value::Int(0), Value::Int(16383)]),
            ),
            (bulk("nodes"), Value::Array(vec![node3])),
        ])]);
        let a = parse_shards(&resp2).expect("resp2");
        assert_eq!(a, parse_shards(&resp3).expect("resp3"));
        assert_eq!(a[0].slots, [(0, 16383)]);
        assert_eq!(a[0].nodes[0].health, Health::Online);
        let map = SlotMap::from_shards(&a).expect("map");
        assert!(map.is_complete());
    }

    #[test]
    fn slots_with_metadata() {
        let v = Value::Array(vec![Value::Array(vec![
            Value::Int(0),
            Value::Int(16383),
            Value::Array(vec![
                bulk("?"),
                Value::Int(7000),
                bulk("id1"),
                Value::Array(vec![bulk("ip"), bulk("10.0.0.1")]),
            ]),
            Value::Array(vec![bulk("10.0.0.2"), Value::Int(7001), bulk("id2")]),
        ])]);
        let e = parse_slots(&v).expect("parse");
        assert_eq!(e[0].master.address().to_string(), "10.0.0.1:7000");
        assert_eq!(e[0].replicas[0].id, "id2");
        assert!(parse_slots(&Value::Int(1)).is_err());
        assert!(parse_slots(&Value::Array(vec![Value::Array(vec![Value::Int(0)])])).is_err());
    }
}
