//! `LeastUsed` and `Leases` on a local 3-master Redis Cluster through the `redis` crate's
//! `ClusterConnection`: pools whose hash tags land on different masters agree with the
//! in-memory model; `SCRIPT FLUSH` on every node is transparent (single calls: NOSCRIPT →
//! `SCRIPT LOAD`, which the crate sends to every master → retry; pipelined picks are
//! `EVAL`s on a cluster connection, see `LeastUsed::pick_many`).

#[path = "common/cluster.rs"]
#[allow(dead_code)]
mod cluster;

use std::collections::BTreeSet;
use std::time::Duration;

use keyroute::select::{Pool, Restore};
use keyroute::slot::key_slot;
use keyroute_redis::leases::Now;
use keyroute_redis::{Leases, LeastUsed, Release};
use redis::cluster::{ClusterClient, ClusterConnection};

fn cluster_connection(cluster: &cluster::Cluster) -> ClusterConnection {
    ClusterClient::builder(cluster.urls())
        .connection_timeout(Duration::from_secs(2))
        .response_timeout(Duration::from_secs(2))
        .build()
        .expect("cluster client")
        .get_connection()
        .expect("cluster connection")
}

fn flush_scripts_everywhere(cluster: &cluster::Cluster) {
    for &port in &cluster.ports {
        let _: () = redis::cmd("SCRIPT")
            .arg("FLUSH")
            .query(&mut cluster::connect(port))
            .expect("SCRIPT FLUSH");
    }
}

#[test]
fn least_used_and_leases_work_on_a_cluster() {
    let cluster = cluster::Cluster::start(3);
    let mut con = cluster_connection(&cluster);
    // Tags spread over the three masters: each master is asked directly, and the one that
    // answers without MOVED owns the key.
    let keys = ["{a}:pool", "{b}:pool", "{c}:pool", "plain-pool"];
    let owner = |key: &str| -> u16 {
        let owners: Vec<u16> = cluster
            .ports
            .iter()
            .copied()
            .filter(|&port| {
                redis::cmd("EXISTS")
                    .arg(key)
                    .query::<i64>(&mut cluster::connect(port))
                    .is_ok()
            })
            .collect();
        assert_eq!(
            owners.len(),
            1,
            "{key}: exactly one master serves it: {owners:?}"
        );
        owners[0]
    };
    let masters: BTreeSet<u16> = keys.iter().map(|k| owner(k)).collect();
    assert_eq!(masters.len(), 3, "the pools cover every master");

    for key in keys {
        let pool = LeastUsed::new(key).expect("key");
        assert_eq!(key_slot(pool.side_key()), key_slot(pool.pool_key()));
        let mut model = Pool::new();
        let members = ["m3", "m1", "m2"];
        assert_eq!(pool.pick(&mut con).expect("pick"), None, "{key}");
        assert_eq!(pool.seed(&mut con, members, 0, false).expect("seed"), 3);
        model.seed(members, 0, false).expect("model seed");
        for round in 0..3 {
            flush_scripts_everywhere(&cluster);
            assert_eq!(
                pool.pick(&mut con).expect("pick"),
                model.pick(),
                "{key} {round}"
            );
            flush_scripts_everywhere(&cluster);
            assert_eq!(
                pool.pick_many(&mut con, 25).expect("pick_many"),
                model.pick_many(25),
                "{key} {round}"
            );
        }
        assert_eq!(
            pool.remove(&mut con, b"m1").expect("remove"),
            model.remove(b"m1")
        );
        assert_eq!(
            pool.pick_many(&mut con, 7).expect("pick_many"),
            model.pick_many(7)
        );
        assert_eq!(
            pool.restore(&mut con, b"m1", Restore::AtMinimum)
                .expect("restore"),
            model.restore(b"m1", Restore::AtMinimum).expect("restore")
        );
        let modelled: Vec<(Vec<u8>, u64)> = model.counts().map(|(m, c)| (m.to_vec(), c)).collect();
        assert_eq!(pool.counts(&mut con).expect("counts"), modelled, "{key}");
    }

    let leases = Leases::new("{jobs}:busy").expect("key");
    leases.seed(&mut con, ["x", "y"]).expect("seed");
    flush_scripts_everywhere(&cluster);
    let a = leases
        .acquire(&mut con, Duration::from_millis(50))
        .expect("acquire")
        .expect("lease");
    let b = leases
        .acquire(&mut con, Duration::from_secs(60))
        .expect("acquire")
        .expect("lease");
    assert_ne!(a.member, b.member);
    std::thread::sleep(Duration::from_millis(120));
    let reclaimed = leases.reclaim(&mut con, Now::Server).expect("reclaim");
    assert_eq!(reclaimed.as_slice(), std::slice::from_ref(&a));
    assert_eq!(
        leases.release(&mut con, &a).expect("release"),
        Release::AlreadyReleasedOrExpired
    );
    assert_eq!(
        leases.release(&mut con, &b).expect("release"),
        Release::Released
    );
    assert!(leases
        .in_flight(&mut con)
        .expect("in flight")
        .iter()
        .all(|(_, n)| *n == 0));
}
