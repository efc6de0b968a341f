//! Redis Cluster slot hashing: keyroute against the `crc16` crate and the `redis` crate.
//!
//! Run: `cargo bench -p keyroute --bench slot -- --warm-up-time 1 --measurement-time 3`
//!
//! * `crc16/<len>`: the bare CRC-16/XMODEM checksum (keyroute slice-by-16 vs the `crc16`
//!   crate's byte-at-a-time table).
//! * `key_slot/<len>`: tag scan + CRC + mask on keys without braces (the whole key is
//!   scanned and hashed): `keyroute::slot::key_slot`, `redis::cluster_routing::Slot::for_key`
//!   (which uses the `crc16` crate), and the `crc16` crate behind keyroute's tag scan.
//! * `batch/1000x<len>`: 1000 keys per iteration.
//!
//! On a busy shared machine wall-clock figures include time the benchmark spent waiting
//! for a CPU. `KEYROUTE_BENCH_CLOCK=cpu` (or `SLOT_BENCH_CLOCK=cpu`) measures this
//! thread's CPU time instead (`CLOCK_THREAD_CPUTIME_ID`, Unix only, `common/clock.rs`),
//! which is what the code costs when it runs.
//!
//! Before timing, keyroute's answers are checked against the peers' on every benchmark
//! key. After the run the figures (criterion's medians) are written to
//! `build/bench/rust-slot.json` for `make bench-report` (`bench/README.md`).
use std::hint::black_box;
use std::time::SystemTime;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use keyroute::slot::{
    crc16_xmodem, crc16_xmodem_with, hash_tag, key_slot, key_slot_with, key_slots, Crc16Path,
};
use keyroute_bench::report::{crate_version, CriterionRun, Row, Suite};

#[path = "common/clock.rs"]
mod clock;
use clock::Clock;

/// Deterministic pseudo-random bytes without `{`/`}` (so the whole key is hashed).
fn key(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            match (x >> 24) as u8 {
                b'{' | b'}' => b'x',
                b => b,
            }
        })
        .collect()
}

const SIZES: [usize; 3] = [16, 64, 1024];

fn bench_crc(c: &mut Criterion<Clock>) {
    let mut g = c.benchmark_group("crc16");
    for len in SIZES {
        let k = key(len, 1);
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_with_input(BenchmarkId::new("keyroute", len), &k, |b, k| {
            b.iter(|| crc16_xmodem(black_box(k)))
        });
        g.bench_with_input(BenchmarkId::new("crc16_crate", len), &k, |b, k| {
            b.iter(|| crc16::State::<crc16::XMODEM>::calculate(black_box(k)))
        });
    }
    g.finish();
}

/// Lengths at which the CRC16 paths are compared (their thresholds come from here).
const PATH_SIZES: [usize; 9] = [16, 32, 48, 64, 96, 128, 256, 512, 1024];

/// Each CRC16 path this CPU has, forced, on the bare checksum and on `key_slot`.
fn bench_paths(c: &mut Criterion<Clock>) {
    let mut g = c.benchmark_group("crc16_paths");
    for len in PATH_SIZES {
        let k = key(len, 3);
        g.throughput(Throughput::Bytes(len as u64));
        for path in Crc16Path::ALL.into_iter().filter(|p| p.available()) {
            let name = format!("{path:?}").to_lowercase();
            g.bench_with_input(
                BenchmarkId::new(format!("crc16/{name}"), len),
                &k,
                |b, k| b.iter(|| crc16_xmodem_with(path, 0, black_box(k))),
            );
            g.bench_with_input(
                BenchmarkId::new(format!("key_slot/{name}"), len),
                &k,
                |b, k| b.iter(|| key_slot_with(path, black_box(k))),
            );
        }
    }
    g.finish();
}

fn bench_key_slot(c: &mut Criterion<Clock>) {
    let mut g = c.benchmark_group("key_slot");
    for len in SIZES {
        let k = key(len, 2);
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_with_input(BenchmarkId::new("keyroute", len), &k, |b, k| {
            b.iter(|| key_slot(black_box(k)))
        });
        g.bench_with_input(BenchmarkId::new("redis_crate", len), &k, |b, k| {
            b.iter(|| redis::cluster_routing::Slot::for_key(black_box(k)))
        });
        g.bench_with_input(BenchmarkId::new("crc16_crate", len), &k, |b, k| {
            b.iter(|| crc16::State::<crc16::XMODEM>::calculate(hash_tag(black_box(k))) & 16383)
        });
    }
    g.finish();
}

