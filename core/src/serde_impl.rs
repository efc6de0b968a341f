//! `Serialize` / `Deserialize` for the data types (feature `serde`; no_std + alloc).
//!
//! The shapes (JSON shown; TOML is the same data):
//!
//! * [`Ring`] and [`RingSpec`]: `{"profile": "libmemcached", "vnodes": 40,
//!   "points_per_digest": 4, "default_port": 11211, "nodes": [{"name": "a", "weight": 1}]}`.
//!   An option left out takes the profile's default; `default_port: 0` means "none";
//!   a node's `weight` defaults to 1; `address` (twemproxy's server behind an alias) is
//!   optional. A ring deserializes through [`Profile::from_options`] and
//!   [`Ring::with_nodes`], so it is checked exactly like any other entrance, and it
//!   answers every key as the ring that was serialized.
//! * [`SlotMap`]: `{"nodes": [{"id": "…", "addr": "10.0.0.1:7000", "role": "master",
//!   "health": "online", "slots": [[0, 5460]]}, {"id": "…", "addr": "10.0.0.2:7000",
//!   "role": "replica", "master": 0, "health": "online"}]}`. Nodes are in index order
//!   ([`NodeIndex`] is the position in `nodes`); a replica's `master` is the index of an
//!   earlier master; `slots` are inclusive `[start, end]` ranges.
//! * [`Plan`]: `{"moves": [{"start": 0, "end": 10, "from": 0, "to": 2}], "targets":
//!   [{"node": 0, "weight": 1, "ideal": 5461.33, "before": 8192, "after": 5461}]}`, node
//!   indexes of the map it was planned on; `from` is left out for unassigned slots.
//!   `ideal` is recomputed from the weights when a plan is read.
//! * [`ProfileName`] is its name (`"node-hashring"`), [`Role`] and [`Health`] their
//!   lowercase names, [`NodeIndex`] a number.
//!
//! Unknown fields are refused. A value that the library would refuse is refused with the
//! library's message followed by its code in brackets, e.g.
//! `node "a" has weight 0; ... [ZERO_WEIGHT]`.

use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt::Display;

use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ErrorCode;
use crate::ring::{checked_weight, NodeSpec, ProfileName, ProfileOptions, Ring, RingSpec};
use crate::slot::{
    Address, Health, MapError, Move, NodeIndex, Plan, Role, SlotMap, Target, SLOT_COUNT,
};

/// A deserialization error carrying the library's message and code.
fn refused<E: serde::de::Error>(message: impl Display, code: ErrorCode) -> E {
    E::custom(format_args!("{message} [{code}]"))
}

// --- Rings -------------------------------------------------------------------------------

impl Serialize for ProfileName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProfileName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <alloc::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse::<ProfileName>()
            .map_err(|e| refused(&e, e.code()))
    }
}

fn one() -> i64 {
    1
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeWire {
    name: String,
    #[serde(default = "one")]
    weight: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    address: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RingWire {
    profile: ProfileName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    vnodes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    points_per_digest: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    default_port: Option<i64>,
    nodes: Vec<NodeWire>,
}

fn narrow<E: serde::ser::Error>(option: &str, value: Option<i128>) -> Result<Option<i64>, E> {
    value
        .map(|v| {
            i64::try_from(v).map_err(|_| E::custom(format_args!("{option} {v} is out of range")))
        })
        .transpose()
}

impl Serialize for RingSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RingWire {
            profile: self.profile,
            vnodes: narrow("vnodes", self.options.vnodes)?,
            points_per_digest: narrow("points_per_digest", self.options.points_per_digest)?,
            default_port: narrow("default_port", self.options.default_port)?,
            nodes: self
                .nodes
                .iter()
                .map(|n| NodeWire {
                    name: n.name.clone(),
                    weight: n.weight.into(),
                    address: n.address.clone(),
                })
                .collect(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for RingSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = RingWire::deserialize(d)?;
        let mut nodes = Vec::new();
        for n in wire.nodes {
            let weight =
                checked_weight(&n.name, n.weight.into()).map_err(|e| refused(&e, e.code()))?;
            nodes.push(NodeSpec {
                name: n.name,
                weight,
                address: n.address,
            });
        }
        Ok(RingSpec {
            profile: wire.profile,
            options: ProfileOptions {
                vnodes: wire.vnodes.map(i128::from),
                points_per_digest: wire.points_per_digest.map(i128::from),
                default_port: wire.default_port.map(i128::from),
            },
            nodes,
        })
    }
}

/// A ring serializes as its [`RingSpec`].
impl Serialize for Ring {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.spec().serialize(s)
    }
}

/// A ring deserializes from a [`RingSpec`], checked and built by [`RingSpec::build`].
impl<'de> Deserialize<'de> for Ring {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        RingSpec::deserialize(d)?
            .build()
            .map_err(|e| refused(&e, e.code()))
    }
}

