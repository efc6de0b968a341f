//! Raw exports of the cluster module (`--no-default-features --features cluster`): slot
//! maps and resharding plans, which `SlotMap` and `ReshardPlan` in `js/cluster.mjs` wrap,
//! and the node-list grammar (`parseNodes`, `parseWeights`, `Ring.fromSpec` in
//! `js/ring.mjs`; the plans read target weights with it). A module of its own so that the
//! main one (rings, slots, least-used; what a browser downloads first) stays small: these
//! exports are a quarter of the main module's size, and the grammar alone 3.7 KB gzipped,
//! which the main module spends on changing rings in place instead.
use alloc::string::String;
use alloc::vec::Vec;

use keyroute::error::{ErrorCode, Int, Quoted};
use keyroute::ring::{checked_weight, parse_nodes, parse_weights};
use keyroute::slot::{
    Address, Health, NodeIndex, Plan, Redirect, RedirectAction, Role, Shard, ShardNode, SlotMap,
    SlotsEntry, SlotsNode, SLOT_COUNT,
};
use wasm_bindgen::prelude::*;

use crate::error::{decimal, given, int, saturate, text, unpack_str, JsError, Live};

/// `u32::MAX` marks "no node" in packed index arrays.
const NONE: u32 = u32::MAX;

fn slot(s: i128) -> Result<u16, JsError> {
    u16::try_from(s)
        .ok()
        .filter(|&s| s < SLOT_COUNT)
        .ok_or_else(|| {
            JsError::new(
                ErrorCode::BadSlot,
                text(format_args!("slot {} is outside 0..=16383", Int(s))),
            )
        })
}

/// A slot range bound: anything outside 0..=65535 is a bad range (core checks the rest).
fn bound(s: i128, a: i128, b: i128) -> Result<u16, JsError> {
    u16::try_from(s).map_err(|_| {
        JsError::new(
            ErrorCode::BadRange,
            text(format_args!(
                "slot range {}-{} is invalid; ranges are START-END with START <= END <= 16383",
                Int(a),
                Int(b)
            )),
        )
    })
}

fn port(p: i128) -> Result<u16, JsError> {
    u16::try_from(p).map_err(|_| {
        JsError::new(
            ErrorCode::BadPort,
            text(format_args!("port {} is outside 1..=65535", Int(p))),
        )
    })
}

/// The next `[start, end]` slot range of a reply (past the end: NaN, refused by [`int`];
/// a batch the glue built wrong is an error, not a trap).
fn range<'a>(r: &mut impl Iterator<Item = &'a f64>) -> Result<(u16, u16), JsError> {
    let mut next = || int(r.next().copied().unwrap_or(f64::NAN));
    let (a, b) = (next()?, next()?);
    Ok((bound(a, a, b)?, bound(b, a, b)?))
}

/// The next text field of a reply (`""` past the end).
fn next<'a>(t: &mut impl Iterator<Item = &'a &'a str>) -> &'a str {
    t.next().copied().unwrap_or_default()
}

/// An optional port of a reply (NaN: absent).
fn optional_port<'a>(n: &mut impl Iterator<Item = &'a f64>) -> Result<Option<u16>, JsError> {
    match n.next().copied().unwrap_or(f64::NAN) {
        p if p.is_nan() => Ok(None),
        p => port(int(p)?).map(Some),
    }
}

fn role_of(id: &str, role: &str) -> Result<Role, JsError> {
    Role::from_redis(role).ok_or_else(|| {
        JsError::new(
            ErrorCode::InconsistentTopology,
            text(format_args!(
                "node {} has role {}; expected master or replica",
                Quoted(id),
                Quoted(role)
            )),
        )
    })
}

fn opt(n: Option<NodeIndex>) -> u32 {
    n.map_or(NONE, |n| n.get() as u32)
}

/// A slot map owned by Rust; node indexes are positions in its node list.
#[wasm_bindgen]
#[derive(Debug, Clone, Default)]
pub struct RawSlotMap {
    map: SlotMap,
    _live: Live,
}

impl RawSlotMap {
    fn wrap(map: SlotMap) -> RawSlotMap {
        RawSlotMap {
            map,
            _live: Live::default(),
        }
    }

