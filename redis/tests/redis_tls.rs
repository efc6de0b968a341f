//! TLS and replicas on real redis-server processes: a TLS-only server (`--port 0
//! --tls-port`) with certificates made at test time, reached by LeastUsed picks and the
//! smart cache's single flight; a wrong CA and a missing client certificate are refused
//! with `REDIS_TLS`; a standalone URL that names a replica (a real `REPLICAOF`) is refused
//! with `REDIS_READONLY`. The smart cache's waiters are woken by pub/sub over TLS and over a
//! Unix socket (a subscriber on the server while they wait, and served right after the
//! fill, not at the poll timer's next tick).
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::secure::{free_port, redis_server, temp_dir, Certs};
use keyroute_redis::cache::{CacheConfig, SmartCache, Store};
use keyroute_redis::{LeastUsed, Reconnecting, Timeouts};

const T: Duration = Duration::from_secs(3);

fn tls_server(certs: &Certs, auth_clients: bool) -> (common::secure::Proc, String) {
    let dir = temp_dir("tls");
    let port = free_port(false);
    let mut args = vec![
        "--port".into(),
        "0".into(),
        "--tls-port".into(),
        port.to_string(),
    ];
    args.extend(certs.server_args(auth_clients));
    (
        redis_server(&dir, port, &args),
        format!("rediss://127.0.0.1:{port}"),
    )
}

