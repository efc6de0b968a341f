//! Records `tests/vectors/cache/driver_trace.json`: core's smart-cache driver
//! (`keyroute::cache::GetOrLoad`) carried out on a real redis-server, every step it asked
//! for and every reply Redis gave, in scenarios that touch each of its rules (a cold read,
//! a waiter woken by the loader's fill, a warm hit, a refresh past the soft TTL, a backend
//! error and its cached copy, fills fenced three times, a wrong-type key).
//!
//! The replays (`core/tests/cache_driver.rs`, `bindings-js/test/cache_driver.test.mjs`)
//! feed the same inputs to the Rust driver and to the JavaScript one (through the .wasm)
//! and check that each asks for the same steps. Run the recorder with
//! `make vectors-cache-driver` (it is `#[ignore]`d: the committed trace is what the
//! replays check).

mod common;

#[path = "../../core/tests/common/driver_trace.rs"]
mod trace;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::standalone::Server;
use keyroute::cache::{
    CacheSettings, ClientKeys, GetOrLoad, GetOrLoadStep as Step, LoadFailure, LoadResult, Notify,
    TokenKey, Value, PEEK_FIELDS,
};
use serde_json::{json, Value as Json};
use trace::*;

const OWNER: &[u8] = b"pid:1:trace";

fn to_value(v: redis::Value) -> Value {
    match v {
        redis::Value::Nil => Value::Nil,
        redis::Value::Int(n) => Value::Int(n),
        redis::Value::BulkString(b) => Value::Bytes(b),
        redis::Value::SimpleString(s) => Value::Bytes(s.into_bytes()),
        redis::Value::Okay => Value::Bytes(b"OK".to_vec()),
        redis::Value::Array(items) => Value::Array(items.into_iter().map(to_value).collect()),
        other => panic!("unexpected reply {other:?}"),
    }
}

/// One read being recorded.
struct Read {
    name: &'static str,
    read: GetOrLoad,
    settings: CacheSettings,
    entry: Vec<u8>,
    deadline_ms: u64,
    started: Instant,
    events: Vec<Json>,
    draws: u64,
    url: String,
}

/// What a scenario must decide itself.
enum Ask {
    Load,
    Wait(u64),
    Done,
}

impl Read {
    fn new(
        name: &'static str,
        url: &str,
        entry: &[u8],
        settings: CacheSettings,
        deadline_ms: u64,
    ) -> Read {
        Read {
            name,
            read: GetOrLoad::new(
                entry.to_vec(),
                OWNER,
                &settings,
                Notify::Publish,
                0,
                deadline_ms,
            ),
            settings,
            entry: entry.to_vec(),
            deadline_ms,
            started: Instant::now(),
            events: Vec::new(),
            draws: 0,
            url: url.to_string(),
        }
    }

    /// Carries out steps on `con` until one the scenario decides (load, wait, done).
    fn run(&mut self, con: &mut redis::Connection, sub: &mut Option<redis::Connection>) -> Ask {
        loop {
            let now = u64::try_from(self.started.elapsed().as_millis()).expect("ms");
            // A fixed sequence of draws in (0, 1], so the XFetch arguments are recorded.
            self.draws += 1;
            let u = 1.0 / (1.0 + self.draws as f64);
            let step = self.read.step(now, u);
            self.events
                .push(json!({ "step": step_json(&step), "now": now, "u": u }));
            match step {
                Step::Peek { key } => {
                    let reply: redis::RedisResult<redis::Value> = redis::cmd("HMGET")
                        .arg(key)
                        .arg(&PEEK_FIELDS[..])
                        .query(con);
                    let value = reply.ok().map(to_value);
                    let wall = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .expect("clock")
                        .as_millis() as u64;
                    self.events.push(json!({
                        "peeked": value.as_ref().map(value_json),
                        "wall": wall,
                    }));
                    self.read.peeked(value, wall);
                }
                Step::Run(call) => {
                    let mut cmd = redis::cmd("EVAL");
                    cmd.arg(call.script.text()).arg(call.keys.len());
                    for k in &call.keys {
                        cmd.arg(&k[..]);
                    }
                    for a in &call.args {
                        cmd.arg(&a[..]);
                    }
                    let reply: redis::RedisResult<redis::Value> = cmd.query(con);
                    let reply = match reply {
                        Ok(v) => {
                            let v = to_value(v);
                            self.events
                                .push(json!({ "replied": { "value": value_json(&v) } }));
                            Ok(v)
                        }
                        Err(e) => {
                            assert!(format!("{e}").contains("WRONGTYPE"), "{e}");
                            self.events.push(json!({ "replied": { "fault": "other" } }));
                            Err(keyroute::cache::Fault::Other)
                        }
                    };
                    self.read.replied(reply);
                }
                Step::Subscribe => {
                    let keys = ClientKeys::new(b"trace-client", &TokenKey::DEFAULT).expect("keys");
                    let mut c = redis::Client::open(self.url.as_str())
                        .and_then(|c| c.get_connection())
                        .expect("a subscriber connection");
                    redis::cmd("SUBSCRIBE")
                        .arg(keys.channel())
                        .exec(&mut c)
                        .expect("SUBSCRIBE");
                    *sub = Some(c);
                    self.events.push(json!({ "subscribed": true }));
                    self.read.subscribed();
                }
                Step::Wait { ms } => return Ask::Wait(ms),
                Step::Sleep { ms } => {
                    std::thread::sleep(Duration::from_millis(ms));
                    self.events.push(json!({ "slept": true }));
                    self.read.slept();
                }
                Step::Load { .. } => return Ask::Load,
                Step::Done => {
                    let outcome = self.read.outcome().expect("an outcome");
                    self.events
                        .push(json!({ "outcome": outcome_json(&outcome) }));
                    self.events
                        .push(json!({ "counts": counts_json(&self.read.counts()) }));
                    return Ask::Done;
                }
            }
        }
    }

