//! Live resharding of a real Redis Cluster with a concurrent writer (feature `redis`):
//! no key is lost, and the final map is what the core planner asked for.
#![cfg(feature = "redis")]
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::cluster::{connect, Cluster};
use keyroute::redis::cluster::{ClusterClient, ClusterConfig};
use keyroute::redis::reshard::{execute_plan, ReshardOptions};
use keyroute::redis::topology::fetch_topology;
use keyroute::slot::{NodeIndex, Plan, SlotMap};

const KEYS: usize = 10_000;

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

    let stop = Arc::new(AtomicBool::new(false));
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
    assert_eq!(total, KEYS + written, "no key lost or duplicated");
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
