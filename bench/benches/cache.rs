//! The smart cache's warm hits, in one run:
//!
//! 1. `SmartCache::get_or_load` on a warm key from Rust (one thread, one `HMGET` per
//!    call): p50 and p99 latency, beside a plain `GET` of the same 512 B value on a
//!    `redis` crate connection (the floor of one round trip). Target: p50 < 0.2 ms.
//! 2. `redis-benchmark` at 50 clients, interleaved round by round, best of each: a plain
//!    `GET` of a 512 B string, the warm hit as `get_or_load` sends it (`HMGET` of
//!    `PEEK_FIELDS`), `EVALSHA sc-get` answering a hit (`fast_hits` off) and `EVALSHA` of
//!    `return 1` (the floor of any script call). Target: warm hits ≥ 85 % of GET.
//!
//! Writes `build/bench/cache.json` (bench/README.md).
//!
//! Starts its own redis-server on a free 127.0.0.1 port.
//! `cargo bench -p keyroute-bench --bench cache` (env `KEYROUTE_BENCH_HITS`, default
//! 20000 hits; `KEYROUTE_BENCH_REQUESTS`, default 200000 per redis-benchmark run).
#![allow(clippy::unwrap_used)]

#[path = "../../redis/tests/common/standalone.rs"]
mod standalone;

use std::process::Command;
use std::time::{Duration, Instant};

use keyroute::cache::{ClientKeys, TokenKey, PEEK_FIELDS, SC_GET};
use keyroute_bench::report::{Measure, Row, Suite};
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
fn usec_per_call(con: &mut keyroute_redis::Direct, command: &str) -> f64 {
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

fn redis_benchmark_version() -> Option<String> {
    let out = Command::new("redis-benchmark")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().nth(1).map(str::to_owned)
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

    // 2. redis-benchmark, 50 clients, interleaved round by round: GET, the warm-hit fast
    // path (HMGET of the read fields, what get_or_load sends on a hit), EVALSHA sc-get
    // (what it sends with fast_hits off) and EVALSHA of an empty script (the floor of
    // any script call).
    let keys = ClientKeys::new(b"client-bench", &TokenKey::DEFAULT).unwrap();
    let entry = String::from_utf8(keys.entry(b"accounts").unwrap()).unwrap();
    let empty: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return 1")
        .query(&mut con)
        .unwrap();
    let mut peek: Vec<&str> = vec!["HMGET", &entry];
    peek.extend(PEEK_FIELDS);
    let commands: [(&str, &str, Vec<&str>); 4] = [
        ("GET (512 B string)", "get", vec!["GET", "plain"]),
        ("HMGET fast hit", "hmget", peek),
        (
            "EVALSHA sc-get (hit)",
            "evalsha",
            vec![
                "EVALSHA",
                SC_GET.sha1(),
                "1",
                &entry,
                "2000",
                "bench",
                "0",
                "1",
            ],
        ),
        ("EVALSHA return 1", "evalsha", vec!["EVALSHA", &empty, "0"]),
    ];
    let mut best = [0.0f64; 4];
    let mut server_us = [f64::MAX; 4];
    let reset = |con: &mut keyroute_redis::Direct| {
        let _: () = redis::cmd("CONFIG").arg("RESETSTAT").query(con).unwrap();
    };
    for _ in 0..ROUNDS {
        for (i, (_, stat, command)) in commands.iter().enumerate() {
            reset(&mut con);
            best[i] = best[i].max(redis_benchmark(server.port(), requests, command));
            server_us[i] = server_us[i].min(usec_per_call(&mut con, stat));
        }
    }
    println!("redis-benchmark, 50 clients, no pipelining, {requests} requests (best of {ROUNDS}, interleaved):");
    for (i, (name, _, _)) in commands.iter().enumerate() {
        let share = if best[0] > 0.0 {
            100.0 * best[i] / best[0]
        } else {
            0.0
        };
        println!(
            "  {name:<22} {:>10.0} req/s  {share:>5.1} % of GET   server {:.2} µs/call",
            best[i], server_us[i]
        );
    }
    println!("  (target: warm hits >= 85 % of GET; get_or_load sends the HMGET fast hit)");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "  load average during the run: {}",
        load.split(' ').take(3).collect::<Vec<_>>().join(" ")
    );

    let mut suite = Suite::new(
        "cache",
        "bench/benches/cache.rs",
        format!(
            "wall clock; Rust: best of {ROUNDS} interleaved rounds of {hits} calls by p50; \
             redis-benchmark -c 50 -P 1 -n {requests}: best of {ROUNDS} interleaved rounds"
        ),
    );
    suite.push(
        Row::new(
            "cache/warm-hit-p50",
            "Smart cache",
            "Rust SmartCache::get_or_load on a warm 512 B entry, p50 (1 thread)",
            Measure::Wall,
            "µs",
            micros(percentile(&h, 50.0)),
        )
        .peer(
            "redis crate GET of a 512 B string",
            None,
            micros(percentile(&g, 50.0)),
        )
        .headline()
        .note("a hit is one HMGET round trip (fast_hits); the peer is the floor of one round trip"),
    );
    let version = redis_benchmark_version();
    for (i, id, what, note) in [
        (
            1,
            "cache/hit-throughput",
            "redis-benchmark, 50 clients: a warm hit as get_or_load sends it (HMGET of the read fields)",
            "the hit path of every binding (fast_hits on, the default)",
        ),
        (
            2,
            "cache/sc-get-throughput",
            "redis-benchmark, 50 clients: EVALSHA sc-get answering a hit (fast_hits off)",
            "a script call: Redis runs EVALSHA at a fraction of a plain read's rate",
        ),
        (
            3,
            "cache/script-floor",
            "redis-benchmark, 50 clients: EVALSHA of `return 1`",
            "the floor of any script call on this server",
        ),
    ] {
        if best[0] > 0.0 && best[i] > 0.0 {
            let mut row = Row::new(id, "Smart cache", what, Measure::Wall, "req/s", best[i])
                .peer("redis-benchmark GET (512 B)", version.clone(), best[0])
                .higher_is_better()
                .note(note);
            if i == 1 {
                row = row.headline();
            }
            suite.push(row);
        }
    }
    suite.write().unwrap();

    let misses: u64 = cache.stats().backend_calls;
    assert_eq!(misses, 1, "the bench only hit");
}
