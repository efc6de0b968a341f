//! Ring operation sequences on every profile: add / remove / set_weight / get / get_n /
//! get_many / diff, with the invariants checked after every step:
//!
//! * minimal movement: on `native`, an added node takes keys only for itself and a removed
//!   node's keys are the only ones that move (the ketama family recomputes every share, as
//!   its peers do, so there only `diff` is checked);
//! * `get_n`: distinct, `min(n, len)` long, starting with `get`; the slice form agrees;
//! * batch = single (`get_many_into`, `get_many_to_slice`);
//! * `diff(old, new)` agrees with lookups: a key's position is in a moved arc exactly when
//!   its owner changed; shares sum to 1;
//! * a refused operation changes nothing; the same nodes give the same circle again.
#![no_main]

use arbitrary::{Arbitrary, Unstructured};
use keyroute::ring::{diff, Lookup, Profile, ProfileName, Ring, NO_NODE};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Op {
    Add { name: Name, weight: u8 },
    Remove { name: Name },
    SetWeight { name: Name, weight: u8 },
    Get { key: Vec<u8> },
    GetN { key: Vec<u8>, n: u8 },
    GetMany { keys: Vec<Vec<u8>> },
    Snapshot,
    Diff,
}

/// A node name: mostly from a small set (so removes and duplicates happen), sometimes any
/// string (empty ones included).
#[derive(Debug)]
struct Name(String);

impl<'a> Arbitrary<'a> for Name {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        const NAMES: &[&str] = &[
            "a",
            "b",
            "c",
            "d",
            "e",
            "f",
            "g",
            "h",
            "10.0.0.1:11211",
            "10.0.0.2:11211",
            "[::1]:6379",
            "cache-a",
            "\u{e9}",
            "",
        ];
        Ok(Name(if u.ratio(7, 8)? {
            (*u.choose(NAMES)?).to_string()
        } else {
            String::arbitrary(u)?
        }))
    }
}

/// Keys every invariant is checked on, besides the ones the input brings.
const PROBES: usize = 48;

fn probe(i: usize) -> Vec<u8> {
    format!("probe:{i}").into_bytes()
}

fn owners(ring: &Ring, keys: &[Vec<u8>]) -> Vec<Option<String>> {
    keys.iter().map(|k| ring.get(k).map(String::from)).collect()
}

fn check_lookups(ring: &Ring, keys: &[Vec<u8>], n: usize) {
    let mut idx = Vec::new();
    ring.get_many_into(keys, &mut idx);
    assert_eq!(idx.len(), keys.len());
    let mut slice = vec![7u32; keys.len() + 1];
    assert_eq!(ring.get_many_to_slice(keys, &mut slice), keys.len());
    assert_eq!(slice[keys.len()], 7);
    // Nodes that own points (in the ketama family a light node can get no point at all,
    // as in the peers, when vnodes is small).
    let mut owning: Vec<u32> = ring.owners().to_vec();
    owning.sort_unstable();
    owning.dedup();
    let mut buf = vec![usize::MAX; n];
    for (i, k) in keys.iter().enumerate() {
        let single = ring.get_index(k);
        assert_eq!(idx[i], single, "batch = single");
        assert_eq!(slice[i], single.map_or(NO_NODE, |o| o as u32));
        assert_eq!(ring.get(k), single.map(|o| ring.nodes()[o].name()));
        let reps = ring.get_n(k, n);
        assert_eq!(reps.len(), n.min(owning.len()));
        if let Some(first) = reps.first() {
            assert_eq!(Some(*first), ring.get(k), "get_n starts with get");
        }
        let mut sorted = reps.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), reps.len(), "get_n is distinct");
        let got = ring.get_n_to_slice(k, &mut buf);
        assert_eq!(got, reps.len());
        for (j, &o) in buf[..got].iter().enumerate() {
            assert_eq!(ring.nodes()[o].name(), reps[j]);
        }
    }
}

fn check_diff(old: &Ring, new: &Ring, keys: &[Vec<u8>]) {
    let d = diff(old, new).expect("same profile");
    assert!((0.0..=1.0).contains(&d.moved_fraction));
    assert!(
        d.moved.windows(2).all(|w| w[0].end < w[1].start),
        "arcs in order"
    );
    for k in keys {
        let h = old.hash_key(k);
        assert_eq!(h, new.hash_key(k));
        let in_moved = d.moved.iter().any(|m| m.start <= h && h <= m.end);
        assert_eq!(
            in_moved,
            old.get(k) != new.get(k),
            "diff agrees with lookups"
        );
    }
    if old.profile().name() == ProfileName::Native && old.len() + 1 == new.len() {
        // One node added on native: the ring moves exactly the ideal fraction.
        assert!((d.moved_fraction - d.ideal_fraction).abs() < 1e-9);
    }
}

