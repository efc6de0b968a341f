//! Properties of the in-memory pool, and a cross-check against a naive model.
#![cfg(feature = "alloc")]

use std::collections::BTreeMap;

use keyroute::select::{Pool, PoolError, Restore, MAX_EXACT_COUNT};
use proptest::prelude::*;

proptest! {
    #[test]
    fn picks_from_a_zero_seeded_pool_stay_within_one(
        members in prop::collection::btree_set(prop::collection::vec(any::<u8>(), 1..6), 1..40),
        k in 0usize..400,
    ) {
        let mut pool = Pool::new();
        prop_assert_eq!(pool.seed(&members, 0, false), Ok(members.len()));
        let picks = pool.pick_many(k);
        prop_assert_eq!(picks.len(), k);
        let counts: Vec<u64> = pool.counts().map(|(_, c)| c).collect();
        let max = counts.iter().copied().max().unwrap_or(0);
        let min = counts.iter().copied().min().unwrap_or(0);
        prop_assert!(max - min <= 1, "spread {} after {} picks", max - min, k);
        prop_assert_eq!(counts.iter().sum::<u64>(), k as u64);
        // Every pick went to a member in the pool and was counted.
        for member in &picks {
            prop_assert!(members.contains(member));
        }
    }
}

/// The obvious O(n) implementation of the contract.
#[derive(Default)]
struct Naive {
    counts: BTreeMap<Vec<u8>, u64>,
    removed: BTreeMap<Vec<u8>, u64>,
}

impl Naive {
    fn pick(&mut self) -> Option<Vec<u8>> {
        let (member, count) = self
            .counts
            .iter()
            .min_by(|a, b| a.1.cmp(b.1).then_with(|| a.0.cmp(b.0)))
            .map(|(m, c)| (m.clone(), *c))?;
        self.counts
            .insert(member.clone(), (count + 1).min(MAX_EXACT_COUNT));
        Some(member)
    }
    fn seed(&mut self, members: &[Vec<u8>], initial: u64, overwrite: bool) -> usize {
        let mut added = 0;
        for m in members {
            if !self.counts.contains_key(m) {
                added += 1;
                self.counts.insert(m.clone(), initial);
            } else if overwrite {
                self.counts.insert(m.clone(), initial);
            }
            self.removed.remove(m);
        }
        added
    }
    fn remove(&mut self, m: &[u8]) -> Option<u64> {
        let c = self.counts.remove(m)?;
        self.removed.insert(m.to_vec(), c);
        Some(c)
    }
    fn restore(&mut self, m: &[u8], mode: Restore) -> u64 {
        let c = if let Some(&c) = self.counts.get(m) {
            c
        } else {
            let min = self.counts.values().copied().min().unwrap_or(0);
            match mode {
                Restore::Keep => self.removed.get(m).copied().unwrap_or(min),
                Restore::AtMinimum => min,
            }
        };
        self.removed.remove(m);
        self.counts.insert(m.to_vec(), c);
        c
    }
}

#[derive(Clone, Debug)]
enum Op {
    Pick,
    Seed(Vec<Vec<u8>>, u64, bool),
    Remove(Vec<u8>),
    Restore(Vec<u8>, Restore),
}

fn member() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![
        b"".to_vec(),
        b"a".to_vec(),
        b"ab".to_vec(),
        b"a\x00".to_vec(),
        b"b".to_vec(),
        b"\xff".to_vec(),
        "é".as_bytes().to_vec(),
    ])
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Pick),
        1 => (prop::collection::vec(member(), 0..4), prop_oneof![0u64..8, Just(MAX_EXACT_COUNT - 1)], any::<bool>())
            .prop_map(|(m, i, o)| Op::Seed(m, i, o)),
        1 => member().prop_map(Op::Remove),
        1 => (member(), prop_oneof![Just(Restore::Keep), Just(Restore::AtMinimum)])
            .prop_map(|(m, r)| Op::Restore(m, r)),
    ]
}

proptest! {
    #[test]
    fn pool_agrees_with_the_naive_model(ops in prop::collection::vec(op(), 0..80)) {
        let mut pool = Pool::new();
        let mut naive = Naive::default();
        for op in ops {
            match op {
                Op::Pick => prop_assert_eq!(pool.pick(), naive.pick()),
                // Empty members are refused and change nothing.
                Op::Seed(m, i, o) if m.iter().any(Vec::is_empty) => {
                    prop_assert_eq!(pool.seed(&m, i, o), Err(PoolError::EmptyMember));
                }
                Op::Seed(m, i, o) => prop_assert_eq!(pool.seed(&m, i, o), Ok(naive.seed(&m, i, o))),
                Op::Remove(m) => prop_assert_eq!(pool.remove(&m), naive.remove(&m)),
                Op::Restore(m, r) if m.is_empty() => {
                    prop_assert_eq!(pool.restore(&m, r), Err(PoolError::EmptyMember));
                }
                Op::Restore(m, r) => prop_assert_eq!(pool.restore(&m, r), Ok(naive.restore(&m, r))),
            }
            let ours: BTreeMap<Vec<u8>, u64> = pool.counts().map(|(m, c)| (m.to_vec(), c)).collect();
            prop_assert_eq!(&ours, &naive.counts);
            let removed: BTreeMap<Vec<u8>, u64> = pool.removed().map(|(m, c)| (m.to_vec(), c)).collect();
            prop_assert_eq!(&removed, &naive.removed);
            prop_assert_eq!(pool.len(), naive.counts.len());
            prop_assert_eq!(pool.min_count(), naive.counts.values().copied().min());
            for (m, c) in &naive.counts {
                prop_assert_eq!(pool.count(m), Some(*c));
                prop_assert!(pool.contains(m));
            }
            for (m, c) in &naive.removed {
                prop_assert_eq!(pool.removed_count(m), Some(*c));
            }
        }
    }
}

#[test]
fn empty_pool_picks_nothing() {
    let mut pool = Pool::new();
    assert_eq!(pool.pick(), None);
    assert!(pool.pick_many(10).is_empty());
    assert_eq!(pool.remove(b"x"), None);
    assert!(pool.is_empty());
}

#[test]
fn large_pool_rotates_evenly() {
    let mut pool = Pool::new();
    let members: Vec<String> = (0..100_000).map(|i| format!("proxy-{i:06}")).collect();
    assert_eq!(pool.seed(&members, 0, false), Ok(100_000));
    let picks = pool.pick_many(200_000);
    assert_eq!(picks.len(), 200_000);
    assert_eq!(picks[0], b"proxy-000000");
    assert_eq!(picks[100_000], b"proxy-000000");
    assert!(pool.counts().all(|(_, c)| c == 2));
}

#[test]
fn errors_explain_what_to_do() {
    let err = Pool::new()
        .seed(["a"], MAX_EXACT_COUNT + 1, false)
        .expect_err("too large");
    let message = err.to_string();
    assert!(message.contains("9007199254740993"), "{message}");
    assert!(message.contains("in that range"), "{message}");
    let _: &dyn core::error::Error = &err;
}
