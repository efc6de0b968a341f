//! Properties of the engines: bounded loads never above the cap, Maglev's balance and
//! disruption, jump's and rendezvous' minimal movement, and the lookup interface's
//! contract for every engine and profile.

use keyroute::engine::{
    guava_consistent_hash, jump_hash, maglev_table, next_prime, Bounded, Engine, Router, NAMES,
};
use keyroute::ring::{parse_nodes, NodeSpec};
use proptest::prelude::*;

fn nodes(n: usize) -> Vec<NodeSpec> {
    parse_nodes(
        &(0..n)
            .map(|i| format!("node-{i}"))
            .collect::<Vec<_>>()
            .join(","),
    )
    .expect("nodes")
}

fn keys(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("key:{i}:{}", i * 7919)).collect()
}

#[test]
fn every_engine_keeps_the_lookup_contract() {
    let ns = nodes(7);
    for name in NAMES {
        let r = Router::build(name, &ns, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.name().replace('_', "-"), name.replace('_', "-"));
        assert_eq!(r.len(), 7);
        let mut many = Vec::new();
        let ks = keys(300);
        r.get_many_into(&ks, &mut many);
        let mut seen = [0usize; 7];
        for (k, m) in ks.iter().zip(&many) {
            let owner = r.get_index(k.as_bytes()).expect("an owner");
            assert_eq!(*m, Some(owner), "{name}");
            seen[owner] += 1;
            let all = r.get_n(k.as_bytes(), 10);
            assert_eq!(all.len(), 7, "{name}: every node, once");
            assert_eq!(all[0], r.node_name(owner), "{name}: owner first");
            let mut d = all.clone();
            d.sort_unstable();
            d.dedup();
            assert_eq!(d.len(), 7, "{name}: distinct");
        }
        // 300 keys over 7 nodes: none starves (every engine spreads keys).
        assert!(seen.iter().all(|&c| c > 0), "{name}: {seen:?}");
    }
}

#[test]
fn maglev_balance_and_disruption() {
    for n in [3usize, 10, 50, 100, 150] {
        // The maglev engine's default size.
        let m = next_prime((100 * n as u64).max(65537));
        let names: Vec<String> = (0..n).map(|i| format!("backend-{i}")).collect();
        let w = vec![1u32; n];
        let t = maglev_table(&names, &w, m);
        let mut counts = vec![0u64; n];
        for &s in &t {
            counts[s as usize] += 1;
        }
        let mean = m as f64 / n as f64;
        let peak = *counts.iter().max().expect("max") as f64;
        assert!(peak / mean <= 1.01, "n={n}: peak-to-mean {}", peak / mean);
        // Remove one backend (not the last: the order of the others is kept).
        let gone = n / 2;
        let names2: Vec<String> = names
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != gone)
            .map(|(_, s)| s.clone())
            .collect();
        let t2 = maglev_table(&names2, &w[..n - 1], m);
        let moved = t
            .iter()
            .zip(&t2)
            .filter(|(a, b)| names[**a as usize] != names2[**b as usize])
            .count();
        let frac = moved as f64 / m as f64;
        assert!(frac <= 2.0 / n as f64, "n={n}: one removal moved {frac}");
    }
}

/// The paper's C++ loop as written (`b`, `j` as 64-bit integers), to hold
/// [`jump_hash`]'s f64-kept loop to it.
fn jump_as_the_paper_writes_it(mut key: u64, buckets: i32) -> i32 {
    let (mut b, mut j) = (-1i64, 0i64);
    while j < i64::from(buckets) {
        b = j;
        key = key.wrapping_mul(2_862_933_555_777_941_757).wrapping_add(1);
        j = ((b + 1) as f64 * ((1i64 << 31) as f64 / ((key >> 33) + 1) as f64)) as i64;
    }
    b as i32
}

#[test]
fn jump_is_the_papers_loop_for_every_bucket_count() {
    let mut x = 0x243f_6a88_85a3_08d3u64;
    for k in 0..200_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Small, mid, and the largest bucket counts (where j may exceed 2^31).
        let n = match k % 4 {
            0 => (x >> 60) as u32 + 1,
            1 => (x >> 44) as u32 + 1,
            2 => (x >> 33) as u32 + 1,
            _ => i32::MAX as u32 - (x >> 58) as u32,
        };
        let want = jump_as_the_paper_writes_it(x, n as i32);
        assert_eq!(jump_hash(x, n), Some(want as u32), "key {x} buckets {n}");
    }
}

