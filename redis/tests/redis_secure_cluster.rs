//! Redis Cluster as production runs it, on real redis-server processes: 3 masters with
//! an ACL user that is not `default` (every entrance: ClusterClient, LeastUsed over
//! `Link::cluster`, the smart cache's `Store::cluster`, the topology fetch), and a TLS
//! cluster (`tls-cluster yes`, `--port 0`, `requirepass`) with replicas, where picks go
//! through a MOVED and through a failover. A wrong password is `REDIS_AUTH`, never shown.
//! On both, a live reshard of a few slots holding keys (`execute_plan`): `MIGRATE` logs
//! the source in to the target with `AUTH2 user password` (an admin ACL user) on the
//! first and `AUTH password` over TLS (`tls-cluster yes`) on the second.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::secure::{cli, eventually, free_port, redis_server, temp_dir, Certs, Proc};
use keyroute::slot::{key_slot, NodeIndex, Plan};
use keyroute_redis::cache::{CacheConfig, SmartCache, Store};
use keyroute_redis::cluster::reshard::{execute_plan, ReshardOptions};
use keyroute_redis::cluster::{fetch_topology_from, ClusterClient, ClusterConfig};
use keyroute_redis::{Endpoint, LeastUsed, Link, Timeouts};

const ADMIN: &str = "admin-pw-1";
const USER_PW: &str = "kr-user-pw-7";
/// The ACL line the README gives for keyroute's user.
const ACL: &str = "keyroute on >kr-user-pw-7 ~* &* +@all -@dangerous +info +role";
/// An operator who may reshard (`MIGRATE`, `CLUSTER SETSLOT` are `@dangerous`).
const OPS_PW: &str = "ops-pw-2";
const OPS_ACL: &str = "ops on >ops-pw-2 ~* &* +@all";

struct Nodes {
    procs: Vec<Proc>,
    tls: Option<Vec<String>>,
}

impl Nodes {
    fn cli_args(&self, port: u16) -> Vec<String> {
        let mut a = vec![
            "-p".into(),
            port.to_string(),
            "-a".into(),
            ADMIN.into(),
            "--no-auth-warning".into(),
        ];
        if let Some(t) = &self.tls {
            a.extend(t.iter().cloned());
        }
        a
    }

    fn run(&self, port: u16, args: &[&str]) -> String {
        let mut a = self.cli_args(port);
        a.extend(args.iter().map(|s| s.to_string()));
        cli(&a)
    }
}

fn start(masters: usize, replicas: usize, certs: Option<&Certs>) -> Nodes {
    let dir = temp_dir("secure-cluster");
    // An ACL file: the admin (`default`, for redis-cli and replication) and keyroute's user.
    let acl_file = dir.join("users.acl");
    std::fs::write(
        &acl_file,
        format!("user default on >{ADMIN} ~* &* +@all\nuser {ACL}\nuser {OPS_ACL}\n"),
    )
    .unwrap();
    let mut procs = Vec::new();
    for _ in 0..masters * (1 + replicas) {
        let port = free_port(true);
        let mut args: Vec<String> = vec![
            "--cluster-enabled".into(),
            "yes".into(),
            "--cluster-node-timeout".into(),
            "1000".into(),
            "--cluster-config-file".into(),
            dir.join(format!("nodes-{port}.conf")).display().to_string(),
            "--masterauth".into(),
            ADMIN.into(),
            "--repl-diskless-sync-delay".into(),
            "0".into(),
            "--aclfile".into(),
            acl_file.display().to_string(),
        ];
        match certs {
            Some(c) => {
                args.extend([
                    "--port".into(),
                    "0".into(),
                    "--tls-port".into(),
                    port.to_string(),
                ]);
                args.extend([
                    "--tls-cluster".into(),
                    "yes".into(),
                    "--tls-replication".into(),
                    "yes".into(),
                ]);
                args.extend(c.server_args(false));
            }
            None => args.extend(["--port".into(), port.to_string()]),
        }
        procs.push(redis_server(&dir, port, &args));
    }
    let tls = certs.map(|c| {
        vec![
            "--tls".into(),
            "--cacert".into(),
            c.path("ca.crt"),
            "--cert".into(),
            c.path("client.crt"),
            "--key".into(),
            c.path("client.key"),
        ]
    });
    let nodes = Nodes { procs, tls };
    let mut create = nodes.cli_args(nodes.procs[0].port);
    create.extend(["--cluster".into(), "create".into()]);
    create.extend(nodes.procs.iter().map(|p| format!("127.0.0.1:{}", p.port)));
    create.extend([
        "--cluster-replicas".into(),
        replicas.to_string(),
        "--cluster-yes".into(),
    ]);
    cli(&create);
    for p in &nodes.procs {
        eventually(Duration::from_secs(30), || {
            nodes
                .run(p.port, &["CLUSTER", "INFO"])
                .contains("cluster_state:ok")
                .then_some(())
        });
    }
    if replicas > 0 {
        for p in &nodes.procs {
            eventually(Duration::from_secs(30), || {
                let info = nodes.run(p.port, &["INFO", "replication"]);
                (!info.contains("role:slave") || info.contains("master_link_status:up"))
                    .then_some(())
            });
        }
    }
    nodes
}

