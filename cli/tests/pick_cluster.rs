//! `keyroute pick --cluster` and `keyroute pool ... --cluster` end to end on a real Redis
//! Cluster of 3 masters + 3 replicas (the Redis crate's test harness, 127.0.0.1, stopped
//! on drop): seeds that do not own the pool's slot (MOVED), a master SIGKILLed (the next
//! run finds the new master, even from a seed list naming the dead node), counts read
//! back through the cluster, and refused arguments with their codes; `keyroute lease`
//! on a 3-master cluster.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../redis/tests/common/mod.rs"]
mod servers;

use common::{fails_with, keyroute, ok, stderr};
use keyroute::slot::key_slot;
use servers::cluster::Cluster;
use servers::standalone::free_port;

fn lines(s: &str) -> Vec<&str> {
    s.lines().collect()
}

#[test]
fn pick_and_pool_follow_moved_and_a_failover() {
    let mut cluster = Cluster::start_with_replicas(3, 1);
    let pool = "{cli-cluster}:pool";
    let slot = key_slot(pool.as_bytes());
    let owner = cluster.owner_of(slot);
    let masters: Vec<u16> = cluster.masters().iter().map(|(m, _)| *m).collect();
    // A seed that is a master of other slots: every call starts with a MOVED.
    let other = *masters.iter().find(|&&m| m != owner).unwrap();
    let seed = format!("127.0.0.1:{other}");
    let at = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| (*s).to_string()).collect();
        v.extend(["--cluster", "--redis", &seed, "--pool", pool].map(str::to_string));
        v
    };

    let out = ok(&keyroute(&at(&["pool", "seed", "p3", "p1", "p2"]), None));
    assert!(out.starts_with("3 new member(s) added"), "{out}");
    let picks = ok(&keyroute(&at(&["pick", "--count", "1000"]), None));
    let picks = lines(&picks);
    assert_eq!(picks.len(), 1000);
    // The in-memory model's order: the byte-wise smallest of the least used.
    assert_eq!(&picks[..4], ["p1", "p2", "p3", "p1"]);
    let show = ok(&keyroute(&at(&["pool", "show"]), None));
    assert!(
        show.contains("p1  334") && show.contains("p2  333"),
        "{show}"
    );
    let removed = ok(&keyroute(&at(&["pool", "remove", "p2"]), None));
    assert!(removed.contains("count 333 remembered"), "{removed}");
    assert_eq!(
        lines(&ok(&keyroute(&at(&["pick", "-n", "2"]), None))),
        ["p3", "p1"]
    );

    // Leases in the same slot (same hash tag), one in flight before the kill.
    let busy = "{cli-cluster}:busy";
    let lease_at = |extra: &[&str], seeds: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| (*s).to_string()).collect();
        v.push("--cluster".into());
        for s in seeds {
            v.extend(["--redis".to_string(), (*s).to_string()]);
        }
        v.extend(["--pool".to_string(), busy.to_string()]);
        v
    };
    ok(&keyroute(
        &lease_at(&["lease", "seed", "w1", "w2"], &[&seed]),
        None,
    ));
    let lease = ok(&keyroute(
        &lease_at(&["lease", "acquire", "--ttl-ms", "600000"], &[&seed]),
        None,
    ));
    assert!(lease.starts_with("w1 "), "{lease}");

    // The pool's master is killed; once its replica took over, a fresh run finds it,
    // from a seed list whose first seed is the dead node.
    cluster.wait_replicas_synced();
    cluster.kill(owner);
    cluster.wait_failover(slot, owner);
    let dead = format!("127.0.0.1:{owner}");
    let both = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = extra.iter().map(|s| (*s).to_string()).collect();
        v.extend(
            [
                "--cluster",
                "--redis",
                &dead,
                "--redis",
                &seed,
                "--pool",
                pool,
                "--timeout-ms",
                "300",
            ]
            .map(str::to_string),
        );
        v
    };
    let after = ok(&keyroute(&both(&["pick", "-n", "3"]), None));
    assert_eq!(lines(&after).len(), 3);
    let restored = ok(&keyroute(&both(&["pool", "restore", "p2"]), None));
    assert!(restored.contains("at count 333"), "{restored}");
    // Nothing lost, nothing counted twice: 1000 + 2 + 3 picks, p2's 333 remembered.
    let show = ok(&keyroute(&both(&["pool", "show"]), None));
    let total: u64 = show
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  ") && !l.contains("(none)"))
        .map(|l| l.split_whitespace().last().unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 1005, "{show}");
    // The lease survived the failover; the next one goes to the other member.
    let shown = ok(&keyroute(
        &lease_at(&["lease", "show"], &[&dead, &seed]),
        None,
    ));
    assert!(shown.contains("outstanding: 1"), "{shown}");
    let next = ok(&keyroute(
        &lease_at(&["lease", "acquire", "--ttl-ms", "1000"], &[&dead, &seed]),
        None,
    ));
    assert!(next.starts_with("w2 "), "{next}");
}

