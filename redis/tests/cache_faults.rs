//! A lease holder that dies, one that is paused, an invalidation during a load, a backend
//! error: waiters are served (or told) in time, and nothing stale is ever stored.
//!
//! The holders run in child processes (this binary re-executed, running the ignored
//! `holder_child`) so they can be SIGKILLed and SIGSTOPped for real.

#[path = "common/children.rs"]
mod children;
#[path = "common/standalone.rs"]
mod standalone;

use std::io::BufReader;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use keyroute_redis::cache::{CacheConfig, LoadError, SmartCache, Store};
use keyroute_redis::Timeouts;
use standalone::Server;

const ENV: &str = "KEYROUTE_HOLDER";
const CLIENT: &str = "client-faults";

fn cache(url: &str, lease: Duration) -> SmartCache {
    let store = Store::standalone(url, Timeouts::default()).expect("store");
    let config = CacheConfig {
        lease,
        ..CacheConfig::default()
    };
    SmartCache::new(store, config).expect("cache")
}

/// The holder's part: `url lease_ms load_ms value kind`. Prints `LOADING` when its loader
/// starts, then (if it lives) `RESULT <value>` and `FENCED <n>`.
#[test]
#[ignore = "run by the fault tests in a child process"]
fn holder_child() {
    let spec = std::env::var(ENV).expect("child spec");
    let parts: Vec<&str> = spec.split(' ').collect();
    let [url, lease, load, value, kind] = parts[..] else {
        panic!("{spec}")
    };
    let cache = cache(url, Duration::from_millis(lease.parse().expect("lease")));
    let load = Duration::from_millis(load.parse().expect("load"));
    let got = cache
        .get_or_load(
            CLIENT,
            kind,
            Instant::now() + Duration::from_secs(30),
            || {
                println!("\nLOADING");
                thread::sleep(load);
                Ok::<_, LoadError>(value.as_bytes().to_vec())
            },
        )
        .expect("value");
    println!("RESULT {}", String::from_utf8_lossy(&got));
    println!("FENCED {}", cache.stats().fenced_fills);
}

#[test]
fn a_killed_holder_is_taken_over_once_and_waiters_are_served_in_time() {
    let server = Server::start();
    let lease = Duration::from_millis(1000);
    let backend = Duration::from_millis(200);
    let mut holder = children::spawn(
        "holder_child",
        &[(
            ENV,
            format!("{} 1000 30000 from-the-dead accounts", server.url()),
        )],
    );
    let mut out = BufReader::new(holder.stdout.take().expect("stdout"));
    children::wait_line(&mut out, "LOADING");

    // Three waiters in this process (one flight) and one in a second cache (another
    // "instance"), all waiting on the holder's lease.
    let waiters = Arc::new(cache(&server.url(), lease));
    let other = Arc::new(cache(&server.url(), lease));
    let calls = Arc::new(AtomicU32::new(0));
    let done: Arc<Mutex<Vec<Instant>>> = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let cache = Arc::clone(if i == 3 { &other } else { &waiters });
            let (calls, done) = (Arc::clone(&calls), Arc::clone(&done));
            thread::spawn(move || {
                let v = cache
                    .get_or_load(
                        CLIENT,
                        "accounts",
                        Instant::now() + Duration::from_secs(10),
                        || {
                            calls.fetch_add(1, Ordering::SeqCst);
                            thread::sleep(backend);
                            Ok::<_, LoadError>(b"reloaded".to_vec())
                        },
                    )
                    .expect("served");
                done.lock().expect("lock").push(Instant::now());
                v
            })
        })
        .collect();
    // 2.5 leases: without the holder's heartbeat the lease would have been taken over.
    thread::sleep(lease * 5 / 2);
    assert!(
        done.lock().expect("lock").is_empty(),
        "served before the kill"
    );
    assert_eq!(
        waiters.stats().takeovers + other.stats().takeovers,
        0,
        "a takeover before the kill"
    );
    let killed = Instant::now();
    holder.kill().expect("SIGKILL the holder");
    let _ = holder.wait();
    for h in handles {
        assert_eq!(h.join().expect("waiter"), b"reloaded");
    }
    let bound = lease + backend + Duration::from_millis(50);
    for at in done.lock().expect("lock").iter() {
        let after = at.duration_since(killed);
        eprintln!(
            "served {} ms after the kill (bound {} ms)",
            after.as_millis(),
            bound.as_millis()
        );
        assert!(
            after <= bound,
            "served {after:?} after the kill; bound {bound:?}"
        );
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "one backend call after the kill"
    );
    assert_eq!(
        waiters.stats().takeovers + other.stats().takeovers,
        1,
        "exactly one takeover"
    );
}

