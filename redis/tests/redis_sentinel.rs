//! Redis Sentinel on real processes: 1 master, 1 replica, 3 Sentinels (`redis-server
//! --sentinel`), all with passwords. Picks and cache fills run on a `redis+sentinel://`
//! URL while the master is killed; after the failover they go on on the new master, and
//! every pick acknowledged and replicated before the kill is still counted (the bound
//! docs/cluster-failover.md states), none written to a replica.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::secure::{cli, eventually, free_port, redis_server, temp_dir, Proc};
use keyroute_redis::cache::{CacheConfig, SmartCache, Store};
use keyroute_redis::{LeastUsed, Reconnecting, Timeouts};

const PW: &str = "master-pw-5";
const SENTINEL_PW: &str = "sentinel-pw-9";

struct Setup {
    master: Proc,
    replica: Proc,
    sentinels: Vec<Proc>,
}

fn run(port: u16, pw: &str, args: &[&str]) -> String {
    let mut a: Vec<String> = vec![
        "-p".into(),
        port.to_string(),
        "-a".into(),
        pw.into(),
        "--no-auth-warning".into(),
    ];
    a.extend(args.iter().map(|s| s.to_string()));
    cli(&a)
}

fn start() -> Setup {
    let dir = temp_dir("sentinel");
    let (mp, rp) = (free_port(false), free_port(false));
    let auth = |port: u16| -> Vec<String> {
        vec![
            "--port".into(),
            port.to_string(),
            "--requirepass".into(),
            PW.into(),
            "--masterauth".into(),
            PW.into(),
            "--repl-diskless-sync-delay".into(),
            "0".into(),
        ]
    };
    let master = redis_server(&dir, mp, &auth(mp));
    let mut ra = auth(rp);
    ra.extend(["--replicaof".into(), "127.0.0.1".into(), mp.to_string()]);
    let replica = redis_server(&dir, rp, &ra);
    eventually(Duration::from_secs(30), || {
        run(rp, PW, &["INFO", "replication"])
            .contains("master_link_status:up")
            .then_some(())
    });
    let mut sentinels = Vec::new();
    for _ in 0..3 {
        let sp = free_port(false);
        let conf = dir.join(format!("sentinel-{sp}.conf"));
        std::fs::write(
            &conf,
            format!(
                "port {sp}\nbind 127.0.0.1\nprotected-mode no\nrequirepass {SENTINEL_PW}\n\
                 sentinel sentinel-pass {SENTINEL_PW}\n\
                 sentinel monitor mymaster 127.0.0.1 {mp} 2\n\
                 sentinel auth-pass mymaster {PW}\n\
                 sentinel down-after-milliseconds mymaster 1000\n\
                 sentinel failover-timeout mymaster 3000\n"
            ),
        )
        .unwrap();
        sentinels.push(redis_server(
            &dir,
            sp,
            &[conf.display().to_string(), "--sentinel".into()],
        ));
    }
    for s in &sentinels {
        eventually(Duration::from_secs(30), || {
            let others = run(s.port, SENTINEL_PW, &["SENTINEL", "sentinels", "mymaster"]);
            let replicas = run(s.port, SENTINEL_PW, &["SENTINEL", "replicas", "mymaster"]);
            (others.matches("127.0.0.1").count() >= 2 && replicas.contains(&rp.to_string()))
                .then_some(())
        });
    }
    Setup {
        master,
        replica,
        sentinels,
    }
}

fn url(s: &Setup, sentinel_pw: &str) -> String {
    let hosts: Vec<String> = s
        .sentinels
        .iter()
        .map(|p| format!("127.0.0.1:{}", p.port))
        .collect();
    format!(
        "redis+sentinel://:{PW}@{}/mymaster?sentinel_password={sentinel_pw}",
        hosts.join(",")
    )
}

#[test]
fn picks_and_fills_follow_a_failover() {
    let mut s = start();
    let url = url(&s, SENTINEL_PW);
    let t = Timeouts::uniform(Duration::from_secs(2));
    let mut con = Reconnecting::new(&url, t).unwrap();
    let pool = LeastUsed::new("{s}:pool").unwrap();
    pool.seed(&mut con, ["a", "b"], 0, false)
        .map_err(|e| con.explain(e))
        .unwrap();
    for _ in 0..20 {
        pool.pick(&mut con).unwrap().unwrap();
    }
    let store = Store::standalone(&url, t).unwrap();
    let cache = SmartCache::new(store, CacheConfig::default()).unwrap();
    let loads = AtomicUsize::new(0);
    let load = || {
        loads.fetch_add(1, Ordering::SeqCst);
        Ok(b"v".to_vec())
    };
    let soon = || Instant::now() + Duration::from_secs(5);
    assert_eq!(cache.get_or_load("c1", "k1", soon(), load).unwrap(), b"v");
    assert_eq!(
        run(s.master.port, PW, &["WAIT", "1", "5000"]).trim(),
        "1",
        "replicated"
    );

    s.master.kill();
    let started = Instant::now();
    let mut last = String::new();
    let sentinel = s.sentinels[0].port;
    eventually(Duration::from_secs(60), || match pool.pick(&mut con) {
        Ok(p) => p,
        Err(e) => {
            let e = con.explain(e).to_string();
            if e != last {
                let now = run(
                    sentinel,
                    SENTINEL_PW,
                    &["SENTINEL", "get-master-addr-by-name", "mymaster"],
                );
                eprintln!(
                    "{:?} after the kill: {e} (a Sentinel says {})",
                    started.elapsed(),
                    now.replace('\n', " ")
                );
                last = e;
            }
            None
        }
    });
    let took = started.elapsed();
    let counts = pool.counts(&mut con).unwrap();
    let total: u64 = counts.iter().map(|(_, n)| n).sum();
    assert_eq!(
        total, 21,
        "{counts:?}: every replicated pick kept, after {took:?}"
    );
    // The promoted replica serves the fill made before the kill, and takes new ones.
    assert!(run(s.replica.port, PW, &["ROLE"]).starts_with("master"));
    let served = eventually(Duration::from_secs(30), || {
        cache.get_or_load("c1", "k1", soon(), load).ok()
    });
    assert_eq!(served, b"v");
    assert_eq!(
        loads.load(Ordering::SeqCst),
        1,
        "the fill survived the failover"
    );
    let fresh = eventually(Duration::from_secs(30), || {
        cache.get_or_load("c1", "k2", soon(), load).ok()
    });
    assert_eq!(fresh, b"v");
    assert_eq!(loads.load(Ordering::SeqCst), 2);
}

#[test]
fn wrong_sentinel_credentials_are_refused_without_the_secret() {
    let s = start();
    let t = Timeouts::uniform(Duration::from_secs(2));
    let mut con = Reconnecting::new(&url(&s, "not-the-pw-4"), t).unwrap();
    let err = con.ensure_connected().unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_AUTH", "{err}");
    assert!(!format!("{err} {con:?}").contains("not-the-pw-4"), "{err}");
    assert!(!format!("{err}").contains(PW), "{err}");
    // A service name the Sentinels do not know.
    let hosts: Vec<String> = s
        .sentinels
        .iter()
        .map(|p| format!("127.0.0.1:{}", p.port))
        .collect();
    let other = format!(
        "redis+sentinel://:{PW}@{}/nosuch?sentinel_password={SENTINEL_PW}",
        hosts.join(",")
    );
    let err = Reconnecting::new(&other, t)
        .unwrap()
        .ensure_connected()
        .unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_CONNECT", "{err}");
    assert!(err.to_string().contains("nosuch"), "{err}");
}