    fn loaded(&mut self, result: LoadResult, ms: u64) {
        self.events
            .push(json!({ "loaded": loaded_json(&result), "ms": ms }));
        self.read.loaded(result, ms);
    }

    /// Waits for a wake-up on `sub` naming the entry, at most `ms`.
    fn wait(&mut self, sub: &mut Option<redis::Connection>, ms: u64) {
        let woken = match sub.as_mut() {
            Some(c) => {
                c.set_read_timeout(Some(Duration::from_millis(ms.max(1))))
                    .expect("timeout");
                match c.recv_response() {
                    Ok(redis::Value::Push { data, .. }) => data.last().is_some_and(
                        |v| matches!(v, redis::Value::BulkString(b) if *b == self.entry),
                    ),
                    Ok(redis::Value::Array(data)) => data.last().is_some_and(
                        |v| matches!(v, redis::Value::BulkString(b) if *b == self.entry),
                    ),
                    _ => false,
                }
            }
            None => {
                std::thread::sleep(Duration::from_millis(ms));
                false
            }
        };
        self.events.push(json!({ "woken": woken }));
        self.read.woken(woken);
    }

    fn json(&self) -> Json {
        json!({
            "name": self.name,
            "entry": hex(&self.entry),
            "owner": hex(OWNER),
            "settings": settings_json(&self.settings),
            "deadline_ms": self.deadline_ms,
            "events": self.events,
        })
    }
}

fn entry(kind: &str) -> Vec<u8> {
    ClientKeys::new(b"trace-client", &TokenKey::DEFAULT)
        .expect("keys")
        .entry(kind.as_bytes())
        .expect("entry")
}

/// Runs `read` to its end, loading `value` whenever it asks.
fn finish(
    read: &mut Read,
    con: &mut redis::Connection,
    load: &mut dyn FnMut(&mut redis::Connection) -> LoadResult,
) {
    let mut sub = None;
    loop {
        match read.run(con, &mut sub) {
            Ask::Load => {
                let result = load(con);
                read.loaded(result, 12);
            }
            Ask::Wait(ms) => read.wait(&mut sub, ms),
            Ask::Done => return,
        }
    }
}

