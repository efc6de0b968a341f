//! A slot with no owner (as mid-failover, before a replica takes over) on a real
//! 3-master cluster: a command on it waits for an owner within the call's time
//! (`ClusterConfig::call_timeout`), and past it reports `CLUSTER_NO_OWNER`.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::cluster::{connect, Cluster};
use keyroute::slot::key_slot;
use keyroute_redis::cluster::{ClusterClient, ClusterConfig};

#[test]
fn a_slot_without_owner_is_waited_for_within_the_call_timeout() {
    let cluster = Cluster::start(3);
    let key = b"{deadline}:k";
    let slot = key_slot(key);
    let owner = cluster.owner_of(slot);
    let config = ClusterConfig {
        call_timeout: Duration::from_secs(3),
        ..ClusterConfig::default()
    };
    let mut c = ClusterClient::connect(&[&cluster.url()], config).unwrap();
    c.set(key, b"v").unwrap();
    redis::cmd("DEL")
        .arg(key)
        .query::<i64>(&mut connect(owner))
        .unwrap();
    // The slot loses its owner on every node; 600 ms later its owner takes it back.
    unassign(&cluster, slot);
    let back = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(600));
        let _: () = redis::cmd("CLUSTER")
            .arg("ADDSLOTS")
            .arg(slot)
            .query(&mut connect(owner))
            .unwrap();
    });
    // The client learns of the loss, then waits for the owner instead of failing.
    let _ = c.refresh();
    let started = Instant::now();
    c.set(key, b"w").map_err(|e| c.explain(e)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    back.join().unwrap();

    // An owner that never comes back: CLUSTER_NO_OWNER once the call's time is up.
    let quick = ClusterConfig {
        call_timeout: Duration::from_millis(400),
        ..ClusterConfig::default()
    };
    let mut q = ClusterClient::connect(&[&cluster.url()], quick).unwrap();
    unassign(&cluster, slot);
    let _ = q.refresh();
    let started = Instant::now();
    let err = q.set(key, b"x").unwrap_err();
    assert_eq!(err.code().as_str(), "CLUSTER_NO_OWNER", "{err}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

/// Whether node `port` says some node serves `slot`.
fn served(port: u16, slot: u16) -> bool {
    let v: redis::Value = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query(&mut connect(port))
        .unwrap();
    let redis::Value::Array(ranges) = v else {
        return false;
    };
    ranges.iter().any(|r| match r {
        redis::Value::Array(f) => matches!(
            (f.first(), f.get(1)),
            (Some(redis::Value::Int(lo)), Some(redis::Value::Int(hi)))
                if (*lo..=*hi).contains(&i64::from(slot))
        ),
        _ => false,
    })
}

/// Takes `slot` from its owner on every node, until no node says it is served (a node
/// may learn of an earlier ADDSLOTS by gossip after the first DELSLOTS).
fn unassign(cluster: &Cluster, slot: u16) {
    let start = Instant::now();
    while cluster.ports.iter().any(|&p| served(p, slot)) {
        for &p in &cluster.ports {
            let _: redis::RedisResult<redis::Value> = redis::cmd("CLUSTER")
                .arg("DELSLOTS")
                .arg(slot)
                .query(&mut connect(p));
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "slot {slot} still served"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
