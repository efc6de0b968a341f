//! Live resharding of a real Redis Cluster with a concurrent writer (feature `redis`):
//! no key is lost, and the final map is what the core planner asked for.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::cluster::{connect, Cluster};
use keyroute::slot::{key_slot, NodeIndex, Plan, SlotMap};
use keyroute_redis::cluster::reshard::{execute_plan, ReshardOptions};
use keyroute_redis::cluster::topology::fetch_topology;
use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
use keyroute_redis::LeastUsed;
use redis::cluster::ClusterConnection;

const KEYS: usize = 10_000;

fn pool_connection(cluster: &Cluster) -> ClusterConnection {
    redis::cluster::ClusterClient::builder(cluster.urls())
        .connection_timeout(std::time::Duration::from_secs(2))
        .response_timeout(std::time::Duration::from_secs(2))
        .build()
        .unwrap()
        .get_connection()
        .unwrap()
}

/// Writes KEYS keys, reshards with `weights(map)` while a writer thread keeps writing
/// new keys and reading old ones through its own routed client, then reads every key.
fn reshard_under_writer(cluster: &Cluster, weights: impl Fn(&SlotMap) -> Vec<(NodeIndex, u64)>) {
    let url = cluster.url();
    let mut c = ClusterClient::connect(&[&url], ClusterConfig::default()).unwrap();
    let mut pipe_keys = Vec::with_capacity(KEYS);
    for i in 0..KEYS {
        let k = format!("key:{i}");
        c.set(k.as_bytes(), format!("value:{i}").as_bytes())
            .unwrap();
        pipe_keys.push(k);
    }

    // A least-used pool whose key lives in the first slot range the plan moves, picked
    // from through the `redis` crate's cluster connection all through the resharding.
    let (map0, _) = fetch_topology(&mut connect(cluster.ports[0])).unwrap();
    let plan0 = Plan::new(&map0, &weights(&map0)).unwrap();
    let (lo, hi) = (plan0.moves()[0].start, plan0.moves()[0].end);
    let pool_key = (0..)
        .map(|n| format!("{{pool-{n}}}:proxies"))
        .find(|k| (lo..=hi).contains(&key_slot(k.as_bytes())))
        .unwrap();
    let pool = LeastUsed::new(&pool_key).unwrap();
    let members: Vec<String> = (0..5).map(|i| format!("proxy-{i}")).collect();
    pool.seed(&mut pool_connection(cluster), &members, 0, false)
        .unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let picker = {
        let stop = Arc::clone(&stop);
        let pool = pool.clone();
        let mut con = pool_connection(cluster);
        thread::spawn(move || {
            let mut picks = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let got = pool.pick(&mut con).expect("pick during resharding");
                assert!(got.is_some(), "the pool answered nothing during resharding");
                picks += 1;
            }
            picks
        })
    };
    let writer = {
        let stop = Arc::clone(&stop);
        let url = url.clone();
        thread::spawn(move || {
            let mut w = ClusterClient::connect(&[&url], ClusterConfig::default()).unwrap();
            let mut n = 0usize;
            while !stop.load(Ordering::Relaxed) {
                w.set(format!("w:{n}").as_bytes(), format!("{n}").as_bytes())
                    .expect("write during resharding");
                let i = (n * 7919) % KEYS;
                let v = w
                    .get(format!("key:{i}").as_bytes())
                    .expect("read during resharding");
                assert_eq!(
                    v,
                    Some(format!("value:{i}").into_bytes()),
                    "key:{i} during resharding"
                );
                n += 1;
            }
            (n, w.stats())
        })
    };

    let (map, _) = fetch_topology(&mut connect(cluster.ports[0])).unwrap();
    let plan = Plan::new(&map, &weights(&map)).unwrap();
    assert!(plan.slots_moved() > 1000, "a real resharding");
    let mut last = None;
    let report =
        execute_plan(&map, &plan, &ReshardOptions::default(), |p| last = Some(*p)).unwrap();
    let last = last.expect("progress reported");
    assert_eq!(last.slots_done, plan.slots_moved());
    assert_eq!(last.slots_total, plan.slots_moved());
    assert_eq!(report.slots_moved, plan.slots_moved());
    assert!(report.keys_moved > 0);

    stop.store(true, Ordering::Relaxed);
    let (written, stats) = writer.join().expect("writer thread");
    assert!(written > 0);
    let picks = picker.join().expect("picker thread");
    assert!(picks > 0);
    let counts = pool.counts(&mut pool_connection(cluster)).unwrap();
    assert_eq!(counts.len(), members.len());
    assert_eq!(
        counts.iter().map(|(_, c)| c).sum::<u64>(),
        picks,
        "every pick counted once"
    );
    let (min, max) = counts
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), (_, c)| (lo.min(*c), hi.max(*c)));
    assert!(max - min <= 1, "spread {min}..{max}");
    let (moved_map, _) = fetch_topology(&mut connect(cluster.ports[0])).unwrap();
    let pool_slot = key_slot(pool_key.as_bytes());
    assert_ne!(
        moved_map
            .node_for_slot(pool_slot)
            .map(|n| n.id().to_owned()),
        map0.node_for_slot(pool_slot).map(|n| n.id().to_owned()),
        "the pool's slot moved during the resharding"
    );
    eprintln!("the pool answered {picks} picks during the resharding");
    eprintln!(
        "resharded {} slots, {} keys; writer wrote {written} keys ({stats:?})",
        report.slots_moved, report.keys_moved
    );

    // The cluster now looks like the plan says, on every node.
    let mut expected = map.clone();
    plan.apply(&mut expected).unwrap();
    cluster.wait_ok();
    for &p in &cluster.ports {
        let (now, _) = fetch_topology(&mut connect(p)).unwrap();
        for slot in 0..16384u16 {
            assert_eq!(
                now.node_for_slot(slot).map(|n| n.id()),
                expected.node_for_slot(slot).map(|n| n.id()),
                "slot {slot} on node {p}"
            );
        }
    }

    // Every key is still there, read through a fresh client and the old one.
    let mut fresh = ClusterClient::connect(&[&url], ClusterConfig::default()).unwrap();
    for (i, k) in pipe_keys.iter().enumerate() {
        let v = fresh.get(k.as_bytes()).unwrap();
        assert_eq!(v, Some(format!("value:{i}").into_bytes()), "{k}");
        assert_eq!(c.get(k.as_bytes()).unwrap(), v);
    }
    for n in 0..written {
        let v = fresh.get(format!("w:{n}").as_bytes()).unwrap();
        assert_eq!(v, Some(format!("{n}").into_bytes()), "w:{n}");
    }
    let total: usize = cluster
        .ports
        .iter()
        .map(|&p| {
            redis::cmd("DBSIZE")
                .query::<usize>(&mut connect(p))
                .unwrap()
        })
        .sum();
    // The keys, the writer's keys and the pool's sorted set.
    assert_eq!(total, KEYS + written + 1, "no key lost or duplicated");
    assert!(c.stats().moved > 0, "the stale client followed MOVED");
}