    fn index(&self, i: i128) -> Result<NodeIndex, JsError> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.map.node_index(i))
            .ok_or_else(|| {
                JsError::new(
                    ErrorCode::UnknownNode,
                    text(format_args!(
                        "node {} is not in this slot map; use an index returned by this map",
                        Int(i)
                    )),
                )
            })
    }
}

#[wasm_bindgen]
impl RawSlotMap {
    /// An empty map.
    #[wasm_bindgen(constructor)]
    pub fn new() -> RawSlotMap {
        RawSlotMap::default()
    }

    /// A copy of this map.
    #[wasm_bindgen(js_name = clone)]
    pub fn duplicate(&self) -> RawSlotMap {
        self.clone()
    }

    /// A map from a `CLUSTER SHARDS` reply, flattened by the JS glue: per shard `shape`
    /// holds `[ranges, nodes]` and `slots` its ranges as `[start, end]` pairs; per node
    /// the packed `text` holds `id, ip, endpoint, hostname, role, health` and `nums`
    /// `port, tls-port, replication-offset` (NaN: absent).
    #[wasm_bindgen(js_name = fromShards)]
    pub fn from_shards(
        shape: &[u32],
        slots: &[f64],
        text: &[u8],
        ends: &[u32],
        nums: &[f64],
    ) -> Result<RawSlotMap, JsError> {
        let text = unpack_str(text, ends)?;
        let (mut t, mut n, mut r) = (text.iter(), nums.iter(), slots.iter());
        let mut shards = Vec::new();
        for pair in shape.chunks_exact(2) {
            let mut shard = Shard::default();
            for _ in 0..pair[0] {
                shard.slots.push(range(&mut r)?);
            }
            for _ in 0..pair[1] {
                let [id, ip, endpoint, hostname, role, health] = [(); 6].map(|_| next(&mut t));
                let port = optional_port(&mut n)?;
                let tls_port = optional_port(&mut n)?;
                let offset = int(n.next().copied().unwrap_or(0.0))?;
                shard.nodes.push(ShardNode {
                    id: id.into(),
                    port,
                    tls_port,
                    ip: ip.into(),
                    endpoint: endpoint.into(),
                    hostname: (!hostname.is_empty()).then(|| hostname.into()),
                    role: role_of(id, role)?,
                    replication_offset: saturate(offset),
                    health: Health::from_redis(health),
                });
            }
            shards.push(shard);
        }
        Ok(Self::wrap(SlotMap::from_shards(&shards)?))
    }

    /// A map from a `CLUSTER SLOTS` reply, flattened by the JS glue: per entry `shape`
    /// holds its replica count and `slots` `[start, end]`; per node (master, then
    /// replicas) the packed `text` holds `endpoint, id, ip, hostname` (`""`: absent) and
    /// `ports` its port.
    #[wasm_bindgen(js_name = fromSlots)]
    pub fn from_slots(
        shape: &[u32],
        slots: &[f64],
        text: &[u8],
        ends: &[u32],
        ports: &[f64],
    ) -> Result<RawSlotMap, JsError> {
        let text = unpack_str(text, ends)?;
        let (mut t, mut p, mut r) = (text.iter(), ports.iter(), slots.iter());
        let mut node = || -> Result<SlotsNode, JsError> {
            let [endpoint, id, ip, hostname] = [(); 4].map(|_| next(&mut t));
            let some = |s: &str| (!s.is_empty()).then(|| s.into());
            Ok(SlotsNode {
                endpoint: endpoint.into(),
                port: port(int(p.next().copied().unwrap_or(f64::NAN))?)?,
                id: id.into(),
                ip: some(ip),
                hostname: some(hostname),
            })
        };
        let mut entries = Vec::new();
        for &replicas in shape {
            let (start, end) = range(&mut r)?;
            let mut entry = SlotsEntry {
                start,
                end,
                master: node()?,
                replicas: Vec::new(),
            };
            for _ in 0..replicas {
                entry.replicas.push(node()?);
            }
            entries.push(entry);
        }
        Ok(Self::wrap(SlotMap::from_slots(&entries)?))
    }