fn config() -> ClusterConfig {
    ClusterConfig {
        connect_timeout: Duration::from_secs(2),
        io_timeout: Duration::from_secs(2),
        ..ClusterConfig::default()
    }
}

#[test]
fn an_acl_user_reaches_every_node_through_every_entrance() {
    let nodes = start(3, 0, None);
    let seed = format!(
        "redis://keyroute:{USER_PW}@127.0.0.1:{}",
        nodes.procs[0].port
    );

    let mut c = ClusterClient::connect(&[&seed], config()).expect("ACL user on the cluster");
    for i in 0..50 {
        let k = format!("k{i}");
        c.set(k.as_bytes(), b"v").unwrap();
        assert_eq!(c.get(k.as_bytes()).unwrap().as_deref(), Some(&b"v"[..]));
    }
    assert_eq!(c.map().masters().count(), 3);

    let mut link =
        Link::cluster(&[&seed], Timeouts::uniform(Duration::from_secs(2)), false).unwrap();
    let pool = LeastUsed::new("{acl}:pool").unwrap();
    pool.seed(&mut link, ["p1", "p2"], 0, false)
        .map_err(|e| link.explain(e))
        .unwrap();
    assert!(pool
        .pick(&mut link)
        .map_err(|e| link.explain(e))
        .unwrap()
        .is_some());

    let store = Store::cluster(&[&seed], config()).expect("the cache's store");
    let cache = SmartCache::new(store, CacheConfig::default()).unwrap();
    let v = cache
        .get_or_load(
            "c1",
            "kind",
            Instant::now() + Duration::from_secs(5),
            || Ok(b"x".to_vec()),
        )
        .unwrap();
    assert_eq!(v, b"x");

    let (map, _) = fetch_topology_from(&seed, Timeouts::default()).unwrap();
    assert_eq!(map.masters().count(), 3);

    // A wrong password: REDIS_AUTH, the secret in no message.
    let wrong = format!(
        "redis://keyroute:wrong-secret-3@127.0.0.1:{}",
        nodes.procs[0].port
    );
    let err = ClusterClient::connect(&[&wrong], config()).unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_AUTH", "{err}");
    assert!(
        !format!("{err} {err:?}").contains("wrong-secret-3"),
        "{err}"
    );
    let err = fetch_topology_from(&wrong, Timeouts::default()).unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_AUTH", "{err}");
    assert!(!err.to_string().contains("wrong-secret-3"), "{err}");
    // Without a password at all: NOAUTH, also REDIS_AUTH.
    let none = format!("redis://127.0.0.1:{}", nodes.procs[0].port);
    let err = ClusterClient::connect(&[&none], config()).unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_AUTH", "{err}");
    // A live reshard as the operator: MIGRATE logs in with AUTH2 ops ... (the source
    // has no credentials of its own for the target).
    let ops = format!("redis://ops:{OPS_PW}@127.0.0.1:{}", nodes.procs[0].port);
    reshard_a_few_slots(&ops, &seed);

    // A database on a cluster seed is refused, not dropped.
    let err = ClusterClient::lazy(&[&format!("{seed}/3")], config()).unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_BAD_URL", "{err}");
    assert!(!err.to_string().contains(USER_PW), "{err}");
}

