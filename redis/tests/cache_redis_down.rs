//! Redis down, restarted or hung while callers wait, and loaders that panic: a clear
//! error (or a value once Redis is back), never a hang past the deadline, and nothing
//! left locked.

#[path = "common/standalone.rs"]
mod standalone;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use keyroute::cache::{Call, ClientKeys, GetReply, TokenKey};
use keyroute_redis::cache::{eval, CacheConfig, LoadError, SmartCache, Store};
use keyroute_redis::Timeouts;
use standalone::Server;

const CLIENT: &str = "client-down";

fn cache(server: &Server) -> Arc<SmartCache> {
    let store = Store::standalone(&server.url(), Timeouts::uniform(Duration::from_millis(500)))
        .expect("store");
    Arc::new(SmartCache::new(store, CacheConfig::default()).expect("cache"))
}

/// Someone else (a "ghost" that will never fill) holds the lease of `kind` for `ms`.
fn ghost_lease(server: &Server, kind: &str, ms: u64) {
    let keys = ClientKeys::new(CLIENT.as_bytes(), &TokenKey::DEFAULT).expect("keys");
    let entry = keys.entry(kind.as_bytes()).expect("kind");
    let reply = eval(
        &mut server.connection(),
        &Call::get(&entry, ms, b"ghost", 0.0, false, None),
    )
    .expect("lease");
    assert!(matches!(
        GetReply::decode(reply),
        Ok(GetReply::Lease { .. })
    ));
}

#[test]
fn a_restart_mid_wait_ends_with_a_value_once_redis_is_back() {
    let mut server = Server::start();
    let cache = cache(&server);
    ghost_lease(&server, "accounts", 3000);
    let started = Instant::now();
    let waiting = {
        let cache = Arc::clone(&cache);
        thread::spawn(move || {
            cache.get_or_load(
                CLIENT,
                "accounts",
                Instant::now() + Duration::from_secs(5),
                || Ok::<_, LoadError>(b"after the restart".to_vec()),
            )
        })
    };
    thread::sleep(Duration::from_millis(200));
    server.restart(); // empty: the ghost's lease is gone with everything else
    let value = waiting
        .join()
        .expect("thread")
        .expect("a value after the restart");
    assert_eq!(value, b"after the restart");
    // Well before the ghost's lease (3 s) would have run out: nothing stayed locked.
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(cache.stats().waits, 1);
}

#[test]
fn redis_gone_for_good_gives_a_redis_error_by_the_deadline() {
    let mut server = Server::start();
    let cache = cache(&server);
    ghost_lease(&server, "cards", 10_000);
    let deadline = Instant::now() + Duration::from_millis(1000);
    let waiting = {
        let cache = Arc::clone(&cache);
        thread::spawn(move || {
            cache.get_or_load(CLIENT, "cards", deadline, || {
                Ok::<_, LoadError>(b"x".to_vec())
            })
        })
    };
    thread::sleep(Duration::from_millis(200));
    server.kill();
    let err = waiting.join().expect("thread").expect_err("Redis is gone");
    let late = Instant::now().saturating_duration_since(deadline);
    assert!(
        late < Duration::from_millis(200),
        "returned {late:?} after the deadline"
    );
    assert!(
        err.code().as_str().starts_with("REDIS_"),
        "{err}: {}",
        err.code()
    );
    // A new call fails at once, with a clear error.
    let started = Instant::now();
    let err = cache
        .get_or_load(
            CLIENT,
            "cards",
            Instant::now() + Duration::from_secs(5),
            || Ok::<_, LoadError>(b"x".to_vec()),
        )
        .expect_err("down");
    assert_eq!(err.code().as_str(), "REDIS_CONNECT", "{err}");
    assert!(started.elapsed() < Duration::from_millis(600));
}

#[test]
fn a_hung_redis_never_holds_a_caller_past_its_deadline() {
    let server = Server::start();
    let cache = cache(&server);
    ghost_lease(&server, "loans", 10_000);
    let deadline = Instant::now() + Duration::from_millis(800);
    let waiting = {
        let cache = Arc::clone(&cache);
        thread::spawn(move || {
            cache.get_or_load(CLIENT, "loans", deadline, || {
                Ok::<_, LoadError>(b"x".to_vec())
            })
        })
    };
    thread::sleep(Duration::from_millis(200));
    server.pause();
    let result = waiting.join().expect("thread");
    let late = Instant::now().saturating_duration_since(deadline);
    server.resume();
    let err = result.expect_err("hung");
    assert!(
        late < Duration::from_millis(200),
        "returned {late:?} after the deadline"
    );
    assert!(
        ["CACHE_TIMEOUT", "REDIS_TIMEOUT"].contains(&err.code().as_str()),
        "{err}"
    );
}

#[test]
fn a_panicking_loader_releases_its_lease_and_its_followers() {
    let server = Server::start();
    let cache = cache(&server);
    let panicking = {
        let cache = Arc::clone(&cache);
        thread::spawn(move || {
            cache.get_or_load(
                CLIENT,
                "deposits",
                Instant::now() + Duration::from_secs(5),
                || {
                    thread::sleep(Duration::from_millis(100));
                    panic!("loader bug");
                },
            )
        })
    };
    thread::sleep(Duration::from_millis(30));
    // A follower in the same process gets an error, not a hang.
    let started = Instant::now();
    let follower = cache
        .get_or_load(
            CLIENT,
            "deposits",
            Instant::now() + Duration::from_secs(5),
            || Ok::<_, LoadError>(b"x".to_vec()),
        )
        .expect_err("the leader panicked");
    assert!(started.elapsed() < Duration::from_millis(500));
    assert_eq!(follower.code().as_str(), "BUSY");
    assert!(
        panicking.join().is_err(),
        "the panic reaches the loader's caller"
    );
    // The lease was released (the failure cached for the negative TTL), not left to expire.
    let other = cache
        .get_or_load(
            CLIENT,
            "deposits",
            Instant::now() + Duration::from_secs(5),
            || Ok::<_, LoadError>(b"x".to_vec()),
        )
        .expect_err("cached failure");
    assert!(other.to_string().contains("LOADER_PANIC"), "{other}");
    thread::sleep(Duration::from_millis(1100));
    let v = cache
        .get_or_load(
            CLIENT,
            "deposits",
            Instant::now() + Duration::from_secs(5),
            || Ok::<_, LoadError>(b"ok".to_vec()),
        )
        .expect("loads again");
    assert_eq!(v, b"ok");
}
