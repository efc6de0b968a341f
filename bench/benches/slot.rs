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
//! for a CPU. `SLOT_BENCH_CLOCK=cpu` measures this thread's CPU time instead
//! (`CLOCK_THREAD_CPUTIME_ID`, Unix only), which is what the code costs when it runs.
use std::hint::black_box;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use keyroute::slot::{crc16_xmodem, hash_tag, key_slot, key_slots};

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
    for len in [16usize, 64] {
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

/// Wall time (default) or, with `SLOT_BENCH_CLOCK=cpu`, this thread's CPU time; both in
/// nanoseconds, so criterion's time formatting applies to either.
struct Clock {
    cpu: bool,
    wall: WallTime,
}

impl Clock {
    fn from_env() -> Self {
        let cpu = std::env::var("SLOT_BENCH_CLOCK").is_ok_and(|v| v == "cpu");
        if cpu && !cfg!(unix) {
            eprintln!("SLOT_BENCH_CLOCK=cpu needs a Unix system; using wall time");
        }
        Self {
            cpu: cpu && cfg!(unix),
            wall: WallTime,
        }
    }

    fn now_ns(&self) -> u64 {
        if self.cpu {
            thread_cpu_ns()
        } else {
            0
        }
    }
}

#[cfg(unix)]
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(not(unix))]
fn thread_cpu_ns() -> u64 {
    0
}

impl Measurement for Clock {
    type Intermediate = (std::time::Instant, u64);
    type Value = u64;

    fn start(&self) -> Self::Intermediate {
        (std::time::Instant::now(), self.now_ns())
    }

    fn end(&self, (wall, cpu): Self::Intermediate) -> u64 {
        if self.cpu {
            self.now_ns() - cpu
        } else {
            wall.elapsed().as_nanos() as u64
        }
    }

    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }

    fn zero(&self) -> u64 {
        0
    }

    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        self.wall.formatter()
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_measurement(Clock::from_env());
    targets = bench_crc, bench_key_slot, bench_batch
}
criterion_main!(benches);
