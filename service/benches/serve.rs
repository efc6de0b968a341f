//! `make bench-serve`: `keyroute serve` measured from outside, one run each.
//!
//! 1. `ping` through the broker: Rust DEALER clients (libzmq) on loopback, each keeping
//!    a window of requests in flight; msg/s and latency percentiles.
//! 2. Cache hits (`cache.get`) with the Redis store (redis-server on the same machine).
//! 3. RSS of the service with 100 loader workers (stalled) and a full 3,000-message queue.
//! 4. Refusal latency (`QUEUE_FULL`) while the backend is stalled and the queue full.
//!
//! The binary is `$KEYROUTE_BIN` (default `target/release/keyroute`); redis-server must be
//! on the PATH. Targets (issue 15): ≥ 150k ping/s with p99 ≤ 2 ms; ≥ 20k hits/s; ≤ 40 MB;
//! refusal p99 ≤ 1 ms. The reference system: 7k rps client→service, ~250 MB.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use keyroute::frame::{Header, MsgType};
use keyroute_serve::LoaderWorker;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

struct Serve {
    child: Child,
    bind: String,
    workers: String,
    metrics: u16,
}

impl Serve {
    fn start(args: &[&str]) -> Serve {
        let bin = std::env::var("KEYROUTE_BIN").unwrap_or_else(|_| {
            let target = std::env::var("CARGO_TARGET_DIR")
                .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../target").into());
            format!("{target}/release/keyroute")
        });
        let (p, w, m) = (free_port(), free_port(), free_port());
        let bind = format!("tcp://127.0.0.1:{p}");
        let workers = format!("tcp://127.0.0.1:{w}");
        let child = Command::new(&bin)
            .args([
                "serve",
                "--bind",
                &bind,
                "--workers-bind",
                &workers,
                "--metrics",
                &format!("127.0.0.1:{m}"),
            ])
            .args(args)
            .env("KEYROUTE_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{bin}: {e} (build it: cargo build --release -p keyroute-cli)")
            });
        let s = Serve {
            child,
            bind,
            workers,
            metrics: m,
        };
        let ctx = zmq::Context::new();
        let sock = dealer(&ctx, &s.bind);
        let end = Instant::now() + Duration::from_secs(20);
        loop {
            send(&sock, MsgType::Ping, 0, b"", None);
            if sock.poll(zmq::POLLIN, 200).unwrap_or(0) > 0 {
                let _ = sock.recv_multipart(0);
                break;
            }
            assert!(Instant::now() < end, "keyroute serve did not start");
        }
        s
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    fn metric(&self, name: &str) -> Option<f64> {
        let mut s = TcpStream::connect(("127.0.0.1", self.metrics)).ok()?;
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .ok()?;
        let mut text = String::new();
        s.read_to_string(&mut text).ok()?;
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn dealer(ctx: &zmq::Context, ep: &str) -> zmq::Socket {
    let s = ctx.socket(zmq::DEALER).expect("socket");
    s.set_linger(0).expect("linger");
    s.set_sndhwm(0).expect("hwm");
    s.set_rcvhwm(0).expect("hwm");
    s.connect(ep).expect("connect");
    s
}

fn send(sock: &zmq::Socket, ty: MsgType, seq: u64, body: &[u8], deadline_ms: Option<u32>) {
    let mut id = [0u8; 16];
    id[8..].copy_from_slice(&seq.to_be_bytes());
    let mut h = Header::request(ty, id);
    h.deadline_ms = deadline_ms.unwrap_or(0);
    let mut head = [0u8; 29];
    let _ = h.encode_into(&mut head);
    sock.send(&head[..], zmq::SNDMORE).expect("send");
    sock.send(body, 0).expect("send");
}

/// Runs `clients` threads each keeping `window` requests in flight for `per_client`
/// requests; (msg/s, latencies in µs sorted, transport errors seen).
fn windowed(
    ep: &str,
    clients: usize,
    window: usize,
    per_client: usize,
    ty: MsgType,
    body: &'static [u8],
) -> (f64, Vec<u32>, u64) {
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let ep = ep.to_string();
            std::thread::spawn(move || {
                let ctx = zmq::Context::new();
                let sock = dealer(&ctx, &ep);
                let mut lat = Vec::with_capacity(per_client);
                let mut inflight = VecDeque::with_capacity(window);
                let (mut sent, mut errors) = (0usize, 0u64);
                while lat.len() < per_client {
                    while sent < per_client && inflight.len() < window {
                        send(&sock, ty, sent as u64, body, None);
                        inflight.push_back(Instant::now());
                        sent += 1;
                    }
                    let frames = sock.recv_multipart(0).expect("recv");
                    if frames
                        .first()
                        .and_then(|h| Header::decode(h).ok())
                        .is_none_or(|h| h.transport_error != 0 || h.is_data_error())
                    {
                        errors += 1;
                    }
                    let t = inflight.pop_front().expect("in flight");
                    lat.push(u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX));
                }
                (lat, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for t in threads {
        let (lat, e) = t.join().expect("client thread");
        all.extend(lat);
        errors += e;
    }
    let rate = all.len() as f64 / start.elapsed().as_secs_f64();
    all.sort_unstable();
    (rate, all, errors)
}

fn pct(sorted: &[u32], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    f64::from(sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)]) / 1000.0
}

fn report(name: &str, rate: f64, lat: &[u32], target: &str) {
    println!(
        "{name:<44} {rate:>10.0} msg/s   p50 {:.3} ms   p99 {:.3} ms   max {:.3} ms   [{target}]",
        pct(lat, 0.5),
        pct(lat, 0.99),
        pct(lat, 1.0)
    );
}

/// One row of the benchmark report (bench/README.md's shape; measured here alone: the
/// reference system of issue 15 does not run here, its figure is in the note).
fn row(
    id: &str,
    what: &str,
    unit: &str,
    higher: bool,
    value: f64,
    note: &str,
) -> serde_json::Value {
    serde_json::json!({
        "id": id,
        "group": "Service",
        "what": what,
        "measure": "wall",
        "unit": unit,
        "better": if higher { "higher" } else { "lower" },
        "keyroute": value,
        "peer": null,
        "peer_version": null,
        "peer_value": null,
        "ratio": null,
        "same_answers": null,
        "like_for_like": false,
        "headline": false,
        "note": note,
    })
}

/// Writes build/bench/serve.json (or `$KEYROUTE_BENCH_DIR/serve.json`).
fn write_rows(rows: Vec<serde_json::Value>) {
    let dir = std::env::var_os("KEYROUTE_BENCH_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../build/bench"),
        std::path::PathBuf::from,
    );
    let load: Vec<f64> = std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .filter_map(|x| x.parse().ok())
        .collect();
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let n = rows.len();
    let doc = serde_json::json!({
        "schema": 1,
        "suite": "serve",
        "source": "service/benches/serve.rs",
        "method": "wall clock; one run per figure against a keyroute serve process on loopback",
        "unix_time": secs,
        "load_average": if load.len() == 3 { serde_json::json!(load) } else { serde_json::Value::Null },
        "rows": rows,
    });
    let path = dir.join("serve.json");
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n",
        )
    });
    match written {
        Ok(()) => println!("bench report: {n} rows written to {}", path.display()),
        Err(e) => eprintln!("bench report: cannot write {}: {e}", path.display()),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!(
        "keyroute serve benchmarks (one run each; load average {})",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );

    let mut rows = Vec::new();
    // 1. ping through the broker.
    {
        let s = Serve::start(&[]);
        let _ = windowed(&s.bind, 2, 64, 20_000, MsgType::Ping, b""); // warm-up
        let (rate, lat, errors) = windowed(&s.bind, 2, 64, 200_000, MsgType::Ping, b"");
        assert_eq!(errors, 0);
        report(
            "ping, 2 clients x 64 in flight",
            rate,
            &lat,
            "target >= 150k/s, p99 <= 2 ms; reference 7k rps",
        );
        rows.push(row(
            "serve/ping-rate",
            "Rust load generator: ping through the broker, 2 clients x 64 in flight",
            "msg/s",
            true,
            rate,
            "target >= 150k/s; the reference system did 7k requests/s client to service",
        ));
        rows.push(row(
            "serve/ping-p99",
            "ping through the broker, 2 clients x 64 in flight, p99",
            "ms",
            false,
            pct(&lat, 0.99),
            "target <= 2 ms",
        ));
        let (rate, lat, _) = windowed(&s.bind, 1, 1, 20_000, MsgType::Ping, b"");
        report(
            "ping, 1 client, one at a time",
            rate,
            &lat,
            "round-trip latency",
        );
    }

    // 2. cache hits with Redis.
    {
        let port = free_port();
        let mut redis = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server");
        std::thread::sleep(Duration::from_millis(300));
        let s = Serve::start(&["--redis", &format!("redis://127.0.0.1:{port}")]);
        let ctx = zmq::Context::new();
        let sock = dealer(&ctx, &s.bind);
        let mut id = [0u8; 16];
        id[0] = 1;
        let h = Header::request(MsgType::CachePut, id);
        let mut head = [0u8; 29];
        let _ = h.encode_into(&mut head);
        sock.send_multipart(
            [
                &head[..],
                br#"{"client":"bench","kind":"accounts"}"#,
                &[b'x'; 512][..],
            ],
            0,
        )
        .expect("put");
        let put = sock.recv_multipart(0).expect("put reply");
        assert!(Header::decode(&put[0]).is_ok_and(|h| h.transport_error == 0 && !h.is_data_error()));
        let body: &'static [u8] = br#"{"client":"bench","kind":"accounts"}"#;
        let _ = windowed(&s.bind, 2, 32, 5_000, MsgType::CacheGet, body);
        let (rate, lat, errors) = windowed(&s.bind, 2, 64, 50_000, MsgType::CacheGet, body);
        assert_eq!(errors, 0);
        report(
            "cache.get hit, Redis store, 512 B value",
            rate,
            &lat,
            "target >= 20k/s; reference 12k store round trips/s",
        );
        rows.push(row(
            "serve/cache-hit-rate",
            "cache.get hits through the service, Redis store on loopback, 512 B value",
            "msg/s",
            true,
            rate,
            "target >= 20k/s; the reference did 12k store round trips/s",
        ));
        drop(s);
        let _ = redis.kill();
        let _ = redis.wait();
    }

    // 3 and 4. 100 stalled workers, a full queue; RSS and refusal latency.
    {
        let s = Serve::start(&["--default-deadline-ms", "120000"]);
        let idle = s.rss_kib();
        let release = Arc::new((Mutex::new(false), Condvar::new()));
        let mut stops = Vec::new();
        let mut threads = Vec::new();
        for _ in 0..100 {
            let release = Arc::clone(&release);
            let w = LoaderWorker::new(&s.workers, &["cards"], move |_, _| {
                let (lock, cv) = &*release;
                let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !*done {
                    done = cv.wait(done).unwrap_or_else(|e| e.into_inner());
                }
                Ok(b"late".to_vec())
            });
            stops.push(w.stop_flag());
            threads.push(std::thread::spawn(move || w.run()));
        }
        let end = Instant::now() + Duration::from_secs(20);
        while s.metric("keyroute_serve_workers{kind=\"cards\",state=\"idle\"}") != Some(100.0) {
            assert!(Instant::now() < end, "workers did not register");
            std::thread::sleep(Duration::from_millis(50));
        }
        let ctx = zmq::Context::new();
        let filler = dealer(&ctx, &s.bind);
        for i in 0..3100u64 {
            let body = format!(r#"{{"client":"c{i}","kind":"cards"}}"#);
            send(&filler, MsgType::ProductGet, i, body.as_bytes(), None);
        }
        let end = Instant::now() + Duration::from_secs(20);
        while s.metric("keyroute_serve_queue_depth") != Some(3000.0) {
            assert!(
                Instant::now() < end,
                "the queue did not fill: {:?}",
                s.metric("keyroute_serve_queue_depth")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(Duration::from_millis(500));
        let full = s.rss_kib();
        println!(
            "{:<44} {:>10.1} MB   (idle {:.1} MB; 100 workers busy, 100 threads waiting, 3,000 queued)   [target <= 40 MB; reference ~250 MB]",
            "RSS, 100 workers + full 3,000 queue",
            full as f64 / 1024.0,
            idle as f64 / 1024.0
        );
        rows.push(row(
            "serve/rss-full",
            "RSS of keyroute serve with 100 stalled workers and a full 3,000-message queue",
            "MB",
            false,
            full as f64 / 1024.0,
            "target <= 40 MB; the reference used ~250 MB",
        ));
        // 4. refusals while stalled: one at a time, then windowed.
        let body: &'static [u8] = br#"{"client":"refused","kind":"cards"}"#;
        let (rate1, lat, errors) = windowed(&s.bind, 1, 1, 5_000, MsgType::ProductGet, body);
        assert_eq!(errors, 5_000, "every request refused");
        report(
            "QUEUE_FULL refusal, stalled, one at a time",
            rate1,
            &lat,
            "target p99 <= 1 ms",
        );
        rows.push(row(
            "serve/refusal-p99",
            "QUEUE_FULL refusal while the loaders are stalled, one at a time, p99",
            "ms",
            false,
            pct(&lat, 0.99),
            "target <= 1 ms",
        ));
        let (rate, lat, _) = windowed(&s.bind, 2, 64, 50_000, MsgType::ProductGet, body);
        report(
            "QUEUE_FULL refusals, 2 clients x 64",
            rate,
            &lat,
            "refusal throughput",
        );
        println!(
            "{:<44} {:>10.1} MB",
            "RSS after the refusals",
            s.rss_kib() as f64 / 1024.0
        );
        for f in &stops {
            f.store(true, Ordering::Relaxed);
        }
        {
            let (lock, cv) = &*release;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
            cv.notify_all();
        }
        drop(s);
        for t in threads {
            let _ = t.join();
        }
    }
    write_rows(rows);
}