fn check_shares(ring: &Ring) {
    let shares = ring.shares();
    assert_eq!(shares.len(), ring.len());
    if !ring.is_empty() {
        let total: f64 = shares.iter().sum();
        assert!((total - 1.0).abs() < 1e-9, "shares sum to {total}");
    }
}

fn profile(u: &mut Unstructured<'_>) -> arbitrary::Result<Profile> {
    let name = *u.choose(&ProfileName::ALL)?;
    let mut p = Profile::from_name(name);
    // Small vnodes keep each input fast; the profiles' own defaults are used half the time.
    if u.arbitrary()? {
        if let Ok(q) = p.with_vnodes(u.int_in_range(1..=24)?) {
            p = q;
        }
    }
    if u.ratio(1, 4)? {
        if let Ok(q) = p.with_points_per_digest(u.int_in_range(0..=5)?) {
            p = q;
        }
    }
    if u.ratio(1, 4)? {
        if let Ok(q) = p.with_default_port(Some(11211)) {
            p = q;
        }
    }
    Ok(p)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(p) = profile(&mut u) else { return };
    let Ok(ops) = Vec::<Op>::arbitrary(&mut u) else {
        return;
    };
    let mut ring = Ring::new(p);
    let mut snapshot = ring.clone();
    let mut keys: Vec<Vec<u8>> = (0..PROBES).map(probe).collect();
    assert_eq!(
        p.lookup() == Lookup::Above,
        ring.profile().lookup() == Lookup::Above
    );
    for op in ops.into_iter().take(48) {
        let before = ring.clone();
        let owners_before = owners(&ring, &keys);
        match op {
            Op::Add { name, weight } => {
                let w = u32::from(weight % 5);
                match ring.add(&name.0, w) {
                    Ok(()) => {
                        assert!(!name.0.is_empty() && w > 0 && !before.contains(&name.0));
                        assert_eq!(ring.weight(&name.0), Some(w));
                        if p.name() == ProfileName::Native {
                            for (k, old) in keys.iter().zip(&owners_before) {
                                let now = ring.get(k);
                                assert!(
                                    old.as_deref() == now || now == Some(name.0.as_str()),
                                    "native add moved a key between old nodes"
                                );
                            }
                        }
                        check_diff(&before, &ring, &keys);
                    }
                    Err(e) => {
                        assert!(!e.code().as_str().is_empty());
                        assert_eq!(
                            ring.positions(),
                            before.positions(),
                            "refused add changed the ring"
                        );
                        assert_eq!(ring.nodes(), before.nodes());
                    }
                }
            }
            Op::Remove { name } => match ring.remove(&name.0) {
                Ok(node) => {
                    assert_eq!(node.name(), name.0);
                    assert!(!ring.contains(&name.0));
                    if p.name() == ProfileName::Native {
                        for (k, old) in keys.iter().zip(&owners_before) {
                            let now = ring.get(k);
                            assert!(
                                old.as_deref() == now || old.as_deref() == Some(name.0.as_str()),
                                "native remove moved a key it did not own"
                            );
                        }
                    }
                    check_diff(&before, &ring, &keys);
                }
                Err(e) => {
                    assert_eq!(e.code().as_str(), "UNKNOWN_NODE");
                    assert_eq!(ring.positions(), before.positions());
                }
            },
            Op::SetWeight { name, weight } => {
                let w = u32::from(weight % 5);
                match ring.set_weight(&name.0, w) {
                    Ok(()) => {
                        assert_eq!(ring.weight(&name.0), Some(w));
                        check_diff(&before, &ring, &keys);
                    }
                    Err(_) => {
                        assert_eq!(ring.positions(), before.positions());
                        assert_eq!(ring.nodes(), before.nodes());
                    }
                }
            }
            Op::Get { key } => {
                if keys.len() < 256 {
                    keys.push(key);
                }
            }
            Op::GetN { key, n } => check_lookups(&ring, &[key], usize::from(n % 24)),
            Op::GetMany { keys: more } => {
                let more: Vec<Vec<u8>> = more.into_iter().take(70).collect();
                check_lookups(&ring, &more, 3);
            }
            Op::Snapshot => snapshot = ring.clone(),
            Op::Diff => check_diff(&snapshot, &ring, &keys),
        }
        check_shares(&ring);
        // The same nodes in the same order build the same circle.
        let again = ring.spec().build().expect("a ring's own spec builds");
        assert_eq!(again.positions(), ring.positions());
        assert_eq!(again.owners(), ring.owners());
    }
    check_lookups(&ring, &keys, 5);
});
