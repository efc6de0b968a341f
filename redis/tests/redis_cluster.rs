//! Redis Cluster topology and routing against a real 3-master cluster (feature `redis`).
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::HashMap;

use common::cluster::{connect, Cluster};
use keyroute::slot::{key_slot, Health, Role, SlotMap};
use keyroute_redis::cluster::topology::{
    fetch_shards, fetch_slots, fetch_topology, TopologySource,
};
use keyroute_redis::cluster::{ClusterClient, ClusterConfig};

/// id → (address, role), and slot → owner id, from `CLUSTER NODES`.
type NodesView = (HashMap<String, (String, Role)>, Vec<Option<String>>);

/// `CLUSTER NODES` parsed by hand, as the independent reference.
fn cluster_nodes(port: u16) -> NodesView {
    let text: String = redis::cmd("CLUSTER")
        .arg("NODES")
        .query(&mut connect(port))
        .expect("CLUSTER NODES");
    let mut nodes = HashMap::new();
    let mut owners = vec![None; 16384];
    for line in text.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let addr = f[1].split('@').next().unwrap().to_string();
        let role = if f[2].contains("master") {
            Role::Master
        } else {
            Role::Replica
        };
        nodes.insert(f[0].to_string(), (addr, role));
        for s in &f[8..] {
            if s.starts_with('[') {
                continue;
            }
            let (a, b) = s.split_once('-').unwrap_or((s, s));
            let (a, b) = (a.parse::<usize>().unwrap(), b.parse::<usize>().unwrap());
            owners[a..=b].fill(Some(f[0].to_string()));
        }
    }
    (nodes, owners)
}

fn assert_matches_nodes(map: &SlotMap, port: u16, with_ids: bool) {
    let (nodes, owners) = cluster_nodes(port);
    for (slot, owner) in owners.iter().enumerate() {
        let n = map.node_for_slot(slot as u16).expect("slot owned");
        let id = owner.as_ref().expect("NODES owner");
        assert_eq!(n.addr().to_string(), nodes[id].0, "slot {slot}");
        if with_ids {
            assert_eq!(n.id(), id, "slot {slot}");
        }
    }
    for (_, n) in map.iter() {
        let (addr, role) = &nodes[n.id()];
        assert_eq!(&n.addr().to_string(), addr);
        assert_eq!(n.role(), *role);
    }
}

/// CLUSTER SHARDS and CLUSTER SLOTS, parsed into the core SlotMap from every node, agree
/// with each other and with CLUSTER NODES (ids, addresses, roles, every slot's owner).
#[test]
fn topology_from_shards_and_slots_agrees_with_cluster_nodes() {
    let cluster = Cluster::start(3);
    for &port in &cluster.ports {
        let mut con = connect(port);
        let shards = SlotMap::from_shards(&fetch_shards(&mut con).unwrap()).unwrap();
        let slots = SlotMap::from_slots(&fetch_slots(&mut con).unwrap()).unwrap();
        assert!(shards.is_complete() && slots.is_complete());
        assert_eq!(shards.masters().count(), 3);
        assert!(shards.nodes().iter().all(|n| n.health() == Health::Online));
        let mut counts = shards.slot_counts();
        counts.sort_unstable();
        assert_eq!(counts, [5461, 5461, 5462]);
        for slot in 0..16384u16 {
            let (a, b) = (
                shards.node_for_slot(slot).unwrap(),
                slots.node_for_slot(slot).unwrap(),
            );
            assert_eq!((a.id(), a.addr()), (b.id(), b.addr()), "slot {slot}");
        }
        assert_matches_nodes(&shards, port, true);
        assert_matches_nodes(&slots, port, true);
        let (map, source) = fetch_topology(&mut con).unwrap();
        assert_eq!(source, TopologySource::Shards);
        assert_eq!(map, shards);
    }
}

/// Single-key commands are routed by slot to all three masters, and each key lands on
/// the master that owns its slot.
#[test]
fn routed_get_set_across_all_masters() {
    let cluster = Cluster::start(3);
    let mut c = ClusterClient::connect(&[&cluster.url()], ClusterConfig::default()).unwrap();
    for i in 0..600 {
        c.set(format!("key:{i}").as_bytes(), format!("v{i}").as_bytes())
            .unwrap();
    }
    for i in 0..600 {
        let v = c.get(format!("key:{i}").as_bytes()).unwrap();
        assert_eq!(v, Some(format!("v{i}").into_bytes()));
    }
    // Each master holds exactly the keys of its slots.
    let map = c.map().clone();
    let mut total = 0;
    for (idx, node) in map.masters() {
        let mut con = connect(node.addr().port);
        let n: usize = redis::cmd("DBSIZE").query(&mut con).unwrap();
        let expected = (0..600)
            .filter(|i| map.owner(key_slot(format!("key:{i}").as_bytes())) == Some(idx))
            .count();
        assert!(n > 100, "master {} holds {n}", node.addr());
        assert_eq!(n, expected);
        total += n;
    }
    assert_eq!(total, 600);
    // Arbitrary single-key commands, routed by their first argument.
    let n: i64 = c.query(redis::cmd("INCRBY").arg("counter").arg(5)).unwrap();
    assert_eq!(n, 5);
    assert!(c.del(b"key:1").unwrap());
    assert_eq!(c.get(b"key:1").unwrap(), None);
    assert_eq!(c.stats().moved, 0);
    assert_eq!(c.stats().asked, 0);
}

