//! Sessions on a real redis-server in real time: alive while touched, expired when idle,
//! capped by the maximum age, version mismatch as an answer, and an index that is pruned
//! and expires by itself. Warm-up by device: only cold kinds load, and a login during the
//! warm-up adds no backend call.

#[path = "common/standalone.rs"]
mod standalone;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use keyroute::cache::{ClientKeys, TokenKey, Touch};
use keyroute_redis::cache::{
    CacheConfig, Devices, LoadError, SessionConfig, Sessions, SmartCache, Store,
};
use keyroute_redis::Timeouts;
use standalone::Server;

fn store(server: &Server) -> Store {
    Store::standalone(&server.url(), Timeouts::default()).expect("store")
}

fn sessions(server: &Server, ttl_ms: u64, max_age_ms: Option<u64>) -> Sessions {
    let config = SessionConfig {
        ttl: Duration::from_millis(ttl_ms),
        max_age: max_age_ms.map(Duration::from_millis),
        ..SessionConfig::default()
    };
    Sessions::new(store(server), config).expect("sessions")
}

fn live(touch: &Touch) -> bool {
    matches!(touch, Touch::Live { .. })
}

#[test]
fn sliding_expiry_max_age_and_version() {
    let server = Server::start();
    let s = sessions(&server, 300, None);
    let sid = s.create("c1", "v1", b"data").expect("create").id;
    // Touched every 100 ms for 900 ms (three TTLs): alive throughout.
    for _ in 0..9 {
        thread::sleep(Duration::from_millis(100));
        assert!(live(&s.touch(sid.as_str(), Some("v1")).expect("touch")));
    }
    // Idle past the TTL: expired.
    thread::sleep(Duration::from_millis(400));
    assert_eq!(s.touch(sid.as_str(), None).expect("touch"), Touch::Expired);

    // A maximum age ends a session however often it is touched.
    let capped = sessions(&server, 300, Some(500));
    let sid = capped.create("c1", "v1", b"").expect("create").id;
    let created = Instant::now();
    let mut last_live = Duration::ZERO;
    while created.elapsed() < Duration::from_millis(800) {
        if live(&capped.touch(sid.as_str(), None).expect("touch")) {
            last_live = created.elapsed();
        }
        thread::sleep(Duration::from_millis(50));
    }
    assert!(last_live >= Duration::from_millis(400), "{last_live:?}");
    assert!(
        last_live < Duration::from_millis(520),
        "alive past the max age: {last_live:?}"
    );

    // Version mismatch is an answer and changes nothing.
    let sid = s.create("c2", "app-1", b"").expect("create").id;
    assert_eq!(
        s.touch(sid.as_str(), Some("app-2")).expect("touch"),
        Touch::VersionMismatch {
            stored: b"app-1".to_vec()
        }
    );
    assert!(live(&s.touch(sid.as_str(), Some("app-1")).expect("touch")));
}