#[test]
fn a_tls_cluster_with_a_password_through_a_moved_and_a_failover() {
    let certs = Certs::make();
    let nodes = start(3, 1, Some(&certs));
    let seed = format!(
        "rediss://:{ADMIN}@127.0.0.1:{}?{}",
        nodes.procs[0].port,
        certs.query(false)
    );
    let mut c = ClusterClient::connect(&[&seed], config()).expect("TLS cluster");
    let pool = LeastUsed::new("{moved}:pool").unwrap();
    let slot = key_slot(b"{moved}:pool");
    // Give the (empty) slot to another master behind the client's back: its next call
    // meets a MOVED, over TLS.
    let owner = c.map().node_for_slot(slot).unwrap().addr().port;
    let masters: Vec<u16> = c.map().masters().map(|(_, n)| n.addr().port).collect();
    let other = *masters.iter().find(|&&p| p != owner).unwrap();
    let other_id = nodes.run(other, &["CLUSTER", "MYID"]).trim().to_string();
    for &m in &masters {
        nodes.run(
            m,
            &["CLUSTER", "SETSLOT", &slot.to_string(), "NODE", &other_id],
        );
    }
    nodes.run(other, &["CLUSTER", "BUMPEPOCH"]);
    eventually(Duration::from_secs(10), || {
        masters
            .iter()
            .all(|&m| nodes.run(m, &["CLUSTER", "SHARDS"]).contains(&other_id))
            .then_some(())
    });
    pool.seed(&mut c, ["a", "b", "c"], 0, false)
        .map_err(|e| c.explain(e))
        .unwrap();
    assert!(c.stats().moved >= 1, "{:?}", c.stats());
    assert!(pool
        .pick(&mut c)
        .map_err(|e| c.explain(e))
        .unwrap()
        .is_some());

    // A live reshard over TLS: MIGRATE logs in with AUTH (the `default` user's password),
    // the source reaching the target over TLS (tls-cluster yes).
    reshard_a_few_slots(&seed, &seed);

    // A failover, on a pool whose slot nobody moved.
    let pool = LeastUsed::new("{failover}:pool").unwrap();
    let slot = key_slot(b"{failover}:pool");
    let other = c.map().node_for_slot(slot).unwrap().addr().port;
    pool.seed(&mut c, ["a", "b", "c"], 0, false)
        .map_err(|e| c.explain(e))
        .unwrap();
    for _ in 0..30 {
        pool.pick(&mut c)
            .map_err(|e| c.explain(e))
            .unwrap()
            .unwrap();
    }
    let replica = nodes
        .procs
        .iter()
        .map(|p| p.port)
        .find(|&p| {
            nodes
                .run(p, &["INFO", "replication"])
                .contains(&format!("master_port:{other}"))
        })
        .expect("a replica of the slot's master");
    assert_eq!(
        nodes.run(other, &["WAIT", "1", "5000"]).trim(),
        "1",
        "replicated"
    );
    // Kill the slot's master: its replica takes over, and picks go on there.
    let mut nodes = nodes;
    let i = nodes.procs.iter().position(|p| p.port == other).unwrap();
    nodes.procs[i].kill();
    let started = Instant::now();
    let mut last = String::new();
    let picked = eventually(Duration::from_secs(60), || match pool.pick(&mut c) {
        Ok(p) => p,
        Err(e) => {
            let e = c.explain(e);
            if e.to_string() != last {
                eprintln!("{:?} after the kill: {e}", started.elapsed());
                last = e.to_string();
            }
            None
        }
    });
    assert!(!picked.is_empty());
    let counts = pool.counts(&mut c).map_err(|e| c.explain(e)).unwrap();
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    // 30 picks acknowledged and replicated (WAIT), and the one after the failover.
    assert_eq!(
        total,
        31,
        "{counts:?} ({:?} after the kill)",
        started.elapsed()
    );
    assert_eq!(c.map().node_for_slot(slot).unwrap().addr().port, replica);
}

/// Moves the few slots a plan of weights 1003:1000:1000 moves (a dozen), holding 30 keys,
/// with `execute_plan` logged in as `admin`'s user; every key is then read back through
/// `seed`, and the topology gives the slots to the first master.
fn reshard_a_few_slots(admin: &str, seed: &str) {
    let (map, _) = fetch_topology_from(admin, Timeouts::default()).unwrap();
    let masters: Vec<NodeIndex> = map
        .masters()
        .filter(|(i, _)| map.slot_count(*i) > 0)
        .map(|(i, _)| i)
        .collect();
    let weights: Vec<(NodeIndex, u64)> = masters
        .iter()
        .enumerate()
        .map(|(k, &i)| (i, if k == 0 { 1003 } else { 1000 }))
        .collect();
    let plan = Plan::new(&map, &weights).unwrap();
    let moved: Vec<u16> = plan.moves().iter().flat_map(|m| m.start..=m.end).collect();
    assert!(
        !moved.is_empty() && moved.len() < 64,
        "{} slots",
        moved.len()
    );
    let keys: Vec<String> = (0..)
        .map(|i| format!("rk{i}"))
        .filter(|k| moved.contains(&key_slot(k.as_bytes())))
        .take(30)
        .collect();
    let mut c = ClusterClient::connect(&[seed], config()).unwrap();
    for k in &keys {
        c.set(k.as_bytes(), k.as_bytes()).unwrap();
    }
    let options = ReshardOptions {
        credentials: Some(Endpoint::parse(admin).unwrap()),
        ..ReshardOptions::default()
    };
    let report = execute_plan(&map, &plan, &options, |_| {}).expect("reshard");
    assert_eq!(report.keys_moved, 30);
    assert_eq!(report.slots_moved, moved.len());
    for k in &keys {
        assert_eq!(
            c.get(k.as_bytes()).unwrap().as_deref(),
            Some(k.as_bytes()),
            "{k}"
        );
    }
    let (after, _) = fetch_topology_from(admin, Timeouts::default()).unwrap();
    let to = map[masters[0]].addr();
    for s in moved {
        assert_eq!(after.node_for_slot(s).unwrap().addr(), to, "slot {s}");
    }
}
