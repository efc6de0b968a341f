//! `LeastUsed::pick` from one connection against `redis-benchmark` running the same
//! `EVALSHA` on the same server (one client, no pipelining), `pick_many(n)` against
//! single picks, and a pick over `rediss://` against a pick over plain TCP on one server
//! listening on both (certificates made at run time; medians of 5 alternating rounds:
//! the row `least_used/pick-tls-vs-plain`). Starts its own redis-servers on free
//! 127.0.0.1 ports.
//!
//! `cargo bench -p keyroute-bench --bench redis_pick` (`make bench-redis`)
//! (env `KEYROUTE_BENCH_PICKS`, default 20000 picks per run; best of 3 runs). The figures
//! are also written to `build/bench/redis-pick.json` for `make bench-report`.
#![allow(clippy::unwrap_used)]

#[path = "../../redis/tests/common/mod.rs"]
mod common;

use common::standalone;

use std::process::Command;
use std::time::Instant;

use keyroute::select::LEAST_USED;
use keyroute_bench::report::{Measure, Row, Suite};
use keyroute_redis::{connect, LeastUsed, Timeouts};

const POOL: &str = "{bench}:pool";
const RUNS: usize = 3;

fn best_of(runs: usize, mut f: impl FnMut() -> f64) -> f64 {
    (0..runs).map(|_| f()).fold(0.0, f64::max)
}

fn redis_benchmark(port: u16, picks: usize) -> Option<f64> {
    let output = Command::new("redis-benchmark")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-c",
            "1",
            "-P",
            "1",
        ])
        .args(["-n", &picks.to_string(), "--csv"])
        .args(["EVALSHA", LEAST_USED.sha1(), "1", POOL])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    // "test","rps",... then "EVALSHA ...","12345.67",...
    let line = text.lines().find(|l| !l.starts_with("\"test\""))?;
    line.split(',').nth(1)?.trim_matches('"').parse().ok()
}

/// `redis-benchmark --version` without the program name, e.g. `7.0.15`.
fn redis_benchmark_version() -> Option<String> {
    let out = Command::new("redis-benchmark")
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().nth(1).map(str::to_owned)
}

fn main() {
    let picks: usize = std::env::var("KEYROUTE_BENCH_PICKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let server = standalone::Server::start();
    let mut con = connect(&server.url(), Timeouts::default()).unwrap();
    let pool = LeastUsed::new(POOL).unwrap();
    let members: Vec<String> = (0..10).map(|i| format!("proxy-{i}")).collect();
    pool.seed(&mut con, &members, 0, false).unwrap();
    for _ in 0..2000 {
        pool.pick(&mut con).unwrap().unwrap();
    }

    let single = best_of(RUNS, || {
        let started = Instant::now();
        for _ in 0..picks {
            pool.pick(&mut con).unwrap().unwrap();
        }
        picks as f64 / started.elapsed().as_secs_f64()
    });
    let reference = best_of(RUNS, || {
        redis_benchmark(server.port(), picks).unwrap_or(0.0)
    });
    println!("pick()                     {single:>10.0} picks/s  (1 connection, {picks} picks, best of {RUNS})");
    let mut suite = Suite::new(
        "redis-pick",
        "bench/benches/redis_pick.rs",
        format!("wall clock; best of {RUNS} runs of {picks} picks each side, one after the other, on one local redis-server"),
    );
    let mut row = Row::new(
        "least_used/pick-vs-evalsha",
        "Redis round trips",
        "Rust LeastUsed::pick vs redis-benchmark running the same EVALSHA, 1 connection, no pipelining",
        Measure::Wall,
        "calls/s",
        single,
    )
    .higher_is_better()
    .like_for_like(true)
    .headline()
    .note("the same script on the same server; redis-benchmark only sends it and reads the reply");
    if reference > 0.0 {
        row = row.peer(
            "redis-benchmark EVALSHA -c 1 -P 1",
            redis_benchmark_version(),
            reference,
        );
    }
    suite.push(row);
    if reference > 0.0 {
        println!(
            "redis-benchmark EVALSHA    {reference:>10.0} req/s    (-c 1 -P 1, same script and server)"
        );
        println!(
            "pick() / redis-benchmark   {:>10.1} %       (target >= 80 %)",
            100.0 * single / reference
        );
    } else {
        println!("redis-benchmark not found or failed: install redis-tools");
    }
    for n in [10, 100, 1000] {
        let rate = best_of(RUNS, || {
            let rounds = (picks / n).max(1);
            let started = Instant::now();
            for _ in 0..rounds {
                assert_eq!(pool.pick_many(&mut con, n).unwrap().len(), n);
            }
            (rounds * n) as f64 / started.elapsed().as_secs_f64()
        });
        println!(
            "pick_many({n:<4})            {rate:>10.0} picks/s  = {:>5.1} x single picks (target >= 5 x)",
            rate / single
        );
        suite.push(
            Row::new(
                format!("least_used/pick_many-{n}"),
                "Redis round trips",
                format!("Rust LeastUsed::pick_many({n}), 1 connection"),
                Measure::Wall,
                "picks/s",
                rate,
            )
            .higher_is_better()
            .note(format!(
                "{:.1}x the rate of single picks in this run",
                rate / single
            )),
        );
    }
    suite.push(tls_row(picks));
    suite.write().unwrap();
}

/// The cost of TLS: picks over `rediss://` and over plain TCP on one redis-server (it
/// listens on both ports), in alternating rounds; the medians' ratio.
fn tls_row(picks: usize) -> Row {
    let certs = common::secure::Certs::make();
    let dir = common::secure::temp_dir("bench-tls");
    let (plain_port, tls_port) = (
        common::secure::free_port(false),
        common::secure::free_port(false),
    );
    let mut args = vec![
        "--port".to_string(),
        plain_port.to_string(),
        "--tls-port".to_string(),
        tls_port.to_string(),
    ];
    args.extend(certs.server_args(false));
    let _server = common::secure::redis_server(&dir, plain_port, &args);
    let tls_url = format!("rediss://127.0.0.1:{tls_port}?{}", certs.query(false));
    let mut plain = connect(
        &format!("redis://127.0.0.1:{plain_port}"),
        Timeouts::default(),
    )
    .unwrap();
    let mut tls = connect(&tls_url, Timeouts::default()).unwrap();
    let pool = LeastUsed::new("{bench-tls}:pool").unwrap();
    pool.seed(&mut plain, ["p1", "p2", "p3"], 0, false).unwrap();
    let rate = |con: &mut keyroute_redis::Direct| {
        let started = Instant::now();
        for _ in 0..picks / 4 {
            pool.pick(con).unwrap().unwrap();
        }
        (picks / 4) as f64 / started.elapsed().as_secs_f64()
    };
    let (mut p, mut t) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        p.push(rate(&mut plain));
        t.push(rate(&mut tls));
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (p, t) = (median(&mut p), median(&mut t));
    println!("pick() over TLS            {t:>10.0} picks/s  = {:>5.2} x plain TCP ({p:.0}/s) on the same server", t / p);
    Row::new(
        "least_used/pick-tls-vs-plain",
        "Redis round trips",
        "Rust LeastUsed::pick over rediss:// vs over plain TCP, same server, 1 connection",
        Measure::Wall,
        "calls/s",
        t,
    )
    .higher_is_better()
    .like_for_like(true)
    .peer("keyroute LeastUsed::pick, plain TCP", None, p)
    .note("medians of 5 alternating rounds; the server listens on both ports; rustls (ring) on the client, OpenSSL in redis-server")
}
