//! SmartCache, Sessions and Devices on a real standalone redis-server: the everyday paths
//! and the bad inputs.

#[path = "common/standalone.rs"]
mod standalone;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use keyroute::cache::Touch;
use keyroute_redis::cache::{
    CacheConfig, Devices, LoadError, SessionConfig, Sessions, SmartCache, Store,
};
use keyroute_redis::Timeouts;
use standalone::Server;

fn store(server: &Server) -> Store {
    Store::standalone(&server.url(), Timeouts::default()).expect("store")
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

#[test]
fn loads_once_then_hits() {
    let server = Server::start();
    let cache = SmartCache::new(store(&server), CacheConfig::default()).expect("cache");
    let calls = AtomicU32::new(0);
    let load = || {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok::<_, LoadError>(b"[1,2,3]".to_vec())
    };
    assert_eq!(
        cache
            .get_or_load("c1", "accounts", soon(), load)
            .expect("load"),
        b"[1,2,3]"
    );
    assert_eq!(
        cache
            .get_or_load("c1", "accounts", soon(), load)
            .expect("hit"),
        b"[1,2,3]"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let stats = cache.stats();
    assert_eq!(
        (stats.leases, stats.hits, stats.backend_calls),
        (1, 1, 1),
        "{stats:?}"
    );
    assert!(cache.invalidate("c1", "accounts").expect("invalidate"));
    assert_eq!(
        cache
            .get_or_load("c1", "accounts", soon(), load)
            .expect("reload"),
        b"[1,2,3]"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(!cache.invalidate("c1", "never-loaded").expect("invalidate"));
}

#[test]
fn threads_of_one_process_share_one_load_and_one_round_trip() {
    let server = Server::start();
    let cache = Arc::new(SmartCache::new(store(&server), CacheConfig::default()).expect("cache"));
    let calls = Arc::new(AtomicU32::new(0));
    let before: u64 = evalsha_calls(&server);
    let handles: Vec<_> = (0..20)
        .map(|_| {
            let cache = Arc::clone(&cache);
            let calls = Arc::clone(&calls);
            thread::spawn(move || {
                cache
                    .get_or_load("c1", "cards", soon(), || {
                        calls.fetch_add(1, Ordering::SeqCst);
                        thread::sleep(Duration::from_millis(100));
                        Ok(b"cards".to_vec())
                    })
                    .expect("value")
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().expect("thread"), b"cards");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // One sc-get and one sc-fill (heartbeats come every lease/3 = 667 ms: none here).
    assert_eq!(evalsha_calls(&server) - before, 2);
    assert_eq!(cache.stats().coalesced, 19);
}

#[test]
fn warm_hits_are_plain_reads_unless_turned_off() {
    let server = Server::start();
    let calls = |name: &str| {
        server
            .command_calls()
            .into_iter()
            .find(|(n, _)| n == name)
            .map_or(0, |(_, n)| n)
    };
    for fast_hits in [true, false] {
        let config = CacheConfig {
            fast_hits,
            ..CacheConfig::default()
        };
        let cache = SmartCache::new(store(&server), config).expect("cache");
        let kind = if fast_hits { "fast" } else { "scripted" };
        let load = || Ok::<_, LoadError>(kind.as_bytes().to_vec());
        // Cold: sc-get leases, sc-fill stores.
        let evalsha = calls("evalsha");
        assert_eq!(
            cache.get_or_load("c1", kind, soon(), load).expect("load"),
            kind.as_bytes()
        );
        assert_eq!(calls("evalsha") - evalsha, 2, "fast_hits {fast_hits}");
        // Warm: one HMGET per hit either way (sc-get's hit path runs one inside the
        // script, and commandstats counts it), and no script call on the fast path.
        let (evalsha, hmget) = (calls("evalsha"), calls("hmget"));
        for _ in 0..50 {
            assert_eq!(
                cache.get_or_load("c1", kind, soon(), load).expect("hit"),
                kind.as_bytes()
            );
        }
        let scripted = if fast_hits { 0 } else { 50 };
        assert_eq!(
            calls("evalsha") - evalsha,
            scripted,
            "fast_hits {fast_hits}"
        );
        assert_eq!(calls("hmget") - hmget, 50, "fast_hits {fast_hits}");
        let stats = cache.stats();
        assert_eq!((stats.hits, stats.backend_calls), (50, 1), "{stats:?}");
    }
}

fn evalsha_calls(server: &Server) -> u64 {
    server
        .command_calls()
        .into_iter()
        .find(|(name, _)| name == "evalsha")
        .map_or(0, |(_, n)| n)
}

#[test]
fn bad_inputs_are_refused_with_codes() {
    let server = Server::start();
    let config = CacheConfig {
        max_value_len: 8,
        ..CacheConfig::default()
    };
    let cache = SmartCache::new(store(&server), config).expect("cache");
    let ok = || Ok::<_, LoadError>(b"v".to_vec());
    let code = |r: keyroute_redis::Result<Vec<u8>>| r.expect_err("refused").code().as_str();
    assert_eq!(
        code(cache.get_or_load("", "k", soon(), ok)),
        "BAD_CLIENT_ID"
    );
    assert_eq!(
        code(cache.get_or_load(vec![b'x'; 513], "k", soon(), ok)),
        "BAD_CLIENT_ID"
    );
    assert_eq!(code(cache.get_or_load("c", "a{b", soon(), ok)), "BAD_KIND");
    assert_eq!(code(cache.get_or_load("c", "a}b", soon(), ok)), "BAD_KIND");
    assert_eq!(code(cache.get_or_load("c", "", soon(), ok)), "BAD_KIND");
    let big = || Ok::<_, LoadError>(vec![0; 9]);
    assert_eq!(
        code(cache.get_or_load("c", "k", soon(), big)),
        "VALUE_TOO_LARGE"
    );
    // Nothing stored, and the failure is cached for the negative TTL.
    assert_eq!(
        code(cache.get_or_load("c", "k", soon(), ok)),
        "BACKEND_ERROR"
    );
    let failing = || Err::<Vec<u8>, _>(LoadError::new("E_DOWN", "backend down"));
    let err = cache
        .get_or_load("c", "k2", soon(), failing)
        .expect_err("backend");
    assert_eq!(err.code().as_str(), "BACKEND_ERROR");
    assert!(
        err.to_string().contains("E_DOWN") && err.to_string().contains("backend down"),
        "{err}"
    );
    let past = Instant::now() - Duration::from_millis(1);
    assert_eq!(
        code(cache.get_or_load("c", "k3", past, ok)),
        "CACHE_TIMEOUT"
    );
    assert!(SmartCache::new(
        store(&server),
        CacheConfig {
            lease: Duration::ZERO,
            ..CacheConfig::default()
        }
    )
    .is_err());
    let warm = cache.warm("dev", &vec!["k"; 65], |_, _| Ok(vec![]));
    assert_eq!(warm.expect_err("too many").code().as_str(), "TOO_LARGE");
    assert_eq!(
        cache
            .warm("", &["k"], |_, _| Ok(vec![]))
            .expect_err("device")
            .code()
            .as_str(),
        "BAD_DEVICE_ID"
    );
    // Kinds are checked before the device is looked up: an unknown device refuses them too.
    assert_eq!(
        cache
            .warm("unknown-device", &["ok", "a}"], |_, _| Ok(vec![]))
            .expect_err("kind")
            .code()
            .as_str(),
        "BAD_KIND"
    );
}

#[test]
fn sessions_and_devices() {
    let server = Server::start();
    let sessions = Sessions::new(store(&server), SessionConfig::default()).expect("sessions");
    let new = sessions.create("c1", "v1", b"{}").expect("create");
    match sessions.touch(new.id.as_str(), Some("v1")).expect("touch") {
        Touch::Live { client, data, .. } => {
            assert_eq!((client, data), (b"c1".to_vec(), b"{}".to_vec()))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        sessions.touch(new.id.as_str(), Some("v2")).expect("touch"),
        Touch::VersionMismatch {
            stored: b"v1".to_vec()
        }
    );
    assert_eq!(sessions.list("c1").expect("list").len(), 1);
    assert!(sessions.destroy(new.id.as_str()).expect("destroy"));
    assert_eq!(
        sessions.touch(new.id.as_str(), None).expect("touch"),
        Touch::Expired
    );
    assert_eq!(
        sessions
            .touch("nope", None)
            .expect_err("bad id")
            .code()
            .as_str(),
        "BAD_SESSION_ID"
    );
    let devices = Devices::new(store(&server));
    devices
        .bind("dev-1", "c1", Duration::from_secs(60))
        .expect("bind");
    assert_eq!(
        devices.client_of("dev-1").expect("get").as_deref(),
        Some(&b"c1"[..])
    );
    assert_eq!(devices.client_of("dev-2").expect("get"), None);
    assert_eq!(
        devices
            .bind("d{", "c1", Duration::from_secs(1))
            .expect_err("bad")
            .code()
            .as_str(),
        "BAD_DEVICE_ID"
    );
}

#[test]
fn a_stale_value_is_served_while_one_caller_refreshes_it() {
    let server = Server::start();
    let config = CacheConfig {
        soft_ttl: Duration::from_millis(200),
        xfetch_beta: 0.0,
        ..CacheConfig::default()
    };
    let a = Arc::new(SmartCache::new(store(&server), config.clone()).expect("a"));
    let b = SmartCache::new(store(&server), config).expect("b");
    a.get_or_load("c1", "cards", soon(), || Ok::<_, LoadError>(b"v1".to_vec()))
        .expect("v1");
    thread::sleep(Duration::from_millis(250));
    let refreshing = {
        let a = Arc::clone(&a);
        thread::spawn(move || {
            a.get_or_load("c1", "cards", soon(), || {
                thread::sleep(Duration::from_millis(300));
                Ok::<_, LoadError>(b"v2".to_vec())
            })
        })
    };
    thread::sleep(Duration::from_millis(50));
    // Another instance is served the stale value at once, without loading.
    let started = Instant::now();
    let stale = b
        .get_or_load("c1", "cards", soon(), || {
            Err::<Vec<u8>, _>(LoadError::new("NO", "must not load"))
        })
        .expect("stale");
    assert_eq!(stale, b"v1");
    assert!(
        started.elapsed() < Duration::from_millis(100),
        "{:?}",
        started.elapsed()
    );
    // The refreshing caller gets the fresh value, and so does everyone after.
    assert_eq!(refreshing.join().expect("thread").expect("v2"), b"v2");
    assert_eq!(a.stats().refreshes, 1);
    let fresh = b
        .get_or_load("c1", "cards", soon(), || {
            Err::<Vec<u8>, _>(LoadError::new("NO", "must not load"))
        })
        .expect("fresh");
    assert_eq!(fresh, b"v2");
}

#[test]
fn session_data_and_versions_are_bounded() {
    let server = Server::start();
    let config = SessionConfig {
        max_data_len: 16,
        ..SessionConfig::default()
    };
    let sessions = Sessions::new(store(&server), config).expect("sessions");
    let code = |r: keyroute_redis::Result<keyroute_redis::cache::NewSession>| {
        r.expect_err("refused").code().as_str()
    };
    assert_eq!(
        code(sessions.create("c1", "v1", &[0; 17])),
        "VALUE_TOO_LARGE"
    );
    assert_eq!(
        code(sessions.create("c1", "v".repeat(129), b"")),
        "BAD_VERSION"
    );
    assert_eq!(code(sessions.create("", "v1", b"")), "BAD_CLIENT_ID");
    assert!(
        sessions.list("c1").expect("list").is_empty(),
        "a refused create stored something"
    );
    let bad_ttl = SessionConfig {
        ttl: Duration::ZERO,
        ..SessionConfig::default()
    };
    assert_eq!(
        Sessions::new(store(&server), bad_ttl)
            .expect_err("ttl 0")
            .code()
            .as_str(),
        "BAD_TTL"
    );
}

/// A loader that invalidates its own key has every fill fenced: `get_or_load` calls it at
/// most `MAX_FENCED_LOADS` times, pausing between, and returns the last value unstored
/// (it was called 3,986 times in 2 s, then `CACHE_TIMEOUT`).
#[test]
fn fenced_fills_are_retried_a_bounded_number_of_times() {
    let server = Server::start();
    let cache = SmartCache::new(store(&server), CacheConfig::default()).expect("cache");
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    let value = cache
        .get_or_load("c1", "cards", soon(), || {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            cache.invalidate("c1", "cards").expect("invalidate");
            Ok::<_, LoadError>(format!("v{n}").into_bytes())
        })
        .expect("the last value");
    let n = calls.load(Ordering::SeqCst);
    assert_eq!(n, keyroute_redis::cache::MAX_FENCED_LOADS);
    assert_eq!(value, format!("v{n}").into_bytes());
    assert_eq!(
        cache.stats().fenced_fills,
        u64::from(n),
        "{:?}",
        cache.stats()
    );
    // Paused between: 10 + 20 ms at least.
    assert!(started.elapsed() >= Duration::from_millis(30));
    // Nothing was stored: the next call loads (and stores) afresh.
    let again = cache
        .get_or_load("c1", "cards", soon(), || {
            Ok::<_, LoadError>(b"fresh".to_vec())
        })
        .expect("load");
    assert_eq!(again, b"fresh");
}

/// A put while another cache (another process, say) loads the key: the loader's fill is
/// refused (fenced) and the reader gets the put value, as does everyone after.
#[test]
fn a_put_during_a_load_fences_the_load() {
    let server = Server::start();
    let reader = SmartCache::new(store(&server), CacheConfig::default()).expect("cache");
    let writer = SmartCache::new(store(&server), CacheConfig::default()).expect("cache");
    let (started, go) = (
        std::sync::mpsc::channel::<()>(),
        std::sync::mpsc::channel::<()>(),
    );
    let (started_tx, started_rx) = started;
    let (go_tx, go_rx) = go;
    let calls = AtomicU32::new(0);
    let got = thread::scope(|s| {
        let (reader, calls) = (&reader, &calls);
        let read = s.spawn(move || {
            reader.get_or_load("c-put", "prefs", soon(), move || {
                calls.fetch_add(1, Ordering::SeqCst);
                started_tx.send(()).expect("started");
                go_rx.recv().expect("go");
                Ok::<_, LoadError>(b"loaded-before-the-put".to_vec())
            })
        });
        started_rx.recv().expect("the load started");
        writer
            .put("c-put", "prefs", b"put", Some(Duration::from_secs(60)))
            .expect("put");
        go_tx.send(()).expect("go");
        read.join().expect("reader")
    });
    assert_eq!(got.expect("value"), b"put");
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(reader.stats().fenced_fills, 1);
    let never = || Ok::<_, LoadError>(b"must not load".to_vec());
    assert_eq!(
        writer
            .get_or_load("c-put", "prefs", soon(), never)
            .expect("hit"),
        b"put"
    );
    // The configured TTLs without one; bad input refused before anything is sent.
    writer.put("c-put", "prefs", b"again", None).expect("put");
    assert_eq!(
        reader
            .get_or_load("c-put", "prefs", soon(), never)
            .expect("hit"),
        b"again"
    );
    let code = |r: keyroute_redis::Result<()>| r.expect_err("refused").code().as_str();
    assert_eq!(code(writer.put("c-put", "a{b}", b"v", None)), "BAD_KIND");
    assert_eq!(code(writer.put("", "prefs", b"v", None)), "BAD_CLIENT_ID");
    assert_eq!(
        code(writer.put("c-put", "prefs", b"v", Some(Duration::ZERO))),
        "BAD_TTL"
    );
    let big = vec![0u8; (1 << 20) + 1];
    assert_eq!(
        code(writer.put("c-put", "prefs", &big, None)),
        "VALUE_TOO_LARGE"
    );
}

/// A read under a session checks and slides the session in its first call; an expired
/// session reads and loads nothing, another client's session is refused before anything
/// is sent.
#[test]
fn a_read_under_a_session() {
    let server = Server::start();
    let cache = SmartCache::new(store(&server), CacheConfig::default()).expect("cache");
    let config = SessionConfig {
        ttl: Duration::from_millis(400),
        ..SessionConfig::default()
    };
    let sessions = Sessions::new(store(&server), config).expect("sessions");
    let login = sessions.create("c-s", "v1", b"").expect("session");
    let sid = login.id.as_str();
    let calls = AtomicU32::new(0);
    let load = || {
        calls.fetch_add(1, Ordering::SeqCst);
        Ok::<_, LoadError>(b"cards".to_vec())
    };
    // Reads every 200 ms keep a 400 ms session alive.
    for _ in 0..4 {
        let got = cache.get_or_load_in_session(sid, "c-s", "cards", soon(), load);
        assert_eq!(got.expect("live"), b"cards");
        thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(matches!(sessions.touch(sid, None), Ok(Touch::Live { .. })));
    let other = sessions.create("c-other", "v1", b"").expect("session");
    let refused = cache
        .get_or_load_in_session(other.id.as_str(), "c-s", "cards", soon(), load)
        .expect_err("another client's");
    assert_eq!(refused.code().as_str(), "SESSION_CLIENT_MISMATCH");
    let bad = cache.get_or_load_in_session("nope", "c-s", "cards", soon(), load);
    assert_eq!(
        bad.expect_err("malformed").code().as_str(),
        "BAD_SESSION_ID"
    );
    thread::sleep(Duration::from_millis(600));
    let expired = cache
        .get_or_load_in_session(sid, "c-s", "loans", soon(), load)
        .expect_err("expired");
    assert_eq!(expired.code().as_str(), "SESSION_EXPIRED");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "nothing was loaded");
    assert_eq!(cache.stats().leases, 1, "nothing was leased");
}
