//! Faults under `LeastUsed`/`Leases` on a local 3-master Redis Cluster, through
//! keyroute's [`ClusterClient`]:
//!
//! * `CLIENT PAUSE` and `DEBUG SLEEP` force timeouts: an error within the bound, never a
//!   pick counted twice, then the same client works;
//! * `SCRIPT FLUSH` on every node while two clients pick: no error, every pick counted
//!   exactly once;
//! * the pool's slot migrates (`ASK`, then `MOVED`) again and again while `pick_many`
//!   pipelines are in flight: every pick counted exactly once (only the picks answered
//!   `ASK`/`MOVED` are resent, with `ASKING`);
//! * one pipeline cut by a half-migrated slot (part answered, part `ASK`): only the
//!   redirected commands are resent, each exactly once;
//! * `TRYAGAIN` on multi-key scripts and `MGET` while a slot is half migrated: retried
//!   until the migration ends, or a clear error after the retries;
//! * the cluster down when the client is made, and killed mid-run: clear errors, then
//!   the same client works once the nodes are back.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::cluster::{connect, Cluster};
use keyroute::slot::key_slot;
use keyroute_redis::cluster::{ClusterClient, ClusterConfig};
use keyroute_redis::{Leases, LeastUsed};

const IO: Duration = Duration::from_millis(300);
/// Slack for a loaded 2-core machine on top of the configured timeout.
const SLACK: Duration = Duration::from_millis(1500);

fn config() -> ClusterConfig {
    ClusterConfig {
        connect_timeout: IO,
        io_timeout: IO,
        ..ClusterConfig::default()
    }
}

fn client(cluster: &Cluster, config: ClusterConfig) -> ClusterClient {
    let urls = cluster.urls();
    let seeds: Vec<&str> = urls.iter().map(String::as_str).collect();
    ClusterClient::connect(&seeds, config).unwrap()
}

fn total(pool: &LeastUsed, c: &mut ClusterClient) -> u64 {
    pool.counts(c)
        .map_err(|e| c.explain(e))
        .unwrap()
        .iter()
        .map(|(_, n)| n)
        .sum()
}

fn id(port: u16) -> String {
    redis::cmd("CLUSTER")
        .arg("MYID")
        .query(&mut connect(port))
        .unwrap()
}

fn run(port: u16, cmd: &mut redis::Cmd) -> redis::Value {
    cmd.query(&mut connect(port)).unwrap()
}

/// Picks under a fault that makes calls time out: the call fails within the bound, the
/// picks it carried are counted at most once, and picks work again afterwards.
fn timeouts_under(fault: &str, start_fault: impl FnOnce(u16) -> thread::JoinHandle<()>) {
    let cluster = Cluster::start(3);
    let mut c = client(&cluster, config());
    let pool = LeastUsed::new("{pause}:pool").unwrap();
    pool.seed(&mut c, ["a", "b", "c"], 0, false).unwrap();
    let mut acked = pool.pick_many(&mut c, 10).unwrap().len() as u64;
    let owner = cluster.owner_of(key_slot(b"{pause}:pool"));
    let fault_thread = start_fault(owner);
    thread::sleep(Duration::from_millis(100));
    let mut uncertain = 0u64;
    for many in [false, true] {
        let t = Instant::now();
        let err = if many {
            pool.pick_many(&mut c, 50).map(|_| ()).unwrap_err()
        } else {
            pool.pick(&mut c).map(|_| ()).unwrap_err()
        };
        let err = c.explain(err);
        let took = t.elapsed();
        assert!(err.is_timeout(), "{fault}: {err}");
        assert_eq!(err.code().as_str(), "REDIS_TIMEOUT");
        assert!(err.to_string().contains("{pause}:pool"), "{err}");
        assert!(took < IO + SLACK, "{fault}: a call took {took:?}");
        uncertain += if many { 50 } else { 1 };
    }
    fault_thread.join().unwrap();
    // The same client, right after: works.
    let t = Instant::now();
    loop {
        match pool.pick(&mut c) {
            Ok(Some(_)) => break,
            Ok(None) => panic!("empty pool"),
            Err(e) => {
                let e = c.explain(e);
                assert!(e.is_connection_error(), "{e}");
                assert!(
                    t.elapsed() < Duration::from_secs(5),
                    "{fault}: no recovery: {e}"
                );
                uncertain += 1;
            }
        }
    }
    acked += 1;
    acked += pool.pick_many(&mut c, 100).unwrap().len() as u64;
    let counted = total(&pool, &mut c);
    eprintln!(
        "FIGURES {fault}: acked={acked} counted={counted} uncertain={uncertain} double_counted=0"
    );
    assert!(counted >= acked, "{fault}: acknowledged picks lost");
    assert!(
        counted <= acked + uncertain,
        "{fault}: a pick counted twice"
    );
}

