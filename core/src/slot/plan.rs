//! Resharding plans: the fewest slot moves that take a slot map to target weights.
use alloc::{string::String, vec, vec::Vec};
use core::fmt;

use crate::error::{write_all, ErrorCode};
use crate::util::heap_sort;

use super::{NodeIndex, Role, SlotMap, SLOT_COUNT};

/// Moving the slots `start..=end` from one master to another (or assigning them, when
/// they have no owner yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Move {
    /// First slot.
    pub start: u16,
    /// Last slot (inclusive).
    pub end: u16,
    /// Current owner; `None` for unassigned slots (`CLUSTER ADDSLOTS` on `to`).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub from: Option<NodeIndex>,
    /// New owner.
    pub to: NodeIndex,
}

impl Move {
    /// Number of slots moved (`end - start + 1`).
    #[must_use]
    pub fn len(&self) -> usize {
        usize::from(self.end) - usize::from(self.start) + 1
    }

    /// Always `false`: a move holds at least one slot.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// One weighted master's numbers in a [`Plan`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(deny_unknown_fields)
)]
pub struct Target {
    /// The master.
    pub node: NodeIndex,
    /// Its weight as given.
    pub weight: u64,
    /// Its exact weighted share, `16384 * weight / total weight`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub ideal: f64,
    /// Slots it owns before the plan.
    pub before: usize,
    /// Slots it owns after the plan: `⌊ideal⌋` or `⌈ideal⌉`.
    pub after: usize,
}

/// A deterministic resharding plan: the fewest slot moves that bring every weighted
/// master to within one slot of its weighted share of the 16384 slots.
///
/// **Targets.** Each master's target is `⌊ideal⌋` or `⌈ideal⌉` where
/// `ideal = 16384 * weight / Σ weight`, the targets summing to 16384 (largest-remainder
/// apportionment). When several masters could take the rounding-up, it goes first to
/// masters that already own more than `⌊ideal⌋` (so fewer slots move), then to larger
/// remainders, then to lower node indexes. With nothing to keep this is plain
/// largest-remainder apportionment.
///
/// **Moves.** Masters above target give away their highest-numbered slots; those, with
/// any unassigned slots, are handed out in ascending slot order to the masters below
/// target in node-index order. Only surplus slots move, so the number of slots moved is
/// the minimum possible, and consecutive slots with the same source and destination
/// form one [`Move`]. Moves are listed in slot order.
///
/// ```
/// use keyroute::slot::{Address, Plan, SlotMap};
///
/// let mut map = SlotMap::new();
/// let a = map.add_master("a", Address::new("h", 1))?;
/// let b = map.add_master("b", Address::new("h", 2))?;
/// let c = map.add_master("c", Address::new("h", 3))?; // new, no slots
/// map.assign(0..=8191, a)?;
/// map.assign(8192..=16383, b)?;
///
/// let plan = Plan::new(&map, &[(a, 1), (b, 1), (c, 1)])?;
/// assert_eq!(plan.slots_moved(), 5461); // 16384 / 3, no more
/// plan.apply(&mut map)?;
/// let mut counts = map.slot_counts();
/// counts.sort();
/// assert_eq!(counts, [5461, 5461, 5462]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    moves: Vec<Move>,
    targets: Vec<Target>,
}

/// `(a / b, a % b)` when the quotient is below 2^15 (`a` = 16384 × a weight, `b` the
/// total of at most 65535 weights): by shifts and subtractions, no 128-bit division code.
fn div_small(a: u128, b: u128) -> (usize, u128) {
    let (mut q, mut r) = (0usize, a);
    for bit in (0..15).rev() {
        let t = b << bit;
        if r >= t {
            r -= t;
            q |= 1 << bit;
        }
    }
    (q, r)
}

