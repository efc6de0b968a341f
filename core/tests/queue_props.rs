//! `DeadlineQueue` against a plain model (a list scanned in full): random pushes, pops
//! with random caps, purges and drains. Every item comes out exactly once; a `Run` item
//! is never expired, is of an allowed class and is the best such item; the queue never
//! holds more than its capacity.

use keyroute::queue::{DeadlineQueue, Full, Popped};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Push {
        priority: u8,
        ttl: u64,
        class: usize,
    },
    Pop {
        allowed_mask: u8,
    },
    Purge,
    Tick(u64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..4, 0u64..50, 0usize..4).prop_map(|(priority, ttl, class)| Op::Push { priority, ttl, class }),
        3 => any::<u8>().prop_map(|allowed_mask| Op::Pop { allowed_mask }),
        1 => Just(Op::Purge),
        2 => (0u64..20).prop_map(Op::Tick),
    ]
}

#[derive(Clone, Debug)]
struct Item {
    id: u64,
    priority: u8,
    deadline: u64,
    class: usize,
}

fn key(i: &Item) -> (std::cmp::Reverse<u8>, u64, u64) {
    (std::cmp::Reverse(i.priority), i.deadline, i.id)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn queue_matches_model(cap in 0usize..12, classes in 1usize..4, ops in proptest::collection::vec(op(), 0..200)) {
        let mut q: DeadlineQueue<u64> = DeadlineQueue::new(cap, classes);
        let mut model: Vec<Item> = Vec::new();
        let mut out: Vec<u64> = Vec::new();
        let mut now = 0u64;
        let mut next = 0u64;
        for op in ops {
            match op {
                Op::Push { priority, ttl, class } => {
                    let class = class.min(classes - 1);
                    let id = next;
                    next += 1;
                    let mut purged = Vec::new();
                    let r = q.push(id, priority, now + ttl, class, now, |item, c| purged.push((item, c)));
                    if model.len() == cap {
                        // Full: the expired ones are purged first.
                        let (gone, kept): (Vec<Item>, Vec<Item>) = model.drain(..).partition(|i| i.deadline <= now);
                        model = kept;
                        let mut want: Vec<(u64, usize)> = gone.iter().map(|i| (i.id, i.class)).collect();
                        want.sort();
                        purged.sort();
                        prop_assert_eq!(&purged, &want);
                        out.extend(purged.iter().map(|p| p.0));
                    } else {
                        prop_assert!(purged.is_empty());
                    }
                    if model.len() < cap {
                        prop_assert_eq!(r, Ok(()));
                        model.push(Item { id, priority, deadline: now + ttl, class });
                    } else {
                        prop_assert_eq!(r, Err(Full(id)));
                        out.push(id);
                    }
                }
                Op::Pop { allowed_mask } => {
                    let allowed = |c: usize| allowed_mask & (1 << c) != 0;
                    let got = q.pop(now, allowed);
                    match got {
                        Some(Popped::Expired { item, class }) => {
                            let pos = model.iter().position(|i| i.id == item).expect("known item");
                            let it = model.remove(pos);
                            prop_assert!(it.deadline <= now);
                            prop_assert_eq!(it.class, class);
                            out.push(item);
                        }
                        Some(Popped::Run { item, class }) => {
                            // No class head is expired, and this is the best allowed item.
                            for c in 0..classes {
                                let head = model.iter().filter(|i| i.class == c).min_by_key(|i| key(i));
                                if let Some(h) = head { prop_assert!(h.deadline > now, "expired head left behind"); }
                            }
                            let best = model.iter().filter(|i| allowed(i.class)).min_by_key(|i| key(i)).expect("an allowed item");
                            prop_assert_eq!(best.id, item);
                            prop_assert_eq!(best.class, class);
                            prop_assert!(best.deadline > now);
                            let pos = model.iter().position(|i| i.id == item).expect("known item");
                            model.remove(pos);
                            out.push(item);
                        }
                        None => {
                            prop_assert!(model.iter().all(|i| !allowed(i.class)));
                            for c in 0..classes {
                                let head = model.iter().filter(|i| i.class == c).min_by_key(|i| key(i));
                                if let Some(h) = head { prop_assert!(h.deadline > now); }
                            }
                        }
                    }
                }
                Op::Purge => {
                    let mut purged = Vec::new();
                    let n = q.purge_expired(now, |item, _| purged.push(item));
                    prop_assert_eq!(n, purged.len());
                    let (gone, kept): (Vec<Item>, Vec<Item>) = model.drain(..).partition(|i| i.deadline <= now);
                    model = kept;
                    let mut want: Vec<u64> = gone.iter().map(|i| i.id).collect();
                    want.sort();
                    purged.sort();
                    prop_assert_eq!(&purged, &want);
                    out.extend(purged);
                }
                Op::Tick(dt) => now += dt,
            }
            prop_assert_eq!(q.len(), model.len());
            prop_assert!(q.len() <= cap);
            prop_assert_eq!(q.is_full(), model.len() == cap);
            for c in 0..classes {
                prop_assert_eq!(q.class_len(c), model.iter().filter(|i| i.class == c).count());
            }
            prop_assert_eq!(q.next_deadline(), model.iter().map(|i| i.deadline).min());
        }
        q.drain(|item, _| out.push(item));
        prop_assert!(q.is_empty());
        // Exactly once.
        out.sort();
        let all: Vec<u64> = (0..next).collect();
        prop_assert_eq!(out, all);
    }
}
