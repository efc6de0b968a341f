//! A deadline is per call, never per reply (issue 37): on every public connection
//! ([`connect`], [`Reconnecting`], [`Link`]) a call (one command, a script, a pipeline)
//! fails within one I/O timeout of its start, with `REDIS_TIMEOUT`, on a real
//! redis-server that stops answering (SIGSTOP) and on one that answers each command of a
//! pipeline just within the timeout but the whole pipeline past it (a script that runs
//! 120 ms, five times, against a 250 ms timeout).
//!
//! `cargo test -p keyroute-redis --test redis_deadline -- --nocapture` prints the times.
#![allow(clippy::unwrap_used)]

#[path = "common/standalone.rs"]
mod standalone;

use std::time::{Duration, Instant};

use keyroute_redis::{connect, LeastUsed, Link, Reconnecting, Timeouts};
use redis::ConnectionLike;
use standalone::Server;

/// Opens one kind of connection.
type Open<'a> = Box<dyn Fn() -> Box<dyn ConnectionLike> + 'a>;

const TIMEOUT: Duration = Duration::from_millis(200);

/// A call fails within this: the one timeout, and slack for a loaded 2-core machine,
/// always below two timeouts.
fn within() -> Duration {
    TIMEOUT * 2
}

/// The error of a failed `redis` crate call, as this crate reports it.
fn code_of(e: &redis::RedisError) -> String {
    if e.is_timeout() {
        "REDIS_TIMEOUT".into()
    } else {
        format!("not a timeout: {e}")
    }
}

/// Every kind of call on `con`, the server stalled: each fails within one timeout.
fn every_call_fails_within_one_timeout(
    kind: &str,
    server: &Server,
    open: &dyn Fn() -> Box<dyn ConnectionLike>,
    failures: &mut Vec<String>,
) {
    let pool = LeastUsed::new("{deadline}:pool").unwrap();
    pool.seed(&mut server.connection(), ["a", "b", "c"], 0, false)
        .unwrap();
    type Call = fn(&mut dyn ConnectionLike, &LeastUsed) -> Result<(), String>;
    let calls: [(&str, Call); 4] = [
        ("GET", |con, _| {
            redis::cmd("GET")
                .arg("k")
                .query::<Option<Vec<u8>>>(con)
                .map(|_| ())
                .map_err(|e| code_of(&e))
        }),
        ("pick (EVALSHA)", |con, pool| {
            pool.pick(con)
                .map(|_| ())
                .map_err(|e| e.code().as_str().to_string())
        }),
        ("pick_many(10)", |con, pool| {
            pool.pick_many(con, 10)
                .map(|_| ())
                .map_err(|e| e.code().as_str().to_string())
        }),
        ("10-GET pipeline", |con, _| {
            let mut pipe = redis::pipe();
            for i in 0..10 {
                pipe.get(format!("k{i}"));
            }
            pipe.query::<Vec<Option<Vec<u8>>>>(con)
                .map(|_| ())
                .map_err(|e| code_of(&e))
        }),
    ];
    for (what, call) in calls {
        let mut con = open();
        // Connected and the script cached before the stall.
        call(con.as_mut(), &pool).unwrap();
        server.pause();
        let started = Instant::now();
        let result = call(con.as_mut(), &pool);
        let took = started.elapsed();
        server.resume();
        eprintln!("{kind}: {what} on a stalled server failed after {took:?}: {result:?}");
        // Every call is tried before the test fails, so that it shows every time.
        if result.as_ref().err().map(String::as_str) != Some("REDIS_TIMEOUT") {
            failures.push(format!("{kind}: {what}: {result:?}, not REDIS_TIMEOUT"));
        }
        if took < TIMEOUT - Duration::from_millis(20) {
            failures.push(format!("{kind}: {what} gave up early, after {took:?}"));
        }
        if took >= within() {
            failures.push(format!(
                "{kind}: {what} took {took:?} with a {TIMEOUT:?} timeout"
            ));
            continue;
        }
        // The connection is not used again with late replies in flight.
        let again = call(con.as_mut(), &pool);
        if kind != "connect()" {
            // The next call reconnects.
            if let Err(e) = again {
                failures.push(format!("{kind}: {what}: after the stall: {e}"));
            }
        } else if con.is_open() || again.is_ok() {
            failures.push(format!(
                "{kind}: {what}: still open after a timeout ({again:?})"
            ));
        }
    }
}

