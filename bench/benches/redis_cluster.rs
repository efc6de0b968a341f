//! Cluster-routed GET/SET throughput: keyroute's `ClusterClient` against the `redis`
//! crate's own `redis::cluster::ClusterClient`, on the same local 3-master cluster
//! (started and stopped by the bench; needs Debian's `redis-server` and `redis-tools`).
//!
//! Run: `cargo bench -p keyroute --features redis --bench redis_cluster -- --warm-up-time 1 --measurement-time 5`
//!
//! Each iteration is one round trip (`SET key value` or `GET key`) on one of 1000 keys
//! spread over all three masters, from one connection per node (both clients are sync).
//! The interleaved A/B figures (below) are also written to `build/bench/redis-cluster.json`
//! for `make bench-report`.
use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use keyroute_bench::report::{crate_version, Measure, Row, Suite};
use keyroute_redis::cluster::{ClusterClient, ClusterConfig};

#[allow(dead_code)]
#[path = "../../redis/tests/common/cluster.rs"]
mod cluster;

fn keys() -> Vec<Vec<u8>> {
    (0..1000)
        .map(|i| format!("bench:{i}").into_bytes())
        .collect()
}

fn bench(c: &mut Criterion) {
    let cluster = cluster::Cluster::start(3);
    let url = cluster.url();
    let keys = keys();
    let mut ours =
        ClusterClient::connect(&[&url], ClusterConfig::default()).expect("keyroute client");
    let theirs_client =
        redis::cluster::ClusterClient::new(vec![url.as_str()]).expect("redis client");
    let mut theirs = theirs_client
        .get_connection()
        .expect("redis cluster connection");
    for k in &keys {
        ours.set(k, b"initial").expect("set");
    }

    for op in ["SET", "GET"] {
        let mut g = c.benchmark_group(format!("cluster_{}", op.to_lowercase()));
        g.throughput(Throughput::Elements(1));
        let mut i = 0usize;
        g.bench_function("keyroute", |b| {
            b.iter(|| {
                let k = &keys[i % keys.len()];
                i += 1;
                if op == "SET" {
                    ours.set(k, b"value-0123456789").expect("set");
                } else {
                    black_box(ours.get(k).expect("get"));
                }
            });
        });
        let mut i = 0usize;
        g.bench_function("redis-crate", |b| {
            b.iter(|| {
                let k = &keys[i % keys.len()];
                i += 1;
                if op == "SET" {
                    let () = redis::cmd("SET")
                        .arg(k)
                        .arg(b"value-0123456789")
                        .query(&mut theirs)
                        .expect("set");
                } else {
                    let v: Option<Vec<u8>> =
                        redis::cmd("GET").arg(k).query(&mut theirs).expect("get");
                    black_box(v);
                }
            });
        });
        g.finish();
    }
    interleaved(&keys, &mut ours, &mut theirs);
    assert_eq!(ours.stats().moved, 0);
    drop(cluster);
}

/// On a shared, loaded machine two criterion runs minutes apart can differ by 2x, so the
/// ratio is also measured A/B: 31 rounds, each timing 1000 ops of ours then 1000 of
/// theirs (order alternating per round); prints the median per-round ratio.
fn interleaved(
    keys: &[Vec<u8>],
    ours: &mut ClusterClient,
    theirs: &mut redis::cluster::ClusterConnection,
) {
    const ROUNDS: usize = 31;
    const OPS: usize = 1000;
    let mut suite = Suite::new(
        "redis-cluster",
        "bench/benches/redis_cluster.rs",
        format!(
            "wall clock; {ROUNDS} interleaved rounds of {OPS} ops per side (order alternating); \
             each side's fastest round"
        ),
    );
    for op in ["SET", "GET"] {
        let mut ratios = Vec::with_capacity(ROUNDS);
        let (mut total_ours, mut total_theirs) = (0f64, 0f64);
        let (mut best_ours, mut best_theirs) = (f64::MAX, f64::MAX);
        for round in 0..ROUNDS {
            let mut run_ours = || {
                let t = Instant::now();
                for k in keys.iter().cycle().take(OPS) {
                    if op == "SET" {
                        ours.set(k, b"value-0123456789").expect("set");
                    } else {
                        black_box(ours.get(k).expect("get"));
                    }
                }
                t.elapsed().as_secs_f64()
            };
            let mut run_theirs = || {
                let t = Instant::now();
                for k in keys.iter().cycle().take(OPS) {
                    if op == "SET" {
                        let () = redis::cmd("SET")
                            .arg(k)
                            .arg(b"value-0123456789")
                            .query(theirs)
                            .expect("set");
                    } else {
                        let v: Option<Vec<u8>> =
                            redis::cmd("GET").arg(k).query(theirs).expect("get");
                        black_box(v);
                    }
                }
                t.elapsed().as_secs_f64()
            };
            let (a, b) = if round % 2 == 0 {
                let a = run_ours();
                (a, run_theirs())
            } else {
                let b = run_theirs();
                (run_ours(), b)
            };
            total_ours += a;
            total_theirs += b;
            best_ours = best_ours.min(a);
            best_theirs = best_theirs.min(b);
            ratios.push(b / a); // throughput ours / throughput theirs
        }
        ratios.sort_by(f64::total_cmp);
        let n = (ROUNDS * OPS) as f64;
        println!(
            "interleaved {op}: keyroute {:.0} ops/s, redis crate {:.0} ops/s, median ratio {:.3}",
            n / total_ours,
            n / total_theirs,
            ratios[ROUNDS / 2]
        );
        let mut row = Row::new(
            format!("cluster/{}", op.to_lowercase()),
            "Redis round trips",
            format!("Rust ClusterClient {op} vs redis::cluster::ClusterConnection, 3-master local cluster, 1 connection per node"),
            Measure::Wall,
            "ops/s",
            OPS as f64 / best_ours,
        )
        .higher_is_better()
        .peer(
            "redis crate ClusterConnection",
            crate_version("redis"),
            OPS as f64 / best_theirs,
        )
        .like_for_like(true)
        .note(format!(
            "the same commands on the same keys and cluster; median of the per-round ratios: {:.2}",
            ratios[ROUNDS / 2]
        ));
        if op == "GET" {
            row = row.headline();
        }
        suite.push(row);
    }
    if let Err(e) = suite.write() {
        eprintln!("bench report: could not write redis-cluster.json: {e}");
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
