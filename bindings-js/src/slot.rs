//! Raw Redis Cluster slot exports; `keySlot`, `keySlots`, `hashTag`, `SlotMap` and
//! `ReshardPlan` in `js/api.mjs` wrap them.
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use keyroute::slot::{
    hash_tag, key_slot, Address, Health, MapError, NodeIndex, Plan, PlanError, Redirect,
    RedirectAction, SlotMap, SLOT_COUNT,
};
use wasm_bindgen::prelude::*;

use crate::error::{for_each_packed, JsError};

/// `u32::MAX` marks "no node" in packed index arrays.
const NONE: u32 = u32::MAX;

impl From<MapError> for JsError {
    fn from(e: MapError) -> Self {
        JsError::new("SLOT_MAP", &e)
    }
}

impl From<PlanError> for JsError {
    fn from(e: PlanError) -> Self {
        JsError::new("PLAN", &e)
    }
}

/// [`key_slot`] in one place: inlined into every caller, its unrolled CRC would take
/// several KB of the .wasm.
#[inline(never)]
fn slot_of(key: &[u8]) -> u16 {
    key_slot(key)
}

/// The slot of a string key (UTF-8).
#[wasm_bindgen(js_name = rawKeySlotStr)]
pub fn raw_key_slot_str(key: &str) -> u16 {
    slot_of(key.as_bytes())
}

/// The slot of a byte key.
#[wasm_bindgen(js_name = rawKeySlotBytes)]
pub fn raw_key_slot_bytes(key: &[u8]) -> u16 {
    slot_of(key)
}

/// The slot of every key of a packed batch.
#[wasm_bindgen(js_name = rawKeySlotsPacked)]
pub fn raw_key_slots_packed(data: &[u8], ends: &[u32]) -> Result<Vec<u16>, JsError> {
    let mut out = alloc::vec![0u16; ends.len()];
    for_each_packed(data, ends, |i, k| out[i] = slot_of(k))?;
    Ok(out)
}

/// The hashed part of a key.
#[wasm_bindgen(js_name = rawHashTag)]
pub fn raw_hash_tag(key: &[u8]) -> Vec<u8> {
    hash_tag(key).to_vec()
}

fn slot(s: u32) -> Result<u16, JsError> {
    u16::try_from(s)
        .ok()
        .filter(|&s| s < SLOT_COUNT)
        .ok_or_else(|| JsError {
            code: "BAD_SLOT",
            message: alloc::format!("slot {s} is outside 0..=16383"),
        })
}

