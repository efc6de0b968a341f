//! Resharding plans (`keyroute::slot::Plan`): the fewest slot moves that take a slot map to
//! target weights.

use std::ffi::c_char;

use keyroute_core::error::ErrorCode;
use keyroute_core::ring::parse_weights;
use keyroute_core::slot::{Address, NodeIndex, Plan};

use crate::ffi::{
    array, free, get, get_mut, guard, guard_or, hand_out, out_of_range, put, required, tag, text,
    Fail, Handle, Res,
};
use crate::slot::{keyroute_slot_map, MapState};
use crate::status::keyroute_status;

/// A resharding plan (opaque), from `keyroute_plan_new()` or `keyroute_plan_from_spec()`:
/// moves in slot order (each a slot range, its current owner and its new owner, as node
/// indexes of the map planned on) and the weighted masters' targets. Immutable:
/// thread-safe.
#[derive(Debug)]
pub struct keyroute_plan {
    _opaque: [u8; 0],
}

impl Handle for keyroute_plan {
    type State = Plan;
    const TAG: u64 = tag(b"kr-plan");
    const NAME: &'static str = "keyroute_plan";
}

/// Plans `m` to `weights` and hands the plan out.
///
/// # Safety
/// `out` is writable.
unsafe fn plan_out(
    m: &MapState,
    weights: &[(NodeIndex, u64)],
    out: *mut *mut keyroute_plan,
) -> Res {
    let plan = Plan::new(&m.map, weights)?;
    // SAFETY: as the caller promises.
    unsafe { hand_out(out, plan) };
    Ok(())
}

/// Plans the fewest slot moves that bring every weighted master of `map` to within one
/// slot of its weighted share of the 16384 slots: master `nodes[i]` (an index of `map`)
/// gets weight `weights[i]` (0 drains it; a master with no slots yet fills up). Every
/// master that owns slots needs a weight. The plan is written to `*out` (free it with
/// `keyroute_plan_free()`); `map` is only read. Deterministic: the same map and weights
/// give the same plan in every language.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_TOO_LARGE`
/// (`count` above `KEYROUTE_MAX_BATCH`), `KEYROUTE_UNKNOWN_NODE`,
/// `KEYROUTE_NOT_A_MASTER`, `KEYROUTE_BAD_PLAN` (all weights zero, a master weighted
/// twice, a master with slots but no weight).
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_new(
    map: *const keyroute_slot_map,
    nodes: *const usize,
    weights: *const u64,
    count: usize,
    out: *mut *mut keyroute_plan,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live map; arrays of `count` entries (documented).
        let (m, nodes, weights) = unsafe {
            (
                get(map, "map")?,
                array(nodes, count, "nodes")?,
                array(weights, count, "weights")?,
            )
        };
        let out = required(out, "out")?;
        let mut pairs = Vec::new();
        for (&n, &w) in nodes.iter().zip(weights) {
            pairs.push((m.index(n)?, w));
        }
        // SAFETY: non-NULL out-pointer.
        unsafe { plan_out(m, &pairs, out) }
    })
}

/// As `keyroute_plan_new()`, with the weights written as text in keyroute's node-list
/// grammar (NUL-terminated UTF-8), where a weight may be 0:
/// `"10.0.0.1:7000=1, 10.0.0.2:7000=0"` (also one entry per line). A name is a master's
/// address (`host:port`, `[v6]:port`) or its cluster node id.
///
/// Errors: those of `keyroute_plan_new()`, plus `KEYROUTE_BAD_UTF8`,
/// `KEYROUTE_BAD_NODE_SPEC`, `KEYROUTE_AMBIGUOUS_NODE_SPEC`, `KEYROUTE_NEGATIVE_WEIGHT`,
/// `KEYROUTE_WEIGHT_TOO_LARGE`, `KEYROUTE_BAD_WEIGHT`, and `KEYROUTE_UNKNOWN_NODE` for a
/// name that is no node of the map.
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_from_spec(
    map: *const keyroute_slot_map,
    weights: *const c_char,
    out: *mut *mut keyroute_plan,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live map; a NUL-terminated string.
        let (m, spec) = unsafe { (get(map, "map")?, text(weights, "weights")?) };
        let out = required(out, "out")?;
        let mut pairs = Vec::new();
        for (name, w) in parse_weights(spec)? {
            let by_addr = Address::parse(&name)
                .ok()
                .and_then(|a| m.map.find_addr(&a.host, a.port));
            let node = by_addr.or_else(|| m.map.find_id(&name)).ok_or_else(|| {
                Fail::new(
                    ErrorCode::UnknownNode,
                    format!(
                        "{name:?} is not a node of this slot map; name a master by its \
                         address (host:port) or its cluster node id"
                    ),
                )
            })?;
            pairs.push((node, u64::from(w)));
        }
        // SAFETY: non-NULL out-pointer.
        unsafe { plan_out(m, &pairs, out) }
    })
}

