//! `keyroute_redis::Leases` (least-concurrency) on a real redis-server: acquire goes to
//! the fewest in flight, release and reclaim each end a lease at most once, abandoned
//! leases are reclaimed exactly once even by concurrent reclaimers, a release after
//! expiry is reported and not double-counted.

#[path = "common/standalone.rs"]
mod standalone;

use std::collections::BTreeSet;
use std::thread;
use std::time::Duration;

use keyroute_redis::leases::Now;
use keyroute_redis::{Lease, Leases, Release};
use standalone::Server;

fn in_flight(leases: &Leases, con: &mut redis::Connection) -> Vec<(String, u64)> {
    leases
        .in_flight(con)
        .expect("in_flight")
        .into_iter()
        .map(|(m, c)| (String::from_utf8(m).expect("utf-8"), c))
        .collect()
}

#[test]
fn acquire_goes_to_the_fewest_in_flight_and_release_counts_down() {
    let server = Server::start();
    let mut con = server.connection();
    let leases = Leases::new("{jobs}:busy").expect("key");
    assert_eq!(
        leases
            .acquire(&mut con, Duration::from_secs(60))
            .expect("acquire"),
        None
    );
    assert_eq!(leases.seed(&mut con, ["b", "a", "c"]).expect("seed"), 3);
    let ttl = Duration::from_secs(60);
    let held: Vec<Lease> = (0..6)
        .map(|_| {
            leases
                .acquire(&mut con, ttl)
                .expect("acquire")
                .expect("a lease")
        })
        .collect();
    let members: Vec<&[u8]> = held.iter().map(|l| l.member.as_slice()).collect();
    assert_eq!(members, [b"a", b"b", b"c", b"a", b"b", b"c"]);
    let ids: BTreeSet<u64> = held.iter().map(|l| l.id).collect();
    assert_eq!(ids.len(), 6);
    let time: (u64, u64) = redis::cmd("TIME").query(&mut con).expect("TIME");
    let now_ms = time.0 * 1000 + time.1 / 1000;
    assert!(held
        .iter()
        .all(|l| l.deadline_ms > now_ms && l.deadline_ms <= now_ms + 60_000));
    assert_eq!(leases.outstanding(&mut con).expect("outstanding"), 6);

    // Releasing b's leases makes b the least busy: the next lease goes to it.
    assert_eq!(
        leases.release(&mut con, &held[1]).expect("release"),
        Release::Released
    );
    assert_eq!(
        leases.release(&mut con, &held[4]).expect("release"),
        Release::Released
    );
    assert_eq!(
        leases.release(&mut con, &held[4]).expect("release twice"),
        Release::AlreadyReleasedOrExpired
    );
    assert_eq!(
        in_flight(&leases, &mut con),
        [("b".into(), 0), ("a".into(), 2), ("c".into(), 2)]
    );
    let next = leases
        .acquire(&mut con, ttl)
        .expect("acquire")
        .expect("a lease");
    assert_eq!(next.member, b"b");
    assert!(next.id > held[5].id);

    // A removed member gets no new lease; its outstanding lease still releases cleanly
    // and no count goes negative.
    assert!(leases.remove(&mut con, b"a").expect("remove"));
    assert_eq!(
        leases.release(&mut con, &held[0]).expect("release"),
        Release::Released
    );
    assert_eq!(
        in_flight(&leases, &mut con),
        [("b".into(), 1), ("c".into(), 2)]
    );
    leases.seed(&mut con, ["a"]).expect("seed again");
    assert_eq!(
        leases.release(&mut con, &held[3]).expect("release"),
        Release::Released
    );
    assert_eq!(in_flight(&leases, &mut con)[0], ("a".into(), 0));
}

#[test]
fn abandoned_leases_are_reclaimed_exactly_once() {
    let server = Server::start();
    let leases = Leases::new("{abandon}:busy").expect("key");
    let mut con = server.connection();
    let members: Vec<String> = (0..5).map(|i| format!("w{i}")).collect();
    leases.seed(&mut con, &members).expect("seed");
    // 600 short leases (more than one reclaim batch) abandoned, 5 long ones kept.
    let short: Vec<Lease> = (0..600)
        .map(|_| {
            leases
                .acquire(&mut con, Duration::from_millis(150))
                .expect("acquire")
                .expect("lease")
        })
        .collect();
    let long: Vec<Lease> = (0..5)
        .map(|_| {
            leases
                .acquire(&mut con, Duration::from_secs(60))
                .expect("acquire")
                .expect("lease")
        })
        .collect();
    // Not yet expired: an explicit time just before the first deadline reclaims nothing.
    let first_deadline = short.iter().map(|l| l.deadline_ms).min().expect("leases");
    assert_eq!(
        leases
            .reclaim(&mut con, Now::At(first_deadline - 1))
            .expect("reclaim"),
        []
    );
    thread::sleep(Duration::from_millis(300));

    // Four reclaimers at once: every abandoned lease comes back from exactly one of them.
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let leases = leases.clone();
            let mut con = server.connection();
            thread::spawn(move || leases.reclaim(&mut con, Now::Server).expect("reclaim"))
        })
        .collect();
    let mut reclaimed: Vec<Lease> = Vec::new();
    for handle in handles {
        reclaimed.extend(handle.join().expect("reclaimer"));
    }
    let ids: BTreeSet<u64> = reclaimed.iter().map(|l| l.id).collect();
    assert_eq!(ids.len(), reclaimed.len(), "a lease was reclaimed twice");
    let expected: BTreeSet<u64> = short.iter().map(|l| l.id).collect();
    assert_eq!(ids, expected);
    let mut by_id = reclaimed.clone();
    by_id.sort_by_key(|l| l.id);
    assert_eq!(by_id, short, "members and deadlines as acquired");
    assert_eq!(
        leases
            .reclaim(&mut con, Now::Server)
            .expect("reclaim again"),
        []
    );

    // Only the long leases are in flight: one per member.
    assert!(in_flight(&leases, &mut con).iter().all(|(_, n)| *n == 1));
    assert_eq!(leases.outstanding(&mut con).expect("outstanding"), 5);
    // Releasing a reclaimed lease changes nothing.
    for lease in &short[..10] {
        assert_eq!(
            leases.release(&mut con, lease).expect("release"),
            Release::AlreadyReleasedOrExpired
        );
    }
    for lease in &long {
        assert_eq!(
            leases.release(&mut con, lease).expect("release"),
            Release::Released
        );
    }
    assert!(in_flight(&leases, &mut con).iter().all(|(_, n)| *n == 0));
}