#[test]
fn the_index_is_pruned_and_expires_by_itself() {
    let server = Server::start();
    let short = sessions(&server, 200, None);
    let long = sessions(&server, 600, None);
    let a = short.create("c1", "v", b"").expect("a").id;
    let b = long.create("c1", "v", b"").expect("b").id;
    let index = ClientKeys::new(b"c1", &TokenKey::DEFAULT)
        .expect("keys")
        .session_index();
    let mut con = server.connection();
    let members = |con: &mut redis::Connection| -> Vec<String> {
        redis::cmd("ZRANGE")
            .arg(&index)
            .arg(0)
            .arg(-1)
            .query(con)
            .expect("ZRANGE")
    };
    assert_eq!(members(&mut con).len(), 2);
    assert_eq!(long.list("c1").expect("list").len(), 2);
    thread::sleep(Duration::from_millis(300));
    // `a` expired by itself; the list shows only `b`, and touching `b` prunes `a`.
    let listed: Vec<String> = long
        .list("c1")
        .expect("list")
        .iter()
        .map(|(s, _)| s.to_string())
        .collect();
    assert_eq!(listed, vec![b.to_string()]);
    assert!(live(&long.touch(b.as_str(), None).expect("touch")));
    assert_eq!(members(&mut con), vec![b.to_string()]);
    assert_eq!(
        short.touch(a.as_str(), None).expect("touch"),
        Touch::Expired
    );
    // The index expires with its last session, with nothing running.
    let pttl: i64 = redis::cmd("PTTL")
        .arg(&index)
        .query(&mut con)
        .expect("PTTL");
    assert!((1..=600).contains(&pttl), "{pttl}");
    thread::sleep(Duration::from_millis(pttl as u64 + 50));
    let exists: i64 = redis::cmd("EXISTS")
        .arg(&index)
        .query(&mut con)
        .expect("EXISTS");
    assert_eq!(exists, 0, "the index outlived its sessions");
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg("kr:*")
        .query(&mut con)
        .expect("KEYS");
    assert!(keys.is_empty(), "left behind: {keys:?}");
}

#[test]
fn warm_up_loads_only_cold_kinds_and_a_login_during_it_adds_no_backend_call() {
    let server = Server::start();
    let cache = Arc::new(SmartCache::new(store(&server), CacheConfig::default()).expect("cache"));
    let devices = Devices::new(store(&server));
    devices
        .bind("ios-1", "client-w", Duration::from_secs(60))
        .expect("bind");
    // `cards` is already fresh.
    cache
        .get_or_load(
            "client-w",
            "cards",
            Instant::now() + Duration::from_secs(5),
            || Ok::<_, LoadError>(b"cards".to_vec()),
        )
        .expect("cards");
    let warm_calls = Arc::new(Mutex::new(Vec::new()));
    let login_calls = Arc::new(AtomicU32::new(0));
    let warming = {
        let (cache, warm_calls) = (Arc::clone(&cache), Arc::clone(&warm_calls));
        thread::spawn(move || {
            cache.warm(
                "ios-1",
                &["accounts", "cards", "deposits", "loans"],
                |client, kind| {
                    warm_calls
                        .lock()
                        .expect("lock")
                        .push(String::from_utf8_lossy(kind).into_owned());
                    assert_eq!(client, b"client-w");
                    thread::sleep(Duration::from_millis(200));
                    Ok(format!("{} warmed", String::from_utf8_lossy(kind)).into_bytes())
                },
            )
        })
    };
    thread::sleep(Duration::from_millis(50));
    // The user logs in during the warm-up: a second instance asks for accounts.
    let login = SmartCache::new(store(&server), CacheConfig::default()).expect("login cache");
    let started = Instant::now();
    let accounts = login
        .get_or_load(
            "client-w",
            "accounts",
            Instant::now() + Duration::from_secs(5),
            || {
                login_calls.fetch_add(1, Ordering::SeqCst);
                Ok::<_, LoadError>(b"login loaded".to_vec())
            },
        )
        .expect("accounts");
    assert_eq!(accounts, b"accounts warmed");
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(login_calls.load(Ordering::SeqCst), 0);
    assert_eq!(login.stats().waits, 1);
    let report = warming.join().expect("thread").expect("warm");
    let mut granted: Vec<String> = report
        .granted
        .iter()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    granted.sort();
    assert_eq!(granted, ["accounts", "deposits", "loans"]);
    assert_eq!(report.skipped, vec![b"cards".to_vec()]);
    let mut called = warm_calls.lock().expect("lock").clone();
    called.sort();
    assert_eq!(called, ["accounts", "deposits", "loans"]);
    // An unknown device warms nothing.
    let report = cache
        .warm(
            "unknown",
            &["accounts"],
            |_, _| -> Result<Vec<u8>, LoadError> { panic!("no load") },
        )
        .expect("warm");
    assert!(report.client.is_none() && report.granted.is_empty());
}
