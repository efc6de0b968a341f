//! `keyroute_redis::Affinity` (affinity with a cap) on a real redis-server: a take goes to
//! the item's holder or the first candidate under the cap, never above it, however many
//! workers take at once; the script picks what core's `Bounded::assign` picks for the
//! same candidates; a release frees an item once; refused calls change nothing.

#[path = "common/standalone.rs"]
mod standalone;

use std::collections::BTreeMap;
use std::sync::{Arc, Barrier};
use std::thread;

use keyroute::engine::{Bounded, Engine, Router};
use keyroute::ring::parse_nodes;
use keyroute::select::affinity_script::cap_for;
use keyroute_redis::affinity::{Affinity, Cap};
use standalone::Server;

fn s(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8")
}

#[test]
fn takes_go_to_the_first_candidate_under_the_cap_and_release_frees_once() {
    let server = Server::start();
    let mut con = server.connection();
    let a = Affinity::new("{jobs}:owner").expect("key");
    let cands = ["a", "b", "c"];
    let t = a
        .take(&mut con, b"j1", &cands, Cap::Fixed(2))
        .expect("take")
        .expect("taken");
    assert_eq!((s(&t.node), t.load, t.cap, t.new), ("a".into(), 1, 2, true));
    // Held already: the same node, nothing changes (even with other candidates).
    let again = a
        .take(&mut con, b"j1", &["c"], Cap::Fixed(2))
        .expect("take")
        .expect("held");
    assert_eq!(
        (s(&again.node), again.load, again.new),
        ("a".into(), 1, false)
    );
    a.take(&mut con, b"j2", &cands, Cap::Fixed(2))
        .expect("take");
    let t3 = a
        .take(&mut con, b"j3", &cands, Cap::Fixed(2))
        .expect("take")
        .expect("taken");
    assert_eq!(s(&t3.node), "b", "a is at the cap");
    // Every candidate at the cap: None, nothing changed.
    let full = ["a"];
    assert_eq!(
        a.take(&mut con, b"j4", &full, Cap::Fixed(2)).expect("take"),
        None
    );
    assert_eq!(a.holder(&mut con, b"j4").expect("holder"), None);
    assert_eq!(a.held(&mut con).expect("held"), 3);
    assert_eq!(
        a.loads(&mut con).expect("loads"),
        vec![(b"a".to_vec(), 2), (b"b".to_vec(), 1)]
    );
    // Release once: the load goes down once; a node at 0 has no field.
    assert_eq!(
        a.release(&mut con, b"j3").expect("release"),
        Some(b"b".to_vec())
    );
    assert_eq!(a.release(&mut con, b"j3").expect("release"), None);
    assert_eq!(a.loads(&mut con).expect("loads"), vec![(b"a".to_vec(), 2)]);
    // Then a take fits under the cap again.
    let t4 = a
        .take(&mut con, b"j4", &["a", "c"], Cap::Fixed(2))
        .expect("take")
        .expect("taken");
    assert_eq!(s(&t4.node), "c");
}