fn address(s: &str) -> Result<Address, JsError> {
    Address::parse(s).map_err(|e| JsError {
        code: "BAD_ADDRESS",
        message: alloc::format!("address {s:?}: {e}"),
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

    fn index(&self, i: u32) -> Result<NodeIndex, JsError> {
        // core has no public NodeIndex constructor: find it among the map's nodes.
        self.map
            .iter()
            .nth(i as usize)
            .map(|(ix, _)| ix)
            .ok_or_else(|| JsError {
                code: "SLOT_MAP",
                message: alloc::format!("node #{i} is not in this slot map"),
            })
    }

    /// Adds a master at `addr` (`host:port`, IPv6 split on the last `:`); returns its index.
    #[wasm_bindgen(js_name = addMaster)]
    pub fn add_master(&mut self, id: &str, addr: &str) -> Result<u32, JsError> {
        Ok(self.map.add_master(id, address(addr)?)?.get() as u32)
    }

    /// Adds a replica of `master`; returns its index.
    #[wasm_bindgen(js_name = addReplica)]
    pub fn add_replica(&mut self, master: u32, id: &str, addr: &str) -> Result<u32, JsError> {
        let m = self.index(master)?;
        Ok(self.map.add_replica(m, id, address(addr)?)?.get() as u32)
    }

    /// Sets a node's health (`online`, `loading`, `failed`, anything else: `unknown`).
    #[wasm_bindgen(js_name = setHealth)]
    pub fn set_health(&mut self, node: u32, health: &str) -> Result<(), JsError> {
        let n = self.index(node)?;
        Ok(self.map.set_health(n, Health::from_redis(health))?)
    }

    /// Gives slots `start..=end` to master `node`.
    pub fn assign(&mut self, start: u32, end: u32, node: u32) -> Result<(), JsError> {
        let n = self.index(node)?;
        Ok(self.map.assign(slot(start)?..=slot(end)?, n)?)
    }

    /// Makes slots `start..=end` unowned.
    pub fn unassign(&mut self, start: u32, end: u32) -> Result<(), JsError> {
        Ok(self.map.unassign(slot(start)?..=slot(end)?)?)
    }

    /// Owner index of a slot, `-1` if unassigned.
    pub fn owner(&self, s: u32) -> Result<i32, JsError> {
        Ok(self.map.owner(slot(s)?).map_or(-1, |n| n.get() as i32))
    }

    /// Owner index of a key's slot, `-1` if unassigned.
    #[wasm_bindgen(js_name = ownerOfKey)]
    pub fn owner_of_key(&self, key: &[u8]) -> i32 {
        self.map.owner_of_key(key).map_or(-1, |n| n.get() as i32)
    }

    /// Owner index of every key of a packed batch (`u32::MAX`: unassigned).
    #[wasm_bindgen(js_name = ownersOfKeysPacked)]
    pub fn owners_of_keys_packed(&self, data: &[u8], ends: &[u32]) -> Result<Vec<u32>, JsError> {
        let mut out = alloc::vec![NONE; ends.len()];
        for_each_packed(data, ends, |i, k| out[i] = opt(self.map.owner_of_key(k)))?;
        Ok(out)
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

    /// Number of slots without owner.
    #[wasm_bindgen(js_name = unassignedCount)]
    pub fn unassigned_count(&self) -> usize {
        self.map.unassigned_count()
    }

    /// Whether every slot has an owner.
    #[wasm_bindgen(js_name = isComplete)]
    pub fn is_complete(&self) -> bool {
        self.map.is_complete()
    }

    /// Number of nodes.
    #[wasm_bindgen(js_name = nodeCount)]
    pub fn node_count(&self) -> usize {
        self.map.nodes().len()
    }

    /// `[id, host, port, role, health, name]` of node `i` as strings.
    #[wasm_bindgen(js_name = nodeInfo)]
    pub fn node_info(&self, i: u32) -> Result<Vec<String>, JsError> {
        let n = &self.map.nodes()[self.index(i)?.get()];
        Ok(alloc::vec![
            String::from(n.id()),
            n.addr().host.clone(),
            n.addr().port.to_string(),
            String::from(n.role().as_str()),
            String::from(n.health().as_str()),
            n.name().into_owned(),
        ])
    }

    /// Master index of node `i` (`-1`: none).
    #[wasm_bindgen(js_name = nodeMaster)]
    pub fn node_master(&self, i: u32) -> Result<i32, JsError> {
        let n = &self.map.nodes()[self.index(i)?.get()];
        Ok(n.master().map_or(-1, |m| m.get() as i32))
    }

    /// Replica indexes of node `i`.
    #[wasm_bindgen(js_name = nodeReplicas)]
    pub fn node_replicas(&self, i: u32) -> Result<Vec<u32>, JsError> {
        let n = &self.map.nodes()[self.index(i)?.get()];
        Ok(n.replicas().iter().map(|r| r.get() as u32).collect())
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
        let r = Redirect::parse(message).map_err(|e| JsError::new("REDIRECT", e))?;
        let action = self.map.apply_redirect(&r, current_host)?;
        let host = String::from(r.host_or(current_host));
        Ok(match action {
            RedirectAction::Moved { node, added } => alloc::vec![
                String::from("moved"),
                r.slot.to_string(),
                node.get().to_string(),
                String::from(if added { "1" } else { "0" }),
                host,
                r.port.to_string(),
            ],
            RedirectAction::Ask { addr, node } => alloc::vec![
                String::from("ask"),
                r.slot.to_string(),
                node.map_or(-1, |n| n.get() as i64).to_string(),
                String::from("0"),
                addr.host,
                addr.port.to_string(),
            ],
            _ => alloc::vec![String::from("unknown")],
        })
    }

    /// Plans the fewest slot moves to the weights (`nodes[i]` gets `weights[i]`).
    pub fn plan(&self, nodes: &[u32], weights: &[f64]) -> Result<RawPlan, JsError> {
        let mut w = Vec::with_capacity(nodes.len());
        for (&n, &wt) in nodes.iter().zip(weights) {
            if !wt.is_finite() || wt < 0.0 || !crate::error::is_integer(wt) {
                return Err(JsError {
                    code: "BAD_WEIGHT",
                    message: String::from("plan weights must be non-negative integers"),
                });
            }
            w.push((self.index(n)?, wt as u64));
        }
        Ok(RawPlan {
            plan: Plan::new(&self.map, &w)?,
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

    /// Targets as `[node, weight, ideal, before, after]` quintuples.
    pub fn targets(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(5 * self.plan.targets().len());
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

    /// Total slots that change owner.
    #[wasm_bindgen(js_name = slotsMoved)]
    pub fn slots_moved(&self) -> usize {
        self.plan.slots_moved()
    }
}
