//! Redis Cluster with replicas (3 masters + 3 replicas, `cluster-node-timeout` 1 s) and
//! faults, through keyroute's [`ClusterClient`] as the connection of `LeastUsed`:
//!
//! * `READONLY` reads from replicas when asked (`read_from_replicas`);
//! * a master SIGKILLed during picks, and during a live reshard: the replica takes over,
//!   picks continue after the errors of the failover window, no key is lost, and count
//!   conservation holds within the measured bound (replication is asynchronous: picks
//!   the old master acknowledged but had not yet sent to its replica are lost with it;
//!   the tests print the figures and assert the documented bound).
//!
//! Each test prints a `FIGURES` line (faults, acknowledged/counted picks, keys lost).
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::cluster::{connect, Cluster};
use keyroute::slot::{key_slot, NodeIndex, Plan};
use keyroute_redis::cluster::reshard::{execute_plan, ReshardOptions};
use keyroute_redis::cluster::topology::fetch_topology;
use keyroute_redis::cluster::{ClusterClient, ClusterConfig, ClusterStats};
use keyroute_redis::LeastUsed;

/// Picks acknowledged in this window before a master was killed bound what its death may
/// lose (asynchronous replication on 127.0.0.1 lags by well under a millisecond; the
/// window is generous so that a loaded 2-core CI machine does not fail the test).
const LOSS_WINDOW_MS: u64 = 1000;

fn config() -> ClusterConfig {
    ClusterConfig {
        connect_timeout: Duration::from_millis(300),
        io_timeout: Duration::from_millis(500),
        ..ClusterConfig::default()
    }
}

fn client(cluster: &Cluster, config: ClusterConfig) -> ClusterClient {
    let urls = cluster.urls();
    let seeds: Vec<&str> = urls.iter().map(String::as_str).collect();
    ClusterClient::connect(&seeds, config).unwrap()
}

/// A pool key whose slot the master on `port` serves.
fn pool_key_on(cluster: &Cluster, port: u16, tag: &str) -> String {
    (0..)
        .map(|n| format!("{{{tag}-{n}}}:pool"))
        .find(|k| cluster.owner_of(key_slot(k.as_bytes())) == port)
        .unwrap()
}