    /// Adds a node and returns its index: a master when `master` is not given, else a
    /// replica of node `master`; at `host:port` (`host` parsed as an address) when `port`
    /// is not given, else at `host` and `port` (`Address::checked`).
    #[wasm_bindgen(js_name = addNode)]
    pub fn add_node(
        &mut self,
        master: i128,
        id: &str,
        host: &str,
        port: i128,
    ) -> Result<u32, JsError> {
        let addr = match given(port) {
            None => Address::parse(host)?,
            Some(port) => Address::checked(host, port)?,
        };
        let n = match given(master) {
            None => self.map.add_master(id, addr)?,
            Some(m) => {
                let m = self.index(m)?;
                self.map.add_replica(m, id, addr)?
            }
        };
        Ok(n.get() as u32)
    }

    /// Sets a node's health (`online`, `loading`, `failed`, anything else: `unknown`).
    #[wasm_bindgen(js_name = setHealth)]
    pub fn set_health(&mut self, node: i128, health: &str) -> Result<(), JsError> {
        let n = self.index(node)?;
        Ok(self.map.set_health(n, Health::from_redis(health))?)
    }

    /// Gives slots `start..=end` to master `node`, or makes them unowned when `node` is
    /// not given.
    pub fn assign(&mut self, start: i128, end: i128, node: i128) -> Result<(), JsError> {
        let (a, b) = (bound(start, start, end)?, bound(end, start, end)?);
        let Some(node) = given(node) else {
            return Ok(self.map.unassign(a..=b)?);
        };
        let n = self.index(node)?;
        Ok(self.map.assign(a..=b, n)?)
    }

    /// Owner index of a slot, `-1` if unassigned.
    pub fn owner(&self, s: i128) -> Result<i32, JsError> {
        Ok(self.map.owner(slot(s)?).map_or(-1, |n| n.get() as i32))
    }

    /// Owner index of a key's slot, `-1` if unassigned.
    #[wasm_bindgen(js_name = ownerOfKey)]
    pub fn owner_of_key(&self, key: &[u8]) -> i32 {
        self.map.owner_of_key(key).map_or(-1, |n| n.get() as i32)
    }

    /// The owner of all 16384 slots (`0xFFFF`: unassigned).
    pub fn owners(&self) -> Vec<u16> {
        (0..SLOT_COUNT)
            .map(|s| self.map.owner(s).map_or(u16::MAX, |n| n.get() as u16))
            .collect()
    }

    /// Slots owned per node, in index order.
    #[wasm_bindgen(js_name = slotCounts)]
    pub fn slot_counts(&self) -> Vec<u32> {
        self.map
            .slot_counts()
            .into_iter()
            .map(|c| c as u32)
            .collect()
    }

    /// Runs of equal owner as `[start, end, owner]` triples (`owner` `u32::MAX`: none).
    pub fn ranges(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for r in self.map.ranges() {
            out.extend_from_slice(&[u32::from(r.start), u32::from(r.end), opt(r.owner)]);
        }
        out
    }

    /// `[slots without owner, 1 if every slot has an owner, number of nodes]`.
    pub fn summary(&self) -> Vec<u32> {
        alloc::vec![
            self.map.unassigned_count() as u32,
            u32::from(self.map.is_complete()),
            self.map.nodes().len() as u32,
        ]
    }

    /// `[id, host, port, role, health, name, address, master, replicas…]` of node `i` as
    /// strings (`master` empty for a master).
    #[wasm_bindgen(js_name = nodeInfo)]
    pub fn node_info(&self, i: i128) -> Result<Vec<String>, JsError> {
        let n = &self.map.nodes()[self.index(i)?.get()];
        let mut out = alloc::vec![
            String::from(n.id()),
            n.addr().host.clone(),
            decimal(n.addr().port.into()),
            String::from(n.role().as_str()),
            String::from(n.health().as_str()),
            n.name().into_owned(),
            text(format_args!("{}", n.addr())),
            n.master()
                .map(|m| decimal(m.get() as i128))
                .unwrap_or_default(),
        ];
        out.extend(n.replicas().iter().map(|r| decimal(r.get() as i128)));
        Ok(out)
    }

    /// Index of the node with this id, `-1` if none.
    #[wasm_bindgen(js_name = findId)]
    pub fn find_id(&self, id: &str) -> i32 {
        self.map.find_id(id).map_or(-1, |n| n.get() as i32)
    }

