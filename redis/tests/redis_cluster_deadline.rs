//! `ClusterConfig::call_timeout` on a real 3-master cluster (one cluster for the file):
//! a slot with no owner (as mid-failover, before a replica takes over) is waited for
//! within the call's time, and past it reported `CLUSTER_NO_OWNER`, by a command and by a
//! pipeline; a pipeline over every master with one master stalled (SIGSTOP) fails within
//! about the call's time, not after the longer I/O timeout.
#![allow(clippy::unwrap_used)]

#[path = "common/children.rs"]
mod children;
mod common;

use std::time::{Duration, Instant};

use common::cluster::{connect, Cluster};
use keyroute::slot::key_slot;
use keyroute_redis::cluster::{ClusterClient, ClusterConfig};

#[test]
fn calls_and_pipelines_end_within_the_call_timeout() {
    let cluster = Cluster::start(3);
    a_slot_without_owner_is_waited_for_within_the_call_timeout(&cluster);
    a_pipeline_with_a_stalled_master_ends_within_the_call_timeout(&cluster);
}

fn a_slot_without_owner_is_waited_for_within_the_call_timeout(cluster: &Cluster) {
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
    unassign(cluster, slot);
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
    let mut q = ClusterClient::connect(&[&cluster.url()], quick.clone()).unwrap();
    unassign(cluster, slot);
    let _ = q.refresh();
    let started = Instant::now();
    let err = q.set(key, b"x").unwrap_err();
    assert_eq!(err.code().as_str(), "CLUSTER_NO_OWNER", "{err}");
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    // A pipeline waits for the owner the same way.
    let mut p = ClusterClient::connect(&[&cluster.url()], quick).unwrap();
    let _ = p.refresh();
    let started = Instant::now();
    let err = redis::pipe()
        .set(key, b"y")
        .query::<()>(&mut p)
        .map_err(|e| why(&mut p, &e))
        .unwrap_err();
    assert_eq!(err.code().as_str(), "CLUSTER_NO_OWNER", "{err}");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
    // Given back in time, it is sent there.
    let back = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let _: () = redis::cmd("CLUSTER")
            .arg("ADDSLOTS")
            .arg(slot)
            .query(&mut connect(owner))
            .unwrap();
    });
    let mut w =
        ClusterClient::connect(&[&cluster.url()], quick_but(Duration::from_secs(3))).unwrap();
    let _ = w.refresh();
    redis::pipe()
        .set(key, b"z")
        .query::<()>(&mut w)
        .map_err(|e| why(&mut w, &e))
        .unwrap();
    back.join().unwrap();
    assert_eq!(w.get(key).unwrap().as_deref(), Some(&b"z"[..]));
}

/// The client's own error behind a failed pipeline (the `redis` crate's error type carries
/// only its text).
fn why(c: &mut ClusterClient, e: &redis::RedisError) -> keyroute_redis::Error {
    c.explain(keyroute_redis::Error::ConnectionLost {
        context: "pipeline".into(),
        detail: e.to_string(),
    })
}

fn quick_but(call_timeout: Duration) -> ClusterConfig {
    ClusterConfig {
        call_timeout,
        ..ClusterConfig::default()
    }
}

/// One master stopped (SIGSTOP: its connections stay open, nothing is answered): a
/// pipeline with commands for every master fails within about the call's time (600 ms),
/// not after the I/O timeout (3 s), and not one timeout per reply.
fn a_pipeline_with_a_stalled_master_ends_within_the_call_timeout(cluster: &Cluster) {
    // Every node knows the slot given back above (cluster_state:ok everywhere).
    let start = Instant::now();
    while !cluster
        .ports
        .iter()
        .all(|&p| served(p, key_slot(b"{deadline}:k")))
    {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the slot never came back"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    cluster.wait_ok();
    let config = ClusterConfig {
        io_timeout: Duration::from_secs(3),
        call_timeout: Duration::from_millis(600),
        ..ClusterConfig::default()
    };
    let mut c = ClusterClient::connect(&[&cluster.url()], config).unwrap();
    // 300 keys over every slot range: every master gets about 100 of them.
    let keys: Vec<String> = (0..300).map(|i| format!("stall:{i}")).collect();
    let mut pipe = redis::pipe();
    for k in &keys {
        pipe.set(k, b"v").ignore();
    }
    pipe.query::<()>(&mut c).unwrap();
    let stalled = cluster.owner_of(key_slot(keys[0].as_bytes()));
    let pid = cluster.pid(stalled);
    children::signal(pid, libc::SIGSTOP);
    let started = Instant::now();
    let err = pipe
        .query::<()>(&mut c)
        .map_err(|e| why(&mut c, &e))
        .unwrap_err();
    let took = started.elapsed();
    children::signal(pid, libc::SIGCONT);
    assert_eq!(err.code().as_str(), "REDIS_TIMEOUT", "{err}");
    assert!(took < Duration::from_millis(1500), "{took:?}: {err}");
    // Once the master answers again, so does the pipeline.
    pipe.query::<()>(&mut c)
        .map_err(|e| why(&mut c, &e))
        .unwrap();
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