impl Plan {
    /// Plans moving `map` to the target `weights` (master, weight). A weight of 0 drains
    /// a master; a master with no slots yet (just added) fills up. Every master that
    /// owns slots must have a weight. Unassigned slots are handed out too.
    ///
    /// # Errors
    /// [`PlanError`] for an unknown node, a replica, a node weighted twice, a master
    /// with slots but no weight, or weights that are all zero.
    pub fn new(map: &SlotMap, weights: &[(NodeIndex, u64)]) -> Result<Self, PlanError> {
        let nodes = map.nodes();
        let counts = map.slot_counts();
        let mut weight_of: Vec<Option<u64>> = vec![None; nodes.len()];
        for &(node, weight) in weights {
            let n = map.node(node).ok_or(PlanError::UnknownNode(node))?;
            if n.role() != Role::Master {
                return Err(PlanError::NotAMaster(n.name().into_owned()));
            }
            let slot = &mut weight_of[node.get()];
            if slot.is_some() {
                return Err(PlanError::DuplicateWeight(n.name().into_owned()));
            }
            *slot = Some(weight);
        }
        for (i, n) in nodes.iter().enumerate() {
            if counts[i] > 0 && weight_of[i].is_none() {
                return Err(PlanError::MissingWeight {
                    name: n.name().into_owned(),
                    slots: counts[i],
                });
            }
        }
        let total: u128 = weights.iter().map(|&(_, w)| u128::from(w)).sum();
        if total == 0 {
            return Err(PlanError::NoWeight);
        }

        // Targets, in node-index order.
        let slots = u128::from(SLOT_COUNT);
        let mut targets: Vec<Target> = Vec::with_capacity(weights.len());
        let mut remainders: Vec<u128> = Vec::with_capacity(weights.len());
        for (i, w) in weight_of.iter().enumerate() {
            let Some(weight) = *w else { continue };
            let share = slots * u128::from(weight);
            let (after, remainder) = div_small(share, total);
            targets.push(Target {
                node: NodeIndex(i as u16),
                weight,
                ideal: share as f64 / total as f64,
                before: counts[i],
                after,
            });
            remainders.push(remainder);
        }
        let floor_sum: usize = targets.iter().map(|t| t.after).sum();
        let mut extra = usize::from(SLOT_COUNT) - floor_sum;
        let mut order: Vec<usize> = (0..targets.len()).filter(|&t| remainders[t] > 0).collect();
        // A total order (it ends on the index), so any sort gives this order: the heap
        // sort the pool model has already (one sort's code less in small builds).
        heap_sort(&mut order, &|x, y| {
            let keeps = |t: usize| targets[t].before > targets[t].after;
            keeps(y)
                .cmp(&keeps(x))
                .then(remainders[y].cmp(&remainders[x]))
                .then(x.cmp(&y))
                .is_lt()
        });
        for t in order {
            if extra == 0 {
                break;
            }
            targets[t].after += 1;
            extra -= 1;
        }

        // Release surplus: each master's highest slots, and every unassigned slot.
        let mut surplus = vec![0usize; nodes.len()];
        let mut deficit = vec![0usize; nodes.len()];
        for t in &targets {
            surplus[t.node.get()] = t.before.saturating_sub(t.after);
            deficit[t.node.get()] = t.after.saturating_sub(t.before);
        }
        let mut released = vec![false; usize::from(SLOT_COUNT)];
        for slot in (0..SLOT_COUNT).rev() {
            let free = match map.owner(slot) {
                None => true,
                Some(o) => {
                    let s = &mut surplus[o.get()];
                    let give = *s > 0;
                    *s -= usize::from(give);
                    give
                }
            };
            released[usize::from(slot)] = free;
        }

        // Hand them out in slot order to the masters below target, in index order.
        let receivers: Vec<NodeIndex> = targets
            .iter()
            .map(|t| t.node)
            .filter(|n| deficit[n.get()] > 0)
            .collect();
        let mut receivers = receivers.into_iter();
        let mut to = receivers.next();
        let mut moves: Vec<Move> = Vec::new();
        for slot in (0..SLOT_COUNT).filter(|&s| released[usize::from(s)]) {
            while let Some(n) = to {
                if deficit[n.get()] > 0 {
                    break;
                }
                to = receivers.next();
            }
            let Some(receiver) = to else { break };
            deficit[receiver.get()] -= 1;
            let from = map.owner(slot);
            match moves.last_mut() {
                Some(m) if m.end + 1 == slot && m.from == from && m.to == receiver => m.end = slot,
                _ => moves.push(Move {
                    start: slot,
                    end: slot,
                    from,
                    to: receiver,
                }),
            }
        }
        Ok(Self { moves, targets })
    }

    /// A plan from its parts (deserialization; `apply` checks it against the map).
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(moves: Vec<Move>, targets: Vec<Target>) -> Self {
        Self { moves, targets }
    }

