//! `keyroute pick` and `keyroute pool` end to end on a real `redis-server` (started on a
//! free 127.0.0.1 port by the Redis crate's test harness, stopped on drop).
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../redis/tests/common/mod.rs"]
mod servers;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{fails_with, keyroute, ok, stderr, stdout};
use servers::standalone::{free_port, Server};

fn counts(server: &Server, key: &str) -> Vec<(String, u64)> {
    redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(&mut server.connection())
        .unwrap()
}

#[test]
fn pool_seed_pick_remove_restore_show() {
    let server = Server::start();
    // host:port is accepted like a URL, by pick and pool alike.
    let at = format!("127.0.0.1:{}", server.port());
    let pool = "{jobs}:proxies";
    let out = ok(&keyroute(
        &[
            "pool", "seed", "--redis", &at, "--pool", pool, "p1", "p2", "p3",
        ],
        None,
    ));
    assert!(out.starts_with("3 new member(s) added"), "{out}");
    assert_eq!(
        counts(&server, pool),
        [("p1".into(), 0), ("p2".into(), 0), ("p3".into(), 0)]
    );
    // Least used first, ties in byte order: 4 picks go p1 p2 p3 p1.
    let picks = ok(&keyroute(
        &["pick", "--redis", &at, "--pool", pool, "--count", "4"],
        None,
    ));
    assert_eq!(picks, "p1\np2\np3\np1\n");
    let url = server.url();
    let picks = ok(&keyroute(&["pick", "--redis", &url, "--pool", pool], None));
    assert_eq!(picks, "p2\n");
    // Remove p3 (count 1 remembered): picks skip it.
    let out = ok(&keyroute(
        &["pool", "remove", "--redis", &url, "--pool", pool, "p3"],
        None,
    ));
    assert!(
        out.contains("removed p3") && out.contains("count 1"),
        "{out}"
    );
    let picks = ok(&keyroute(
        &["pick", "--redis", &url, "--pool", pool, "-n", "2"],
        None,
    ));
    assert_eq!(picks, "p1\np2\n");
    let show = ok(&keyroute(
        &["pool", "show", "--redis", &url, "--pool", pool],
        None,
    ));
    assert!(show.contains("(2 members, pick order)"), "{show}");
    assert!(show.contains("p3  1"), "removed with its count: {show}");
    // Restore it at the pool's minimum (3), then it is picked only in turn.
    let out = ok(&keyroute(
        &[
            "pool",
            "restore",
            "--redis",
            &url,
            "--pool",
            pool,
            "p3",
            "--mode",
            "at_minimum",
        ],
        None,
    ));
    assert!(out.contains("at count 3"), "{out}");
    assert_eq!(
        counts(&server, pool),
        [("p1".into(), 3), ("p2".into(), 3), ("p3".into(), 3)]
    );
    // Restoring one that is not removed, with keep, is not an error.
    let out = ok(&keyroute(
        &["pool", "remove", "--redis", &url, "--pool", pool, "nobody"],
        None,
    ));
    assert!(out.contains("nothing changed"), "{out}");
    // Seed again with --overwrite resets counts.
    ok(&keyroute(
        &[
            "pool",
            "seed",
            "--redis",
            &url,
            "--pool",
            pool,
            "--initial",
            "7",
            "--overwrite",
            "p1",
        ],
        None,
    ));
    assert_eq!(counts(&server, pool)[2], ("p1".into(), 7));
}

#[test]
fn refused_input_changes_nothing() {
    let server = Server::start();
    let url = server.url();
    let pool = "{s}z";
    ok(&keyroute(
        &["pool", "seed", "--redis", &url, "--pool", pool, "a", "b"],
        None,
    ));
    // An empty member is refused before anything is sent.
    fails_with(
        &keyroute(
            &["pool", "seed", "--redis", &url, "--pool", pool, "c", ""],
            None,
        ),
        "EMPTY_MEMBER",
    );
    // A side key of the wrong type: remove is refused and the member keeps its place.
    let _: () = redis::cmd("SET")
        .arg("{s}z:removed")
        .arg("x")
        .query(&mut server.connection())
        .unwrap();
    let err = fails_with(
        &keyroute(
            &["pool", "remove", "--redis", &url, "--pool", pool, "a"],
            None,
        ),
        "REDIS_WRONGTYPE",
    );
    assert!(err.contains("WRONGTYPE"), "{err}");
    assert_eq!(counts(&server, pool), [("a".into(), 0), ("b".into(), 0)]);
    // Bad counts.
    fails_with(
        &keyroute(
            &[
                "pool",
                "seed",
                "--redis",
                &url,
                "--pool",
                pool,
                "--initial",
                "9007199254740993",
                "c",
            ],
            None,
        ),
        "BAD_COUNT",
    );
    assert_eq!(counts(&server, pool).len(), 2);
}

