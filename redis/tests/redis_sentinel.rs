//! Redis Sentinel on real processes: 1 master, 1 replica, 3 Sentinels (`redis-server
//! --sentinel`), all with passwords. Picks and cache fills run on a `redis+sentinel://`
//! URL while the master is killed; after the failover they go on on the new master, and
//! every pick acknowledged and replicated before the kill is still counted (the bound
//! docs/cluster-failover.md states), none written to a replica.
//!
//! And Sentinel as production secures it: everything over TLS (`rediss+sentinel://`,
//! certificates made at test time), the Sentinels with an ACL user of their own
//! (`sentinel_username=`, their `default` user off) and the master with keyroute's ACL
//! user: the URL's user and password reach the master only, the `sentinel_*` ones the
//! Sentinels only (the two sets of users are disjoint, so a mix-up is refused).
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::secure::{cli, eventually, free_port, redis_server, temp_dir, Certs, Proc};
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
    let sentinels = start_sentinels(
        &dir,
        (mp, rp),
        |sp| {
            format!("port {sp}\nrequirepass {SENTINEL_PW}\nsentinel sentinel-pass {SENTINEL_PW}\n")
        },
        |port, args| run(port, SENTINEL_PW, args),
    );
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

/// keyroute's user on the master and the replica (the README's ACL line).
const APP_PW: &str = "app-pw-3";
const APP_ACL: &str = "keyroute on >app-pw-3 ~* &* +@all -@dangerous +info +role";
/// The Sentinels' own user (their `default` user is off).
const SENTINEL_USER: &str = "sentry";
const SENTRY_PW: &str = "sentry-pw-8";

/// 1 master, 1 replica and 3 Sentinels, every port TLS only (`--port 0`), the data nodes
/// with `default` (the admin: replication, the Sentinels) and keyroute's user, the
/// Sentinels with [`SENTINEL_USER`] only.
struct SecureSetup {
    certs: Certs,
    master: Proc,
    replica: Proc,
    sentinels: Vec<Proc>,
}

impl SecureSetup {
    fn tls_args(&self) -> Vec<String> {
        vec!["--tls".into(), "--cacert".into(), self.certs.path("ca.crt")]
    }

    /// redis-cli on a data node, as the admin.
    fn node(&self, port: u16, args: &[&str]) -> String {
        let mut a = self.tls_args();
        a.extend(["-p".into(), port.to_string(), "-a".into(), PW.into()]);
        a.push("--no-auth-warning".into());
        a.extend(args.iter().map(|s| s.to_string()));
        cli(&a)
    }

    /// redis-cli on a Sentinel, as its user.
    fn sentinel(&self, port: u16, args: &[&str]) -> String {
        let mut a = self.tls_args();
        a.extend(["-p".into(), port.to_string()]);
        a.extend(["--user".into(), SENTINEL_USER.into()]);
        a.extend([
            "--pass".into(),
            SENTRY_PW.into(),
            "--no-auth-warning".into(),
        ]);
        a.extend(args.iter().map(|s| s.to_string()));
        cli(&a)
    }

    fn url(&self, sentinel_user: &str, query: &str) -> String {
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|p| format!("127.0.0.1:{}", p.port))
            .collect();
        format!(
            "rediss+sentinel://keyroute:{APP_PW}@{}/mymaster?sentinel_username={sentinel_user}&sentinel_password={SENTRY_PW}&{}{query}",
            hosts.join(","),
            self.certs.query(false)
        )
    }
}