#[test]
#[ignore = "records tests/vectors/cache/driver_trace.json (make vectors-cache-driver)"]
fn record_the_driver_trace() {
    let server = Server::start();
    let mut con = server.connection();
    let url = server.url();
    let mut reads = Vec::new();
    let fast = CacheSettings::DEFAULT;
    let value = |v: &'static [u8]| move |_: &mut redis::Connection| LoadResult::Value(v.to_vec());

    // 1. A cold read: the peek misses, sc-get grants the lease, the load is stored.
    let mut a = Read::new("cold read", &url, &entry("accounts"), fast, 5000);
    finish(&mut a, &mut con, &mut value(b"[1,2]"));
    reads.push(a.json());

    // 2. A warm hit: one HMGET.
    let mut b = Read::new("warm hit", &url, &entry("accounts"), fast, 5000);
    finish(&mut b, &mut con, &mut value(b"unused"));
    reads.push(b.json());

    // 3. A waiter: the leader holds the lease; the waiter subscribes, asks again, waits,
    //    and is woken by the leader's fill.
    let e = entry("cards");
    let mut leader = Read::new("leader", &url, &e, fast, 5000);
    let mut none = None;
    assert!(matches!(leader.run(&mut con, &mut none), Ask::Load));
    let mut waiter = Read::new("waiter", &url, &e, fast, 5000);
    let mut sub = None;
    let mut woken_once = false;
    loop {
        match waiter.run(&mut con, &mut sub) {
            Ask::Wait(ms) => {
                if !woken_once {
                    woken_once = true;
                    // The leader loads and fills now: its sc-fill publishes the wake-up.
                    leader.loaded(LoadResult::Value(b"[card]".to_vec()), 30);
                    assert!(matches!(leader.run(&mut con, &mut none), Ask::Done));
                }
                waiter.wait(&mut sub, ms);
            }
            Ask::Done => break,
            Ask::Load => panic!("the waiter was granted a lease"),
        }
    }
    reads.push(leader.json());
    reads.push(waiter.json());

    // 4. A backend error, then its cached copy.
    let mut failed = Read::new("backend error", &url, &entry("loans"), fast, 5000);
    finish(&mut failed, &mut con, &mut |_: &mut redis::Connection| {
        LoadResult::Failed(LoadFailure::new("E_CORE", "core banking is down"))
    });
    reads.push(failed.json());
    let mut cached = Read::new("cached error", &url, &entry("loans"), fast, 5000);
    finish(&mut cached, &mut con, &mut value(b"unused"));
    reads.push(cached.json());

    // 5. Fenced three times: the loader's own key is invalidated while it loads; the
    //    read backs off after each fenced fill and returns the third value unstored.
    let e = entry("deposits");
    let mut fenced = Read::new("fenced thrice", &url, &e, fast, 5000);
    let mut n = 0;
    finish(&mut fenced, &mut con, &mut |con: &mut redis::Connection| {
        n += 1;
        let call = keyroute::cache::Call::invalidate(&e, 4000, Notify::Publish, None);
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(call.script.text()).arg(1).arg(&call.keys[0][..]);
        for a in &call.args {
            cmd.arg(&a[..]);
        }
        cmd.exec(con).expect("invalidate");
        LoadResult::Value(format!("v{n}").into_bytes())
    });
    reads.push(fenced.json());

    // 6. A refresh: past a 1 ms soft TTL, sc-get serves the stale value and leases it.
    let short = CacheSettings {
        soft_ttl_ms: 1,
        hard_ttl_ms: 60_000,
        fast_hits: false,
        xfetch_beta: 0.0,
        ..CacheSettings::DEFAULT
    };
    let e = entry("profile");
    let mut first = Read::new("fill for refresh", &url, &e, short, 5000);
    finish(&mut first, &mut con, &mut value(b"old"));
    reads.push(first.json());
    std::thread::sleep(Duration::from_millis(20));
    let mut refresh = Read::new("refresh", &url, &e, short, 5000);
    finish(&mut refresh, &mut con, &mut value(b"new"));
    reads.push(refresh.json());

    // 7. A key of the wrong type: sc-get fails (WRONGTYPE), and the read reports it.
    let e = entry("broken");
    redis::cmd("SET")
        .arg(&e)
        .arg("x")
        .exec(&mut con)
        .expect("SET");
    let mut wrong = Read::new("wrong type", &url, &e, short, 5000);
    finish(&mut wrong, &mut con, &mut value(b"unused"));
    reads.push(wrong.json());

    let version: String = redis::cmd("INFO")
        .arg("server")
        .query::<String>(&mut con)
        .expect("INFO")
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:").map(str::to_string))
        .unwrap_or_default();
    let doc = json!({
        "source": format!("redis/tests/cache_driver_trace.rs on redis-server {version}: core's GetOrLoad carried out on a real server"),
        "reads": reads,
    });
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/vectors/cache/driver_trace.json"
    );
    std::fs::create_dir_all(std::path::Path::new(path).parent().expect("dir")).expect("mkdir");
    std::fs::write(
        path,
        serde_json::to_string_pretty(&doc).expect("json") + "\n",
    )
    .expect("writing the trace");
}
