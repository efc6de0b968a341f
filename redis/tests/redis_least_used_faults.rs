//! Faults under `LeastUsed`: the server killed mid-run (errors, no panic, no hang past
//! the configured timeout; the same client works again after a restart on the same
//! port), the server hung (SIGSTOP: a timeout error within the bound), and a refused
//! connection.

#[path = "common/standalone.rs"]
mod standalone;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use keyroute_redis::{LeastUsed, Reconnecting, Timeouts};
use standalone::Server;

const TIMEOUT: Duration = Duration::from_millis(400);
/// Slack for a loaded 2-core machine on top of the configured timeout.
const SLACK: Duration = Duration::from_millis(1500);

fn seed(server: &Server, pool: &LeastUsed) {
    pool.seed(&mut server.connection(), ["a", "b", "c"], 0, false)
        .expect("seed");
}

#[test]
fn killed_server_gives_errors_then_the_client_recovers_after_restart() {
    let mut server = Server::start();
    let pool = LeastUsed::new("{fault}:pool").expect("key");
    seed(&server, &pool);
    let mut con = Reconnecting::new(&server.url(), Timeouts::uniform(TIMEOUT)).expect("url");
    assert!(pool.pick(&mut con).expect("pick").is_some());

    let killed = Arc::new(AtomicBool::new(false));
    let worker = {
        let pool = pool.clone();
        let killed = Arc::clone(&killed);
        thread::spawn(move || {
            let mut errors = Vec::new();
            let mut slowest = Duration::ZERO;
            let mut picks_after_restart = 0;
            let deadline = Instant::now() + Duration::from_secs(30);
            while picks_after_restart < 100 && Instant::now() < deadline {
                let started = Instant::now();
                let result = if errors.len() % 2 == 0 {
                    pool.pick(&mut con).map(|m| m.map_or(0, |_| 1))
                } else {
                    pool.pick_many(&mut con, 10).map(|m| m.len())
                };
                slowest = slowest.max(started.elapsed());
                match result {
                    Ok(n) if !errors.is_empty() => picks_after_restart += n,
                    Ok(_) => {}
                    Err(err) => {
                        assert!(
                            killed.load(Ordering::SeqCst),
                            "error before the kill: {err}"
                        );
                        assert!(err.is_connection_error(), "{err}");
                        errors.push(err.to_string());
                        thread::sleep(Duration::from_millis(20));
                    }
                }
            }
            (errors, slowest, picks_after_restart)
        })
    };
    thread::sleep(Duration::from_millis(200));
    killed.store(true, Ordering::SeqCst);
    server.kill();
    thread::sleep(Duration::from_millis(500));
    server.restart();
    seed(&server, &pool);
    let (errors, slowest, picks_after_restart) = worker.join().expect("no panic in the worker");
    assert!(!errors.is_empty(), "the kill went unnoticed");
    assert!(
        slowest < TIMEOUT + SLACK,
        "a call took {slowest:?} with a {TIMEOUT:?} timeout"
    );
    assert!(
        picks_after_restart >= 100,
        "{picks_after_restart} picks after the restart; errors: {errors:?}"
    );
    eprintln!(
        "{} errors while down, e.g. {:?}; slowest call {slowest:?}",
        errors.len(),
        errors[0]
    );
}

#[test]
fn hung_server_times_out_within_the_bound() {
    let server = Server::start();
    let pool = LeastUsed::new("{hang}:pool").expect("key");
    seed(&server, &pool);
    let mut con = Reconnecting::new(&server.url(), Timeouts::uniform(TIMEOUT)).expect("url");
    assert!(pool.pick(&mut con).expect("pick").is_some());
    server.pause();
    for many in [false, true] {
        let started = Instant::now();
        let err = if many {
            pool.pick_many(&mut con, 100).map(|_| ()).unwrap_err()
        } else {
            pool.pick(&mut con).map(|_| ()).unwrap_err()
        };
        let took = started.elapsed();
        assert!(err.is_connection_error(), "{err}");
        assert!(
            took >= TIMEOUT - Duration::from_millis(50),
            "{took:?}: {err}"
        );
        assert!(
            took < TIMEOUT + SLACK,
            "a call took {took:?} with a {TIMEOUT:?} timeout"
        );
    }
    server.resume();
    // The timed-out connection was dropped; the next call reconnects and works.
    assert!(pool.pick(&mut con).expect("pick after resume").is_some());
    assert_eq!(
        pool.pick_many(&mut con, 5)
            .expect("pick_many after resume")
            .len(),
        5
    );
}

#[test]
fn refused_connection_is_an_error_not_a_panic() {
    let port = standalone::free_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let pool = LeastUsed::new("{none}:pool").expect("key");
    let mut con = Reconnecting::new(&url, Timeouts::uniform(TIMEOUT)).expect("url");
    let started = Instant::now();
    let err = pool.pick(&mut con).unwrap_err();
    assert!(err.is_connection_error(), "{err}");
    assert!(started.elapsed() < TIMEOUT + SLACK);
    assert!(err.to_string().contains("{none}:pool"), "{err}");
    assert!(keyroute_redis::connect(&url, Timeouts::uniform(TIMEOUT)).is_err());
    assert!(Reconnecting::new("not a url", Timeouts::default()).is_err());
}
