//! The cost of the C boundary: each exported function against the Rust call it wraps,
//! on the keys and ring of `core/benches/ring.rs`, interleaved in one process (fastest
//! of many short bursts, so that load from other processes hits both alike).
//!
//! `cargo bench -p keyroute-c --bench ffi`; the C-side figures (and libmemcached) come
//! from `bench.c` next to this file (`make bench-c` runs both). The figures are also
//! written to `build/bench/c-ffi.json` for `make bench-report` (`bench/README.md`).
#![allow(clippy::unwrap_used)]

use std::ffi::{c_char, CString};
use std::hint::black_box;
use std::time::Instant;

use keyroute::*;
use keyroute_bench::report::{Measure, Row, Suite};
use keyroute_core::ring::{Profile, ProfileName, Ring};
use keyroute_core::slot::key_slot;

const BURST: usize = 1 << 12;
const ROUNDS: usize = 500;

fn keys16() -> Vec<[u8; 16]> {
    (0u64..4096)
        .map(|i| {
            let mut k = [0u8; 16];
            k[..8].copy_from_slice(&i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
            k[8..].copy_from_slice(b"user:key");
            k
        })
        .collect()
}

type Lookup<'a> = (&'a str, &'a mut dyn FnMut(&[u8]) -> usize);

/// Per variant: the fastest burst, and the median over rounds of (this burst − the
/// first variant's burst in the same round). Bursts of one round run back to back, so a
/// slow spell of the machine hits both sides of a difference alike; each timed burst
/// follows an untimed one of the same function, so every side is timed with its own
/// data in cache.
fn fastest(fs: &mut [Lookup<'_>], keys: &[[u8; 16]]) -> (Vec<f64>, Vec<f64>) {
    let mut best = vec![f64::MAX; fs.len()];
    let mut diffs = vec![Vec::with_capacity(ROUNDS); fs.len()];
    for round in 0..ROUNDS {
        let mut this = vec![0.0; fs.len()];
        // Alternate the order each round, so neither side always runs first.
        let order: Vec<usize> = if round % 2 == 0 {
            (0..fs.len()).collect()
        } else {
            (0..fs.len()).rev().collect()
        };
        for j in order {
            let f = &mut fs[j].1;
            // Untimed first: the Rust and the C side own separate copies of the ring, so
            // the side that runs second would otherwise start with the other's copy in
            // cache.
            for k in keys {
                black_box(f(black_box(k)));
            }
            let t = Instant::now();
            let mut acc = 0usize;
            for i in 0..BURST {
                acc = acc.wrapping_add(f(black_box(&keys[i & 4095])));
            }
            black_box(acc);
            this[j] = t.elapsed().as_nanos() as f64 / BURST as f64;
            best[j] = best[j].min(this[j]);
        }
        for j in 0..fs.len() {
            diffs[j].push(this[j] - this[0]);
        }
    }
    let medians: Vec<f64> = diffs
        .into_iter()
        .map(|mut d| {
            d.sort_by(f64::total_cmp);
            d[d.len() / 2]
        })
        .collect();
    for ((label, _), (ns, d)) in fs.iter().zip(best.iter().zip(&medians)) {
        println!("{label:<44} {ns:8.2} ns/op   median difference {d:+6.2} ns");
    }
    (best, medians)
}

/// The C boundary's cost two ways: fastest burst against fastest burst (how every other
/// figure of this project is taken), and the median of the paired differences (robust to
/// drift, but it also keeps the bursts a neighbour slowed down). The verdict is on the
/// first; both are printed.
fn report(what: &str, (best, diffs): &(Vec<f64>, Vec<f64>), ffi: usize) -> f64 {
    let rust = best[0];
    let d = best[ffi] - rust;
    let within = |d: f64| d <= 2.0 || d <= 0.05 * rust;
    println!(
        "{what}: C ABI - Rust = {d:+.2} ns ({:+.1}%) fastest vs fastest, {:+.2} ns median of \
         paired bursts -> {}",
        100.0 * d / rust,
        diffs[ffi],
        if within(d) {
            "within 5% or 2 ns"
        } else {
            "OVER target"
        }
    );
    d
}

/// The C call against the Rust call it wraps, as a report row (the Rust call is the
/// "peer": a ratio below 1 is the boundary's cost).
fn row(id: &str, what: String, (best, _): &(Vec<f64>, Vec<f64>), ffi: usize, d: f64) -> Row {
    Row::new(
        id,
        "C ABI overhead",
        what,
        Measure::Wall,
        "ns/call",
        best[ffi],
    )
    .peer("the Rust call it wraps (inlined)", None, best[0])
    .like_for_like(true)
    .note(format!(
        "C call - Rust call = {d:+.2} ns ({:+.1}%), fastest burst against fastest burst",
        100.0 * d / best[0]
    ))
}

/// The Rust call as a C caller gets it: through a call the compiler cannot inline.
#[inline(never)]
fn get_noinline(ring: &Ring, k: &[u8]) -> usize {
    ring.get(k).map_or(0, str::len)
}

#[inline(never)]
fn slot_noinline(k: &[u8]) -> u16 {
    key_slot(k)
}

fn main() {
    let keys = keys16();
    let nodes: Vec<(String, u32)> = (0..100)
        .map(|i| (format!("10.0.{}.{}:11211", i >> 8, i & 255), 1))
        .collect();
    // KEYROUTE_BENCH_PROFILE=native (say) runs one profile only, e.g. under callgrind.
    let only = std::env::var("KEYROUTE_BENCH_PROFILE").ok();
    let mut suite = Suite::new(
        "c-ffi",
        "bindings-c/bench/ffi.rs",
        format!(
            "wall clock; fastest of {ROUNDS} interleaved bursts of {BURST} calls (order alternating, \
             each after an untimed pass), in one process"
        ),
    );
    for name in [ProfileName::Libketama, ProfileName::Native] {
        if only.as_deref().is_some_and(|o| o != name.as_str()) {
            continue;
        }
        let ring = Ring::with_nodes(Profile::from_name(name), nodes.clone()).unwrap();
        let mut c: *mut keyroute_ring = std::ptr::null_mut();
        let profile = CString::new(name.as_str()).unwrap();
        unsafe {
            assert_eq!(
                keyroute_ring_new(profile.as_ptr(), std::ptr::null(), &mut c),
                keyroute_status::KEYROUTE_OK
            );
            for (n, w) in &nodes {
                let n = CString::new(n.as_str()).unwrap();
                assert_eq!(
                    keyroute_ring_add(c, n.as_ptr(), i64::from(*w)),
                    keyroute_status::KEYROUTE_OK
                );
            }
        }
        let cring = c as *const keyroute_ring;
        let mut rust = |k: &[u8]| ring.get(k).map_or(0, str::len);
        let mut ffi = |k: &[u8]| {
            let (mut p, mut l): (*const c_char, usize) = (std::ptr::null(), 0);
            unsafe { keyroute_ring_get(cring, k.as_ptr(), k.len(), &mut p, &mut l) };
            l
        };
        let mut noinline = |k: &[u8]| get_noinline(&ring, k);
        let label_r = format!("Rust Ring::get ({name})");
        let label_n = format!("Rust Ring::get, not inlined ({name})");
        let label_c = format!("keyroute_ring_get ({name})");
        let t = fastest(
            &mut [
                (&label_r, &mut rust),
                (&label_n, &mut noinline),
                (&label_c, &mut ffi),
            ],
            &keys,
        );
        let d = report(&format!("ring get {name}"), &t, 2);
        suite.push(row(
            &format!("ffi/ring_get-{name}"),
            format!(
                "C keyroute_ring_get vs Rust Ring::get, {name} profile, 100 servers, 16 B keys"
            ),
            &t,
            2,
            d,
        ));
        unsafe { keyroute_ring_free(c) };
    }
    let mut rust = |k: &[u8]| usize::from(key_slot(k));
    let mut ffi = |k: &[u8]| usize::from(unsafe { keyroute_key_slot(k.as_ptr(), k.len()) });
    let mut noinline = |k: &[u8]| usize::from(slot_noinline(k));
    let t = fastest(
        &mut [
            ("Rust slot::key_slot", &mut rust),
            ("Rust slot::key_slot, not inlined", &mut noinline),
            ("keyroute_key_slot", &mut ffi),
        ],
        &keys,
    );
    let d = report("key_slot", &t, 2);
    suite.push(row(
        "ffi/key_slot-16",
        "C keyroute_key_slot vs Rust slot::key_slot, 16 B key".into(),
        &t,
        2,
        d,
    ));
    suite.write().unwrap();
}