#[test]
fn cluster_arguments_are_checked_with_codes() {
    let dead = format!("127.0.0.1:{}", free_port());
    // More than one server needs --cluster.
    let err = fails_with(
        &keyroute(
            &[
                "pick", "--redis", &dead, "--redis", &dead, "--pool", "{p}:pool",
            ],
            None,
        ),
        "BAD_OPTION",
    );
    assert!(err.contains("--cluster"), "{err}");
    // No node answers: a clear error, quickly.
    let err = fails_with(
        &keyroute(
            &[
                "pick",
                "--cluster",
                "--redis",
                &dead,
                "--pool",
                "{p}:pool",
                "--timeout-ms",
                "200",
            ],
            None,
        ),
        "CLUSTER_UNREACHABLE",
    );
    assert!(
        err.contains("cannot read the topology of the Redis Cluster at"),
        "{err}"
    );
    // A bad seed; its password is not printed.
    let o = keyroute(
        &[
            "pool",
            "show",
            "--cluster",
            "--redis",
            "redis://:hunter2@127.0.0.1:notaport",
            "--pool",
            "{p}:pool",
        ],
        None,
    );
    let err = fails_with(&o, "REDIS_BAD_URL");
    assert!(
        !err.contains("hunter2") && !stderr(&o).contains("hunter2"),
        "{err}"
    );
    // The pool key is checked before anything is sent.
    fails_with(
        &keyroute(&["pick", "--cluster", "--redis", &dead, "--pool", ""], None),
        "BAD_POOL_KEY",
    );
}

#[test]
fn an_empty_pool_on_a_cluster_exits_1_and_leases_work_there() {
    let cluster = Cluster::start(3);
    leases_on(&["--cluster", "--redis", &cluster.url()]);
    let o = keyroute(
        &[
            "pick",
            "--cluster",
            "--redis",
            &cluster.url(),
            "--pool",
            "{cli-empty}:pool",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("on the Redis Cluster at") && err.contains("--cluster"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
}

/// `keyroute lease` through `at` (`--redis URL`, or `--cluster --redis SEED`).
fn leases_on(at: &[&str]) {
    let run = |args: &[&str]| {
        let mut v: Vec<&str> = args.to_vec();
        v.extend_from_slice(at);
        v.extend_from_slice(&["--pool", "{cli-leases}:busy"]);
        keyroute(&v, None)
    };
    let out = ok(&run(&["lease", "seed", "w2", "w1"]));
    assert!(out.starts_with("2 new member(s) added"), "{out}");
    let got = ok(&run(&["lease", "acquire", "--ttl-ms", "60000", "-n", "3"]));
    let leases: Vec<(String, u64, u64)> = got
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    let members: Vec<&str> = leases.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(members, ["w1", "w2", "w1"], "{got}");
    assert!(leases.iter().all(|l| l.2 > 1_600_000_000_000), "{got}");
    let show = ok(&run(&["lease", "show"]));
    assert!(
        show.contains("w1  2") && show.contains("w2  1") && show.contains("outstanding: 3"),
        "{show}"
    );
    let id = leases[0].1.to_string();
    let released = ok(&run(&["lease", "release", &id, &id]));
    assert_eq!(
        released.lines().collect::<Vec<_>>(),
        [
            format!("{id} released"),
            format!("{id} already_released_or_expired (nothing changed)")
        ],
        "{released}"
    );
    // A 1 ms lease, reclaimed once.
    let short = ok(&run(&["lease", "acquire", "--ttl-ms", "1"]));
    std::thread::sleep(std::time::Duration::from_millis(30));
    let reclaimed = ok(&run(&["lease", "reclaim"]));
    assert!(
        reclaimed.starts_with(short.trim_end()) && reclaimed.ends_with("1 lease(s) reclaimed\n"),
        "{short} / {reclaimed}"
    );
    assert!(ok(&run(&["lease", "show"])).contains("outstanding: 2"));
    // Refused TTLs: their code, nothing leased.
    fails_with(&run(&["lease", "acquire", "--ttl-ms", "0"]), "BAD_TTL");
    fails_with(
        &run(&["lease", "acquire", "--ttl-ms", "9007199254740993"]),
        "BAD_TTL",
    );
    assert!(ok(&run(&["lease", "show"])).contains("outstanding: 2"));
    let removed = ok(&run(&["lease", "remove", "w2"]));
    assert!(removed.starts_with("removed w2"), "{removed}");
    // An empty (missing) lease pool: status 1, nothing printed.
    let mut v: Vec<&str> = vec!["lease", "acquire", "--ttl-ms", "1000"];
    v.extend_from_slice(at);
    v.extend_from_slice(&["--pool", "{cli-leases}:none"]);
    let o = keyroute(&v, None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(o.stdout.is_empty() && stderr(&o).contains("is empty or missing"));
}

#[test]
fn leases_on_a_standalone_server() {
    let server = servers::standalone::Server::start();
    leases_on(&["--redis", &server.url()]);
}