/// Frees a plan (as `keyroute_ring_free()`).
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_free(plan: *mut keyroute_plan) -> keyroute_status {
    // SAFETY: NULL or a handle of this library, not in use elsewhere (documented).
    unsafe { free(plan, "plan") }
}

/// The number of moves (0 when the map already meets the targets; 0 for NULL or an
/// invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_len(plan: *const keyroute_plan) -> usize {
    // SAFETY: NULL or a live plan.
    guard_or(0, || Ok(unsafe { get(plan, "plan") }?.moves().len()))
}

/// The number of slots that change owner (or get one) (0 for NULL or an invalid handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_slots_moved(plan: *const keyroute_plan) -> usize {
    // SAFETY: NULL or a live plan.
    guard_or(0, || Ok(unsafe { get(plan, "plan") }?.slots_moved()))
}

/// Move `index` (0..len, in slot order): slots `*first_out..=*last_out` go from master
/// `*from_out` (`SIZE_MAX`: unassigned slots, `CLUSTER ADDSLOTS` on the target) to master
/// `*to_out` (node indexes of the map planned on). Every out-pointer may be NULL.
/// `KEYROUTE_OUT_OF_RANGE` for an index >= len.
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_move(
    plan: *const keyroute_plan,
    index: usize,
    first_out: *mut u16,
    last_out: *mut u16,
    from_out: *mut usize,
    to_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live plan.
        let p = unsafe { get(plan, "plan") }?;
        let m = p
            .moves()
            .get(index)
            .ok_or_else(|| out_of_range("move index", index, p.moves().len()))?;
        // SAFETY: optional out-pointers.
        unsafe {
            put(first_out, m.start);
            put(last_out, m.end);
            put(from_out, m.from.map_or(usize::MAX, NodeIndex::get));
            put(to_out, m.to.get());
        }
        Ok(())
    })
}

/// The number of weighted masters (targets) of the plan (0 for NULL or an invalid
/// handle).
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_target_count(plan: *const keyroute_plan) -> usize {
    // SAFETY: NULL or a live plan.
    guard_or(0, || Ok(unsafe { get(plan, "plan") }?.targets().len()))
}

/// Target `index` (0..target_count, in node-index order): the master's node index, its
/// weight as given, its exact weighted share of the slots (`16384 * weight / total`), and
/// the slots it owns before and after the plan. Every out-pointer may be NULL.
/// `KEYROUTE_OUT_OF_RANGE` for an index >= target_count.
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_target(
    plan: *const keyroute_plan,
    index: usize,
    node_out: *mut usize,
    weight_out: *mut u64,
    ideal_out: *mut f64,
    before_out: *mut usize,
    after_out: *mut usize,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live plan.
        let p = unsafe { get(plan, "plan") }?;
        let t = p
            .targets()
            .get(index)
            .ok_or_else(|| out_of_range("target index", index, p.targets().len()))?;
        // SAFETY: optional out-pointers.
        unsafe {
            put(node_out, t.node.get());
            put(weight_out, t.weight);
            put(ideal_out, t.ideal);
            put(before_out, t.before);
            put(after_out, t.after);
        }
        Ok(())
    })
}

/// Applies the plan to `map` (in memory: every move's slots go to its target), checking
/// first that every moved slot is still owned as planned.
///
/// Errors: `KEYROUTE_NULL_ARGUMENT`, `KEYROUTE_INVALID_HANDLE`, `KEYROUTE_STALE_PLAN` (the
/// map changed since planning, or it is another map), `KEYROUTE_UNKNOWN_NODE`,
/// `KEYROUTE_NOT_A_MASTER`; the map is unchanged on error.
#[no_mangle]
pub unsafe extern "C" fn keyroute_plan_apply(
    plan: *const keyroute_plan,
    map: *mut keyroute_slot_map,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or a live plan; NULL or a map used exclusively.
        let (p, m) = unsafe { (get(plan, "plan")?, get_mut(map, "map")?) };
        Ok(p.apply(&mut m.map)?)
    })
}
