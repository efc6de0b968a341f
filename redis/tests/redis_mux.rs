//! `Multiplexed` (feature `mux`) on a real redis-server: 50 threads share one connection
//! (the server sees one client, and fewer reads than commands: the callers' commands were
//! written together), 400 concurrent picks leave the pool's spread at 0, a stalled server
//! fails a command, a script and a pipeline within one deadline and the connection works
//! again after, `NOSCRIPT` is reloaded, a broken connection is replaced, and a refused
//! password is `REDIS_AUTH` without the password. `Leases` and `Affinity` keep their
//! bounds from 50 threads on it. Over TLS (`rediss://`, certificates
//! made at test time) picks work, and a wrong CA is `REDIS_TLS`.
//!
//! `cargo test -p keyroute-redis --features mux --test redis_mux -- --nocapture`
#![cfg(feature = "mux")]
#![allow(clippy::unwrap_used)]

mod common;

use common::standalone;

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use keyroute_redis::{LeastUsed, Multiplexed, Timeouts};
use standalone::Server;

fn stat(server: &Server, section: &str, field: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg(section)
        .query(&mut server.connection())
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in INFO {section}"))
}

#[test]
fn four_hundred_concurrent_picks_on_one_connection_leave_spread_zero() {
    let server = Server::start();
    let pool = LeastUsed::new("{mux}:pool").unwrap();
    let members: Vec<String> = (0..40).map(|i| format!("m{i:02}")).collect();
    pool.seed(&mut server.connection(), &members, 0, false)
        .unwrap();
    let mux = Multiplexed::new(&server.url(), Timeouts::default()).unwrap();
    mux.clone().ensure_connected().unwrap();
    let clients_before = stat(&server, "clients", "connected_clients");
    let reads_before = stat(&server, "stats", "total_reads_processed");
    let threads = 50;
    let per_thread = 8;
    let barrier = Arc::new(Barrier::new(threads));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let mut con = mux.clone();
            let pool = pool.clone();
            let barrier = Arc::clone(&barrier);
            thread::spawn(move || {
                barrier.wait();
                (0..per_thread)
                    .map(|_| String::from_utf8(pool.pick(&mut con).unwrap().unwrap()).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut tally: BTreeMap<String, u64> = BTreeMap::new();
    for w in workers {
        for m in w.join().unwrap() {
            *tally.entry(m).or_default() += 1;
        }
    }
    // Read before the stat connections below add reads of their own.
    let reads = stat(&server, "stats", "total_reads_processed") - reads_before;
    let clients = stat(&server, "clients", "connected_clients");
    let picks = (threads * per_thread) as u64;
    assert_eq!(tally.values().sum::<u64>(), picks);
    let counts = pool.counts(&mut server.connection()).unwrap();
    assert_eq!(counts.len(), members.len());
    let min = counts.iter().map(|(_, c)| *c).min().unwrap();
    let max = counts.iter().map(|(_, c)| *c).max().unwrap();
    assert_eq!((min, max), (10, 10), "spread {}: {counts:?}", max - min);
    for (m, c) in &counts {
        assert_eq!(tally.get(&String::from_utf8_lossy(m).to_string()), Some(c));
    }
    eprintln!(
        "{picks} picks from {threads} threads: {reads} socket reads on the server (the INFO calls included), clients {clients_before} -> {clients}"
    );
    // One connection for all 50 threads (the stat connections come and go).
    assert_eq!(clients, clients_before, "a connection per thread?");
    assert!(
        reads < picks,
        "{reads} reads for {picks} picks: nothing was written together"
    );
}

#[test]
fn a_stalled_server_fails_each_call_within_one_deadline_and_the_connection_survives() {
    let server = Server::start();
    let pool = LeastUsed::new("{mux-stall}:pool").unwrap();
    pool.seed(&mut server.connection(), ["a", "b", "c"], 0, false)
        .unwrap();
    let timeout = Duration::from_millis(200);
    let mut con = Multiplexed::new(&server.url(), Timeouts::uniform(timeout)).unwrap();
    assert!(pool.pick(&mut con).unwrap().is_some());
    let mut failures = Vec::new();
    for what in ["GET", "pick", "pick_many(10)", "10-GET pipeline"] {
        server.pause();
        let started = Instant::now();
        let code = match what {
            "GET" => redis::cmd("GET")
                .arg("k")
                .query::<Option<Vec<u8>>>(&mut con)
                .err()
                .map(|e| {
                    if e.is_timeout() {
                        "REDIS_TIMEOUT".into()
                    } else {
                        e.to_string()
                    }
                }),
            "pick" => pool
                .pick(&mut con)
                .err()
                .map(|e| e.code().as_str().to_string()),
            "pick_many(10)" => pool
                .pick_many(&mut con, 10)
                .err()
                .map(|e| e.code().as_str().to_string()),
            _ => {
                let mut pipe = redis::pipe();
                for i in 0..10 {
                    pipe.get(format!("k{i}"));
                }
                pipe.query::<Vec<Option<Vec<u8>>>>(&mut con).err().map(|e| {
                    if e.is_timeout() {
                        "REDIS_TIMEOUT".into()
                    } else {
                        e.to_string()
                    }
                })
            }
        };
        let took = started.elapsed();
        server.resume();
        eprintln!("Multiplexed: {what} on a stalled server: {code:?} after {took:?}");
        if code.as_deref() != Some("REDIS_TIMEOUT") {
            failures.push(format!("{what}: {code:?}"));
        }
        if took < timeout - Duration::from_millis(20) || took >= timeout * 2 {
            failures.push(format!("{what}: {took:?} with a {timeout:?} deadline"));
        }
        // The late replies went to their abandoned calls: the same connection answers.
        assert!(pool.pick(&mut con).unwrap().is_some(), "{what}");
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn noscript_is_reloaded_and_a_broken_connection_is_replaced() {
    let server = Server::start();
    let pool = LeastUsed::new("{mux-ns}:pool").unwrap();
    pool.seed(&mut server.connection(), ["a", "b"], 0, false)
        .unwrap();
    let mut con = Multiplexed::new(&server.url(), Timeouts::default()).unwrap();
    assert!(pool.pick(&mut con).unwrap().is_some());
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut server.connection())
        .unwrap();
    assert!(pool.pick(&mut con).unwrap().is_some());
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query(&mut server.connection())
        .unwrap();
    assert_eq!(pool.pick_many(&mut con, 6).unwrap().len(), 6);
    let counts = pool.counts(&mut server.connection()).unwrap();
    assert_eq!(counts.iter().map(|(_, c)| c).sum::<u64>(), 8, "{counts:?}");
    // The server closes every client connection: at most one call fails, then the next
    // opens a new connection.
    let _: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("normal")
        .query(&mut server.connection())
        .unwrap();
    thread::sleep(Duration::from_millis(50));
    let first = pool.pick(&mut con);
    if let Err(e) = &first {
        assert!(e.is_connection_error(), "{e}");
    }
    assert!(pool.pick(&mut con).unwrap().is_some());
}

#[test]
fn a_refused_password_is_redis_auth_and_never_shown() {
    let server = Server::start();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("right-horse")
        .query(&mut server.connection())
        .unwrap();
    let url = format!("redis://:wrong-battery@127.0.0.1:{}/", server.port());
    let mux = Multiplexed::new(&url, Timeouts::default()).unwrap();
    let err = mux.clone().ensure_connected().unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_AUTH", "{err}");
    let pool = LeastUsed::new("{mux-auth}:pool").unwrap();
    let pick_err = pool.pick(&mut mux.clone()).unwrap_err();
    for text in [
        err.to_string(),
        pick_err.to_string(),
        format!("{mux:?} {err:?} {pick_err:?}"),
    ] {
        assert!(!text.contains("wrong-battery"), "{text}");
    }
    let good = format!("redis://:right-horse@127.0.0.1:{}/", server.port());
    let mut con = Multiplexed::new(&good, Timeouts::default()).unwrap();
    assert!(redis::cmd("PING").query::<String>(&mut con).is_ok());
}

#[test]
fn picks_over_tls_and_a_wrong_ca_is_redis_tls() {
    use common::secure::{free_port, redis_server, temp_dir, Certs};
    let certs = Certs::make();
    let dir = temp_dir("mux-tls");
    let port = free_port(false);
    let mut args = vec![
        "--port".into(),
        "0".into(),
        "--tls-port".into(),
        port.to_string(),
    ];
    args.extend(certs.server_args(false));
    let _server = redis_server(&dir, port, &args);
    let url = format!("rediss://127.0.0.1:{port}?{}", certs.query(false));
    let t = Timeouts::uniform(Duration::from_secs(3));
    let mux = Multiplexed::new(&url, t).unwrap();
    let pool = LeastUsed::new("{mux-tls}:pool").unwrap();
    pool.seed(&mut mux.clone(), ["a", "b"], 0, false).unwrap();
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let mut con = mux.clone();
            let pool = pool.clone();
            thread::spawn(move || pool.pick(&mut con).unwrap().unwrap())
        })
        .collect();
    let mut picked: Vec<Vec<u8>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
    picked.sort();
    assert_eq!(
        picked,
        [b"a".to_vec(), b"a".to_vec(), b"b".to_vec(), b"b".to_vec()]
    );
    // A CA that did not sign the server's certificate.
    let other = Certs::make();
    let wrong = format!("rediss://127.0.0.1:{port}?{}", other.query(false));
    let err = Multiplexed::new(&wrong, t)
        .unwrap()
        .ensure_connected()
        .unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_TLS", "{err}");
}

/// `Leases` and `Affinity` run on it as they are: 50 threads on one connection spread 50
/// leases over 5 members 10 each (least concurrency, spread 0), and fill 3 nodes capped at
/// 2 items with exactly 6.
#[test]
fn leases_and_affinity_hold_their_bounds_from_fifty_threads() {
    use keyroute::select::Cap;
    use keyroute_redis::{Affinity, Leases};
    let server = Server::start();
    let mux = Multiplexed::new(&server.url(), Timeouts::default()).unwrap();
    let leases = Leases::new("{mux-lease}:pool").unwrap();
    leases
        .seed(&mut mux.clone(), ["l1", "l2", "l3", "l4", "l5"])
        .unwrap();
    let affinity = Affinity::new("{mux-aff}:owner").unwrap();
    let barrier = Arc::new(Barrier::new(50));
    let workers: Vec<_> = (0..50)
        .map(|i| {
            let mut con = mux.clone();
            let (leases, affinity, barrier) =
                (leases.clone(), affinity.clone(), Arc::clone(&barrier));
            thread::spawn(move || {
                barrier.wait();
                let lease = leases
                    .acquire(&mut con, Duration::from_secs(30))
                    .unwrap()
                    .is_some();
                let item = format!("job-{i}");
                let taken = affinity
                    .take(
                        &mut con,
                        item.as_bytes(),
                        &["w1", "w2", "w3"],
                        Cap::Fixed(2),
                    )
                    .unwrap()
                    .is_some();
                (lease, taken)
            })
        })
        .collect();
    let (mut leased, mut taken) = (0, 0);
    for w in workers {
        let (l, t) = w.join().unwrap();
        leased += usize::from(l);
        taken += usize::from(t);
    }
    assert_eq!(leased, 50);
    assert_eq!(taken, 6);
    let loads = affinity.loads(&mut mux.clone()).unwrap();
    assert!(
        loads.len() == 3 && loads.iter().all(|(_, n)| *n == 2),
        "{loads:?}"
    );
    let in_flight = leases.in_flight(&mut mux.clone()).unwrap();
    assert!(
        in_flight.len() == 5 && in_flight.iter().all(|(_, n)| *n == 10),
        "{in_flight:?}"
    );
}