#[test]
fn picks_and_single_flight_over_tls() {
    let certs = Certs::make();
    let (_server, base) = tls_server(&certs, false);
    let url = format!("{base}?{}", certs.query(false));
    let mut con = Reconnecting::new(&url, Timeouts::uniform(T)).unwrap();
    let pool = LeastUsed::new("{tls}:pool").unwrap();
    pool.seed(&mut con, ["a", "b"], 0, false).unwrap();
    let mut picked = Vec::new();
    for _ in 0..4 {
        picked.push(pool.pick(&mut con).unwrap().unwrap());
    }
    picked.sort();
    assert_eq!(
        picked,
        [b"a".to_vec(), b"a".to_vec(), b"b".to_vec(), b"b".to_vec()]
    );

    // Single flight over TLS: 8 threads, one backend call.
    let store = Store::standalone(&url, Timeouts::uniform(T)).unwrap();
    let cache = Arc::new(SmartCache::new(store, CacheConfig::default()).unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (cache, calls) = (cache.clone(), calls.clone());
            std::thread::spawn(move || {
                cache
                    .get_or_load(
                        "c1",
                        "loans",
                        Instant::now() + Duration::from_secs(10),
                        || {
                            calls.fetch_add(1, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(200));
                            Ok(b"v".to_vec())
                        },
                    )
                    .unwrap()
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), b"v");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn an_untrusted_certificate_and_a_missing_client_certificate_are_refused() {
    let certs = Certs::make();
    let (_server, base) = tls_server(&certs, true);
    let pool = LeastUsed::new("{tls}:pool").unwrap();
    // The server's certificate is not signed by this CA.
    let wrong = format!("{base}?ssl_ca_certs={}", certs.path("other-ca.crt"));
    let mut con = Reconnecting::new(&wrong, Timeouts::uniform(T)).unwrap();
    let err = con.ensure_connected().unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_TLS", "{err}");
    // The system roots do not trust a test CA either: never accepted silently.
    let mut con = Reconnecting::new(&base, Timeouts::uniform(T)).unwrap();
    let err = con.ensure_connected().unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_TLS", "{err}");
    // The server asks for a client certificate.
    let no_client = format!("{base}?{}", certs.query(false));
    let mut con = Reconnecting::new(&no_client, Timeouts::uniform(T)).unwrap();
    let err = pool.pick(&mut con).map_err(|e| con.explain(e)).unwrap_err();
    assert!(
        matches!(err.code().as_str(), "REDIS_TLS" | "REDIS_CONNECTION_LOST"),
        "{err}"
    );
    // With it, the same server answers.
    let with_client = format!("{base}?{}", certs.query(true));
    let mut con = Reconnecting::new(&with_client, Timeouts::uniform(T)).unwrap();
    assert_eq!(pool.pick(&mut con).unwrap(), None);
    // ssl_cert_reqs=none skips the check, when asked for by name.
    let unchecked = format!(
        "{base}?ssl_cert_reqs=none&ssl_certfile={}&ssl_keyfile={}",
        certs.path("client.crt"),
        certs.path("client.key")
    );
    let mut con = Reconnecting::new(&unchecked, Timeouts::uniform(T)).unwrap();
    assert_eq!(pool.pick(&mut con).unwrap(), None);
}

#[test]
fn a_url_that_names_a_replica_is_refused_with_readonly() {
    let dir = temp_dir("replica");
    let (mp, rp) = (free_port(false), free_port(false));
    let _master = redis_server(&dir, mp, &["--port".into(), mp.to_string()]);
    let _replica = redis_server(
        &dir,
        rp,
        &[
            "--port".into(),
            rp.to_string(),
            "--replicaof".into(),
            "127.0.0.1".into(),
            mp.to_string(),
        ],
    );
    let url = format!("redis://127.0.0.1:{rp}");
    let mut con = Reconnecting::new(&url, Timeouts::uniform(T)).unwrap();
    let pool = LeastUsed::new("{r}:pool").unwrap();
    let err = pool.seed(&mut con, ["a"], 0, false).unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_READONLY", "{err}");
    let store = Store::standalone(&url, Timeouts::uniform(T)).unwrap();
    let cache = SmartCache::new(store, CacheConfig::default()).unwrap();
    let err = cache
        .get_or_load("c", "k", Instant::now() + Duration::from_secs(3), || {
            Ok(b"v".to_vec())
        })
        .unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_READONLY", "{err}");
}

/// `SmartCache`, `Sessions` and `Devices` opened on one URL in one process share one
/// store: opening them again opens no connection (the server's `connected_clients`).
#[test]
fn stores_on_one_url_share_their_connections() {
    use keyroute_redis::cache::{Devices, SessionConfig, Sessions};
    let dir = temp_dir("shared");
    let port = free_port(false);
    let _server = redis_server(&dir, port, &["--port".into(), port.to_string()]);
    let url = format!("redis://127.0.0.1:{port}");
    let clients = || -> u64 {
        let info = common::secure::cli(&[
            "-p".into(),
            port.to_string(),
            "INFO".into(),
            "clients".into(),
        ]);
        let line = info
            .lines()
            .find(|l| l.starts_with("connected_clients:"))
            .unwrap();
        line.trim_start_matches("connected_clients:")
            .trim()
            .parse::<u64>()
            .unwrap()
            - 1
    };
    let t = Timeouts::uniform(T);
    let first = Store::standalone(&url, t).unwrap();
    let after_first = clients();
    assert!(after_first >= 1);
    let cache =
        SmartCache::new(Store::standalone(&url, t).unwrap(), CacheConfig::default()).unwrap();
    let sessions = Sessions::new(
        Store::standalone(&url, t).unwrap(),
        SessionConfig::default(),
    )
    .unwrap();
    let _devices = Devices::new(Store::standalone(&url, t).unwrap());
    assert!(Store::standalone(&url, t).unwrap().same_as(&first));
    assert_eq!(
        clients(),
        after_first,
        "no connection opened for the others"
    );
    drop((cache, sessions));
    // Other timeouts: another store.
    let other = Store::standalone(&url, Timeouts::uniform(Duration::from_secs(1))).unwrap();
    assert!(!other.same_as(&first));
}

/// A waiter of another cache (another store: no in-process flight to share) waits for a
/// 1 s load over `url`: while it waits the server has a subscriber on a channel (the
/// wake-up connection is made over the URL's own transport), and it is served within
/// 50 ms of the fill. Polling alone would serve it at the next tick: 10 ms doubling to
/// 200 ms, ticks at 710, 910 and 1110 ms from the wait's start, 110-160 ms after a fill
/// ~950 ms into it.
fn woken_by_pubsub(url: &str, socket: &str, client: &'static str) {
    use std::sync::Mutex;
    let soon = || Instant::now() + Duration::from_secs(10);
    let loader = Arc::new(
        SmartCache::new(
            Store::standalone(url, Timeouts::uniform(T)).unwrap(),
            CacheConfig::default(),
        )
        .unwrap(),
    );
    let waiter = SmartCache::new(
        Store::standalone(url, Timeouts::uniform(T + Duration::from_millis(1))).unwrap(),
        CacheConfig::default(),
    )
    .unwrap();
    let filled_at = Arc::new(Mutex::new(None));
    let loading = {
        let (loader, filled_at) = (Arc::clone(&loader), Arc::clone(&filled_at));
        std::thread::spawn(move || {
            loader.get_or_load(client, "cards", soon(), || {
                std::thread::sleep(Duration::from_millis(1000));
                *filled_at.lock().unwrap() = Some(Instant::now());
                Ok(b"cards".to_vec())
            })
        })
    };
    std::thread::sleep(Duration::from_millis(50));
    // Subscribers on the server while the waiter waits (asked over the Unix socket).
    let subscribed = {
        let socket = socket.to_string();
        std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_millis(900);
            while Instant::now() < until {
                let channels = common::secure::cli(&[
                    "-s".into(),
                    socket.clone(),
                    "-a".into(),
                    PW.into(),
                    "--no-auth-warning".into(),
                    "PUBSUB".into(),
                    "CHANNELS".into(),
                ]);
                if !channels.trim().is_empty() {
                    return true;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            false
        })
    };
    let v = waiter
        .get_or_load(client, "cards", soon(), || {
            Err(keyroute_redis::cache::LoadError::new("NO", "must not load"))
        })
        .unwrap();
    let served = Instant::now();
    assert_eq!(v, b"cards");
    assert_eq!(waiter.stats().waits, 1);
    assert!(
        subscribed.join().unwrap(),
        "no subscriber while waiting over {url}"
    );
    let late = served.duration_since(filled_at.lock().unwrap().unwrap());
    assert!(
        late < Duration::from_millis(50),
        "served {late:?} after the fill over {url}: the poll timer, not a wake-up"
    );
    loading.join().unwrap().unwrap();
}

const PW: &str = "wake-pw-4";

#[test]
fn waiters_are_woken_over_tls_and_a_unix_socket() {
    let certs = Certs::make();
    let dir = temp_dir("wake");
    let port = free_port(false);
    let socket = dir.join("redis.sock").display().to_string();
    let mut args = vec![
        "--port".into(),
        "0".into(),
        "--tls-port".into(),
        port.to_string(),
        "--unixsocket".into(),
        socket.clone(),
        "--unixsocketperm".into(),
        "700".into(),
        "--requirepass".into(),
        PW.into(),
    ];
    args.extend(certs.server_args(false));
    let _server = redis_server(&dir, port, &args);
    woken_by_pubsub(
        &format!("rediss://:{PW}@127.0.0.1:{port}?{}", certs.query(false)),
        &socket,
        "c-tls",
    );
    woken_by_pubsub(
        &format!("redis+unix://{socket}?pass={PW}"),
        &socket,
        "c-unix",
    );
}