// --- Slot maps ---------------------------------------------------------------------------

fn unknown_health() -> Health {
    Health::Unknown
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MapNodeWire {
    #[serde(default)]
    id: String,
    addr: String,
    role: Role,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    master: Option<NodeIndex>,
    #[serde(default = "unknown_health")]
    health: Health,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    slots: Vec<(u16, u16)>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MapWire {
    nodes: Vec<MapNodeWire>,
}

impl Serialize for SlotMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let nodes = self
            .iter()
            .map(|(i, n)| MapNodeWire {
                id: n.id().into(),
                addr: n.addr().to_string(),
                role: n.role(),
                master: n.master(),
                health: n.health(),
                slots: self
                    .node_ranges(i)
                    .map(|r| (*r.start(), *r.end()))
                    .collect(),
            })
            .collect();
        MapWire { nodes }.serialize(s)
    }
}

fn map_refused<E: serde::de::Error>(err: MapError) -> E {
    refused(&err, err.code())
}

impl<'de> Deserialize<'de> for SlotMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = MapWire::deserialize(d)?;
        let mut map = SlotMap::new();
        for (position, n) in wire.nodes.into_iter().enumerate() {
            let addr = Address::parse(&n.addr).map_err(|e| {
                refused(
                    format_args!("node {position} (\"{}\"): address {:?}: {e}", n.id, n.addr),
                    e.code(),
                )
            })?;
            let master = match (n.role, n.master) {
                (Role::Master, Some(_)) => {
                    return Err(refused(
                        format_args!("node {position} is a master and names a master"),
                        ErrorCode::InconsistentTopology,
                    ))
                }
                (Role::Replica, Some(m)) => {
                    // Only earlier nodes exist yet: a replica follows its master.
                    map.check_master(m).map_err(map_refused)?;
                    Some(m)
                }
                (Role::Replica, None) => {
                    return Err(refused(
                        format_args!(
                            "node {position} is a replica and names no master; give the index of its master (an earlier node) as \"master\""
                        ),
                        ErrorCode::InconsistentTopology,
                    ))
                }
                (Role::Master, None) => None,
            };
            if n.role == Role::Replica && !n.slots.is_empty() {
                return Err(refused(
                    format_args!(
                        "node {position} is a replica and lists slots; only masters own slots"
                    ),
                    ErrorCode::NotAMaster,
                ));
            }
            let index = map.push(&n.id, addr, n.role, master).map_err(map_refused)?;
            map.set_health(index, n.health).map_err(map_refused)?;
            for (start, end) in n.slots {
                map.claim(start, end, index).map_err(map_refused)?;
            }
        }
        Ok(map)
    }
}

// --- Plans -------------------------------------------------------------------------------

#[derive(Serialize)]
struct PlanRef<'a> {
    moves: &'a [Move],
    targets: &'a [Target],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanWire {
    moves: Vec<Move>,
    targets: Vec<Target>,
}

impl Serialize for Plan {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.targets().iter().any(|t| t.ideal.is_nan()) {
            return Err(S::Error::custom("a target's ideal share is not a number"));
        }
        PlanRef {
            moves: self.moves(),
            targets: self.targets(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Plan {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let PlanWire { moves, mut targets } = PlanWire::deserialize(d)?;
        for m in &moves {
            if m.start > m.end || m.end >= SLOT_COUNT {
                return Err(map_refused(MapError::BadRange {
                    start: m.start,
                    end: m.end,
                }));
            }
        }
        // `ideal` is derived: recompute it as `Plan::new` does.
        let total: u128 = targets.iter().map(|t| u128::from(t.weight)).sum();
        if total == 0 && !targets.is_empty() {
            let err = crate::slot::PlanError::NoWeight;
            return Err(refused(&err, err.code()));
        }
        for t in &mut targets {
            t.ideal = (u128::from(SLOT_COUNT) * u128::from(t.weight)) as f64 / total as f64;
        }
        Ok(Plan::from_parts(moves, targets))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::Profile;

    #[test]
    fn ring_spec_shape() {
        let ring = Ring::with_nodes(Profile::libmemcached(), [("a", 1), ("b", 2)]).expect("ring");
        let json = serde_json::to_string(&ring).expect("json");
        assert_eq!(
            json,
            r#"{"profile":"libmemcached","vnodes":40,"points_per_digest":4,"default_port":11211,"nodes":[{"name":"a","weight":1},{"name":"b","weight":2}]}"#
        );
        let err = serde_json::from_str::<Ring>(
            r#"{"profile":"native","nodes":[{"name":"a","weight":0}]}"#,
        )
        .expect_err("weight 0");
        assert!(err.to_string().contains("[ZERO_WEIGHT]"), "{err}");
    }
}