#[test]
fn a_stalled_server_fails_every_call_within_one_timeout() {
    let server = Server::start();
    let url = server.url();
    let t = Timeouts::uniform(TIMEOUT);
    let mut failures = Vec::new();
    every_call_fails_within_one_timeout(
        "connect()",
        &server,
        &|| Box::new(connect(&url, t).unwrap()),
        &mut failures,
    );
    every_call_fails_within_one_timeout(
        "Reconnecting",
        &server,
        &|| Box::new(Reconnecting::new(&url, t).unwrap()),
        &mut failures,
    );
    every_call_fails_within_one_timeout(
        "Link::single",
        &server,
        &|| Box::new(Link::single(&url, t).unwrap()),
        &mut failures,
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Each reply of a pipeline comes within the timeout of the one before, the last one
/// past the timeout of the call: `BLPOP`s answered one by one by pushes from another
/// connection every 120 ms (a blocked client's next command waits on the server).
#[test]
fn replies_each_in_time_but_all_late_fail_the_pipeline_at_its_deadline() {
    let server = Server::start();
    let url = server.url();
    let t = Timeouts::uniform(Duration::from_millis(250));
    let opens: [(&str, Open); 3] = [
        (
            "connect()",
            Box::new(|| Box::new(connect(&url, t).unwrap())),
        ),
        (
            "Reconnecting",
            Box::new(|| Box::new(Reconnecting::new(&url, t).unwrap())),
        ),
        (
            "Link::single",
            Box::new(|| Box::new(Link::single(&url, t).unwrap())),
        ),
    ];
    let mut failures = Vec::new();
    for (kind, open) in opens {
        let mut con = open();
        assert!(con.check_connection(), "{kind}");
        let list = format!("{{deadline}}:blpop:{kind}");
        let mut pipe = redis::pipe();
        for _ in 0..5 {
            pipe.cmd("BLPOP").arg(&list).arg(0);
        }
        let pusher = {
            let mut other = server.connection();
            let list = list.clone();
            std::thread::spawn(move || {
                for i in 0..5 {
                    std::thread::sleep(Duration::from_millis(120));
                    let _: i64 = redis::cmd("RPUSH")
                        .arg(&list)
                        .arg(i)
                        .query(&mut other)
                        .unwrap();
                }
            })
        };
        let started = Instant::now();
        let result = pipe.query::<Vec<(String, i64)>>(con.as_mut());
        let took = started.elapsed();
        pusher.join().unwrap();
        eprintln!("{kind}: 5 replies 120 ms apart, 250 ms timeout: {took:?}: {result:?}");
        if !matches!(&result, Err(e) if e.is_timeout()) {
            failures.push(format!("{kind}: {result:?}, not a timeout"));
        }
        if took >= Duration::from_millis(500) {
            failures.push(format!("{kind}: {took:?} with a 250 ms timeout"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The reading under a deadline keeps the `redis` crate's answers: a transaction's
/// result, a server error reply in a pipeline as a value, a failed transaction as an
/// error (and the connection still usable after each).
#[test]
fn transactions_and_error_replies_read_as_before() {
    let server = Server::start();
    let url = server.url();
    let t = Timeouts::uniform(Duration::from_secs(2));
    let opens: [(&str, Open); 2] = [
        (
            "connect()",
            Box::new(|| Box::new(connect(&url, t).unwrap())),
        ),
        (
            "Reconnecting",
            Box::new(|| Box::new(Reconnecting::new(&url, t).unwrap())),
        ),
    ];
    for (kind, open) in opens {
        let mut con = open();
        let key = format!("{{tx}}:{kind}");
        let _: () = redis::cmd("DEL").arg(&key).query(con.as_mut()).unwrap();
        let (a, b): (i64, i64) = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .incr(&key, 2)
            .query(con.as_mut())
            .unwrap();
        assert_eq!((a, b), (1, 3), "{kind}");
        // An error reply in the middle of a pipeline: the other replies are read.
        let packed = redis::pipe()
            .incr(&key, 1)
            .cmd("LPUSH")
            .arg(&key)
            .arg("x")
            .incr(&key, 1)
            .get_packed_pipeline();
        let replies = con
            .req_packed_commands(&packed, 0, 3)
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert!(
            matches!(&replies[..], [redis::Value::Int(4), redis::Value::ServerError(e), redis::Value::Int(5)] if e.code() == "WRONGTYPE"),
            "{kind}: {replies:?}"
        );
        // A transaction with a command refused when queued fails as a whole.
        let failed = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .cmd("NOSUCHCOMMAND")
            .query::<Vec<i64>>(con.as_mut());
        assert!(failed.is_err(), "{kind}: {failed:?}");
        let now: i64 = redis::cmd("GET").arg(&key).query(con.as_mut()).unwrap();
        assert_eq!(now, 5, "{kind}");
    }
}
