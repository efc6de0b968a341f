//! Properties every profile must hold, checked on random rings and keys.
#![allow(clippy::unwrap_used)]

use keyroute::ring::{diff, Profile, ProfileName, Ring};
use proptest::prelude::*;

fn profile() -> impl Strategy<Value = Profile> {
    prop::sample::select(ProfileName::ALL.to_vec()).prop_map(Profile::from_name)
}

fn ring_nodes() -> impl Strategy<Value = Vec<(String, u32)>> {
    prop::collection::btree_map("[a-z]{1,6}(:[0-9]{4,5})?", 1u32..5, 1..12)
        .prop_map(|m| m.into_iter().collect())
}

fn keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 1..64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Native: a new node only takes keys; nobody else's keys move.
    #[test]
    fn native_add_moves_keys_only_to_the_new_node(nodes in ring_nodes(), keys in keys(), w in 1u32..4) {
        let old = Ring::with_nodes(Profile::native(), nodes.clone()).unwrap();
        let mut new = old.clone();
        new.add("the-new-node", w).unwrap();
        for k in &keys {
            let (a, b) = (old.get(k).unwrap(), new.get(k).unwrap());
            prop_assert!(a == b || b == "the-new-node", "{a} -> {b}");
        }
        let d = diff(&old, &new).unwrap();
        prop_assert!(d.moved.iter().all(|m| m.to.as_deref() == Some("the-new-node")));
        prop_assert!((d.moved_fraction - d.ideal_fraction).abs() < 1e-9);
    }

    /// Native: removing a node only moves that node's keys.
    #[test]
    fn native_remove_moves_only_its_keys(nodes in ring_nodes(), keys in keys(), pick in any::<prop::sample::Index>()) {
        prop_assume!(nodes.len() > 1);
        let old = Ring::with_nodes(Profile::native(), nodes.clone()).unwrap();
        let gone = nodes[pick.index(nodes.len())].0.clone();
        let mut new = old.clone();
        new.remove(&gone).unwrap();
        for k in &keys {
            let (a, b) = (old.get(k).unwrap(), new.get(k).unwrap());
            prop_assert!(a == b || a == gone, "{a} -> {b}");
        }
    }

    /// Every profile: get_n is distinct, starts with get, and is as long as it can be.
    #[test]
    fn get_n_is_distinct_and_starts_with_get(p in profile(), nodes in ring_nodes(), keys in keys(), n in 1usize..6) {
        let ring = Ring::with_nodes(p, nodes.clone()).unwrap();
        for k in &keys {
            let reps = ring.get_n(k, n);
            prop_assert_eq!(reps.len(), n.min(nodes.len()));
            prop_assert_eq!(Some(reps[0]), ring.get(k));
            let mut sorted = reps.clone();
            sorted.sort();
            sorted.dedup();
            prop_assert_eq!(sorted.len(), reps.len());
        }
    }

    /// Every profile: the batch lookup answers exactly as single lookups.
    #[test]
    fn batch_equals_single(p in profile(), nodes in ring_nodes(), keys in keys()) {
        let ring = Ring::with_nodes(p, nodes).unwrap();
        let mut out = Vec::new();
        ring.get_many_into(&keys, &mut out);
        prop_assert_eq!(out.len(), keys.len());
        for (k, o) in keys.iter().zip(&out) {
            prop_assert_eq!(o.map(|i| ring.nodes()[i].name()), ring.get(k));
        }
        // The typed-array form, from packed keys, into a full and a too-short output.
        let packed: keyroute::keys::PackedKeys = keys.iter().collect();
        let mut idx = vec![7u32; keys.len() + 1];
        prop_assert_eq!(ring.get_many_to_slice(&packed, &mut idx), keys.len());
        for (o, i) in out.iter().zip(&idx) {
            prop_assert_eq!(o.map(|i| i as u32), Some(*i));
        }
        prop_assert_eq!(idx[keys.len()], 7);
        let short = keys.len() / 2;
        let mut idx = vec![7u32; short];
        prop_assert_eq!(ring.get_many_to_slice(&keys, &mut idx), short);
        for (o, i) in out.iter().zip(&idx) {
            prop_assert_eq!(o.map(|i| i as u32), Some(*i));
        }
    }

    /// Every profile: shares sum to one and the diff of a ring with itself is empty.
    #[test]
    fn shares_sum_to_one(p in profile(), nodes in ring_nodes()) {
        let ring = Ring::with_nodes(p, nodes).unwrap();
        let total: f64 = ring.shares().iter().sum();
        prop_assert!((total - 1.0).abs() < 1e-9);
        let d = diff(&ring, &ring).unwrap();
        prop_assert!(d.moved.is_empty());
        prop_assert_eq!(d.moved_fraction, 0.0);
    }

    /// Every profile: the diff's moved fraction matches what the keys see.
    #[test]
    fn diff_agrees_with_lookups(p in profile(), nodes in ring_nodes(), keys in keys()) {
        let old = Ring::with_nodes(p, nodes).unwrap();
        let mut new = old.clone();
        new.add("zz-added", 2).unwrap();
        let d = diff(&old, &new).unwrap();
        for k in &keys {
            let h = old.hash_key(k);
            let in_moved = d.moved.iter().any(|m| m.start <= h && h <= m.end);
            prop_assert_eq!(in_moved, old.get(k) != new.get(k));
        }
    }
}