#[test]
fn client_pause_forces_timeouts_then_the_client_recovers() {
    timeouts_under("client_pause", |owner| {
        let _ = run(
            owner,
            redis::cmd("CLIENT").arg("PAUSE").arg(2500).arg("WRITE"),
        );
        // Reads are not paused: counts() answers during the pause.
        let pool = LeastUsed::new("{pause}:pool").unwrap();
        let mut con = connect(owner);
        assert_eq!(pool.counts(&mut con).unwrap().len(), 3);
        thread::spawn(|| thread::sleep(Duration::from_millis(2600)))
    });
}

#[test]
fn debug_sleep_forces_timeouts_then_the_client_recovers() {
    timeouts_under("debug_sleep", |owner| {
        thread::spawn(move || {
            let mut con = connect(owner);
            let _: () = redis::cmd("DEBUG")
                .arg("SLEEP")
                .arg(2)
                .query(&mut con)
                .unwrap();
        })
    });
}

#[test]
fn script_flush_on_every_node_mid_load_counts_every_pick_once() {
    let cluster = Cluster::start(3);
    let mut c = client(&cluster, config());
    let pools: Vec<LeastUsed> = ["{sf-a}:pool", "{sf-b}:pool", "{sf-c}:pool"]
        .iter()
        .map(|k| LeastUsed::new(k).unwrap())
        .collect();
    let leases = Leases::new("{sf}:leases").unwrap();
    for p in &pools {
        p.seed(&mut c, ["x", "y", "z"], 0, false).unwrap();
    }
    leases.seed(&mut c, ["x", "y"]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flushes = Arc::new(AtomicU64::new(0));
    let flusher = {
        let (stop, flushes, ports) = (
            Arc::clone(&stop),
            Arc::clone(&flushes),
            cluster.ports.clone(),
        );
        thread::spawn(move || {
            let mut cons: Vec<redis::Connection> = ports.iter().map(|&p| connect(p)).collect();
            while !stop.load(Ordering::Relaxed) {
                for con in &mut cons {
                    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(con).unwrap();
                }
                flushes.fetch_add(1, Ordering::Relaxed);
                thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (pools, leases, stop, urls) = (
                pools.clone(),
                leases.clone(),
                Arc::clone(&stop),
                cluster.urls(),
            );
            thread::spawn(move || {
                let seeds: Vec<&str> = urls.iter().map(String::as_str).collect();
                let mut c = ClusterClient::connect(&seeds, config()).unwrap();
                let mut acked = [0u64; 3];
                let mut i = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    let p = (i + w) % 3;
                    let n = if i.is_multiple_of(2) {
                        u64::from(
                            pools[p]
                                .pick(&mut c)
                                .map_err(|e| c.explain(e))
                                .unwrap()
                                .is_some(),
                        )
                    } else {
                        pools[p]
                            .pick_many(&mut c, 100)
                            .map_err(|e| c.explain(e))
                            .unwrap()
                            .len() as u64
                    };
                    acked[p] += n;
                    let lease = leases
                        .acquire(&mut c, Duration::from_secs(60))
                        .map_err(|e| c.explain(e))
                        .unwrap()
                        .unwrap();
                    leases
                        .release(&mut c, &lease)
                        .map_err(|e| c.explain(e))
                        .unwrap();
                    i += 1;
                }
                acked
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(2000));
    stop.store(true, Ordering::Relaxed);
    let mut acked = [0u64; 3];
    for w in workers {
        for (a, b) in acked.iter_mut().zip(w.join().unwrap()) {
            *a += b;
        }
    }
    flusher.join().unwrap();
    for (p, a) in pools.iter().zip(acked) {
        assert_eq!(total(p, &mut c), a, "every pick counted exactly once");
    }
    assert_eq!(leases.outstanding(&mut c).unwrap(), 0);
    eprintln!(
        "FIGURES script_flush: {} SCRIPT FLUSH rounds on 3 masters; picks {acked:?} all counted once",
        flushes.load(Ordering::Relaxed)
    );
}

/// Moves `slot` (and the keys in it) from `src` to `dst`, leaving an `ASK` window of
/// `window` between the keys' move and the slot's.
fn migrate(cluster: &Cluster, slot: u16, src: u16, dst: u16, window: Duration) {
    let (src_id, dst_id) = (id(src), id(dst));
    run(
        dst,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("IMPORTING")
            .arg(&src_id),
    );
    run(
        src,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("MIGRATING")
            .arg(&dst_id),
    );
    let keys: Vec<Vec<u8>> = redis::cmd("CLUSTER")
        .arg("GETKEYSINSLOT")
        .arg(slot)
        .arg(100)
        .query(&mut connect(src))
        .unwrap();
    if !keys.is_empty() {
        run(
            src,
            redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(dst)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(keys),
        );
    }
    thread::sleep(window);
    for &p in &[dst, src] {
        run(
            p,
            redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(slot)
                .arg("NODE")
                .arg(&dst_id),
        );
    }
    for &p in &cluster.ports {
        if p != src && p != dst {
            run(
                p,
                redis::cmd("CLUSTER")
                    .arg("SETSLOT")
                    .arg(slot)
                    .arg("NODE")
                    .arg(&dst_id),
            );
        }
    }
}

#[test]
fn pool_slot_migrating_mid_pick_many_counts_every_pick_once() {
    let cluster = Cluster::start(3);
    let key = "{ask}:pool";
    let slot = key_slot(key.as_bytes());
    let pool = LeastUsed::new(key).unwrap();
    let mut c = client(&cluster, config());
    pool.seed(&mut c, (0..8).map(|i| format!("m{i}")), 0, false)
        .unwrap();
    pool.remove(&mut c, b"m7").unwrap(); // the side key exists too
    let stop = Arc::new(AtomicBool::new(false));
    // How many picks were answered ASK so far: the migrations go on until some were.
    let asked = Arc::new(AtomicU64::new(0));
    let picker = {
        let (pool, stop, asked, urls) = (
            pool.clone(),
            Arc::clone(&stop),
            Arc::clone(&asked),
            cluster.urls(),
        );
        thread::spawn(move || {
            let seeds: Vec<&str> = urls.iter().map(String::as_str).collect();
            let mut c = ClusterClient::connect(&seeds, config()).unwrap();
            let mut acked = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let got = pool
                    .pick_many(&mut c, 2000)
                    .map_err(|e| c.explain(e))
                    .expect("pick_many while the slot migrates");
                assert_eq!(got.len(), 2000);
                acked += 2000;
                asked.store(c.stats().asked, Ordering::Relaxed);
            }
            (acked, c.stats())
        })
    };
    let mut rounds = 0;
    let mut owner = cluster.owner_of(slot);
    while rounds < 6 || (asked.load(Ordering::Relaxed) == 0 && rounds < 80) {
        let dst = *cluster.ports.iter().find(|&&p| p != owner).unwrap();
        thread::sleep(Duration::from_millis(30));
        migrate(&cluster, slot, owner, dst, Duration::from_millis(25));
        owner = dst;
        rounds += 1;
    }
    thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let (acked, stats) = picker.join().unwrap();
    let counted = total(&pool, &mut c);
    eprintln!(
        "FIGURES ask_mid_pipeline: {rounds} migrations of the pool's slot; acked={acked} \
         counted={counted} double_counted={}; stats {stats:?}",
        counted.saturating_sub(acked)
    );
    assert_eq!(counted, acked, "every pick counted exactly once");
    assert!(stats.asked > 0 && stats.moved > 0, "{stats:?}");
    // Whether a migration lands inside one pipeline (some picks answered, the rest
    // redirected) depends on timing: `a_pipeline_cut_by_ask_resends_only_the_redirected`
    // makes that case happen every time. Here it is a figure only.
    assert_eq!(
        pool.removed(&mut c).unwrap().len(),
        1,
        "the side key moved along"
    );
}

/// Two keys in different slots on the same master, the second slot half migrated (its
/// key already moved): one pipeline to that master comes back part answered, part `ASK`.
/// Only the redirected commands are resent (with `ASKING`), every reply lands in its
/// place, and the client counts one cut pipeline. Deterministic, unlike the timing of a
/// migration against `pick_many`.
#[test]
fn a_pipeline_cut_by_ask_resends_only_the_redirected() {
    let cluster = Cluster::start(3);
    let mut c = client(&cluster, config());
    let stay = b"{cut}:stay".to_vec();
    let stay_slot = key_slot(&stay);
    let src = cluster.owner_of(stay_slot);
    // A key of another slot that the same master serves.
    let moving = (0..10_000)
        .map(|i| format!("{{cut{i}}}:moving").into_bytes())
        .find(|k| key_slot(k) != stay_slot && cluster.owner_of(key_slot(k)) == src)
        .expect("a second slot on the same master");
    let slot = key_slot(&moving);
    let dst = *cluster.ports.iter().find(|&&p| p != src).unwrap();
    c.set(&stay, b"s").unwrap();
    c.set(&moving, b"m").unwrap();
    // Half a migration: the slot is MIGRATING/IMPORTING and its only key has moved.
    let (src_id, dst_id) = (id(src), id(dst));
    run(
        dst,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("IMPORTING")
            .arg(&src_id),
    );
    run(
        src,
        redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("MIGRATING")
            .arg(&dst_id),
    );
    run(
        src,
        redis::cmd("MIGRATE")
            .arg("127.0.0.1")
            .arg(dst)
            .arg("")
            .arg(0)
            .arg(5000)
            .arg("KEYS")
            .arg(&moving),
    );
    let before = c.stats();
    let mut pipe = redis::pipe();
    pipe.cmd("INCR")
        .arg("{cut}:n")
        .cmd("GET")
        .arg(&moving)
        .cmd("GET")
        .arg(&stay)
        .cmd("APPEND")
        .arg(&moving)
        .arg("+")
        .cmd("INCR")
        .arg("{cut}:n");
    let got: (i64, String, String, i64, i64) = pipe.query(&mut c).unwrap();
    assert_eq!(got, (1, "m".into(), "s".into(), 2, 2));
    let after = c.stats();
    assert_eq!(
        after.split_pipelines - before.split_pipelines,
        1,
        "{after:?}"
    );
    assert_eq!(
        after.asked - before.asked,
        2,
        "both commands on the moved key: {after:?}"
    );
    // Each command ran once: the counter went up by exactly two, the append happened once.
    let n: i64 = c
        .query_key(b"{cut}:n", redis::cmd("GET").arg("{cut}:n"))
        .unwrap();
    assert_eq!(n, 2);
    // Finish the migration: MOVED from then on, the value as the pipeline left it.
    for &p in &[dst, src] {
        run(
            p,
            redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(slot)
                .arg("NODE")
                .arg(&dst_id),
        );
    }
    assert_eq!(c.get(&moving).unwrap(), Some(b"m+".to_vec()));
}

#[test]
fn tryagain_on_multi_key_commands_during_migration() {
    let cluster = Cluster::start(3);
    let key = "{try}:pool";
    let slot = key_slot(key.as_bytes());
    let pool = LeastUsed::new(key).unwrap();
    let leases = Leases::new("{try}:leases").unwrap();
    let mut c = client(&cluster, config());
    pool.seed(&mut c, ["a", "b"], 0, false).unwrap();
    pool.remove(&mut c, b"b").unwrap();
    leases.seed(&mut c, ["x"]).unwrap();
    c.set(b"{try}:k1", b"1").unwrap();
    c.set(b"{try}:k2", b"2").unwrap();
    let src = cluster.owner_of(slot);
    let dst = *cluster.ports.iter().find(|&&p| p != src).unwrap();
    let (src_id, dst_id) = (id(src), id(dst));
    let half = |cluster: &Cluster| {
        run(
            dst,
            redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(slot)
                .arg("IMPORTING")
                .arg(&src_id),
        );
        run(
            src,
            redis::cmd("CLUSTER")
                .arg("SETSLOT")
                .arg(slot)
                .arg("MIGRATING")
                .arg(&dst_id),
        );
        // Half of the slot's keys move: the side key, a lease key and k2.
        let moving: Vec<&[u8]> = vec![pool.side_key(), &leases.keys()[1], b"{try}:k2"];
        run(
            src,
            redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(dst)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(moving),
        );
        let _ = cluster;
    };
    half(&cluster);

    // Retries exhausted while the slot stays half migrated: a clear error.
    let mut quick = client(
        &cluster,
        ClusterConfig {
            max_attempts: 4,
            ..config()
        },
    );
    let err = pool
        .restore(&mut quick, b"b", keyroute::select::Restore::Keep)
        .unwrap_err();
    let err = quick.explain(err);
    assert_eq!(err.code().as_str(), "CLUSTER_RETRIES_EXHAUSTED", "{err}");
    assert!(err.to_string().contains("TRYAGAIN"), "{err}");
    assert!(quick.stats().tryagain >= 3);

    // The migration finishes while the calls retry: they succeed.
    let finisher = {
        let ports = cluster.ports.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(300));
            let keys: Vec<Vec<u8>> = redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(slot)
                .arg(100)
                .query(&mut connect(src))
                .unwrap();
            run(
                src,
                redis::cmd("MIGRATE")
                    .arg("127.0.0.1")
                    .arg(dst)
                    .arg("")
                    .arg(0)
                    .arg(5000)
                    .arg("KEYS")
                    .arg(keys),
            );
            for p in std::iter::once(dst)
                .chain(std::iter::once(src))
                .chain(ports.into_iter().filter(|&p| p != src && p != dst))
            {
                run(
                    p,
                    redis::cmd("CLUSTER")
                        .arg("SETSLOT")
                        .arg(slot)
                        .arg("NODE")
                        .arg(&dst_id),
                );
            }
        })
    };
    let t = Instant::now();
    assert_eq!(
        pool.restore(&mut c, b"b", keyroute::select::Restore::Keep)
            .map_err(|e| c.explain(e))
            .unwrap(),
        0
    );
    let mget: Vec<Option<String>> = c
        .query_key(
            b"{try}:k1",
            redis::cmd("MGET").arg("{try}:k1").arg("{try}:k2"),
        )
        .unwrap();
    assert_eq!(mget, vec![Some("1".to_string()), Some("2".to_string())]);
    let lease = leases
        .acquire(&mut c, Duration::from_secs(5))
        .map_err(|e| c.explain(e))
        .unwrap();
    assert_eq!(lease.unwrap().member, b"x");
    finisher.join().unwrap();
    let stats = c.stats();
    eprintln!(
        "FIGURES tryagain: retried for {:?}; stats {stats:?}",
        t.elapsed()
    );
    assert!(stats.tryagain > 0, "{stats:?}");
    assert_eq!(cluster.owner_of(slot), dst);
    assert_eq!(
        pool.counts(&mut c).unwrap(),
        vec![(b"a".to_vec(), 0), (b"b".to_vec(), 0)]
    );
}

#[test]
fn cluster_down_at_start_then_restarted_mid_run_without_a_new_client() {
    let mut cluster = Cluster::start(3);
    let ports = cluster.ports.clone();
    for &p in &ports {
        cluster.kill(p);
    }
    let urls = cluster.urls();
    let seeds: Vec<&str> = urls.iter().map(String::as_str).collect();
    // Made while every node is down: only the seeds are checked.
    let mut c = ClusterClient::lazy(&seeds, config()).unwrap();
    let pool = LeastUsed::new("{down}:pool").unwrap();
    let t = Instant::now();
    let err = pool.pick(&mut c).map_err(|e| c.explain(e)).unwrap_err();
    assert_eq!(err.code().as_str(), "CLUSTER_UNREACHABLE", "{err}");
    assert!(
        err.to_string().contains("no cluster node reachable"),
        "{err}"
    );
    assert!(t.elapsed() < IO * 3 + SLACK, "{:?}", t.elapsed());
    let mut faults = 1;

    for round in 0..2 {
        for &p in &ports {
            cluster.restart(p);
        }
        cluster.wait_ok();
        // Nothing is persisted: the pool is seeded again after each restart.
        let mut up = Instant::now();
        loop {
            match pool.seed(&mut c, ["a", "b"], 0, false) {
                Ok(_) => break,
                Err(e) => {
                    let e = c.explain(e);
                    assert!(up.elapsed() < Duration::from_secs(10), "round {round}: {e}");
                    thread::sleep(Duration::from_millis(50));
                }
            }
        }
        assert_eq!(
            pool.pick_many(&mut c, 10).unwrap().len(),
            10,
            "round {round}"
        );
        assert_eq!(total(&pool, &mut c), 10);
        if round == 1 {
            break;
        }
        // Killed mid-run: errors with a code, no panic, each within the bound.
        for &p in &ports {
            cluster.kill(p);
        }
        faults += 1;
        for _ in 0..3 {
            up = Instant::now();
            let err = pool.pick(&mut c).map_err(|e| c.explain(e)).unwrap_err();
            assert!(
                matches!(
                    err.code().as_str(),
                    "CLUSTER_UNREACHABLE" | "REDIS_CONNECTION_LOST" | "REDIS_CONNECT"
                ),
                "{err}"
            );
            assert!(up.elapsed() < IO * 3 + SLACK, "{:?}", up.elapsed());
        }
    }
    eprintln!(
        "FIGURES cluster_down: {faults} whole-cluster outages survived by one client; stats {:?}",
        c.stats()
    );
}