#[test]
fn an_empty_pool_exits_1_and_picks_nothing() {
    let server = Server::start();
    let o = keyroute(
        &["pick", "--redis", &server.url(), "--pool", "{p}:none"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert!(
        err.starts_with("keyroute: pool {p}:none on ") && err.contains("nothing picked"),
        "{err}"
    );
    // A pool whose only member was taken out is empty too.
    let url = server.url();
    ok(&keyroute(
        &["pool", "seed", "--redis", &url, "--pool", "{p}:one", "solo"],
        None,
    ));
    ok(&keyroute(
        &[
            "pool", "remove", "--redis", &url, "--pool", "{p}:one", "solo",
        ],
        None,
    ));
    let o = keyroute(
        &["pick", "--redis", &url, "--pool", "{p}:one", "--count", "3"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stderr(&o).contains("nothing picked"), "{}", stderr(&o));
}

#[test]
fn passwords_are_never_printed() {
    // A closed port: nobody listens there.
    let port = free_port();
    for args in [
        vec!["pick", "--pool", "p"],
        vec!["pool", "show", "--pool", "p"],
        vec!["cluster", "slots"],
    ] {
        let mut args: Vec<String> = args.into_iter().map(String::from).collect();
        args.push("--redis".into());
        args.push(format!("redis://:secret@127.0.0.1:{port}"));
        let o = keyroute(&args, None);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(!err.contains("secret"), "{args:?}: {err}");
        assert!(
            err.trim_end().ends_with("[REDIS_CONNECT]")
                || err.trim_end().ends_with("[CLUSTER_UNREACHABLE]"),
            "{args:?}: {err}"
        );
    }
    // A server that refuses the password.
    let server = Server::start();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("right-one")
        .query(&mut server.connection())
        .unwrap();
    let url = format!("redis://:wrong-one@127.0.0.1:{}/", server.port());
    let err = fails_with(
        &keyroute(&["pick", "--redis", &url, "--pool", "p"], None),
        "REDIS_AUTH",
    );
    assert!(!err.contains("wrong-one") && err.contains("***"), "{err}");
    let url = format!("redis://:right-one@127.0.0.1:{}/", server.port());
    let o = keyroute(&["pick", "--redis", &url, "--pool", "{p}:x"], None);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(!stderr(&o).contains("right-one"), "{}", stderr(&o));
}

/// `pick --count N` prints picks as they are made: when Redis dies mid-run, what was
/// printed stays, and the error says how many picks were made.
#[test]
fn pick_streams_and_survives_a_redis_death_with_a_count() {
    let mut server = Server::start();
    let url = server.url();
    ok(&keyroute(
        &[
            "pool", "seed", "--redis", &url, "--pool", "{p}:pool", "a", "b", "c",
        ],
        None,
    ));
    let mut child = Command::new(common::bin())
        .args([
            "pick",
            "--redis",
            &url,
            "--pool",
            "{p}:pool",
            "--count",
            "50000000",
            "--timeout-ms",
            "2000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    // Picks arrive while the command runs, long before it could finish.
    let started = Instant::now();
    let mut printed = 0u64;
    while printed < 5000 {
        let line = lines.next().expect("a pick").unwrap();
        assert!(["a", "b", "c"].contains(&line.as_str()), "{line}");
        printed += 1;
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    server.kill();
    for line in lines {
        let line = line.unwrap();
        assert!(["a", "b", "c"].contains(&line.as_str()), "{line}");
        printed += 1;
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    eprintln!("{err}");
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(printed < 50_000_000);
    assert!(
        err.contains(&format!("{printed} of 50000000 picks made and printed")),
        "printed {printed}: {err}"
    );
    assert!(
        ["REDIS_CONNECTION_LOST", "REDIS_CONNECT", "REDIS_TIMEOUT"]
            .iter()
            .any(|c| err.trim_end().ends_with(&format!("[{c}]"))),
        "{err}"
    );
}

#[test]
fn affinity_take_release_show() {
    use keyroute::engine::{Engine, Router};
    let server = Server::start();
    let url = server.url();
    let key = "{jobs}:owner";
    let take = |args: &[&str]| {
        let mut all = vec!["affinity", "take", "--redis", &url, "--pool", key];
        all.extend_from_slice(args);
        keyroute(&all, None)
    };
    assert_eq!(
        ok(&take(&["--cap", "1", "job-1", "w1", "w2"])),
        "w1 1 1 new\n"
    );
    assert_eq!(ok(&take(&["--cap", "1", "job-1", "w2"])), "w1 1 1 held\n");
    assert_eq!(
        ok(&take(&["--cap", "1", "job-2", "w1", "w2"])),
        "w2 1 1 new\n"
    );
    // Every candidate at the cap: exit 1, nothing taken.
    let o = take(&["--cap", "1", "job-3", "w1", "w2"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(stderr(&o).contains("nothing taken"), "{}", stderr(&o));
    // --engine/--nodes ranks the nodes for the item as the library does.
    let nodes = keyroute::ring::parse_nodes("n1,n2,n3,n4").unwrap();
    let router = Router::build("rendezvous", &nodes, &[]).unwrap();
    let first = router.get_n(b"job-9", 4)[0].to_string();
    let out = ok(&take(&[
        "--c",
        "1.25",
        "--engine",
        "rendezvous",
        "--nodes",
        "n1,n2,n3,n4",
        "job-9",
    ]));
    assert!(
        out.starts_with(&format!("{first} 1 1 new")),
        "{out} (want {first})"
    );
    // Refused before anything is sent, with the library's codes.
    fails_with(&take(&["--cap", "0", "job-4", "w1"]), "OUT_OF_RANGE");
    fails_with(&take(&["--c", "0.5", "job-4", "w1"]), "OUT_OF_RANGE");
    fails_with(&take(&["--cap", "2", "job-4", "w1", ""]), "EMPTY_MEMBER");
    fails_with(&take(&["--cap", "2", "job-4"]), "OUT_OF_RANGE");
    let out = ok(&keyroute(
        &[
            "affinity", "release", "--redis", &url, "--pool", key, "job-1", "job-1",
        ],
        None,
    ));
    assert_eq!(
        out,
        "job-1 released from w1\njob-1 was not held; nothing changed\n"
    );
    let out = ok(&keyroute(
        &["affinity", "show", "--redis", &url, "--pool", key],
        None,
    ));
    assert!(out.contains("w2  1") && out.ends_with("held: 2\n"), "{out}");
}

/// A URL that names a replica (`REPLICAOF`): `pool seed` and `pick` exit 2 with
/// `[REDIS_READONLY]` and write nothing; the master's URL works.
#[test]
fn a_replica_url_is_refused_readonly() {
    let master = Server::start();
    let replica = Server::start();
    replica.replicate(&master);
    let pool = "{rep}:proxies";
    let err = fails_with(
        &keyroute(
            &[
                "pool",
                "seed",
                "--redis",
                &replica.url(),
                "--pool",
                pool,
                "p1",
            ],
            None,
        ),
        "REDIS_READONLY",
    );
    assert!(err.contains("replica"), "{err}");
    assert!(counts(&master, pool).is_empty());
    ok(&keyroute(
        &[
            "pool",
            "seed",
            "--redis",
            &master.url(),
            "--pool",
            pool,
            "p1",
        ],
        None,
    ));
    // Once replicated, a pick (a write) on the replica is refused too and counts nothing.
    let deadline = Instant::now() + Duration::from_secs(10);
    while counts(&replica, pool).is_empty() {
        assert!(Instant::now() < deadline, "never replicated");
        std::thread::sleep(Duration::from_millis(20));
    }
    fails_with(
        &keyroute(&["pick", "--redis", &replica.url(), "--pool", pool], None),
        "REDIS_READONLY",
    );
    assert_eq!(counts(&master, pool), [("p1".into(), 0)]);
    let picks = ok(&keyroute(
        &["pick", "--redis", &master.url(), "--pool", pool],
        None,
    ));
    assert_eq!(picks, "p1\n");
}