#[test]
fn refused_calls_change_nothing() {
    let server = Server::start();
    let mut con = server.connection();
    let a = Affinity::new("{w}:owner").expect("key");
    a.take(&mut con, b"x", &["n1"], Cap::Fixed(5))
        .expect("take");
    let before: Vec<(Vec<u8>, u64)> = a.loads(&mut con).expect("loads");
    // The loads key holds a string: WRONGTYPE, nothing written.
    redis::cmd("SET")
        .arg(&a.keys()[1])
        .arg("oops")
        .query::<()>(&mut con)
        .expect("set");
    let err = a
        .take(&mut con, b"y", &["n1"], Cap::Fixed(5))
        .expect_err("wrongtype");
    assert_eq!(err.code().as_str(), "REDIS_WRONGTYPE", "{err}");
    assert_eq!(a.holder(&mut con, b"y").expect("holder"), None);
    let err = a.release(&mut con, b"x").expect_err("wrongtype");
    assert_eq!(err.code().as_str(), "REDIS_WRONGTYPE", "{err}");
    assert_eq!(
        a.holder(&mut con, b"x").expect("holder"),
        Some(b"n1".to_vec())
    );
    redis::cmd("DEL")
        .arg(&a.keys()[1])
        .query::<()>(&mut con)
        .expect("del");
    redis::cmd("HSET")
        .arg(&a.keys()[1])
        .arg("n1")
        .arg(before[0].1)
        .query::<()>(&mut con)
        .expect("hset");
    // Arguments the script itself refuses (a client that skips the checks): ERR, no write.
    let text = keyroute::select::affinity_script::AFFINITY_TAKE_SCRIPT;
    for args in [
        vec!["z", "cap", "0", "n1"],
        vec!["z", "cap", "1.5", "n1"],
        vec!["z", "c", "0.5", "n1"],
        vec!["z", "what", "1", "n1"],
        vec!["z", "cap", "1"],
        vec!["", "cap", "1", "n1"],
        vec!["z", "cap", "1", "n1", ""],
    ] {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(text).arg(2).arg(&a.keys()[0]).arg(&a.keys()[1]);
        for x in &args {
            cmd.arg(*x);
        }
        let err = cmd.query::<redis::Value>(&mut con).expect_err("refused");
        assert!(
            err.to_string().contains("keyroute affinity-take"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(a.held(&mut con).expect("held"), 1);
    assert_eq!(a.loads(&mut con).expect("loads"), before);
}

#[test]
fn the_script_picks_what_bounded_assign_picks() {
    // Same candidates (the router's full preference list), same factor, a sequence of
    // takes: the script and core's in-memory overlay place every item alike.
    let server = Server::start();
    let mut con = server.connection();
    let nodes = parse_nodes("n0,n1,n2,n3,n4,n5,n6").expect("nodes");
    for (engine, c) in [
        ("native", 1.0),
        ("rendezvous", 1.25),
        ("maglev", 1.1),
        ("jump", 1.5),
    ] {
        let router = Router::build(engine, &nodes, &[]).expect(engine);
        let n = router.len();
        let mut bounded = Bounded::new(router.clone(), c).expect("bounded");
        let a = Affinity::new(format!("{{b}}:{engine}")).expect("key");
        for i in 0..400 {
            let item = format!("item-{i}");
            let cands: Vec<&str> = router.get_n(item.as_bytes(), n);
            let want = bounded
                .assign(item.as_bytes())
                .map(|k| router.node_name(k).to_string());
            let got = a
                .take(&mut con, item.as_bytes(), &cands, Cap::Factor(c))
                .expect("take");
            let got = got.expect("a node under the cap");
            assert_eq!(Some(s(&got.node)), want, "{engine} item {i}");
            assert_eq!(got.cap, cap_for(c, i, n), "{engine} item {i}");
            assert!(got.load <= got.cap);
        }
        let loads: BTreeMap<String, u64> = a
            .loads(&mut con)
            .expect("loads")
            .into_iter()
            .map(|(k, v)| (s(&k), v))
            .collect();
        for (k, &l) in bounded.loads().iter().enumerate() {
            assert_eq!(
                loads.get(router.node_name(k)).copied().unwrap_or(0),
                l,
                "{engine}"
            );
        }
    }
}

#[test]
fn concurrent_workers_never_exceed_the_cap() {
    let server = Server::start();
    let a = Affinity::new("{c}:owner").expect("key");
    let nodes: Vec<String> = (0..5).map(|i| format!("w{i}")).collect();
    let cap = 40u64;
    let workers = 8;
    let per = 40; // 320 takes for 5 x 40 = 200 places: some find every node full.
    let gate = Arc::new(Barrier::new(workers));
    let handles: Vec<_> = (0..workers)
        .map(|w| {
            let (a, nodes, gate) = (a.clone(), nodes.clone(), Arc::clone(&gate));
            let mut con = server.connection();
            thread::spawn(move || {
                gate.wait();
                let mut placed = 0u64;
                for i in 0..per {
                    // Each worker prefers another node first: contention on every node.
                    let mut cands = nodes.clone();
                    cands.rotate_left((w + i) % nodes.len());
                    let item = format!("w{w}-i{i}");
                    if let Some(t) = a
                        .take(&mut con, item.as_bytes(), &cands, Cap::Fixed(cap))
                        .expect("take")
                    {
                        assert!(t.load <= cap, "{t:?}");
                        placed += 1;
                        // Release a quarter again: frees room for others.
                        if i % 4 == 0 {
                            assert_eq!(
                                a.release(&mut con, item.as_bytes()).expect("release"),
                                Some(t.node)
                            );
                            placed -= 1;
                        }
                    }
                }
                placed
            })
        })
        .collect();
    let placed: u64 = handles.into_iter().map(|h| h.join().expect("worker")).sum();
    let mut con = server.connection();
    let loads = a.loads(&mut con).expect("loads");
    assert!(loads.iter().all(|(_, l)| *l <= cap), "{loads:?}");
    assert_eq!(
        loads.iter().map(|(_, l)| l).sum::<u64>(),
        placed,
        "loads match the items held"
    );
    assert_eq!(a.held(&mut con).expect("held"), placed);
    assert_eq!(placed, 5 * cap, "every place was filled: {loads:?}");
    eprintln!("FIGURES affinity: {workers} workers, {placed} items held, loads {loads:?}");
}
