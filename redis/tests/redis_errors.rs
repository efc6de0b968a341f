//! Errors a person can act on, on a real redis-server: each failure has its own code,
//! a timeout takes about the configured time (not twice), a non-Redis peer reads as such,
//! and a password never appears in a message. Every script refuses a key of the wrong
//! type before its first write, changing nothing.

#[path = "common/standalone.rs"]
mod standalone;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use keyroute::select::Restore;
use keyroute_redis::{connect, Error, Leases, LeastUsed, Reconnecting, Timeouts};
use standalone::Server;

const TIMEOUT: Duration = Duration::from_millis(500);

fn code(err: &Error) -> &'static str {
    err.code().as_str()
}

#[test]
fn a_password_never_appears_in_a_message() {
    let server = Server::start();
    let mut admin = server.connection();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("hunter2-right")
        .query(&mut admin)
        .expect("set a password");
    let url = |pw: &str| format!("redis://:{pw}@127.0.0.1:{}", server.port());

    let err = connect(&url("hunter2-wrong"), Timeouts::uniform(TIMEOUT))
        .map(drop)
        .expect_err("wrong password");
    assert_eq!(code(&err), "REDIS_AUTH", "{err}");
    assert!(
        !format!("{err} {err:?}").contains("hunter2"),
        "{err} / {err:?}"
    );

    // A pick through a reconnecting connection reports the refused credentials too.
    let mut con =
        Reconnecting::new(&url("hunter2-wrong"), Timeouts::uniform(TIMEOUT)).expect("url");
    assert!(!format!("{con:?}").contains("hunter2"));
    let pool = LeastUsed::new("{auth}:pool").expect("key");
    let err = pool
        .pick(&mut con)
        .map_err(|e| con.explain(e))
        .expect_err("refused");
    assert_eq!(code(&err), "REDIS_AUTH", "{err}");
    assert!(!err.to_string().contains("hunter2"), "{err}");

    // No password at all: NOAUTH.
    let err = pool
        .pick(&mut server.connection_without_auth_check())
        .expect_err("no password");
    assert_eq!(code(&err), "REDIS_AUTH", "{err}");

    // A URL the crate cannot use.
    let err = Reconnecting::new(
        "redis://:hunter2-wrong@127.0.0.1:notaport",
        Timeouts::default(),
    )
    .expect_err("bad url");
    assert_eq!(code(&err), "REDIS_BAD_URL");
    assert!(!err.to_string().contains("hunter2"), "{err}");

    // The right password works.
    let mut good = connect(&url("hunter2-right"), Timeouts::uniform(TIMEOUT)).expect("connect");
    assert_eq!(pool.pick(&mut good).expect("pick"), None);
}

trait NoAuth {
    fn connection_without_auth_check(&self) -> redis::Connection;
}

impl NoAuth for Server {
    fn connection_without_auth_check(&self) -> redis::Connection {
        // Connecting sends no AUTH; the first command is refused with NOAUTH.
        redis::Client::open(self.url())
            .expect("url")
            .get_connection()
            .expect("connect")
    }
}

