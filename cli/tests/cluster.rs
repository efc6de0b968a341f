//! `keyroute cluster slots` and `keyroute cluster rebalance` end to end on a real
//! 3-master Redis Cluster (started on free 127.0.0.1 ports by the Redis crate's test
//! harness, stopped on drop), with a 4th master added and filled live.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../redis/tests/common/mod.rs"]
mod servers;

use common::{fails_with, keyroute, ok};
use keyroute::slot::{key_slot, Role, SlotMap};
use servers::cluster::{connect, Cluster};

fn map_of(url: &str) -> (serde_json::Value, SlotMap) {
    let json = ok(&keyroute(
        &["cluster", "slots", "--redis", url, "--format", "json"],
        None,
    ));
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let map: SlotMap = serde_json::from_value(value["map"].clone()).unwrap();
    (value, map)
}

fn master_counts(map: &SlotMap) -> Vec<(u16, usize)> {
    let mut counts: Vec<(u16, usize)> = map
        .masters()
        .map(|(i, n)| (n.addr().port, map.slot_count(i)))
        .collect();
    counts.sort_unstable();
    counts
}

#[test]
fn slots_and_a_live_rebalance_onto_a_new_master() {
    let mut cluster = Cluster::start(3);
    let seed = format!("127.0.0.1:{}", cluster.ports[0]);

    // Keys written before the rebalance, to read back after it.
    let mut con = connect(cluster.ports[0]);
    let mut keys = Vec::new();
    let (_, before) = map_of(&seed);
    for i in 0..300 {
        let key = format!("user:{i}");
        let owner = before.node_for_key(key.as_bytes()).unwrap().addr().port;
        if owner == cluster.ports[0] {
            let _: () = redis::cmd("SET").arg(&key).arg(i).query(&mut con).unwrap();
            keys.push(key);
        }
        if keys.len() == 20 {
            break;
        }
    }
    assert_eq!(keys.len(), 20);

    // The table and the JSON agree with the cluster: 3 masters, every slot served.
    let table = ok(&keyroute(&["cluster", "slots", "--redis", &seed], None));
    assert!(table.starts_with("NODE"), "{table}");
    assert!(
        table.contains("(CLUSTER SHARDS; 0 slots unassigned)"),
        "{table}"
    );
    let (value, map) = map_of(&seed);
    assert_eq!(value["source"], "CLUSTER SHARDS");
    assert_eq!(value["unassigned"], 0);
    assert!(map.is_complete());
    let ports: Vec<u16> = master_counts(&map).iter().map(|&(p, _)| p).collect();
    let mut want_ports = cluster.ports.clone();
    want_ports.sort_unstable();
    assert_eq!(ports, want_ports);
    for (_, n) in map.iter() {
        assert_eq!(n.role(), Role::Master);
        assert_eq!(n.id(), cluster.id(n.addr().port));
    }
    // The owner of a key in the JSON map is the node that serves it.
    let slot = key_slot(keys[0].as_bytes());
    assert_eq!(
        map.node_for_slot(slot).unwrap().addr().port,
        cluster.ports[0]
    );

    // A 4th, empty master; the plan fills it to a quarter of the slots.
    let new_port = cluster.add_master();
    let weights: String = cluster
        .ports
        .iter()
        .map(|p| format!("127.0.0.1:{p}=1"))
        .collect::<Vec<_>>()
        .join(",");
    // Errors first: unknown node, the ambiguous form, a master left out.
    let err = fails_with(
        &keyroute(
            &[
                "cluster",
                "rebalance",
                "--redis",
                &seed,
                "--weights",
                "127.0.0.1:1=1",
                "--dry-run",
            ],
            None,
        ),
        "UNKNOWN_NODE",
    );
    assert!(err.contains("127.0.0.1:1"), "{err}");
    fails_with(
        &keyroute(
            &[
                "cluster",
                "rebalance",
                "--redis",
                &seed,
                "--weights",
                "abcdef:2",
                "--dry-run",
            ],
            None,
        ),
        "AMBIGUOUS_NODE_SPEC",
    );
    fails_with(
        &keyroute(
            &[
                "cluster",
                "rebalance",
                "--redis",
                &seed,
                "--weights",
                &format!("127.0.0.1:{new_port}=1"),
                "--dry-run",
            ],
            None,
        ),
        "BAD_PLAN",
    );
    let dry = ok(&keyroute(
        &[
            "cluster",
            "rebalance",
            "--redis",
            &seed,
            "--weights",
            &weights,
            "--dry-run",
        ],
        None,
    ));
    assert!(dry.contains("4096 slots to move"), "{dry}");
    let (_, unchanged) = map_of(&seed);
    assert_eq!(
        master_counts(&unchanged).iter().map(|c| c.1).sum::<usize>(),
        16384
    );
    assert!(
        master_counts(&unchanged).contains(&(new_port, 0)),
        "dry run moves nothing"
    );

    let live = ok(&keyroute(
        &[
            "cluster",
            "rebalance",
            "--redis",
            &seed,
            "--weights",
            &weights,
        ],
        None,
    ));
    assert!(live.contains("moved 4096 slots"), "{live}");
    cluster.wait_ok();
    let (_, after) = map_of(&seed);
    assert!(after.is_complete());
    let counts = master_counts(&after);
    assert_eq!(counts.len(), 4);
    for (port, count) in &counts {
        assert_eq!(*count, 4096, "{port}: {counts:?}");
    }
    // Every key is still there, on the node the new map names.
    for (i, key) in keys.iter().enumerate() {
        let port = after.node_for_key(key.as_bytes()).unwrap().addr().port;
        let value: Option<i64> = redis::cmd("GET")
            .arg(key)
            .query(&mut connect(port))
            .unwrap();
        let want = key.trim_start_matches("user:").parse::<i64>().unwrap();
        assert_eq!(value, Some(want), "key #{i} {key} on {port}");
    }
}