fn start_secure() -> SecureSetup {
    let certs = Certs::make();
    let dir = temp_dir("sentinel-tls");
    let acl = dir.join("users.acl");
    std::fs::write(
        &acl,
        format!("user default on >{PW} ~* &* +@all\nuser {APP_ACL}\n"),
    )
    .unwrap();
    let (mp, rp) = (free_port(false), free_port(false));
    let node = |port: u16| -> Vec<String> {
        let mut a: Vec<String> = vec![
            "--port".into(),
            "0".into(),
            "--tls-port".into(),
            port.to_string(),
            "--tls-replication".into(),
            "yes".into(),
            "--aclfile".into(),
            acl.display().to_string(),
            "--masterauth".into(),
            PW.into(),
            "--repl-diskless-sync-delay".into(),
            "0".into(),
        ];
        a.extend(certs.server_args(false));
        a
    };
    let master = redis_server(&dir, mp, &node(mp));
    let mut ra = node(rp);
    ra.extend(["--replicaof".into(), "127.0.0.1".into(), mp.to_string()]);
    let replica = redis_server(&dir, rp, &ra);
    let tls = format!(
        "tls-cert-file {}\ntls-key-file {}\ntls-ca-cert-file {}\ntls-auth-clients no\ntls-replication yes\n",
        certs.path("server.crt"),
        certs.path("server.key"),
        certs.path("ca.crt")
    );
    let mut s = SecureSetup {
        certs,
        master,
        replica,
        sentinels: Vec::new(),
    };
    eventually(Duration::from_secs(30), || {
        s.node(rp, &["INFO", "replication"])
            .contains("master_link_status:up")
            .then_some(())
    });
    s.sentinels = start_sentinels(
        &dir,
        (mp, rp),
        |sp| {
            format!(
                "port 0\ntls-port {sp}\n{tls}user default off\n\
                 user {SENTINEL_USER} on >{SENTRY_PW} ~* &* +@all\n\
                 sentinel sentinel-user {SENTINEL_USER}\nsentinel sentinel-pass {SENTRY_PW}\n"
            )
        },
        |port, args| s.sentinel(port, args),
    );
    s
}

/// Starts 3 Sentinels monitoring the master on `mp` (their config: `head(port)`, then
/// the same monitoring lines for all, `default`'s password on the data nodes), and waits
/// until each knows the two others and the replica on `rp` (asked with `ask`).
fn start_sentinels(
    dir: &std::path::Path,
    (mp, rp): (u16, u16),
    head: impl Fn(u16) -> String,
    ask: impl Fn(u16, &[&str]) -> String,
) -> Vec<Proc> {
    let mut sentinels = Vec::new();
    for _ in 0..3 {
        let sp = free_port(false);
        let conf = dir.join(format!("sentinel-{sp}.conf"));
        std::fs::write(
            &conf,
            format!(
                "{}bind 127.0.0.1\nprotected-mode no\n\
                 sentinel monitor mymaster 127.0.0.1 {mp} 2\n\
                 sentinel auth-pass mymaster {PW}\n\
                 sentinel down-after-milliseconds mymaster 1000\n\
                 sentinel failover-timeout mymaster 3000\n",
                head(sp)
            ),
        )
        .unwrap();
        sentinels.push(redis_server(
            dir,
            sp,
            &[conf.display().to_string(), "--sentinel".into()],
        ));
    }
    for s in &sentinels {
        eventually(Duration::from_secs(30), || {
            let others = ask(s.port, &["SENTINEL", "sentinels", "mymaster"]);
            let replicas = ask(s.port, &["SENTINEL", "replicas", "mymaster"]);
            (others.matches("127.0.0.1").count() >= 2 && replicas.contains(&rp.to_string()))
                .then_some(())
        });
    }
    sentinels
}