fn bench_batch(c: &mut Criterion<Clock>) {
    let mut g = c.benchmark_group("batch");
    for len in [16usize, 32, 64] {
        let keys: Vec<Vec<u8>> = (0..1000).map(|i| key(len, 100 + i)).collect();
        let mut out = vec![0u16; keys.len()];
        g.throughput(Throughput::Elements(keys.len() as u64));
        let id = format!("1000x{len}");
        g.bench_function(BenchmarkId::new("keyroute_key_slots", &id), |b| {
            b.iter(|| key_slots(black_box(&keys), &mut out))
        });
        g.bench_function(BenchmarkId::new("redis_crate_loop", &id), |b| {
            b.iter(|| {
                for k in black_box(&keys) {
                    black_box(redis::cluster_routing::Slot::for_key(k));
                }
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = bench_crc, bench_key_slot, bench_batch, bench_paths
}

/// keyroute and the peers agree on every key this benchmark times.
fn same_answers() -> bool {
    let mut keys: Vec<Vec<u8>> = SIZES
        .iter()
        .flat_map(|&len| [key(len, 1), key(len, 2)])
        .collect();
    keys.extend(
        [16usize, 64]
            .iter()
            .flat_map(|&len| (0..1000).map(move |i| key(len, 100 + i))),
    );
    keys.extend(PATH_SIZES.iter().map(|&len| key(len, 3)));
    keys.iter().all(|k| {
        let slot = key_slot(k);
        let paths_agree = Crc16Path::ALL.into_iter().all(|p| {
            key_slot_with(p, k).is_none_or(|s| s == slot)
                && crc16_xmodem_with(p, 0, k).is_none_or(|c| c == crc16_xmodem(k))
        });
        paths_agree
            && crc16_xmodem(k) == crc16::State::<crc16::XMODEM>::calculate(k)
            && redis::cluster_routing::Slot::new(slot)
                == Some(redis::cluster_routing::Slot::for_key(k))
            && slot == crc16::State::<crc16::XMODEM>::calculate(hash_tag(k)) & 16383
    })
}

fn main() {
    let same = same_answers();
    assert!(
        same,
        "keyroute's key slots differ from the peers' on the benchmark keys"
    );
    let started = SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    report(&CriterionRun::since(started), same);
}

/// This run's figures as report rows (`build/bench/rust-slot.json`).
fn report(run: &CriterionRun, same: bool) {
    if run.is_empty() {
        println!("bench report: no criterion figures from this run (filtered or --test); nothing written");
        return;
    }
    let measure = Clock::from_env().measure();
    let redis_version = crate_version("redis");
    let crc16_version = crate_version("crc16");
    let mut suite = Suite::new(
        "rust-slot",
        "bench/benches/slot.rs",
        "criterion: median time per call over its samples; each benchmark after the other (not interleaved)",
    );
    for len in SIZES {
        let gbps = |ns: f64| format!("keyroute {:.2} GB/s", len as f64 / ns);
        if let Some(ns) = run.median(&format!("key_slot/keyroute/{len}")) {
            if let Some(peer) = run.median(&format!("key_slot/redis_crate/{len}")) {
                suite.push(
                    Row::new(
                        format!("key_slot/{len}/redis"),
                        "Cluster key slot",
                        format!(
                            "Rust key_slot vs redis::cluster_routing::Slot::for_key, {len} B key"
                        ),
                        measure,
                        "ns/call",
                        ns,
                    )
                    .peer("redis crate Slot::for_key", redis_version.clone(), peer)
                    .same_answers(same)
                    .like_for_like(true)
                    .note(gbps(ns)),
                );
            }
            if let Some(peer) = run.median(&format!("key_slot/crc16_crate/{len}")) {
                let mut row = Row::new(
                    format!("key_slot/{len}/crc16"),
                    "Cluster key slot",
                    format!(
                        "Rust key_slot vs the crc16 crate behind keyroute's tag scan, {len} B key"
                    ),
                    measure,
                    "ns/call",
                    ns,
                )
                .peer("crc16 crate (XMODEM) & 16383", crc16_version.clone(), peer)
                .same_answers(same)
                .like_for_like(true)
                .note(gbps(ns));
                if len != 64 {
                    row = row.headline();
                }
                suite.push(row);
            }
        }
        if let (Some(ns), Some(peer)) = (
            run.median(&format!("crc16/keyroute/{len}")),
            run.median(&format!("crc16/crc16_crate/{len}")),
        ) {
            suite.push(
                Row::new(
                    format!("crc16/{len}"),
                    "Cluster key slot",
                    format!("Rust CRC-16/XMODEM alone, {len} B"),
                    measure,
                    "ns/call",
                    ns,
                )
                .peer("crc16 crate (XMODEM)", crc16_version.clone(), peer)
                .same_answers(same)
                .like_for_like(true)
                .note(gbps(ns)),
            );
        }
    }
    let selected = format!("{:?}", Crc16Path::selected()).to_lowercase();
    for len in SIZES {
        if let (Some(ns), Some(table)) = (
            run.median(&format!("key_slot/keyroute/{len}")),
            run.median(&format!("crc16_paths/key_slot/table/{len}")),
        ) {
            suite.push(
                Row::new(
                    format!("key_slot/{len}/table-path"),
                    "Cluster key slot",
                    format!("Rust key_slot ({selected} path on this CPU) vs its own table path forced, {len} B key"),
                    measure,
                    "ns/call",
                    ns,
                )
                .peer("keyroute key_slot, table path (key_slot_with)", None, table)
                .same_answers(same)
                .like_for_like(true)
                .note(format!("keyroute {:.2} GB/s; carry-less folding from {} B on", len as f64 / ns, Crc16Path::Pclmul.min_len())),
            );
        }
    }
    for len in [16usize, 32, 64] {
        let id = format!("1000x{len}");
        if let (Some(ns), Some(peer)) = (
            run.median(&format!("batch/keyroute_key_slots/{id}")),
            run.median(&format!("batch/redis_crate_loop/{id}")),
        ) {
            suite.push(
                Row::new(
                    format!("key_slots/{id}"),
                    "Cluster key slot",
                    format!("Rust key_slots over 1000 keys of {len} B vs a Slot::for_key loop"),
                    measure,
                    "ns/key",
                    ns / 1000.0,
                )
                .peer(
                    "redis crate Slot::for_key (loop)",
                    redis_version.clone(),
                    peer / 1000.0,
                )
                .same_answers(same)
                .like_for_like(true),
            );
        }
    }
    if let Err(e) = suite.write() {
        eprintln!("bench report: could not write rust-slot.json: {e}");
        std::process::exit(1);
    }
}
