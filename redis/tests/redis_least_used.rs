//! `keyroute_redis::LeastUsed` on a real redis-server (started by the harness):
//! the shared operation vectors, the in-memory model in lockstep, empty pools, and
//! `SCRIPT FLUSH` mid-run for single and pipelined picks.

#[path = "common/standalone.rs"]
mod standalone;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use keyroute::select::{KeyError, Pool, Restore, LEAST_USED, MAX_EXACT_COUNT};
use keyroute_redis::{Error, LeastUsed};
use serde_json::Value;
use standalone::Server;

fn hex(value: &Value) -> Vec<u8> {
    let text = value.as_str().expect("hex string");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn pairs(value: &Value) -> Vec<(Vec<u8>, u64)> {
    value
        .as_array()
        .expect("array of [hex, count]")
        .iter()
        .map(|pair| (hex(&pair[0]), pair[1].as_u64().expect("count")))
        .collect()
}

fn vector_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/pool");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    files
}

/// Every recorded sequence replayed on real Redis through `LeastUsed` and on the
/// in-memory `Pool` at the same time: same replies, same counts and removed counts after
/// every operation, as recorded.
#[test]
fn redis_and_pool_agree_on_the_shared_vectors() {
    let server = Server::start();
    let mut con = server.connection();
    let mut ops_replayed = 0;
    for file in vector_files() {
        let doc: Value =
            serde_json::from_str(&fs::read_to_string(&file).expect("read")).expect("vector JSON");
        for sequence in doc["sequences"].as_array().expect("sequences") {
            let _: () = redis::cmd("FLUSHALL").query(&mut con).expect("FLUSHALL");
            let name = sequence["name"].as_str().expect("name");
            let pool_key = hex(&sequence["pool_key_hex"]);
            let redis_pool = LeastUsed::new(&pool_key).expect("pool key");
            assert_eq!(redis_pool.side_key(), hex(&sequence["side_key_hex"]));
            let mut model = Pool::new();
            for (i, op) in sequence["ops"].as_array().expect("ops").iter().enumerate() {
                let at = format!("{name} op {i}: {op}");
                match op["op"].as_str().expect("op") {
                    "pick" => {
                        let want = (!op["result_hex"].is_null()).then(|| hex(&op["result_hex"]));
                        assert_eq!(redis_pool.pick(&mut con).expect("pick"), want, "{at}");
                        assert_eq!(model.pick(), want, "{at}");
                    }
                    "pick_many" => {
                        let n = op["n"].as_u64().expect("n") as usize;
                        let want: Vec<Vec<u8>> = op["result_hex"]
                            .as_array()
                            .expect("picks")
                            .iter()
                            .map(hex)
                            .collect();
                        assert_eq!(
                            redis_pool.pick_many(&mut con, n).expect("pick_many"),
                            want,
                            "{at}"
                        );
                        assert_eq!(model.pick_many(n), want, "{at}");
                    }
                    "seed" => {
                        let members: Vec<Vec<u8>> = op["members_hex"]
                            .as_array()
                            .expect("members")
                            .iter()
                            .map(hex)
                            .collect();
                        let initial = op["initial"].as_u64().expect("initial");
                        let overwrite = op["overwrite"].as_bool().expect("overwrite");
                        let got = redis_pool.seed(&mut con, &members, initial, overwrite);
                        let modelled = model.seed(&members, initial, overwrite);
                        if op.get("error").is_some() {
                            assert!(got.is_err() && modelled.is_err(), "{at}: {got:?}");
                        } else {
                            let want = op["result"].as_u64().expect("result") as usize;
                            assert_eq!(got.expect("seed"), want, "{at}");
                            assert_eq!(modelled, Ok(want), "{at}");
                        }
                    }
                    "remove" => {
                        let member = hex(&op["member_hex"]);
                        let want = op["result"].as_u64();
                        assert_eq!(
                            redis_pool.remove(&mut con, &member).expect("remove"),
                            want,
                            "{at}"
                        );
                        assert_eq!(model.remove(&member), want, "{at}");
                    }
                    "restore" => {
                        let member = hex(&op["member_hex"]);
                        let mode: Restore =
                            op["mode"].as_str().expect("mode").parse().expect("mode");
                        let got = redis_pool.restore(&mut con, &member, mode);
                        let modeled = model.restore(&member, mode);
                        if op.get("error").is_some() {
                            // Refused before anything is sent; the model refuses too.
                            assert!(got.is_err() && modeled.is_err(), "{at}");
                        } else {
                            let want = op["result"].as_u64().expect("result");
                            assert_eq!(got.expect("restore"), want, "{at}");
                            assert_eq!(modeled, Ok(want), "{at}");
                        }
                    }
                    other => panic!("{at}: unknown op {other}"),
                }
                let counts = redis_pool.counts(&mut con).expect("counts");
                assert_eq!(counts, pairs(&op["counts"]), "{at}: counts");
                let modelled: Vec<(Vec<u8>, u64)> =
                    model.counts().map(|(m, c)| (m.to_vec(), c)).collect();
                assert_eq!(modelled, counts, "{at}: model counts");
                let removed = redis_pool.removed(&mut con).expect("removed");
                assert_eq!(removed, pairs(&op["removed"]), "{at}: removed");
                ops_replayed += 1;
            }
        }
    }
    assert!(ops_replayed > 20, "only {ops_replayed} operations replayed");
}

