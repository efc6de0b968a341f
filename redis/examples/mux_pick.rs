//! `LeastUsed::pick` from 50 threads: one connection per thread (`Reconnecting`, the
//! default) against one shared `Multiplexed` connection (feature `mux`), side by side with
//! `redis-benchmark -c 50 -P 1` (and `-P 16`) running the same `EVALSHA` on the same
//! private redis-server, in alternating rounds; medians and ratios of medians.
//!
//! `cargo run --release -p keyroute-redis --features mux --example mux_pick [ROUNDS] [PICKS_PER_THREAD] [THREADS]`
//! (THREADS 50 by default; also the `-c` of redis-benchmark).
#![allow(clippy::unwrap_used, clippy::print_stdout)]

#[path = "../tests/common/standalone.rs"]
mod standalone;

use std::process::Command;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use keyroute::select::LEAST_USED;
use keyroute_redis::{LeastUsed, Multiplexed, Reconnecting, Timeouts};
use redis::ConnectionLike;
use standalone::Server;

const POOL: &str = "{bench}:pool";
static THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(50);

fn threads_n() -> usize {
    THREADS.load(std::sync::atomic::Ordering::Relaxed)
}

/// `redis-benchmark -c 50 -P pipeline` of the pick's `EVALSHA`: requests a second.
fn redis_benchmark(port: u16, requests: usize, pipeline: usize) -> f64 {
    let output = Command::new("redis-benchmark")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(["-c", &threads_n().to_string(), "-P", &pipeline.to_string()])
        .args(["-n", &requests.to_string(), "--csv"])
        .args(["EVALSHA", LEAST_USED.sha1(), "1", POOL])
        .output()
        .expect("redis-benchmark (redis-tools)");
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| !l.starts_with("\"test\""))
        .expect("a result line");
    line.split(',')
        .nth(1)
        .and_then(|v| v.trim_matches('"').parse().ok())
        .expect("a rate")
}

/// [`threads_n`] threads, `per_thread` picks each on the connection `open` gives it: picks a second
/// and the 99th percentile latency.
fn threads<C: ConnectionLike + Send + 'static>(
    pool: &LeastUsed,
    per_thread: usize,
    open: impl Fn() -> C,
) -> (f64, Duration) {
    let barrier = Arc::new(Barrier::new(threads_n() + 1));
    let workers: Vec<_> = (0..threads_n())
        .map(|_| {
            let mut con = open();
            // Connected (and warm) before the clock starts.
            pool.pick(&mut con).unwrap();
            let pool = pool.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                let mut lat = Vec::with_capacity(per_thread);
                for _ in 0..per_thread {
                    let t = Instant::now();
                    pool.pick(&mut con).unwrap().unwrap();
                    lat.push(t.elapsed());
                }
                lat
            })
        })
        .collect();
    barrier.wait();
    let started = Instant::now();
    let mut lat: Vec<Duration> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let took = started.elapsed();
    lat.sort();
    let p99 = lat[lat.len() * 99 / 100];
    ((threads_n() * per_thread) as f64 / took.as_secs_f64(), p99)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let per_thread: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    if let Some(n) = args.next().and_then(|a| a.parse().ok()) {
        THREADS.store(n, std::sync::atomic::Ordering::Relaxed);
    }
    let server = Server::start();
    let url = server.url();
    let pool = LeastUsed::new(POOL).unwrap();
    let members: Vec<String> = (0..100).map(|i| format!("proxy-{i}")).collect();
    pool.seed(&mut server.connection(), &members, 0, false)
        .unwrap();
    let mux = Multiplexed::new(&url, Timeouts::default()).unwrap();
    let n = threads_n() * per_thread;
    let (mut per_con, mut muxed, mut bench1, mut bench16) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut p99_con, mut p99_mux) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate the order, so that drift does not favour one side.
        let order: [u8; 4] = if round % 2 == 0 {
            [0, 1, 2, 3]
        } else {
            [3, 2, 1, 0]
        };
        for which in order {
            match which {
                0 => {
                    let (r, p) = threads(&pool, per_thread, || {
                        Reconnecting::new(&url, Timeouts::default()).unwrap()
                    });
                    per_con.push(r);
                    p99_con.push(p.as_secs_f64() * 1e3);
                }
                1 => {
                    let (r, p) = threads(&pool, per_thread, || mux.clone());
                    muxed.push(r);
                    p99_mux.push(p.as_secs_f64() * 1e3);
                }
                2 => bench1.push(redis_benchmark(server.port(), n, 1)),
                _ => bench16.push(redis_benchmark(server.port(), n * 4, 16)),
            }
        }
        println!(
            "round {round}: per-connection {:.0}/s, multiplexed {:.0}/s, redis-benchmark -P1 {:.0}/s, -P16 {:.0}/s",
            per_con[round], muxed[round], bench1[round], bench16[round]
        );
    }
    let (c, m, b1, b16) = (
        median(&mut per_con),
        median(&mut muxed),
        median(&mut bench1),
        median(&mut bench16),
    );
    println!(
        "medians of {rounds} rounds, {} threads x {per_thread} picks:",
        threads_n()
    );
    println!(
        "  LeastUsed::pick, a connection per thread (Reconnecting): {c:>9.0}/s  p99 {:.2} ms",
        median(&mut p99_con)
    );
    println!(
        "  LeastUsed::pick, one Multiplexed connection:             {m:>9.0}/s  p99 {:.2} ms",
        median(&mut p99_mux)
    );
    let t = threads_n();
    println!("  redis-benchmark -c{t} -P1 EVALSHA:                        {b1:>9.0}/s");
    println!("  redis-benchmark -c{t} -P16 EVALSHA:                       {b16:>9.0}/s");
    println!(
        "  multiplexed / per-connection {:.2}x, multiplexed / -P1 {:.2}x, per-connection / -P1 {:.2}x, multiplexed / -P16 {:.2}",
        m / c,
        m / b1,
        c / b1,
        m / b16
    );
}
