//! The ring-sharded client over standalone Redis nodes (feature `redis`): routing, and
//! adding/removing a node with a rebalance that moves exactly the keys whose owner
//! changed, with a concurrent writer, losing and duplicating nothing.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::cluster::{connect, Nodes};
use keyroute::ring::{Profile, Ring};
use keyroute::slot::Address;
use keyroute_redis::sharded::{ShardedClient, ShardedConfig};

const KEYS: usize = 5_000;

fn addr(port: u16) -> Address {
    Address::new("127.0.0.1", port)
}

/// Every key on every node: (node port, key).
fn all_keys(ports: &[u16]) -> Vec<(u16, String)> {
    let mut out = Vec::new();
    for &p in ports {
        let mut con = connect(p);
        let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
        out.extend(keys.into_iter().map(|k| (p, k)));
    }
    out
}

/// No key on two nodes, every key on its owner under `ring`; returns the key count.
fn assert_placed(ring: &Ring, ports: &[u16]) -> usize {
    let keys = all_keys(ports);
    let mut seen = HashMap::new();
    for (p, k) in &keys {
        assert!(seen.insert(k.clone(), *p).is_none(), "{k} duplicated");
        assert_eq!(
            ring.get(k.as_bytes()),
            Some(format!("127.0.0.1:{p}").as_str()),
            "{k} misplaced"
        );
    }
    keys.len()
}

/// Preloads KEYS keys (some with a TTL), stages `change`, then rebalances while a writer
/// thread writes new keys, overwrites and deletes preloaded keys through the same client.
fn change_under_writer(
    profile: Profile,
    nodes: &Nodes,
    initial: usize,
    change: impl FnOnce(&ShardedClient),
) -> (Ring, Ring, u64) {
    let ring = Ring::with_nodes(profile, (0..initial).map(|i| (nodes.name(i), 1))).unwrap();
    let client =
        Arc::new(ShardedClient::from_ring(ring.clone(), ShardedConfig::default()).unwrap());
    for i in 0..KEYS {
        client
            .set(format!("k:{i}").as_bytes(), format!("v:{i}").as_bytes())
            .unwrap();
    }
    for i in 0..100 {
        let _: () = client
            .query(redis::cmd("PEXPIRE").arg(format!("k:{i}")).arg(600_000))
            .unwrap();
    }
    let old = client.ring();
    change(&client);
    let new = client.pending_ring().expect("change staged");
    let should_move = (0..KEYS)
        .filter(|i| {
            let k = format!("k:{i}");
            old.get(k.as_bytes()) != new.get(k.as_bytes())
        })
        .count() as u64;
    assert!(should_move > 0);

    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (client, stop) = (Arc::clone(&client), Arc::clone(&stop));
        thread::spawn(move || {
            let mut n = 0usize;
            let mut overwritten = HashMap::new();
            let mut deleted = Vec::new();
            while !stop.load(Ordering::Relaxed) || n < 2000 {
                client.set(format!("w:{n}").as_bytes(), b"w").unwrap();
                let i = 100 + (n * 7919) % (KEYS - 100);
                match n % 10 {
                    0 => {
                        client
                            .set(format!("k:{i}").as_bytes(), format!("x:{n}").as_bytes())
                            .unwrap();
                        overwritten.insert(i, format!("x:{n}"));
                    }
                    1 if !overwritten.contains_key(&i) => {
                        client.del(format!("k:{i}").as_bytes()).unwrap();
                        deleted.push(i);
                    }
                    _ => {
                        let v = client.get(format!("k:{i}").as_bytes()).unwrap();
                        let want = if deleted.contains(&i) {
                            None
                        } else {
                            Some(
                                overwritten
                                    .get(&i)
                                    .cloned()
                                    .unwrap_or(format!("v:{i}"))
                                    .into_bytes(),
                            )
                        };
                        assert_eq!(v, want, "k:{i} during rebalance");
                    }
                }
                n += 1;
            }
            (n, overwritten, deleted)
        })
    };
    let report = client.rebalance().unwrap();
    stop.store(true, Ordering::Relaxed);
    let (written, overwritten, deleted) = writer.join().expect("writer");
    assert!(client.pending_ring().is_none());
    eprintln!("{report:?}, should move {should_move}, writer wrote {written}");
    assert_eq!(
        report.moved, should_move,
        "moved exactly the keys whose owner changed"
    );
    assert!(report.moved_by_scan <= report.moved);

    // Every key readable, with its last value, on its owner, once.
    for i in 0..KEYS {
        let v = client.get(format!("k:{i}").as_bytes()).unwrap();
        let want = if deleted.contains(&i) {
            None
        } else {
            Some(
                overwritten
                    .get(&i)
                    .cloned()
                    .unwrap_or(format!("v:{i}"))
                    .into_bytes(),
            )
        };
        assert_eq!(v, want, "k:{i}");
    }
    for n in 0..written {
        assert_eq!(
            client.get(format!("w:{n}").as_bytes()).unwrap().as_deref(),
            Some(&b"w"[..])
        );
    }
    let mut deleted_set = deleted.clone();
    deleted_set.sort_unstable();
    deleted_set.dedup();
    let total = assert_placed(&new, &nodes.ports);
    assert_eq!(total, KEYS - deleted_set.len() + written);
    // TTLs travelled with the keys.
    for i in 0..100 {
        let k = format!("k:{i}");
        let owner = new.get(k.as_bytes()).unwrap();
        let port: u16 = owner.rsplit(':').next().unwrap().parse().unwrap();
        let pttl: i64 = redis::cmd("PTTL")
            .arg(&k)
            .query(&mut connect(port))
            .unwrap();
        assert!(pttl > 500_000, "{k} lost its TTL: {pttl}");
    }
    (old, new, report.moved)
}