/// Three masters rebalanced to weights 2:1:1 while a writer keeps going.
#[test]
fn reshard_to_weights_2_1_1_under_a_writer_loses_no_key() {
    let cluster = Cluster::start(3);
    reshard_under_writer(&cluster, |map| {
        let mut m: Vec<NodeIndex> = map.masters().map(|(i, _)| i).collect();
        m.sort_by_key(|&i| map[i].addr().port);
        vec![(m[0], 2), (m[1], 1), (m[2], 1)]
    });
}

/// A fourth master joins with CLUSTER MEET and gets a quarter of the slots while a
/// writer keeps going.
#[test]
fn reshard_to_a_new_fourth_master_under_a_writer_loses_no_key() {
    let mut cluster = Cluster::start(3);
    let port = cluster.add_master();
    let (map, _) = fetch_topology(&mut connect(cluster.ports[0])).unwrap();
    let new = map
        .find_addr("127.0.0.1", port)
        .expect("CLUSTER SHARDS lists the empty master");
    assert_eq!(map.slot_count(new), 0);
    reshard_under_writer(&cluster, |map| map.masters().map(|(i, _)| (i, 1)).collect());
    let (map, _) = fetch_topology(&mut connect(port)).unwrap();
    let new = map.find_addr("127.0.0.1", port).unwrap();
    assert_eq!(map.slot_count(new), 4096);
}