#[test]
fn release_after_expiry_is_reported_and_not_double_counted() {
    let server = Server::start();
    let leases = Leases::new("late").expect("key");
    assert_eq!(leases.keys()[1], b"{late}:leases");
    let mut con = server.connection();
    leases.seed(&mut con, ["x"]).expect("seed");
    let late = leases
        .acquire(&mut con, Duration::from_millis(50))
        .expect("acquire")
        .expect("lease");
    let other = leases
        .acquire(&mut con, Duration::from_millis(50))
        .expect("acquire")
        .expect("lease");
    thread::sleep(Duration::from_millis(120));
    // Expired but not yet reclaimed: release ends it (once) and says it was late.
    assert_eq!(
        leases.release(&mut con, &late).expect("release"),
        Release::Expired
    );
    assert_eq!(in_flight(&leases, &mut con), [("x".into(), 1)]);
    // The reclaimer gets only the other one; a second release of either changes nothing.
    let reclaimed = leases.reclaim(&mut con, Now::Server).expect("reclaim");
    assert_eq!(reclaimed.as_slice(), std::slice::from_ref(&other));
    assert_eq!(
        leases.release(&mut con, &late).expect("release"),
        Release::AlreadyReleasedOrExpired
    );
    assert_eq!(
        leases.release(&mut con, &other).expect("release"),
        Release::AlreadyReleasedOrExpired
    );
    assert_eq!(in_flight(&leases, &mut con), [("x".into(), 0)]);
    assert_eq!(leases.outstanding(&mut con).expect("outstanding"), 0);
}

/// 8 threads acquire and release while a ninth reclaims with short TTLs: at the end the
/// in-flight counts are all zero (never negative), every lease ended exactly once
/// (released + reclaimed + already-ended-by-the-other = acquired).
#[test]
fn concurrent_acquire_release_reclaim_balance_to_zero() {
    let server = Server::start();
    let leases = Leases::new("{mix}:busy").expect("key");
    let mut con = server.connection();
    leases
        .seed(&mut con, ["p0", "p1", "p2", "p3"])
        .expect("seed");
    let workers: Vec<_> = (0..8)
        .map(|t| {
            let leases = leases.clone();
            let mut con = server.connection();
            thread::spawn(move || {
                let (mut acquired, mut released, mut lost) = (0u64, 0u64, 0u64);
                for i in 0..300u64 {
                    // Some leases are tiny, so the reclaimer races their release.
                    let ttl = Duration::from_millis(if (i + t) % 3 == 0 { 1 } else { 5_000 });
                    let lease = leases
                        .acquire(&mut con, ttl)
                        .expect("acquire")
                        .expect("lease");
                    acquired += 1;
                    if i % 2 == 0 {
                        thread::sleep(Duration::from_micros(500));
                    }
                    match leases.release(&mut con, &lease).expect("release") {
                        Release::Released | Release::Expired => released += 1,
                        Release::AlreadyReleasedOrExpired => lost += 1,
                        _ => unreachable!(),
                    }
                }
                (acquired, released, lost)
            })
        })
        .collect();
    let reclaimer = {
        let leases = leases.clone();
        let mut con = server.connection();
        thread::spawn(move || {
            let mut reclaimed = 0u64;
            for _ in 0..200 {
                reclaimed += leases
                    .reclaim(&mut con, Now::Server)
                    .expect("reclaim")
                    .len() as u64;
                thread::sleep(Duration::from_millis(1));
            }
            reclaimed
        })
    };
    let (mut acquired, mut released, mut lost) = (0, 0, 0);
    for worker in workers {
        let (a, r, l) = worker.join().expect("worker");
        acquired += a;
        released += r;
        lost += l;
    }
    let mut reclaimed = reclaimer.join().expect("reclaimer");
    reclaimed += leases
        .reclaim(&mut con, Now::Server)
        .expect("final reclaim")
        .len() as u64;
    assert_eq!(acquired, 2400);
    assert_eq!(
        lost, reclaimed,
        "each lease the reclaimer took was reported as ended once"
    );
    assert_eq!(released + reclaimed, acquired);
    assert!(
        in_flight(&leases, &mut con).iter().all(|(_, n)| *n == 0),
        "{:?}",
        in_flight(&leases, &mut con)
    );
    assert_eq!(leases.outstanding(&mut con).expect("outstanding"), 0);
}