#[test]
fn a_paused_holders_late_fill_is_fenced_and_the_newer_value_survives() {
    let server = Server::start();
    let lease = Duration::from_millis(300);
    let mut holder = children::spawn(
        "holder_child",
        &[(ENV, format!("{} 300 600 old-value cards", server.url()))],
    );
    let mut out = BufReader::new(holder.stdout.take().expect("stdout"));
    children::wait_line(&mut out, "LOADING");
    let pid = holder.id();
    children::signal(pid, libc::SIGSTOP);
    // The holder's lease runs out while it is stopped; we take over and store a newer value.
    let cache = cache(&server.url(), lease);
    let started = Instant::now();
    let v = cache
        .get_or_load(
            CLIENT,
            "cards",
            Instant::now() + Duration::from_secs(5),
            || Ok::<_, LoadError>(b"new-value".to_vec()),
        )
        .expect("taken over");
    assert_eq!(v, b"new-value");
    assert!(
        started.elapsed() <= lease + Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(cache.stats().takeovers, 1);
    children::signal(pid, libc::SIGCONT);
    let rest: Vec<String> = {
        holder.stdout = Some(out.into_inner());
        children::finish(holder)
    };
    assert!(rest.contains(&"FENCED 1".to_string()), "{rest:?}");
    // The late holder ends up serving the newer value too.
    assert!(rest.contains(&"RESULT new-value".to_string()), "{rest:?}");
    let fail = || Err::<Vec<u8>, _>(LoadError::new("NO", "must not load"));
    assert_eq!(
        cache
            .get_or_load(
                CLIENT,
                "cards",
                Instant::now() + Duration::from_secs(1),
                fail
            )
            .expect("hit"),
        b"new-value"
    );
}

#[test]
fn an_invalidation_during_a_load_discards_its_result() {
    let server = Server::start();
    let cache = Arc::new(cache(&server.url(), Duration::from_secs(2)));
    let (started_tx, started_rx) = std::sync::mpsc::channel();
    let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
    let loader_cache = Arc::clone(&cache);
    let calls = Arc::new(AtomicU32::new(0));
    let loader_calls = Arc::clone(&calls);
    let loading = thread::spawn(move || {
        let go_rx = Mutex::new(go_rx);
        loader_cache.get_or_load(
            CLIENT,
            "deposits",
            Instant::now() + Duration::from_secs(5),
            || {
                let n = loader_calls.fetch_add(1, Ordering::SeqCst);
                if n == 0 {
                    started_tx.send(()).expect("started");
                    go_rx.lock().expect("lock").recv().expect("go");
                    Ok::<_, LoadError>(b"before-invalidation".to_vec())
                } else {
                    Ok(b"after-invalidation".to_vec())
                }
            },
        )
    });
    started_rx.recv().expect("loader started");
    assert!(cache.invalidate(CLIENT, "deposits").expect("invalidate"));
    go_tx.send(()).expect("go");
    assert_eq!(
        loading.join().expect("thread").expect("value"),
        b"after-invalidation"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(cache.stats().fenced_fills, 1);
    let fail = || Err::<Vec<u8>, _>(LoadError::new("NO", "must not load"));
    assert_eq!(
        cache
            .get_or_load(
                CLIENT,
                "deposits",
                Instant::now() + Duration::from_secs(1),
                fail
            )
            .expect("hit"),
        b"after-invalidation"
    );
}

#[test]
fn a_backend_error_reaches_the_waiters_and_is_not_retried_during_the_negative_ttl() {
    let server = Server::start();
    let store = || Store::standalone(&server.url(), Timeouts::default()).expect("store");
    let config = CacheConfig {
        neg_ttl: Duration::from_millis(700),
        ..CacheConfig::default()
    };
    // Two "instances": separate caches share nothing but Redis.
    let a = Arc::new(SmartCache::new(store(), config.clone()).expect("a"));
    let b = Arc::new(SmartCache::new(store(), config).expect("b"));
    let calls = Arc::new(AtomicU32::new(0));
    let failing = {
        let calls = Arc::clone(&calls);
        move || {
            calls.fetch_add(1, Ordering::SeqCst);
            thread::sleep(Duration::from_millis(200));
            Err::<Vec<u8>, _>(LoadError::new("E_CORE", "core banking unavailable"))
        }
    };
    let loading = {
        let (a, failing) = (Arc::clone(&a), failing.clone());
        thread::spawn(move || {
            a.get_or_load(
                CLIENT,
                "loans",
                Instant::now() + Duration::from_secs(5),
                failing,
            )
        })
    };
    thread::sleep(Duration::from_millis(50));
    let waited = b.get_or_load(
        CLIENT,
        "loans",
        Instant::now() + Duration::from_secs(5),
        failing.clone(),
    );
    let own = loading.join().expect("thread");
    for result in [own, waited] {
        let err = result.expect_err("the backend error");
        assert_eq!(err.code().as_str(), "BACKEND_ERROR");
        assert!(err.to_string().contains("E_CORE"), "{err}");
    }
    assert_eq!(b.stats().waits, 1);
    assert_eq!(b.stats().cached_errors, 1);
    // During the negative TTL: the error again, and no backend call.
    let again = b.get_or_load(
        CLIENT,
        "loans",
        Instant::now() + Duration::from_secs(5),
        failing.clone(),
    );
    assert_eq!(again.expect_err("cached").code().as_str(), "BACKEND_ERROR");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // After it: one new attempt.
    thread::sleep(Duration::from_millis(750));
    let ok = b
        .get_or_load(
            CLIENT,
            "loans",
            Instant::now() + Duration::from_secs(5),
            || Ok::<_, LoadError>(b"loans".to_vec()),
        )
        .expect("loaded");
    assert_eq!(ok, b"loans");
}