fn other_master(map: &SlotMap, slot: u16) -> (u16, u16, String, String) {
    let from = map.node_for_slot(slot).unwrap();
    let to = map
        .masters()
        .map(|(_, n)| n)
        .find(|n| n.id() != from.id())
        .unwrap();
    (
        from.addr().port,
        to.addr().port,
        from.id().to_string(),
        to.id().to_string(),
    )
}

/// A slot moved behind the client's back (SETSLOT NODE on every master): the client
/// gets MOVED, updates that slot at once, resends, and later refreshes.
#[test]
fn moved_is_followed_and_updates_the_map() {
    let cluster = Cluster::start(3);
    let mut c = ClusterClient::connect(&[&cluster.url()], ClusterConfig::default()).unwrap();
    let key = b"{moved}k";
    let slot = key_slot(key);
    let (from_port, to_port, _from_id, to_id) = other_master(c.map(), slot);
    for &p in &cluster.ports {
        let _: () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("NODE")
            .arg(&to_id)
            .query(&mut connect(p))
            .unwrap();
    }
    assert_eq!(c.map().node_for_slot(slot).unwrap().addr().port, from_port);
    c.set(key, b"after").unwrap();
    assert_eq!(c.stats().moved, 1);
    assert_eq!(c.map().node_for_slot(slot).unwrap().addr().port, to_port);
    let on_target: Option<String> = redis::cmd("GET")
        .arg(key)
        .query(&mut connect(to_port))
        .unwrap();
    assert_eq!(on_target.as_deref(), Some("after"));
    assert_eq!(c.get(key).unwrap().as_deref(), Some(&b"after"[..]));
    assert_eq!(c.stats().moved, 1, "the map was updated: no second MOVED");
    // The throttled full refresh happens on a later command.
    std::thread::sleep(c.config().refresh_interval);
    let before = c.stats().refreshes;
    c.get(b"anything").unwrap();
    assert_eq!(c.stats().refreshes, before + 1);
}