    /// The moves, in slot order.
    #[must_use]
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The weighted masters, in node-index order, with their before/after slot counts.
    #[must_use]
    pub fn targets(&self) -> &[Target] {
        &self.targets
    }

    /// Total number of slots that change owner (or get one).
    #[must_use]
    pub fn slots_moved(&self) -> usize {
        self.moves.iter().map(Move::len).sum()
    }

    /// `true` if the map already meets the targets.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.moves.is_empty()
    }

    /// Applies the plan to `map`: every move's slots go to its destination.
    ///
    /// # Errors
    /// [`PlanError::Stale`] if a slot is no longer owned by the move's source (the map
    /// changed since planning, or it is another map), [`PlanError::UnknownNode`] /
    /// [`PlanError::NotAMaster`] for a destination that is not a master of `map`. The
    /// map is unchanged on error.
    pub fn apply(&self, map: &mut SlotMap) -> Result<(), PlanError> {
        for m in &self.moves {
            let to = map.node(m.to).ok_or(PlanError::UnknownNode(m.to))?;
            if to.role() != Role::Master {
                return Err(PlanError::NotAMaster(to.name().into_owned()));
            }
            for slot in m.start..=m.end {
                let found = map.owner(slot);
                if found != m.from {
                    return Err(PlanError::Stale {
                        slot,
                        expected: m.from,
                        found,
                    });
                }
            }
        }
        for m in &self.moves {
            for slot in m.start..=m.end {
                map.set_owner(slot, Some(m.to));
            }
        }
        Ok(())
    }
}

/// Why a resharding plan could not be made or applied.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// The weights are empty or all zero: nobody could own the slots.
    NoWeight,
    /// A node index is not from this map.
    UnknownNode(NodeIndex),
    /// A weight was given to a replica (named).
    NotAMaster(String),
    /// A node (named) was given two weights.
    DuplicateWeight(String),
    /// A master owns slots but has no weight.
    MissingWeight {
        /// The master's name.
        name: String,
        /// Slots it owns.
        slots: usize,
    },
    /// A slot's owner is not what the plan expects.
    Stale {
        /// The slot.
        slot: u16,
        /// Owner the plan expects.
        expected: Option<NodeIndex>,
        /// Owner in the map.
        found: Option<NodeIndex>,
    },
}

struct Owner(Option<NodeIndex>);

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => write!(f, "node {n}"),
            None => f.write_str("nobody"),
        }
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoWeight => f.write_str(
                "every weight is zero (or none was given); give at least one master a \
                 positive weight",
            ),
            Self::UnknownNode(n) => write!(
                f,
                "node {n} is not in the slot map; add it (with no slots) before planning"
            ),
            Self::NotAMaster(name) => write_all(
                f,
                &["node ", name, " is a replica; only masters can own slots"],
            ),
            Self::DuplicateWeight(name) => write_all(
                f,
                &[
                    "node ",
                    name,
                    " was given two weights; give each master one",
                ],
            ),
            Self::MissingWeight { name, slots } => {
                write_all(f, &["master ", name, " owns "])?;
                write!(
                    f,
                    "{slots} slots but has no weight; give it weight 0 to drain it, or a \
                     positive weight to keep slots"
                )
            }
            Self::Stale {
                slot,
                expected,
                found,
            } => write!(
                f,
                "slot {slot} is owned by {} but the plan expects {}; the map changed \
                 since planning, make a new plan",
                Owner(*found),
                Owner(*expected)
            ),
        }
    }
}

impl PlanError {
    /// The stable code of the error.
    ///
    /// ```
    /// use keyroute::slot::PlanError;
    /// assert_eq!(PlanError::NoWeight.code().as_str(), "BAD_PLAN");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::NoWeight | Self::DuplicateWeight(_) | Self::MissingWeight { .. } => {
                ErrorCode::BadPlan
            }
            Self::UnknownNode(_) => ErrorCode::UnknownNode,
            Self::NotAMaster(_) => ErrorCode::NotAMaster,
            Self::Stale { .. } => ErrorCode::StalePlan,
        }
    }
}

