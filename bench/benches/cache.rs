//! The smart cache's warm hits, in one run:
//!
//! 1. `SmartCache::get_or_load` on a warm key from Rust (one thread, one EVALSHA per
//!    call): p50 and p99 latency, beside a plain `GET` of the same 512 B value on a
//!    `redis` crate connection (the floor of one round trip). Target: p50 < 0.2 ms.
//! 2. `redis-benchmark` at 50 clients: `EVALSHA sc-get` on the warm entry against a plain
//!    `GET` of a 512 B string, interleaved round by round, best of each. Target: sc-get ≥
//!    85 % of GET's throughput.
//!
//! Starts its own redis-server on a free 127.0.0.1 port.
//! `cargo bench -p keyroute-bench --bench cache` (env `KEYROUTE_BENCH_HITS`, default
//! 20000 hits; `KEYROUTE_BENCH_REQUESTS`, default 200000 per redis-benchmark run).
#![allow(clippy::unwrap_used)]

#[path = "../../redis/tests/common/standalone.rs"]
mod standalone;

use std::process::Command;
use std::time::{Duration, Instant};

use keyroute::cache::{ClientKeys, TokenKey, SC_GET};
use keyroute_redis::cache::{CacheConfig, LoadError, SmartCache, Store};
use keyroute_redis::{connect, Timeouts};

const ROUNDS: usize = 3;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn timed(n: usize, mut f: impl FnMut()) -> Vec<Duration> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f();
        out.push(t.elapsed());
    }
    out.sort_unstable();
    out
}

/// The server's own time per call of `command` (`INFO commandstats`, µs), since the last
/// `CONFIG RESETSTAT`.
fn usec_per_call(con: &mut redis::Connection, command: &str) -> f64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query(con).unwrap();
    info.lines()
        .find(|l| l.starts_with(&format!("cmdstat_{command}:")))
        .and_then(|l| {
            l.split(',')
                .find_map(|kv| kv.strip_prefix("usec_per_call="))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// requests per second of one `redis-benchmark` run of `command`.
fn redis_benchmark(port: u16, requests: usize, command: &[&str]) -> f64 {
    let output = Command::new("redis-benchmark")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-c",
            "50",
            "-P",
            "1",
        ])
        .args(["-n", &requests.to_string(), "--csv"])
        .args(command)
        .output()
        .expect("redis-benchmark (apt-get install redis-tools)");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| !l.starts_with("\"test\""))
        .unwrap_or_default();
    line.split(',')
        .nth(1)
        .and_then(|v| v.trim_matches('"').parse().ok())
        .unwrap_or(0.0)
}

fn main() {
    let hits = env("KEYROUTE_BENCH_HITS", 20_000);
    let requests = env("KEYROUTE_BENCH_REQUESTS", 200_000);
    let server = standalone::Server::start();
    let store = Store::standalone(&server.url(), Timeouts::default()).unwrap();
    let config = CacheConfig {
        soft_ttl: Duration::from_secs(3600),
        hard_ttl: Duration::from_secs(7200),
        xfetch_beta: 0.0,
        ..CacheConfig::default()
    };
    let cache = SmartCache::new(store, config).unwrap();
    let value = vec![b'x'; 512];
    let far = || Instant::now() + Duration::from_secs(5);
    cache
        .get_or_load("client-bench", "accounts", far(), || {
            Ok::<_, LoadError>(value.clone())
        })
        .unwrap();
    let no_load = || Err::<Vec<u8>, _>(LoadError::new("NO", "the bench must only hit"));
    let mut con = connect(&server.url(), Timeouts::default()).unwrap();
    let _: () = redis::cmd("SET")
        .arg("plain")
        .arg(&value)
        .query(&mut con)
        .unwrap();

    // 1. Rust warm hits, interleaved with plain GETs, best round of each by p50.
    let mut best_hit: Option<Vec<Duration>> = None;
    let mut best_get: Option<Vec<Duration>> = None;
    for _ in 0..ROUNDS {
        let h = timed(hits, || {
            let v = cache
                .get_or_load("client-bench", "accounts", far(), no_load)
                .unwrap();
            assert_eq!(v.len(), 512);
        });
        let g = timed(hits, || {
            let v: Vec<u8> = redis::cmd("GET").arg("plain").query(&mut con).unwrap();
            assert_eq!(v.len(), 512);
        });
        if best_hit
            .as_ref()
            .is_none_or(|b| percentile(&h, 50.0) < percentile(b, 50.0))
        {
            best_hit = Some(h);
        }
        if best_get
            .as_ref()
            .is_none_or(|b| percentile(&g, 50.0) < percentile(b, 50.0))
        {
            best_get = Some(g);
        }
    }
    let (h, g) = (best_hit.unwrap(), best_get.unwrap());
    assert_eq!(cache.stats().backend_calls, 1);
    println!("warm hit, Rust, 1 thread, 512 B value, {hits} calls (best of {ROUNDS} rounds):");
    println!(
        "  SmartCache::get_or_load   p50 {:>6.1} µs   p99 {:>6.1} µs   (target p50 < 200 µs)",
        micros(percentile(&h, 50.0)),
        micros(percentile(&h, 99.0))
    );
    println!(
        "  plain GET (redis crate)   p50 {:>6.1} µs   p99 {:>6.1} µs",
        micros(percentile(&g, 50.0)),
        micros(percentile(&g, 99.0))
    );
    println!(
        "  get_or_load / GET p50     {:>6.2}×",
        micros(percentile(&h, 50.0)) / micros(percentile(&g, 50.0))
    );

    // 2. redis-benchmark, 50 clients: EVALSHA sc-get vs GET, interleaved.
    let keys = ClientKeys::new(b"client-bench", &TokenKey::DEFAULT).unwrap();
    let entry = String::from_utf8(keys.entry(b"accounts").unwrap()).unwrap();
    let sc_get = [
        "EVALSHA",
        SC_GET.sha1(),
        "1",
        &entry,
        "2000",
        "bench",
        "0",
        "1",
    ];
    let (mut best_script, mut best_plain) = (0.0f64, 0.0f64);
    let (mut script_us, mut plain_us) = (f64::MAX, f64::MAX);
    let reset = |con: &mut redis::Connection| {
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(con).unwrap();
    };
    for _ in 0..ROUNDS {
        reset(&mut con);
        best_script = best_script.max(redis_benchmark(server.port(), requests, &sc_get));
        script_us = script_us.min(usec_per_call(&mut con, "evalsha"));
        reset(&mut con);
        best_plain = best_plain.max(redis_benchmark(server.port(), requests, &["GET", "plain"]));
        plain_us = plain_us.min(usec_per_call(&mut con, "get"));
    }
    println!("redis-benchmark, 50 clients, no pipelining, {requests} requests (best of {ROUNDS}, interleaved):");
    println!("  EVALSHA sc-get (warm hit)  {best_script:>10.0} req/s");
    println!("  GET (512 B string)         {best_plain:>10.0} req/s");
    if best_plain > 0.0 {
        println!(
            "  sc-get / GET               {:>9.1} %   (target >= 85 %)",
            100.0 * best_script / best_plain
        );
    }
    println!("  server time per call (INFO commandstats): sc-get {script_us:.2} µs, GET {plain_us:.2} µs");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "  load average during the run: {}",
        load.split(' ').take(3).collect::<Vec<_>>().join(" ")
    );
    let misses: u64 = cache.stats().backend_calls;
    assert_eq!(misses, 1, "the bench only hit");
}
