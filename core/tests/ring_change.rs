//! A ring changed node by node (add, remove, set_weight: incremental for `native`, a
//! rebuild for the ketama family) is the ring built from scratch from the same node list:
//! same points, same owners, same name lookups. Name checks (duplicate, unknown, empty,
//! zero weight) give the errors a node-by-node check gives, in input order.
use keyroute::ring::{Profile, ProfileName, Ring, RingError};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Add(u8, u32),
    Remove(u8),
    SetWeight(u8, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<u8>(), 1u32..5).prop_map(|(n, w)| Op::Add(n % 24, w)),
        any::<u8>().prop_map(|n| Op::Remove(n % 24)),
        (any::<u8>(), 0u32..5).prop_map(|(n, w)| Op::SetWeight(n % 24, w)),
    ]
}

fn profile() -> impl Strategy<Value = Profile> {
    prop_oneof![
        Just(Profile::native()),
        Just(Profile::native().with_vnodes(3).expect("vnodes")),
        (0..ProfileName::ALL.len()).prop_map(|i| Profile::from_name(ProfileName::ALL[i])),
    ]
}

fn name(n: u8) -> String {
    format!("10.0.0.{n}:11211")
}

fn same_as_fresh(ring: &Ring, model: &[(String, u32)]) -> Result<(), TestCaseError> {
    let fresh = Ring::with_nodes(*ring.profile(), model.iter().cloned()).expect("fresh ring");
    prop_assert_eq!(ring.nodes(), fresh.nodes());
    prop_assert_eq!(ring.positions(), fresh.positions());
    prop_assert_eq!(ring.owners(), fresh.owners());
    for (i, (n, w)) in model.iter().enumerate() {
        prop_assert_eq!(ring.node_index(n), Some(i));
        prop_assert_eq!(ring.weight(n), Some(*w));
    }
    prop_assert!(!ring.contains("not-a-node"));
    // The lookup index too: every key (and every point's own position) finds the same owner.
    for k in 0..200u32 {
        let key = k.to_le_bytes();
        prop_assert_eq!(ring.get_index(&key), fresh.get_index(&key));
    }
    for pos in fresh.positions() {
        for h in [pos.wrapping_sub(1), pos, pos.wrapping_add(1)] {
            prop_assert_eq!(ring.point_for_hash(h), fresh.point_for_hash(h));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn changes_equal_a_fresh_build(p in profile(), start in 0u8..6, ops in proptest::collection::vec(op(), 0..30)) {
        let mut model: Vec<(String, u32)> = (0..start).map(|n| (name(n), 1 + u32::from(n % 3))).collect();
        let mut ring = Ring::with_nodes(p, model.iter().cloned()).expect("ring");
        same_as_fresh(&ring, &model)?;
        for op in ops {
            match op {
                Op::Add(n, w) => {
                    let got = ring.add(&name(n), w);
                    if model.iter().any(|(m, _)| *m == name(n)) {
                        prop_assert_eq!(got, Err(RingError::DuplicateNode(name(n))));
                    } else {
                        got.expect("add");
                        model.push((name(n), w));
                    }
                }
                Op::Remove(n) => {
                    let got = ring.remove(&name(n));
                    match model.iter().position(|(m, _)| *m == name(n)) {
                        Some(i) => {
                            let node = got.expect("remove");
                            prop_assert_eq!(node.name(), name(n));
                            model.remove(i);
                        }
                        None => prop_assert_eq!(got.map(|_| ()), Err(RingError::UnknownNode(name(n)))),
                    }
                }
                Op::SetWeight(n, w) => {
                    let got = ring.set_weight(&name(n), w);
                    match model.iter().position(|(m, _)| *m == name(n)) {
                        Some(_) if w == 0 => prop_assert_eq!(got, Err(RingError::ZeroWeight(name(n)))),
                        Some(i) => {
                            got.expect("set_weight");
                            model[i].1 = w;
                        }
                        None => prop_assert_eq!(got, Err(RingError::UnknownNode(name(n)))),
                    }
                }
            }
            same_as_fresh(&ring, &model)?;
        }
    }

    #[test]
    fn build_errors_come_in_input_order(names in proptest::collection::vec((0u8..12, 0u32..4), 0..20)) {
        let nodes: Vec<(String, u32)> = names
            .iter()
            .map(|&(n, w)| (if n == 11 { String::new() } else { name(n) }, w))
            .collect();
        // The node-by-node reference.
        let mut want = None;
        for (i, (n, w)) in nodes.iter().enumerate() {
            if n.is_empty() {
                want = Some(RingError::EmptyNodeName);
            } else if *w == 0 {
                want = Some(RingError::ZeroWeight(n.clone()));
            } else if nodes[..i].iter().any(|(m, _)| m == n) {
                want = Some(RingError::DuplicateNode(n.clone()));
            }
            if want.is_some() {
                break;
            }
        }
        let got = Ring::with_nodes(Profile::native(), nodes.clone());
        prop_assert_eq!(got.err(), want);
    }
}

#[test]
fn adding_past_the_point_limit_changes_nothing() {
    let mut ring = Ring::with_nodes(Profile::native(), [("a", 1)]).expect("ring");
    let before = ring.positions().to_vec();
    let got = ring.add("b", u32::MAX);
    assert!(matches!(got, Err(RingError::TooManyPoints(_))), "{got:?}");
    assert!(matches!(
        ring.set_weight("a", u32::MAX),
        Err(RingError::TooManyPoints(_))
    ));
    assert_eq!(ring.positions(), before.as_slice());
    assert_eq!(ring.len(), 1);
    assert_eq!(ring.weight("a"), Some(1));
    assert!(!ring.contains("b"));
}

#[test]
fn many_nodes_build_and_lookup_by_name() {
    let nodes: Vec<(String, u32)> = (0..20_000).map(|i| (format!("n{i}"), 1)).collect();
    let p = Profile::native().with_vnodes(1).expect("vnodes");
    let mut ring = Ring::with_nodes(p, nodes).expect("ring");
    assert_eq!(ring.node_index("n12345"), Some(12345));
    ring.remove("n5").expect("remove");
    assert_eq!(ring.node_index("n12345"), Some(12344));
    assert_eq!(
        Ring::with_nodes(p, [("x", 1), ("y", 1), ("x", 2)]).err(),
        Some(RingError::DuplicateNode("x".into()))
    );
}

/// Owners are stored in 16 bits while every node index fits: the 65,537th node (index
/// 65,536) widens them, incrementally as in a build, and the ring stays the one built
/// from scratch through adds, weights, removals and a rebuild.
#[test]
fn rings_past_65536_nodes_widen_their_owners() {
    let profile = Profile::native().with_vnodes(1).expect("vnodes");
    let mut model: Vec<(String, u32)> = (0..65_536u32).map(|i| (format!("n{i}"), 1)).collect();
    let mut ring = Ring::with_nodes(profile, model.iter().cloned()).expect("ring");
    let narrow = ring.circle_bytes();
    // 8 bytes of position, 2 of owner and 2 of index per point, and a few fixed bytes
    // (the index's last entry, the leaf's own record).
    // (With `small-leaves` the circle is 8,192 leaves, each with a record of its own,
    // and only the leaves that a wide owner joins widen.)
    // The size-minded build (`small-sort`, the JavaScript package's) stores every owner in
    // 32 bits: 4 bytes of owner per point there, and nothing to widen.
    let one_leaf = !cfg!(feature = "small-leaves");
    let wide_only = cfg!(feature = "small-sort");
    let per_point = if wide_only { 14 } else { 12 };
    let fixed = narrow - ring.point_count() * per_point;
    assert!(
        !one_leaf || (4..256).contains(&fixed),
        "{fixed} bytes beyond {per_point} per point"
    );
    let check = |ring: &Ring, model: &[(String, u32)]| {
        let fresh = Ring::with_nodes(profile, model.iter().cloned()).expect("fresh ring");
        assert_eq!(ring.positions(), fresh.positions());
        assert_eq!(ring.owners(), fresh.owners());
        assert_eq!(
            ring.owners().to_vec(),
            fresh.owners().iter().collect::<Vec<u32>>()
        );
        for k in 0..2000u32 {
            let key = k.to_le_bytes();
            assert_eq!(ring.get_index(&key), fresh.get_index(&key));
            assert_eq!(ring.get_n(&key, 3), fresh.get_n(&key, 3));
        }
    };
    for i in 65_536..65_540u32 {
        ring.add(&format!("n{i}"), 2).expect("add");
        model.push((format!("n{i}"), 2));
    }
    assert_eq!(ring.owners().iter().max(), Some(65_539));
    assert!(!one_leaf || wide_only || ring.circle_bytes() > narrow + 2 * ring.point_count() - 16);
    check(&ring, &model);
    ring.set_weight("n65537", 5).expect("set_weight");
    model[65_537].1 = 5;
    ring.remove("n3").expect("remove");
    model.remove(3);
    check(&ring, &model);
    // Back below the limit: a rebuild stores them in 16 bits again.
    let small = Ring::with_nodes(profile, model[..1000].iter().cloned()).expect("ring");
    assert!(!one_leaf || small.circle_bytes() <= small.point_count() * per_point + 256);
}

/// A ring of 262,144 points or more is cut into leaves (ring/index.rs): a change touches
/// only the leaves its points fall in, and the ring stays the one built from scratch.
/// Below 131,072 points it is one leaf again, and cut anew past 262,144.
#[test]
fn large_rings_change_in_their_leaves() {
    let profile = Profile::native();
    let mut model: Vec<(String, u32)> = (0..800u32).map(|i| (format!("n{i}"), 1)).collect();
    model.push(("heavy".into(), 900));
    let mut ring = Ring::with_nodes(profile, model.iter().cloned()).expect("ring");
    assert!(ring.point_count() >= 1 << 18);
    let check = |ring: &Ring, model: &[(String, u32)]| {
        let fresh = Ring::with_nodes(profile, model.iter().cloned()).expect("fresh ring");
        assert_eq!(ring.point_count(), fresh.point_count());
        assert!(ring.positions() == fresh.positions());
        assert!(ring.owners() == fresh.owners());
        for k in 0..3000u32 {
            let key = k.to_le_bytes();
            assert_eq!(ring.get_index(&key), fresh.get_index(&key));
            assert_eq!(ring.get_n(&key, 3), fresh.get_n(&key, 3));
        }
        for i in (0..fresh.point_count()).step_by(997) {
            let p = fresh.positions()[i];
            assert_eq!(ring.point_for_hash(p), Some(i));
            assert_eq!(ring.owners().get(i), fresh.owners().get(i));
        }
    };
    ring.add("extra", 3).expect("add");
    model.push(("extra".into(), 3));
    ring.set_weight("n17", 2).expect("set_weight up");
    model[17].1 = 2;
    ring.set_weight("extra", 1).expect("set_weight down");
    model[801].1 = 1;
    ring.remove("n5").expect("remove");
    model.remove(5);
    check(&ring, &model);
    // Heap: still about 12 bytes per point (the leaves' records are a few KiB), 14 in the
    // size-minded build (32-bit owners).
    let bytes = ring.circle_bytes() as f64 / ring.point_count() as f64;
    let most = if cfg!(feature = "small-sort") {
        15.0
    } else {
        13.0
    };
    assert!(
        cfg!(feature = "small-leaves") || bytes < most,
        "{bytes} bytes per point"
    );
    // Down to 128,000-odd points (one leaf again), then back up (leaves again).
    ring.remove("heavy").expect("remove");
    model.retain(|(n, _)| n != "heavy");
    assert!(ring.point_count() < 1 << 17);
    check(&ring, &model);
    ring.add("heavy", 900).expect("add");
    model.push(("heavy".into(), 900));
    check(&ring, &model);
}
