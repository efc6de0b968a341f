//! A standalone URL that names a replica is refused: two real redis-server processes,
//! the second made a replica with `REPLICAOF`; every entrance that writes (LeastUsed,
//! SmartCache, Sessions) answers `REDIS_READONLY` on the replica's URL, writes nothing on
//! the master, and works on the master's URL.

#[path = "common/standalone.rs"]
mod standalone;

use std::thread;
use std::time::{Duration, Instant};

use keyroute::error::ErrorCode;
use keyroute_redis::cache::{CacheConfig, LoadError, SessionConfig, Sessions, SmartCache, Store};
use keyroute_redis::{connect, Error, LeastUsed, Timeouts};
use standalone::Server;

const TIMEOUT: Duration = Duration::from_secs(2);

/// A master and a replica of it (`REPLICAOF`), the link up.
fn pair() -> (Server, Server) {
    let master = Server::start();
    let replica = Server::start();
    replica.replicate(&master);
    (master, replica)
}

/// The keys of the master (all the writes the entrances made there).
fn keys(server: &Server) -> Vec<String> {
    let mut con = server.connection();
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).expect("KEYS");
    keys.sort();
    keys
}

fn assert_readonly(err: &Error) {
    assert_eq!(err.code(), ErrorCode::RedisReadonly, "{err}");
    assert_eq!(err.code().as_str(), "REDIS_READONLY", "{err}");
}

fn soon() -> Instant {
    Instant::now() + TIMEOUT
}

#[test]
fn least_used_on_a_replica_is_refused_readonly() {
    let (master, replica) = pair();
    let pool = LeastUsed::new("{rep}:pool").expect("key");
    let mut on_replica = connect(&replica.url(), Timeouts::uniform(TIMEOUT)).expect("connect");
    let err = pool
        .seed(&mut on_replica, ["a", "b"], 0, false)
        .expect_err("seed on a replica");
    assert_readonly(&err);
    // (A pick of an empty pool writes nothing: `Ok(None)` even on a replica.)
    assert!(keys(&master).is_empty(), "{:?}", keys(&master));

    let mut on_master = connect(&master.url(), Timeouts::uniform(TIMEOUT)).expect("connect");
    assert_eq!(
        pool.seed(&mut on_master, ["a", "b"], 0, false)
            .expect("seed"),
        2
    );
    assert!(pool.pick(&mut on_master).expect("pick").is_some());
    // Replicated, the pool is there on the replica too: a pick (a write) still refused.
    let deadline = Instant::now() + Duration::from_secs(10);
    while keys(&replica).is_empty() {
        assert!(Instant::now() < deadline, "never replicated");
        thread::sleep(Duration::from_millis(20));
    }
    let before = pool.counts(&mut on_master).expect("counts");
    let err = pool.pick(&mut on_replica).expect_err("pick on a replica");
    assert_readonly(&err);
    assert_eq!(pool.counts(&mut on_master).expect("counts"), before);
}

#[test]
fn smart_cache_and_sessions_on_a_replica_are_refused_readonly() {
    let (master, replica) = pair();
    let store =
        |s: &Server| Store::standalone(&s.url(), Timeouts::uniform(TIMEOUT)).expect("store");
    let started = Instant::now();
    let cache = SmartCache::new(store(&replica), CacheConfig::default()).expect("cache");
    let err = cache
        .get_or_load("c1", "accounts", soon(), || {
            Ok::<_, LoadError>(b"[1]".to_vec())
        })
        .expect_err("a miss on a replica");
    assert_readonly(&err);
    let sessions = Sessions::new(store(&replica), SessionConfig::default()).expect("sessions");
    let err = sessions
        .create("client-1", "v1", b"{}")
        .expect_err("create on a replica");
    assert_readonly(&err);
    assert!(started.elapsed() < TIMEOUT, "{:?}", started.elapsed());
    assert!(keys(&master).is_empty(), "{:?}", keys(&master));

    let cache = SmartCache::new(store(&master), CacheConfig::default()).expect("cache");
    assert_eq!(
        cache
            .get_or_load("c1", "accounts", soon(), || Ok::<_, LoadError>(
                b"[1]".to_vec()
            ))
            .expect("load on the master"),
        b"[1]"
    );
    let sessions = Sessions::new(store(&master), SessionConfig::default()).expect("sessions");
    sessions
        .create("client-1", "v1", b"{}")
        .expect("create on the master");
    assert!(!keys(&master).is_empty());
}
