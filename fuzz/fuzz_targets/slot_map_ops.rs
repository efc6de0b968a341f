//! Slot-map updates and plans: sequences of add_master / add_replica / assign / unassign /
//! set_health / apply_redirect / Plan::new + apply on one `SlotMap`: never panics, a
//! refused update changes nothing, and the map's invariants hold after every step.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use keyroute::slot::{Address, Health, NodeIndex, Plan, Redirect, SlotMap};
use keyroute_fuzz::{check_map, check_plan};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    AddMaster {
        id: u8,
        host: u8,
        port: u16,
    },
    AddReplica {
        master: u8,
        id: u8,
        host: u8,
        port: u16,
    },
    Assign {
        start: u16,
        end: u16,
        node: u8,
    },
    Unassign {
        start: u16,
        end: u16,
    },
    SetHealth {
        node: u8,
        health: u8,
    },
    Redirect {
        text: RedirectText,
        current: u8,
    },
    Plan {
        weights: Vec<(u8, u8)>,
        apply: bool,
    },
    PlanAll {
        weights: Vec<u8>,
    },
}

/// A redirect line: mostly well formed, so that the map changes.
#[derive(Debug)]
struct RedirectText(String);

impl<'a> Arbitrary<'a> for RedirectText {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(RedirectText(if u.ratio(7, 8)? {
            let kind = if u.arbitrary()? { "MOVED" } else { "ASK" };
            let slot = u.int_in_range(0u16..=16384)?;
            let host = HOSTS[u.choose_index(HOSTS.len())?];
            let port = u.int_in_range(0u16..=8)? + 7000 * u16::from(u.arbitrary::<bool>()?);
            format!("{kind} {slot} {host}:{port}")
        } else {
            String::arbitrary(u)?
        }))
    }
}

const HOSTS: &[&str] = &["", "10.0.0.1", "10.0.0.2", "::1", "h"];
const IDS: &[&str] = &["", "a", "b", "c", "d", "e"];

fn node(map: &SlotMap, i: u8) -> NodeIndex {
    // Indexes past the end too (a NodeIndex from another map), to reach UnknownNode.
    map.node_index(usize::from(i) % (map.nodes().len() + 1))
        .or_else(|| {
            let mut other = SlotMap::new();
            for k in 0..=map.nodes().len() {
                other.add_master("", Address::new("x", 1 + k as u16)).ok()?;
            }
            other.node_index(map.nodes().len())
        })
        .expect("an index")
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(ops) = Vec::<Op>::arbitrary(&mut u) else {
        return;
    };
    let mut map = SlotMap::new();
    for op in ops.into_iter().take(40) {
        let before = map.clone();
        let result: Result<(), String> = match op {
            Op::AddMaster { id, host, port } => map
                .add_master(
                    IDS[usize::from(id) % IDS.len()],
                    Address::new(HOSTS[usize::from(host) % HOSTS.len()], port % 8 + 6999),
                )
                .map(|_| ())
                .map_err(|e| e.code().as_str().into()),
            Op::AddReplica {
                master,
                id,
                host,
                port,
            } => {
                let m = node(&map, master);
                map.add_replica(
                    m,
                    IDS[usize::from(id) % IDS.len()],
                    Address::new(HOSTS[usize::from(host) % HOSTS.len()], port % 8 + 6999),
                )
                .map(|_| ())
                .map_err(|e| e.code().as_str().into())
            }
            Op::Assign {
                start,
                end,
                node: n,
            } => {
                let target = node(&map, n);
                map.assign(start % 16400..=end % 16400, target)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::Unassign { start, end } => map
                .unassign(start % 16400..=end % 16400)
                .map_err(|e| e.code().as_str().into()),
            Op::SetHealth { node: n, health } => {
                let h = [
                    Health::Online,
                    Health::Failed,
                    Health::Loading,
                    Health::Unknown,
                ][usize::from(health) % 4];
                let target = node(&map, n);
                map.set_health(target, h)
                    .map_err(|e| e.code().as_str().into())
            }
            Op::Redirect { text, current } => match Redirect::parse(&text.0) {
                Ok(r) => map
                    .apply_redirect(&r, HOSTS[usize::from(current) % HOSTS.len()])
                    .map(|_| ())
                    .map_err(|e| e.code().as_str().into()),
                Err(e) => Err(e.code().as_str().into()),
            },
            Op::Plan { weights, apply } => {
                let w: Vec<(NodeIndex, u64)> = weights
                    .iter()
                    .take(16)
                    .map(|&(n, w)| (node(&map, n), u64::from(w % 5)))
                    .collect();
                check_plan(&map, &w);
                if apply {
                    if let Ok(plan) = Plan::new(&map, &w) {
                        plan.apply(&mut map).expect("a fresh plan applies");
                    }
                }
                Ok(())
            }
            Op::PlanAll { weights } => {
                let w: Vec<(NodeIndex, u64)> = map
                    .masters()
                    .zip(weights.iter().chain(std::iter::repeat(&1)))
                    .map(|((i, _), &w)| (i, u64::from(w % 4)))
                    .collect();
                check_plan(&map, &w);
                Ok(())
            }
        };
        if let Err(code) = result {
            assert!(!code.is_empty());
            assert_eq!(map, before, "a refused update ({code}) changed the map");
        }
        check_map(&map);
    }
});