/// Waits until every replica has every write its master has.
fn sync_replicas(cluster: &Cluster) {
    let field = |info: &str, name: &str| -> u64 {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0)
    };
    for (master, replicas) in cluster.masters() {
        let info: String = redis::cmd("INFO")
            .arg("replication")
            .query(&mut connect(master))
            .unwrap();
        let want = field(&info, "master_repl_offset:");
        for r in replicas {
            let start = Instant::now();
            loop {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query(&mut connect(r))
                    .unwrap();
                if field(&info, "slave_repl_offset:") >= want {
                    break;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "replica {r} lags"
                );
                thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// A numeric field of `INFO replication` on `port` (`master_repl_offset:`, ...).
fn repl_field(port: u16, name: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query(&mut connect(port))
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Bytes of the replication stream per pick on the master at `port`: (single `pick`,
/// one pick of a `pick_many(20)`), measured on a pool of its own.
fn repl_bytes_per_pick(cluster: &Cluster, port: u16, c: &mut ClusterClient) -> (f64, f64) {
    let pool = LeastUsed::new(pool_key_on(cluster, port, "bytes")).unwrap();
    pool.seed(c, ["a", "b", "c", "d"], 0, false).unwrap();
    let o0 = repl_field(port, "master_repl_offset:");
    for _ in 0..200 {
        pool.pick(c).unwrap();
    }
    let o1 = repl_field(port, "master_repl_offset:");
    for _ in 0..100 {
        pool.pick_many(c, 20).unwrap();
    }
    let o2 = repl_field(port, "master_repl_offset:");
    ((o1 - o0) as f64 / 200.0, (o2 - o1) as f64 / 2000.0)
}

/// Samples, until `until`, how far the replica at `replica` lags behind its master at
/// `master` in the replication stream (bytes): the replica's offset is read first, so
/// each sample over-states the lag (the master may advance between the two reads).
/// Returns (max, mean, samples).
fn sample_repl_lag(master: u16, replica: u16, until: Instant) -> (u64, f64, u64) {
    let (mut max, mut sum, mut n) = (0u64, 0u64, 0u64);
    while Instant::now() < until {
        let r = repl_field(replica, "slave_repl_offset:");
        let m = repl_field(master, "master_repl_offset:");
        let lag = m.saturating_sub(r);
        max = max.max(lag);
        sum += lag;
        n += 1;
        thread::sleep(Duration::from_millis(2));
    }
    (max, sum as f64 / n.max(1) as f64, n)
}

fn commandstat(port: u16, name: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut connect(port))
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{name}:")))
        .and_then(|s| s.split(',').find_map(|kv| kv.strip_prefix("calls=")))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// What one picker thread saw.
#[derive(Debug, Default)]
struct Tally {
    /// Picks acknowledged (returned to the caller).
    acked: u64,
    /// When each call's picks were acknowledged (ms since the shared start), with how many.
    acked_at: Vec<(u64, u64)>,
    /// Picks whose call failed after the request may have run (timeout, broken
    /// connection): each may or may not have been counted.
    uncertain: u64,
    /// Calls that failed without running (retries exhausted, cluster unreachable, ...).
    refused: u64,
    /// Error codes seen, once each.
    codes: Vec<String>,
    stats: ClusterStats,
}

impl Tally {
    fn acked_between(&self, from_ms: u64, to_ms: u64) -> u64 {
        self.acked_at
            .iter()
            .filter(|(t, _)| (from_ms..=to_ms).contains(t))
            .map(|(_, n)| n)
            .sum()
    }
}

/// Picks (alternating `pick` and `pick_many(20)`) until `stop`, through its own client.
fn picker(
    seeds: Vec<String>,
    pool: LeastUsed,
    stop: Arc<AtomicBool>,
    t0: Instant,
    config: ClusterConfig,
) -> thread::JoinHandle<Tally> {
    thread::spawn(move || {
        let seeds: Vec<&str> = seeds.iter().map(String::as_str).collect();
        let mut c = ClusterClient::connect(&seeds, config).unwrap();
        let mut t = Tally::default();
        let mut i = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let batch = if i.is_multiple_of(2) { 1 } else { 20 };
            i += 1;
            let got = if batch == 1 {
                pool.pick(&mut c).map(|p| u64::from(p.is_some()))
            } else {
                pool.pick_many(&mut c, 20).map(|p| p.len() as u64)
            };
            match got.map_err(|e| c.explain(e)) {
                Ok(n) => {
                    assert_eq!(n, batch, "the pool is never empty");
                    t.acked += n;
                    t.acked_at.push((t0.elapsed().as_millis() as u64, n));
                }
                Err(e) => {
                    let code = e.code().as_str().to_string();
                    if !t.codes.contains(&code) {
                        eprintln!("picker: {code}: {e}");
                        t.codes.push(code);
                    }
                    if e.is_connection_error() {
                        t.uncertain += batch;
                    } else {
                        assert!(
                            matches!(
                                e.code().as_str(),
                                "CLUSTER_RETRIES_EXHAUSTED"
                                    | "CLUSTER_UNREACHABLE"
                                    | "CLUSTER_NO_OWNER"
                                    | "REDIS_SERVER"
                            ),
                            "{e}"
                        );
                        t.refused += batch;
                    }
                    thread::sleep(Duration::from_millis(20));
                }
            }
        }
        t.stats = c.stats();
        t
    })
}

/// Sum of the pool's counts, read from its master.
fn counted(pool: &LeastUsed, c: &mut ClusterClient) -> (u64, usize) {
    let counts = pool.counts(c).map_err(|e| c.explain(e)).unwrap();
    (counts.iter().map(|(_, n)| n).sum(), counts.len())
}

/// Checks conservation across a failover and prints the figures: no pick counted twice
/// (`counted <= acked + uncertain`), and what was lost at most the picks acknowledged in
/// the loss window before the kill. Returns (lost at least, lost at most).
fn conservation(what: &str, tallies: &[Tally], counted: u64, kill_ms: u64) -> (u64, u64) {
    let acked: u64 = tallies.iter().map(|t| t.acked).sum();
    let uncertain: u64 = tallies.iter().map(|t| t.uncertain).sum();
    let refused: u64 = tallies.iter().map(|t| t.refused).sum();
    let window: u64 = tallies
        .iter()
        .map(|t| t.acked_between(kill_ms.saturating_sub(LOSS_WINDOW_MS), kill_ms + 50))
        .sum();
    let after: u64 = tallies
        .iter()
        .map(|t| t.acked_between(kill_ms + 1, u64::MAX))
        .sum();
    // counted = acked - lost + (uncertain picks that ran), 0 <= that <= uncertain.
    let lost_min = acked.saturating_sub(counted);
    let lost_max = (acked + uncertain).saturating_sub(counted);
    eprintln!(
        "FIGURES {what}: acked={acked} counted={counted} uncertain={uncertain} refused={refused} \
         acked_after_kill={after} acked_in_{LOSS_WINDOW_MS}ms_before_kill={window} \
         lost_min={lost_min} lost_max={lost_max} double_counted=0"
    );
    assert!(
        counted <= acked + uncertain,
        "{what}: a pick was counted twice: counted {counted} > acked {acked} + uncertain {uncertain}"
    );
    assert!(
        lost_min <= window,
        "{what}: lost {lost_min} picks, more than the {window} acknowledged in the last {LOSS_WINDOW_MS} ms before the kill"
    );
    assert!(after > 0, "{what}: no pick after the failover");
    (lost_min, lost_max)
}

#[test]
fn replica_reads_when_asked() {
    let cluster = Cluster::start_with_replicas(3, 1);
    let mut master_client = client(&cluster, config());
    let pool = LeastUsed::new("{ro}:pool").unwrap();
    pool.seed(&mut master_client, ["a", "b", "c"], 0, false)
        .map_err(|e| master_client.explain(e))
        .unwrap();
    assert_eq!(pool.pick_many(&mut master_client, 5).unwrap().len(), 5);
    master_client.set(b"{ro}:plain", b"v").unwrap();
    sync_replicas(&cluster);
    let slot = key_slot(b"{ro}:pool");
    let master = cluster.owner_of(slot);
    let replica = cluster
        .masters()
        .into_iter()
        .find(|(m, _)| *m == master)
        .unwrap()
        .1[0];

    // Without the option, reads go to the master.
    let (zr_m, zr_r) = (
        commandstat(master, "zrange"),
        commandstat(replica, "zrange"),
    );
    let counts = pool.counts(&mut master_client).unwrap();
    assert_eq!(counts.iter().map(|(_, n)| n).sum::<u64>(), 5);
    assert_eq!(commandstat(master, "zrange"), zr_m + 1);
    assert_eq!(commandstat(replica, "zrange"), zr_r);
    assert_eq!(master_client.stats().replica_reads, 0);

    // With it, counts/removed and GET are answered by the replica (after READONLY),
    // picks still go to the master.
    let mut ro = client(
        &cluster,
        ClusterConfig {
            read_from_replicas: true,
            ..config()
        },
    );
    let ro_before = commandstat(replica, "readonly");
    assert_eq!(pool.counts(&mut ro).unwrap(), counts);
    assert_eq!(pool.removed(&mut ro).unwrap(), vec![]);
    assert_eq!(ro.get(b"{ro}:plain").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(commandstat(replica, "zrange"), zr_r + 1);
    assert_eq!(commandstat(replica, "hgetall"), 1);
    assert_eq!(commandstat(replica, "get"), 1);
    assert_eq!(commandstat(replica, "readonly"), ro_before + 1);
    assert_eq!(commandstat(master, "zrange"), zr_m + 1);
    assert_eq!(ro.stats().replica_reads, 3);
    let evalsha_master = commandstat(master, "evalsha");
    assert!(pool.pick(&mut ro).unwrap().is_some());
    assert_eq!(commandstat(master, "evalsha"), evalsha_master + 1);
    assert_eq!(commandstat(replica, "evalsha"), 0);

    // A replica that dies: reads fall back to the master at once.
    let mut cluster = cluster;
    cluster.kill(replica);
    let t = Instant::now();
    assert_eq!(pool.counts(&mut ro).unwrap().len(), 3);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    eprintln!("FIGURES replica_reads: stats {:?}", ro.stats());
}

#[test]
fn master_killed_during_picks_fails_over_and_picks_continue() {
    let mut cluster = Cluster::start_with_replicas(3, 1);
    let (victim, victim_replicas) = cluster.masters()[0].clone();
    let key = pool_key_on(&cluster, victim, "fo");
    let pool = LeastUsed::new(&key).unwrap();
    let mut c = client(&cluster, config());
    let (bytes_single, bytes_many) = repl_bytes_per_pick(&cluster, victim, &mut c);
    let members: Vec<String> = (0..5).map(|i| format!("proxy-{i}")).collect();
    pool.seed(&mut c, &members, 0, false).unwrap();
    pool.remove(&mut c, b"proxy-4").unwrap();
    // Keys on every master, replicated before the fault: none may be lost.
    for i in 0..1000 {
        c.set(format!("keep:{i}").as_bytes(), format!("v{i}").as_bytes())
            .unwrap();
    }
    sync_replicas(&cluster);

    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let pickers: Vec<_> = (0..2)
        .map(|_| {
            picker(
                cluster.urls(),
                pool.clone(),
                Arc::clone(&stop),
                t0,
                config(),
            )
        })
        .collect();
    // The replication lag under this load: what a master dying at any instant of it
    // could take with it (a SIGKILL on 127.0.0.1 still lets the kernel deliver what the
    // master had written to the replica's socket; a crashed host or a partition does not).
    thread::sleep(Duration::from_millis(200));
    let (lag_max, lag_mean, lag_samples) =
        sample_repl_lag(victim, victim_replicas[0], t0 + Duration::from_millis(1000));
    let kill_ms = t0.elapsed().as_millis() as u64;
    cluster.kill(victim);
    let failover = cluster.wait_failover(key_slot(key.as_bytes()), victim);
    thread::sleep(Duration::from_millis(1500));
    stop.store(true, Ordering::Relaxed);
    let tallies: Vec<Tally> = pickers.into_iter().map(|p| p.join().unwrap()).collect();

    let mut c = client(&cluster, config());
    let (total, members_left) = counted(&pool, &mut c);
    assert_eq!(members_left, 4, "every member is still in the pool");
    assert_eq!(
        pool.removed(&mut c).unwrap().len(),
        1,
        "the side key survived"
    );
    let mut lost_keys = 0;
    for i in 0..1000 {
        if c.get(format!("keep:{i}").as_bytes()).unwrap() != Some(format!("v{i}").into_bytes()) {
            lost_keys += 1;
        }
    }
    assert_eq!(lost_keys, 0, "replicated keys lost in the failover");
    let (lo, hi) = conservation("failover_during_picks", &tallies, total, kill_ms);
    eprintln!(
        "FIGURES failover_during_picks: failover took {failover:?}; keys_lost={lost_keys}; \
         lost picks between {lo} and {hi}; stats {:?}",
        tallies.iter().map(|t| t.stats).collect::<Vec<_>>()
    );
    eprintln!(
        "FIGURES replication_lag: {lag_samples} samples in the 800 ms before the kill: max \
         {lag_max} B, mean {lag_mean:.0} B; replication stream {bytes_single:.0} B per single \
         pick, {bytes_many:.1} B per pick of a pick_many(20): at most ~{:.0} acknowledged \
         picks were not yet on the replica at any sample",
        lag_max as f64 / bytes_many.max(1.0)
    );
}

#[test]
fn master_killed_during_a_live_reshard() {
    let mut cluster = Cluster::start_with_replicas(3, 1);
    // The reshard moves slots from the owner of slot 0 to the owner of slot 8191; the
    // pool lives on the third master, which is killed in the middle.
    let (src, dst, victim) = (
        cluster.owner_of(0),
        cluster.owner_of(8191),
        cluster.owner_of(16383),
    );
    assert!(src != dst && dst != victim && src != victim);
    let key = pool_key_on(&cluster, victim, "rs");
    let pool = LeastUsed::new(&key).unwrap();
    let mut c = client(&cluster, config());
    pool.seed(&mut c, ["a", "b", "c"], 0, false).unwrap();
    const KEYS: usize = 3000;
    for i in 0..KEYS {
        c.set(
            format!("key:{i}").as_bytes(),
            format!("value:{i}").as_bytes(),
        )
        .unwrap();
    }
    sync_replicas(&cluster);

    let stop = Arc::new(AtomicBool::new(false));
    let t0 = Instant::now();
    let pickers: Vec<_> = (0..2)
        .map(|_| {
            picker(
                cluster.urls(),
                pool.clone(),
                Arc::clone(&stop),
                t0,
                config(),
            )
        })
        .collect();
    let weights = |map: &keyroute::slot::SlotMap| -> Vec<(NodeIndex, u64)> {
        let by = |slot: u16| map.owner(slot).unwrap();
        // src keeps a sixth of the slots, dst gets half, the third master its third.
        vec![(by(0), 1), (by(8191), 3), (by(16383), 2)]
    };
    let reshard = {
        let port = src;
        thread::spawn(move || {
            let (map, _) = fetch_topology(&mut connect(port)).unwrap();
            let plan = Plan::new(&map, &weights(&map)).unwrap();
            let options = ReshardOptions {
                batch: 20,
                ..ReshardOptions::default()
            };
            let mut done = 0;
            let r = execute_plan(&map, &plan, &options, |p| done = p.slots_done);
            (r, plan.slots_moved(), done)
        })
    };
    thread::sleep(Duration::from_millis(700));
    let kill_ms = t0.elapsed().as_millis() as u64;
    cluster.kill(victim);
    let failover = cluster.wait_failover(key_slot(key.as_bytes()), victim);
    let (first, total_slots, done_before) = reshard.join().unwrap();
    // The plan either finished (the dead master only missed a best-effort SETSLOT NODE)
    // or stopped with a clear error; re-running it from a fresh map finishes it.
    let resumed = match &first {
        Ok(_) => false,
        Err(e) => {
            eprintln!("reshard stopped after {done_before} of {total_slots} slots: {e}");
            true
        }
    };
    cluster.wait_ok();
    let (map, _) = fetch_topology(&mut connect(src)).unwrap();
    let plan = Plan::new(&map, &weights(&map)).unwrap();
    let second = execute_plan(&map, &plan, &ReshardOptions::default(), |_| {}).unwrap();
    thread::sleep(Duration::from_millis(1000));
    stop.store(true, Ordering::Relaxed);
    let tallies: Vec<Tally> = pickers.into_iter().map(|p| p.join().unwrap()).collect();
    cluster.wait_ok();

    let (map, _) = fetch_topology(&mut connect(src)).unwrap();
    let (s, d) = (
        map.find_addr("127.0.0.1", src).unwrap(),
        map.find_addr("127.0.0.1", dst).unwrap(),
    );
    assert!(
        map.slot_count(s) < 2800 && map.slot_count(d) > 8000,
        "the reshard is done"
    );
    let mut c = client(&cluster, config());
    let mut lost_keys = 0;
    for i in 0..KEYS {
        if c.get(format!("key:{i}").as_bytes()).unwrap() != Some(format!("value:{i}").into_bytes())
        {
            lost_keys += 1;
        }
    }
    let total_keys: usize = cluster
        .masters()
        .iter()
        .map(|(m, _)| {
            redis::cmd("DBSIZE")
                .query::<usize>(&mut connect(*m))
                .unwrap()
        })
        .sum();
    assert_eq!(lost_keys, 0, "keys lost");
    assert_eq!(
        total_keys,
        KEYS + 1,
        "no key in two places (KEYS + the pool)"
    );
    let (total, members_left) = counted(&pool, &mut c);
    assert_eq!(members_left, 3);
    let (lo, hi) = conservation("failover_during_reshard", &tallies, total, kill_ms);
    eprintln!(
        "FIGURES failover_during_reshard: failover took {failover:?}; first run {} \
         ({done_before}/{total_slots} slots), re-run moved {} slots; keys_lost={lost_keys}; \
         lost picks between {lo} and {hi}",
        if resumed { "stopped" } else { "finished" },
        second.slots_moved
    );
}