/// A longer pseudo-random sequence (picks, pick_many, remove, restore both ways, seeds
/// with and without overwrite) in lockstep with the model.
#[test]
fn redis_and_pool_agree_on_a_random_walk() {
    let server = Server::start();
    let mut con = server.connection();
    let redis_pool = LeastUsed::new("{walk}:pool").expect("key");
    let mut model = Pool::new();
    let members: Vec<Vec<u8>> = (0..7u8).map(|i| vec![b'm', i, 0xff - i]).collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for step in 0..600 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let member = &members[(state % 7) as usize];
        match (state >> 8) % 10 {
            0 => {
                let initial = (state >> 16) % 4;
                let overwrite = state & 1 == 1;
                let got = redis_pool
                    .seed(&mut con, [member], initial, overwrite)
                    .expect("seed");
                assert_eq!(
                    Ok(got),
                    model.seed([member], initial, overwrite),
                    "step {step}"
                );
            }
            1 => assert_eq!(
                redis_pool.remove(&mut con, member).expect("remove"),
                model.remove(member),
                "step {step}"
            ),
            2 => {
                let mode = if state & 2 == 0 {
                    Restore::Keep
                } else {
                    Restore::AtMinimum
                };
                let got = redis_pool.restore(&mut con, member, mode).expect("restore");
                assert_eq!(Ok(got), model.restore(member, mode), "step {step}");
            }
            3 => {
                let n = ((state >> 20) % 9) as usize;
                assert_eq!(
                    redis_pool.pick_many(&mut con, n).expect("pick_many"),
                    model.pick_many(n),
                    "step {step}"
                );
            }
            _ => assert_eq!(
                redis_pool.pick(&mut con).expect("pick"),
                model.pick(),
                "step {step}"
            ),
        }
        let modelled: Vec<(Vec<u8>, u64)> = model.counts().map(|(m, c)| (m.to_vec(), c)).collect();
        assert_eq!(
            redis_pool.counts(&mut con).expect("counts"),
            modelled,
            "step {step}"
        );
    }
}

fn calls(server: &Server, command: &str) -> u64 {
    server
        .command_calls()
        .into_iter()
        .find(|(name, _)| name == command)
        .map_or(0, |(_, calls)| calls)
}

/// An empty or missing pool picks `None` with exactly one EVALSHA (the script's ZRANGE
/// inside it) and no other command: INFO commandstats after CONFIG RESETSTAT.
#[test]
fn empty_pool_picks_none_and_sends_nothing_more() {
    let server = Server::start();
    let mut con = server.connection();
    let pool = LeastUsed::new("{empty}:pool").expect("key");
    let _: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(LEAST_USED.text())
        .query(&mut con)
        .expect("load");
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut con)
        .expect("resetstat");
    assert_eq!(pool.pick(&mut con).expect("pick"), None);
    let mut stats = server.command_calls();
    stats.sort();
    let data_commands: Vec<&(String, u64)> = stats
        .iter()
        .filter(|(name, _)| !name.starts_with("config") && !name.starts_with("info"))
        .collect();
    assert_eq!(
        data_commands,
        [&("evalsha".to_string(), 1), &("zrange".to_string(), 1)],
        "{stats:?}"
    );
    // pick_many on an empty pool: one pipeline, nothing after it.
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query(&mut con)
        .expect("resetstat");
    assert!(pool.pick_many(&mut con, 3).expect("pick_many").is_empty());
    assert_eq!(calls(&server, "evalsha"), 3);
    assert_eq!(calls(&server, "zincrby"), 0);
    // Seeded then emptied by removal: None again.
    pool.seed(&mut con, ["a"], 0, false).expect("seed");
    assert_eq!(pool.pick(&mut con).expect("pick"), Some(b"a".to_vec()));
    assert_eq!(pool.remove(&mut con, b"a").expect("remove"), Some(1));
    assert_eq!(pool.pick(&mut con).expect("pick"), None);
    assert_eq!(
        pool.restore(&mut con, b"a", Restore::Keep)
            .expect("restore"),
        1
    );
    assert_eq!(pool.pick(&mut con).expect("pick"), Some(b"a".to_vec()));
}