    /// Follows a `MOVED`/`ASK` error: `[kind, slot, node, added, host, port]` where kind
    /// is `moved` or `ask`, node `-1` if unknown, added `1` if a master was added.
    #[wasm_bindgen(js_name = applyRedirect)]
    pub fn apply_redirect(
        &mut self,
        message: &str,
        current_host: &str,
    ) -> Result<Vec<String>, JsError> {
        let r = Redirect::parse(message)?;
        let action = self.map.apply_redirect(&r, current_host)?;
        let host = String::from(r.host_or(current_host));
        Ok(match action {
            RedirectAction::Moved { node, added } => alloc::vec![
                String::from("moved"),
                decimal(r.slot.into()),
                decimal(node.get() as i128),
                String::from(if added { "1" } else { "0" }),
                host,
                decimal(r.port.into()),
            ],
            RedirectAction::Ask { addr, node } => alloc::vec![
                String::from("ask"),
                decimal(r.slot.into()),
                decimal(node.map_or(-1, |n| n.get() as i128)),
                String::from("0"),
                addr.host,
                decimal(addr.port.into()),
            ],
            _ => alloc::vec![String::from("unknown")],
        })
    }

    /// Plans the fewest slot moves to the weights (`nodes[i]` gets `weights[i]`; 0
    /// drains a master, other weights as a ring's).
    pub fn plan(&self, nodes: &[f64], weights: &[f64]) -> Result<RawPlan, JsError> {
        let mut w = Vec::with_capacity(nodes.len());
        for (&n, &wt) in nodes.iter().zip(weights) {
            let node = self.index(int(n)?)?;
            let wt = match int(wt)? {
                0 => 0,
                x => checked_weight(&self.map.nodes()[node.get()].name(), x)?,
            };
            w.push((node, u64::from(wt)));
        }
        Ok(RawPlan {
            plan: Plan::new(&self.map, &w)?,
            _live: Live::default(),
        })
    }

    /// Applies a plan.
    #[wasm_bindgen(js_name = applyPlan)]
    pub fn apply_plan(&mut self, plan: &RawPlan) -> Result<(), JsError> {
        Ok(plan.plan.apply(&mut self.map)?)
    }
}

/// A resharding plan owned by Rust.
#[wasm_bindgen]
#[derive(Debug, Clone)]
pub struct RawPlan {
    plan: Plan,
    _live: Live,
}

#[wasm_bindgen]
impl RawPlan {
    /// Moves as `[start, end, from, to]` quadruples (`from` `u32::MAX`: unassigned).
    pub fn moves(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(4 * self.plan.moves().len());
        for m in self.plan.moves() {
            out.extend_from_slice(&[
                u32::from(m.start),
                u32::from(m.end),
                opt(m.from),
                m.to.get() as u32,
            ]);
        }
        out
    }

    /// The total of slots that change owner, then the targets as `[node, weight, ideal,
    /// before, after]` quintuples.
    pub fn targets(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(1 + 5 * self.plan.targets().len());
        out.push(self.plan.slots_moved() as f64);
        for t in self.plan.targets() {
            out.extend_from_slice(&[
                t.node.get() as f64,
                t.weight as f64,
                t.ideal,
                t.before as f64,
                t.after as f64,
            ]);
        }
        out
    }
}

/// Parses a node list (`keyroute::ring::parse_nodes`): `[name, weight, address, …]` with
/// `address` empty unless the entry named the node by an alias.
#[wasm_bindgen(js_name = rawParseNodes)]
pub fn raw_parse_nodes(text: &str) -> Result<Vec<String>, JsError> {
    let mut out = Vec::new();
    for n in parse_nodes(text)? {
        out.push(n.name);
        out.push(decimal(n.weight.into()));
        out.push(n.address.unwrap_or_default());
    }
    Ok(out)
}

/// Parses a list of target weights (`keyroute::ring::parse_weights`, 0 allowed):
/// `[name, weight, …]`.
#[wasm_bindgen(js_name = rawParseWeights)]
pub fn raw_parse_weights(text: &str) -> Result<Vec<String>, JsError> {
    let mut out = Vec::new();
    for (name, w) in parse_weights(text)? {
        out.push(name);
        out.push(decimal(w.into()));
    }
    Ok(out)
}