/// The `user=` names of the clients connected to a server now.
fn client_users(list: &str) -> Vec<String> {
    list.lines()
        .filter_map(|l| {
            l.split(' ')
                .find_map(|f| f.strip_prefix("user="))
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn tls_sentinels_with_their_own_acl_user_and_a_failover() {
    let s = start_secure();
    let t = Timeouts::uniform(Duration::from_secs(3));
    let url = s.url(SENTINEL_USER, "");
    let mut con = Reconnecting::new(&url, t).unwrap();
    let pool = LeastUsed::new("{st}:pool").unwrap();
    pool.seed(&mut con, ["a", "b"], 0, false)
        .map_err(|e| con.explain(e))
        .unwrap();
    for _ in 0..10 {
        pool.pick(&mut con)
            .map_err(|e| con.explain(e))
            .unwrap()
            .unwrap();
    }
    // The master sees keyroute's user, never the Sentinels' one.
    let users = client_users(&s.node(s.master.port, &["CLIENT", "LIST"]));
    assert!(users.iter().any(|u| u == "keyroute"), "{users:?}");
    assert!(!users.iter().any(|u| u == SENTINEL_USER), "{users:?}");
    let store = Store::standalone(&url, t).unwrap();
    let cache = SmartCache::new(store, CacheConfig::default()).unwrap();
    let soon = || Instant::now() + Duration::from_secs(5);
    let load = || Ok(b"v".to_vec());
    assert_eq!(cache.get_or_load("c1", "k1", soon(), load).unwrap(), b"v");

    // The Sentinels' password as their `default` user's (no sentinel_username): refused,
    // so the user name is what logged in above. REDIS_AUTH, no secret shown.
    let hosts: Vec<String> = s
        .sentinels
        .iter()
        .map(|p| format!("127.0.0.1:{}", p.port))
        .collect();
    let no_user = format!(
        "rediss+sentinel://keyroute:{APP_PW}@{}/mymaster?sentinel_password={SENTRY_PW}&{}",
        hosts.join(","),
        s.certs.query(false)
    );
    let err = Reconnecting::new(&no_user, t)
        .unwrap()
        .ensure_connected()
        .unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_AUTH", "{err}");
    let text = format!("{err} {err:?}");
    assert!(
        !text.contains(SENTRY_PW) && !text.contains(APP_PW),
        "{text}"
    );
    // Another CA than the one that signed the Sentinels' certificate: REDIS_TLS.
    let wrong_ca = url.replace(&s.certs.path("ca.crt"), &s.certs.path("other-ca.crt"));
    let err = Reconnecting::new(&wrong_ca, t)
        .unwrap()
        .ensure_connected()
        .unwrap_err();
    assert_eq!(err.code().as_str(), "REDIS_TLS", "{err}");

    // A failover by hand: the replica is promoted. The old master keeps answering as a
    // master until the Sentinels demote it (~11 s here): a connection asks the Sentinels
    // at most once a second whether its master is still theirs, so from a second after
    // the switch on, picks and fills land on the new master only.
    assert_eq!(s.node(s.master.port, &["WAIT", "1", "5000"]).trim(), "1");
    s.sentinel(s.sentinels[0].port, &["SENTINEL", "FAILOVER", "mymaster"]);
    let promoted = s.replica.port.to_string();
    eventually(Duration::from_secs(30), || {
        s.sentinel(
            s.sentinels[0].port,
            &["SENTINEL", "get-master-addr-by-name", "mymaster"],
        )
        .contains(&promoted)
        .then_some(())
    });
    std::thread::sleep(Duration::from_millis(1100));
    assert!(
        s.node(s.master.port, &["ROLE"]).starts_with("master"),
        "not yet demoted"
    );
    for _ in 0..5 {
        pool.pick(&mut con)
            .map_err(|e| con.explain(e))
            .unwrap()
            .unwrap();
    }
    let cache_fill = cache.get_or_load("c1", "k2", soon(), load).unwrap();
    assert_eq!(cache_fill, b"v");
    let scores = s.node(
        s.replica.port,
        &["ZRANGE", "{st}:pool", "0", "-1", "WITHSCORES"],
    );
    let total: u64 = scores
        .lines()
        .skip(1)
        .step_by(2)
        .map(|n| n.trim().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, 15, "every pick on the new master: {scores:?}");
    // The fill is there too: a cache on the new master alone serves it without loading.
    let direct = format!(
        "rediss://keyroute:{APP_PW}@127.0.0.1:{}?{}",
        s.replica.port,
        s.certs.query(false)
    );
    let on_new = SmartCache::new(
        Store::standalone(&direct, t).unwrap(),
        CacheConfig::default(),
    )
    .unwrap();
    let served = on_new
        .get_or_load("c1", "k2", soon(), || {
            Err(keyroute_redis::cache::LoadError::new(
                "NO",
                "not loaded on the new master",
            ))
        })
        .unwrap();
    assert_eq!(served, b"v");
}