#[test]
fn keys_and_arguments_are_checked_before_sending() {
    assert!(matches!(
        LeastUsed::new(""),
        Err(Error::Key(KeyError::EmptyPoolKey))
    ));
    assert!(matches!(
        LeastUsed::new("a}b"),
        Err(Error::Key(KeyError::NeedsHashTag))
    ));
    let plain = LeastUsed::new("proxies").expect("key");
    assert_eq!(plain.side_key(), b"{proxies}:removed");
    let server = Server::start();
    let mut con = server.connection();
    let err = plain
        .seed(&mut con, ["a"], MAX_EXACT_COUNT + 1, false)
        .unwrap_err();
    assert!(matches!(err, Error::Pool(_)), "{err}");
    assert_eq!(plain.counts(&mut con).expect("counts"), []);
    // A wrong type at the pool key is a server error with context, not a panic.
    let _: () = redis::cmd("SET")
        .arg("proxies")
        .arg("x")
        .query(&mut con)
        .expect("SET");
    let err = plain.pick(&mut con).unwrap_err();
    assert!(err.to_string().contains("pick (pool proxies)"), "{err}");
    assert!(!err.is_connection_error());
}

/// SCRIPT FLUSH from another client, over and over while one client picks singly and
/// another pipelined: every pick answers, none is lost or doubled (the counts sum to
/// exactly the picks returned).
#[test]
fn script_flush_mid_run_is_transparent() {
    let server = Server::start();
    let pool = LeastUsed::new("{flush}:pool").expect("key");
    let members: Vec<String> = (0..5).map(|i| format!("p{i}")).collect();
    pool.seed(&mut server.connection(), &members, 0, false)
        .expect("seed");
    let stop = Arc::new(AtomicBool::new(false));
    let flusher = {
        let stop = Arc::clone(&stop);
        let mut con = server.connection();
        thread::spawn(move || {
            let mut flushes = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let _: () = redis::cmd("SCRIPT")
                    .arg("FLUSH")
                    .query(&mut con)
                    .expect("FLUSH");
                flushes += 1;
                thread::sleep(Duration::from_millis(1));
            }
            flushes
        })
    };
    let single = {
        let pool = pool.clone();
        let mut con = server.connection();
        thread::spawn(move || {
            (0..3000)
                .map(|_| {
                    pool.pick(&mut con)
                        .expect("pick across SCRIPT FLUSH")
                        .expect("a member")
                })
                .count()
        })
    };
    let pipelined = {
        let pool = pool.clone();
        let mut con = server.connection();
        thread::spawn(move || {
            let mut picked = 0;
            for _ in 0..300 {
                let picks = pool
                    .pick_many(&mut con, 50)
                    .expect("pick_many across SCRIPT FLUSH");
                assert_eq!(picks.len(), 50);
                picked += picks.len();
            }
            picked
        })
    };
    let singles = single.join().expect("single picker");
    let pipelined_picks = pipelined.join().expect("pipelined picker");
    stop.store(true, Ordering::Relaxed);
    let flushes = flusher.join().expect("flusher");
    assert!(flushes > 10, "only {flushes} flushes");
    let counts = pool.counts(&mut server.connection()).expect("counts");
    let total: u64 = counts.iter().map(|(_, c)| c).sum();
    assert_eq!(total, (singles + pipelined_picks) as u64, "{counts:?}");
    // Single-threaded afterwards: the spread is at most one.
    let spread = counts.last().expect("members").1 - counts[0].1;
    assert!(spread <= 1, "{counts:?}");
    // The flushes really hit picks: the server answered NOSCRIPT, and the client loaded
    // the script again each time.
    let errors: String = redis::cmd("INFO")
        .arg("errorstats")
        .query(&mut server.connection())
        .expect("INFO errorstats");
    let noscript: u64 = errors
        .lines()
        .find_map(|line| line.strip_prefix("errorstat_NOSCRIPT:count="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    assert!(noscript > 2, "NOSCRIPT {noscript} times: {errors}");
    assert!(calls(&server, "script|load") > 2);
}