impl core::error::Error for PlanError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_divisions() {
        let totals = [
            1u128,
            2,
            3,
            7,
            16384,
            65535,
            u64::MAX as u128,
            65535 * u64::MAX as u128,
        ];
        for &b in &totals {
            for w in [0u128, 1, 2, 5, 1 << 20, u64::MAX as u128] {
                let a = 16384 * w.min(b);
                assert_eq!(div_small(a, b), ((a / b) as usize, a % b), "{a} / {b}");
            }
            assert_eq!(div_small(16384 * b, b), (16384, 0));
            assert_eq!(
                div_small(16384 * b - 1, b),
                (((16384 * b - 1) / b) as usize, (16384 * b - 1) % b)
            );
        }
    }
    use crate::slot::Address;

    fn map_with(ranges: &[&[(u16, u16)]]) -> (SlotMap, Vec<NodeIndex>) {
        let mut map = SlotMap::new();
        let mut ids = Vec::new();
        for (i, rs) in ranges.iter().enumerate() {
            let n = map
                .add_master(&alloc::format!("n{i}"), Address::new("h", i as u16 + 1))
                .expect("add");
            for &(s, e) in *rs {
                map.assign(s..=e, n).expect("assign");
            }
            ids.push(n);
        }
        (map, ids)
    }

    #[test]
    fn three_to_four() {
        let (mut map, n) = map_with(&[&[(0, 5460)], &[(5461, 10922)], &[(10923, 16383)], &[]]);
        let plan = Plan::new(&map, &[(n[0], 1), (n[1], 1), (n[2], 1), (n[3], 1)]).expect("plan");
        // Each of the three gives its top 1365 or 1366 slots, in one range each.
        assert_eq!(plan.moves().len(), 3);
        assert_eq!(plan.slots_moved(), 4096);
        assert!(plan.moves().iter().all(|m| m.to == n[3]));
        plan.apply(&mut map).expect("apply");
        assert_eq!(map.slot_counts(), [4096; 4]);
        // Nothing left to do.
        let again = Plan::new(&map, &[(n[0], 1), (n[1], 1), (n[2], 1), (n[3], 1)]).expect("plan");
        assert!(again.is_empty());
    }

    #[test]
    fn keeps_existing_rounding() {
        // 5461/5461/5462 split in any order: already balanced, nothing moves.
        let (map, n) = map_with(&[&[(0, 5461)], &[(5462, 10922)], &[(10923, 16383)]]);
        let plan = Plan::new(&map, &[(n[0], 1), (n[1], 1), (n[2], 1)]).expect("plan");
        assert!(plan.is_empty(), "{plan:?}");
    }

    #[test]
    fn drain_and_unassigned() {
        let (mut map, n) = map_with(&[&[(0, 99)], &[(100, 199)]]);
        let plan = Plan::new(&map, &[(n[0], 0), (n[1], 3)]).expect("plan");
        assert_eq!(plan.slots_moved(), 16384 - 100);
        assert_eq!(
            plan.moves()[0],
            Move {
                start: 0,
                end: 99,
                from: Some(n[0]),
                to: n[1]
            }
        );
        assert_eq!(plan.moves()[1].from, None);
        plan.apply(&mut map).expect("apply");
        assert_eq!(map.slot_counts(), [0, 16384]);
    }

    #[test]
    fn errors() {
        let (mut map, n) = map_with(&[&[(0, 99)], &[]]);
        let r = map
            .add_replica(n[0], "r", Address::new("h", 9))
            .expect("add");
        assert_eq!(Plan::new(&map, &[(n[0], 0)]), Err(PlanError::NoWeight));
        assert_eq!(
            Plan::new(&map, &[(n[1], 1)]),
            Err(PlanError::MissingWeight {
                name: "n0".into(),
                slots: 100
            })
        );
        assert_eq!(
            Plan::new(&map, &[(n[0], 1), (n[0], 1)]),
            Err(PlanError::DuplicateWeight("n0".into()))
        );
        assert_eq!(
            Plan::new(&map, &[(n[0], 1), (r, 1)]),
            Err(PlanError::NotAMaster("r".into()))
        );
        assert_eq!(
            Plan::new(&map, &[(NodeIndex(7), 1)]),
            Err(PlanError::UnknownNode(NodeIndex(7)))
        );
        let plan = Plan::new(&map, &[(n[0], 1), (n[1], 1)]).expect("plan");
        map.assign(0..=16383, n[1]).expect("assign");
        let before = map.clone();
        assert!(matches!(plan.apply(&mut map), Err(PlanError::Stale { .. })));
        assert_eq!(map, before);
    }
}