#[test]
fn a_timeout_reads_as_one_and_takes_the_configured_time() {
    let server = Server::start();
    let pool = LeastUsed::new("{slow}:pool").expect("key");
    pool.seed(&mut server.connection(), ["a"], 0, false)
        .expect("seed");
    let port = server.port();
    // Pause every client for 3 s; every call below waits on it.
    let sleeper = thread::spawn(move || {
        let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}"))
            .expect("url")
            .get_connection()
            .expect("connect");
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(3000)
            .arg("ALL")
            .query(&mut con)
            .expect("CLIENT PAUSE");
    });
    thread::sleep(Duration::from_millis(200));

    // A fresh reconnecting connection: connect (the TCP accept succeeds) then the reply.
    let mut con = Reconnecting::new(&server.url(), Timeouts::uniform(TIMEOUT)).expect("url");
    let started = Instant::now();
    let err = pool
        .pick(&mut con)
        .map_err(|e| con.explain(e))
        .expect_err("timed out");
    let took = started.elapsed();
    assert_eq!(code(&err), "REDIS_TIMEOUT", "{err}");
    assert!(err.to_string().contains("timed out"), "{err}");
    assert!(!err.to_string().contains("os error"), "{err}");
    // About the configured time, not twice it (a loaded 2-core machine may add a little).
    assert!(took >= TIMEOUT - Duration::from_millis(50), "{took:?}");
    assert!(
        took < TIMEOUT * 3 / 2,
        "a {TIMEOUT:?} timeout took {took:?}"
    );

    // An established connection whose server stops answering.
    let mut ready = Reconnecting::new(&server.url(), Timeouts::uniform(TIMEOUT)).expect("url");
    sleeper.join().expect("sleeper");
    thread::sleep(Duration::from_millis(3000)); // the first pause ends
    ready.ensure_connected().expect("connect");
    let pauser = thread::spawn(move || {
        let mut con = redis::Client::open(format!("redis://127.0.0.1:{port}"))
            .expect("url")
            .get_connection()
            .expect("connect");
        let _: () = redis::cmd("CLIENT")
            .arg("PAUSE")
            .arg(2000)
            .arg("ALL")
            .query(&mut con)
            .expect("pause");
    });
    pauser.join().expect("pauser");
    let started = Instant::now();
    let err = pool.pick(&mut ready).expect_err("timed out");
    let took = started.elapsed();
    assert_eq!(code(&err), "REDIS_TIMEOUT", "{err}");
    assert!(
        took < TIMEOUT * 3 / 2,
        "a {TIMEOUT:?} timeout took {took:?}"
    );

    // A peer that accepts and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_port = silent.local_addr().expect("addr").port();
    let mut con = Reconnecting::new(
        &format!("127.0.0.1:{silent_port}"),
        Timeouts::uniform(TIMEOUT),
    )
    .expect("url");
    let started = Instant::now();
    let err = pool
        .pick(&mut con)
        .map_err(|e| con.explain(e))
        .expect_err("timed out");
    let took = started.elapsed();
    assert_eq!(code(&err), "REDIS_TIMEOUT", "{err}");
    assert!(
        took < TIMEOUT * 3 / 2,
        "a {TIMEOUT:?} timeout took {took:?}"
    );
    drop(silent);
}

#[test]
fn a_peer_that_is_not_redis_and_a_closed_port() {
    // A peer that answers like an HTTP server.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let http = thread::spawn(move || {
        for stream in listener.incoming().take(2) {
            let mut stream = stream.expect("accept");
            let mut buf = [0u8; 512];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
        }
    });
    let err = connect(
        &format!("redis://127.0.0.1:{port}"),
        Timeouts::uniform(TIMEOUT),
    )
    .and_then(|mut con| LeastUsed::new("p")?.pick(&mut con))
    .expect_err("not redis");
    assert_eq!(code(&err), "REDIS_PROTOCOL", "{err}");
    assert!(err.to_string().contains("Redis server"), "{err}");
    drop(http);

    // Nobody listening.
    let closed = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let err = connect(&format!("127.0.0.1:{closed}"), Timeouts::uniform(TIMEOUT))
        .map(drop)
        .expect_err("refused");
    assert_eq!(code(&err), "REDIS_CONNECT", "{err}");
    assert!(
        err.to_string().contains(&format!("127.0.0.1:{closed}")),
        "{err}"
    );
}

/// Every key of `keys` as DUMP bytes (None when missing).
fn snapshot(con: &mut redis::Connection, keys: &[Vec<u8>]) -> Vec<Option<Vec<u8>>> {
    keys.iter()
        .map(|k| redis::cmd("DUMP").arg(k).query(con).expect("DUMP"))
        .collect()
}