/// During a migration (IMPORTING/MIGRATING), a key not yet on the source gets ASK: the
/// client sends ASKING + the command to the target, and leaves the map untouched.
#[test]
fn ask_during_migration_leaves_the_map_untouched() {
    let cluster = Cluster::start(3);
    let mut c = ClusterClient::connect(&[&cluster.url()], ClusterConfig::default()).unwrap();
    let (old, new) = (b"{ask}old".as_slice(), b"{ask}new".as_slice());
    let slot = key_slot(old);
    c.set(old, b"1").unwrap();
    let (from_port, to_port, from_id, to_id) = other_master(c.map(), slot);
    let setslot = |port: u16, args: &[&str]| {
        let mut cmd = redis::cmd("CLUSTER");
        cmd.arg("SETSLOT").arg(slot);
        for a in args {
            cmd.arg(*a);
        }
        let _: () = cmd.query(&mut connect(port)).unwrap();
    };
    setslot(to_port, &["IMPORTING", &from_id]);
    setslot(from_port, &["MIGRATING", &to_id]);
    let map_before = c.map().clone();
    // The source still serves the key it has...
    assert_eq!(c.get(old).unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(c.stats().asked, 0);
    // ...and sends new keys to the target with ASK.
    c.set(new, b"2").unwrap();
    assert_eq!(c.stats().asked, 1);
    assert_eq!(c.get(new).unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(c.stats().asked, 2);
    assert_eq!(c.map(), &map_before, "ASK never changes the map");
    assert_eq!(c.stats().moved, 0);
    let mut target = connect(to_port);
    let keys: Vec<String> = redis::cmd("CLUSTER")
        .arg("GETKEYSINSLOT")
        .arg(slot)
        .arg(10)
        .query(&mut target)
        .unwrap();
    assert_eq!(keys, ["{ask}new"]);
    // Finish the migration: the old key moves, the slot is handed over, MOVED follows.
    let _: () = redis::cmd("MIGRATE")
        .arg("127.0.0.1")
        .arg(to_port)
        .arg(old)
        .arg(0)
        .arg(5000)
        .query(&mut connect(from_port))
        .unwrap();
    for p in [to_port, from_port] {
        setslot(p, &["NODE", &to_id]);
    }
    for &p in &cluster.ports {
        if p != to_port && p != from_port {
            setslot(p, &["NODE", &to_id]);
        }
    }
    assert_eq!(c.get(old).unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(c.stats().moved, 1);
    assert_eq!(c.map().node_for_slot(slot).unwrap().addr().port, to_port);
}

/// A connection error (node unreachable) surfaces as an error within the timeouts,
/// without a panic or a hang.
#[test]
fn unreachable_seed_is_an_error() {
    let port = common::cluster::free_port(false);
    let config = ClusterConfig {
        connect_timeout: std::time::Duration::from_millis(200),
        ..ClusterConfig::default()
    };
    let start = std::time::Instant::now();
    let err = ClusterClient::connect(&[&format!("127.0.0.1:{port}")], config).unwrap_err();
    assert!(
        err.to_string().contains("no cluster node reachable"),
        "{err}"
    );
    assert!(start.elapsed() < std::time::Duration::from_secs(5));
}

/// CLUSTERDOWN (a slot unserved, full coverage required): the client backs off, gives
/// up after `max_attempts` with the last error, and works again once the cluster is back.
#[test]
fn clusterdown_backs_off_with_bounded_retries_then_recovers() {
    let cluster = Cluster::start(3);
    let config = ClusterConfig {
        max_attempts: 4,
        backoff: std::time::Duration::from_millis(5),
        refresh_interval: std::time::Duration::from_millis(10),
        ..ClusterConfig::default()
    };
    let mut c = ClusterClient::connect(&[&cluster.url()], config).unwrap();
    c.set(b"down:k", b"1").unwrap();
    let gone = key_slot(b"{gone}");
    let owner = c.map().node_for_slot(gone).unwrap().addr().port;
    for &p in &cluster.ports {
        let _: () = redis::cmd("CLUSTER")
            .arg("DELSLOTS")
            .arg(gone)
            .query(&mut connect(p))
            .unwrap_or(());
    }
    // Wait until the node serving "down:k" says the cluster is down.
    let k_port = c.map().node_for_key(b"down:k").unwrap().addr().port;
    let start = std::time::Instant::now();
    loop {
        let info: String = redis::cmd("CLUSTER")
            .arg("INFO")
            .query(&mut connect(k_port))
            .unwrap();
        if info.contains("cluster_state:fail") {
            break;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let err = c.get(b"down:k").unwrap_err();
    assert!(err.to_string().contains("CLUSTERDOWN"), "{err}");
    assert!(c.stats().backoffs >= 3);
    // Give the slot back: the client recovers by itself.
    let _: () = redis::cmd("CLUSTER")
        .arg("ADDSLOTS")
        .arg(gone)
        .query(&mut connect(owner))
        .unwrap();
    cluster.wait_ok();
    assert_eq!(c.get(b"down:k").unwrap().as_deref(), Some(&b"1"[..]));
    c.set(b"{gone}x", b"2").unwrap();
    assert_eq!(c.map().node_for_slot(gone).unwrap().addr().port, owner);
}

/// A master killed mid-run: commands for its slots fail within the configured timeouts
/// and bounded retries (no panic, no hang); the other masters keep answering.
#[test]
fn dead_master_is_a_bounded_error_others_keep_working() {
    let mut cluster = Cluster::start(3);
    let config = ClusterConfig {
        connect_timeout: std::time::Duration::from_millis(200),
        io_timeout: std::time::Duration::from_millis(500),
        max_attempts: 3,
        backoff: std::time::Duration::from_millis(10),
        ..ClusterConfig::default()
    };
    let mut c = ClusterClient::connect(&[&cluster.url()], config).unwrap();
    let keys: Vec<String> = (0..50).map(|i| format!("dead:{i}")).collect();
    for k in &keys {
        c.set(k.as_bytes(), b"v").unwrap();
    }
    let victim = c.map().node_for_key(b"dead:0").unwrap().addr().port;
    cluster.kill(victim);
    let start = std::time::Instant::now();
    let err = c.get(b"dead:0").unwrap_err();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(
        matches!(err, keyroute_redis::Error::TooManyAttempts { .. }),
        "{err}"
    );
    for k in &keys {
        let port = c.map().node_for_key(k.as_bytes()).unwrap().addr().port;
        if port != victim {
            assert_eq!(
                c.get(k.as_bytes()).unwrap().as_deref(),
                Some(&b"v"[..]),
                "{k}"
            );
        }
    }
}