#[test]
fn jump_moves_only_to_the_new_bucket() {
    for k in 0..20_000u64 {
        let key = k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for n in [1u32, 2, 7, 99, 1000] {
            let a = jump_hash(key, n).expect("bucket");
            let b = jump_hash(key, n + 1).expect("bucket");
            assert!(
                b == a || b == n,
                "paper: key {key} {n}->{}: {a}->{b}",
                n + 1
            );
            let ga = guava_consistent_hash(key as i64, n).expect("bucket");
            let gb = guava_consistent_hash(key as i64, n + 1).expect("bucket");
            assert!(
                gb == ga || gb == n,
                "guava: key {key} {n}->{}: {ga}->{gb}",
                n + 1
            );
        }
    }
}

#[test]
fn rendezvous_moves_only_the_removed_nodes_keys_and_follows_weights() {
    let all = parse_nodes("a=1,b=2,c=1,d=4").expect("nodes");
    let r = Router::build("rendezvous", &all, &[]).expect("r");
    let fewer: Vec<NodeSpec> = all.iter().filter(|n| n.name != "b").cloned().collect();
    let r2 = Router::build("rendezvous", &fewer, &[]).expect("r2");
    let mut counts = [0usize; 4];
    let ks = keys(40_000);
    for k in &ks {
        let before = r.get(k.as_bytes()).expect("owner");
        let after = r2.get(k.as_bytes()).expect("owner");
        if before != "b" {
            assert_eq!(before, after, "{k}");
        }
        counts[r.get_index(k.as_bytes()).expect("i")] += 1;
    }
    // Shares follow weights 1:2:1:4 within 5%.
    for (c, w) in counts.iter().zip([1.0, 2.0, 1.0, 4.0]) {
        let share = *c as f64 / ks.len() as f64;
        assert!(
            (share - w / 8.0).abs() < 0.05 * w / 8.0 + 0.01,
            "{counts:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// No node ever holds more than ⌈c·m/n⌉ keys, after any sequence of assignments and
    /// releases, over a ring, rendezvous and jump.
    #[test]
    fn bounded_never_exceeds_the_cap(
        engine in prop::sample::select(vec!["native", "rendezvous", "jump", "maglev", "nginx"]),
        n in 2usize..12,
        c in prop::sample::select(vec![1.0f64, 1.1, 1.25, 1.5, 2.0]),
        ops in prop::collection::vec((any::<bool>(), 0u32..400), 1..600),
    ) {
        let r = Router::build(engine, &nodes(n), &[]).expect("engine");
        let mut b = Bounded::new(r, c).expect("bounded");
        for (assign, k) in ops {
            let key = format!("k{k}");
            if assign {
                prop_assert!(b.assign(key.as_bytes()).is_some());
            } else {
                b.release(key.as_bytes());
            }
            let cap = b.cap();
            prop_assert!(b.loads().iter().all(|&l| l <= cap), "{:?} cap {}", b.loads(), cap);
            prop_assert_eq!(b.loads().iter().sum::<u64>(), b.assigned());
        }
    }
}

/// Moves per change: a release moves at most the nodes that sat at the cap, and on
/// average far below the paper's O(1/ε²) per update (ε = c − 1); assignments move none.
#[test]
fn bounded_moves_per_change() {
    let r = Router::build("native", &nodes(10), &[]).expect("ring");
    let c = 1.25;
    let mut b = Bounded::new(r, c).expect("bounded");
    for i in 0..2000 {
        b.assign(format!("job-{i}").as_bytes());
    }
    let mut moves = 0usize;
    let mut releases = 0usize;
    for i in (0..2000).step_by(3) {
        let at_cap = b.loads().iter().filter(|&&l| l == b.cap()).count();
        let moved = b.release(format!("job-{i}").as_bytes()).expect("assigned");
        assert!(moved.len() <= at_cap);
        moves += moved.len();
        releases += 1;
    }
    let per_change = moves as f64 / releases as f64;
    let eps = c - 1.0;
    assert!(
        per_change <= 1.0 / (eps * eps),
        "{per_change} moves per release"
    );
}