/// A value of another type than `want` at `key`.
fn plant_wrong_type(con: &mut redis::Connection, key: &[u8], want: &str) {
    let _: () = redis::cmd("DEL").arg(key).query(con).expect("DEL");
    let _: () = if want == "string" {
        redis::cmd("ZADD").arg(key).arg(1).arg("x").query(con)
    } else {
        redis::cmd("SET").arg(key).arg("x").query(con)
    }
    .expect("plant");
}

#[test]
fn every_script_refuses_a_wrong_type_and_changes_nothing() {
    let server = Server::start();
    let mut con = server.connection();

    // The least-used pool: pool (zset) and side (hash).
    let pool = LeastUsed::new("{wt}:pool").expect("key");
    let keys = vec![pool.pool_key().to_vec(), pool.side_key().to_vec()];
    let types = ["zset", "hash"];
    for (i, want) in types.iter().enumerate() {
        let _: () = redis::cmd("FLUSHALL").query(&mut con).expect("flush");
        pool.seed(&mut con, ["m", "n"], 0, false).expect("seed");
        let _: () = redis::cmd("HSET")
            .arg(pool.side_key())
            .arg("old")
            .arg(3)
            .query(&mut con)
            .expect("hset");
        plant_wrong_type(&mut con, &keys[i], want);
        let before = snapshot(&mut con, &keys);
        type Call<'a> = Box<dyn Fn(&mut redis::Connection) -> Result<(), Error> + 'a>;
        let mut calls: Vec<(&str, Call)> = vec![
            (
                "seed",
                Box::new(|c| pool.seed(c, ["a"], 0, false).map(drop)),
            ),
            ("remove", Box::new(|c| pool.remove(c, b"m").map(drop))),
            (
                "restore",
                Box::new(|c| pool.restore(c, b"old", Restore::Keep).map(drop)),
            ),
        ];
        if i == 0 {
            // The least-used script reads only the pool key.
            calls.push(("pick", Box::new(|c| pool.pick(c).map(drop))));
            calls.push(("pick_many", Box::new(|c| pool.pick_many(c, 3).map(drop))));
        }
        for (name, call) in calls {
            let err = call(&mut con).expect_err(name);
            assert_eq!(
                code(&err),
                "REDIS_WRONGTYPE",
                "{name} with a wrong {want}: {err}"
            );
            assert_eq!(snapshot(&mut con, &keys), before, "{name} changed data");
        }
    }

    // Leases: in-flight (zset), leases (zset), lease-members (hash), lease-seq (string).
    let leases = Leases::new("{wt}:busy").expect("key");
    let keys: Vec<Vec<u8>> = leases.keys().to_vec();
    for (i, want) in ["zset", "zset", "hash", "string"].iter().enumerate() {
        let _: () = redis::cmd("FLUSHALL").query(&mut con).expect("flush");
        leases.seed(&mut con, ["m", "n"]).expect("seed");
        let lease = leases
            .acquire(&mut con, Duration::from_secs(60))
            .expect("acquire")
            .expect("a lease");
        plant_wrong_type(&mut con, &keys[i], want);
        let before = snapshot(&mut con, &keys);
        type Call<'a> = Box<dyn Fn(&mut redis::Connection) -> Result<(), Error> + 'a>;
        let calls: Vec<(&str, Call)> = vec![
            (
                "acquire",
                Box::new(|c| leases.acquire(c, Duration::from_secs(1)).map(drop)),
            ),
            ("release", Box::new(|c| leases.release(c, &lease).map(drop))),
            (
                "reclaim",
                Box::new(|c| {
                    leases
                        .reclaim(c, keyroute_redis::Now::At(u64::MAX >> 12))
                        .map(drop)
                }),
            ),
        ];
        for (name, call) in calls {
            let err = call(&mut con).expect_err(name);
            assert_eq!(
                code(&err),
                "REDIS_WRONGTYPE",
                "lease {name} with a wrong {want}: {err}"
            );
            assert_eq!(
                snapshot(&mut con, &keys),
                before,
                "lease {name} changed data"
            );
        }
    }
}