/// Routing: each key goes to its ring owner; arbitrary single-key commands work.
#[test]
fn sharded_routes_by_ring_owner() {
    let nodes = Nodes::start(3);
    let ring =
        Ring::with_nodes(Profile::libmemcached(), (0..3).map(|i| (nodes.name(i), 1))).unwrap();
    let client = ShardedClient::from_ring(ring.clone(), ShardedConfig::default()).unwrap();
    for i in 0..300 {
        client.set(format!("k:{i}").as_bytes(), b"v").unwrap();
    }
    let n: i64 = client.query(redis::cmd("INCR").arg("counter")).unwrap();
    assert_eq!(n, 1);
    let _: () = client
        .query(redis::cmd("HSET").arg("h").arg("f").arg("x"))
        .unwrap();
    assert_eq!(assert_placed(&ring, &nodes.ports), 302);
    assert!(client.del(b"k:1").unwrap());
    assert_eq!(client.get(b"k:1").unwrap(), None);
    assert_eq!(client.owner(b"k:2").as_deref(), ring.get(b"k:2"));
    // Nothing pending: rebalance is a no-op.
    assert_eq!(client.rebalance().unwrap().moved, 0);
}

/// Native ring: a fourth node is added and rebalanced under a concurrent writer.
#[test]
fn add_node_and_rebalance_under_a_writer() {
    let mut nodes = Nodes::start(3);
    let port = nodes.spawn();
    let (_, new, moved) = change_under_writer(Profile::native(), &nodes, 3, |c| {
        c.add_node(&format!("127.0.0.1:{port}"), addr(port), 1)
            .unwrap();
        assert!(
            c.add_node("x:1", addr(1), 1).is_err(),
            "one change at a time"
        );
    });
    assert!(new.len() == 4);
    // Consistent hashing: about a quarter of the keys moved, all to the new node.
    assert!(
        (KEYS as u64 / 8..KEYS as u64 / 2).contains(&moved),
        "{moved}"
    );
}

/// libketama ring (every node's share is recomputed): a node is removed and drained.
#[test]
fn remove_node_and_rebalance_under_a_writer() {
    let nodes = Nodes::start(4);
    let removed = nodes.name(3);
    let (_, new, _) = change_under_writer(Profile::libketama(), &nodes, 4, |c| {
        c.remove_node(&removed).unwrap();
    });
    assert!(!new.contains(&removed));
    let n: usize = redis::cmd("DBSIZE")
        .query(&mut connect(nodes.ports[3]))
        .unwrap();
    assert_eq!(n, 0, "the removed node is drained");
}

/// Nodes with a password, the client's credentials naming database 2: a rebalance moves
/// keys with `MIGRATE ... 2 ... AUTH password` (the source logs in to the target with
/// the credentials, and keeps the database), so every key is still read back, in
/// database 2 and nowhere else.
#[test]
fn rebalance_with_a_password_and_a_database() {
    use common::secure::{cli, free_port, redis_server, temp_dir};
    const PW: &str = "sharded-pw-6";
    let dir = temp_dir("sharded-auth");
    let procs: Vec<_> = (0..3)
        .map(|_| {
            let p = free_port(false);
            redis_server(
                &dir,
                p,
                &[
                    "--port".into(),
                    p.to_string(),
                    "--requirepass".into(),
                    PW.into(),
                ],
            )
        })
        .collect();
    let name = |i: usize| format!("127.0.0.1:{}", procs[i].port);
    let ring = Ring::with_nodes(Profile::native(), (0..2).map(|i| (name(i), 1))).unwrap();
    let config = ShardedConfig {
        credentials: Some(
            keyroute_redis::Endpoint::parse(&format!("redis://:{PW}@127.0.0.1:1/2")).unwrap(),
        ),
        ..ShardedConfig::default()
    };
    let client = ShardedClient::from_ring(ring, config).unwrap();
    for i in 0..300 {
        client.set(format!("k:{i}").as_bytes(), b"v").unwrap();
    }
    client.add_node(&name(2), addr(procs[2].port), 1).unwrap();
    let report = client.rebalance().unwrap();
    assert!(report.moved > 0, "{report:?}");
    for i in 0..300 {
        assert_eq!(
            client.get(format!("k:{i}").as_bytes()).unwrap().as_deref(),
            Some(&b"v"[..]),
            "k:{i}"
        );
    }
    let size = |port: u16, db: &str| -> u64 {
        let a: Vec<String> = [
            "-p",
            &port.to_string(),
            "-a",
            PW,
            "--no-auth-warning",
            "-n",
            db,
            "DBSIZE",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        cli(&a).trim().parse().unwrap()
    };
    let in_2: u64 = procs.iter().map(|p| size(p.port, "2")).sum();
    let in_0: u64 = procs.iter().map(|p| size(p.port, "0")).sum();
    assert_eq!((in_2, in_0), (300, 0));
    assert!(size(procs[2].port, "2") > 0);
}
