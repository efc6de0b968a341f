//! Many workers, one pool: 8 threads in this process and 2 child processes (this test
//! binary re-executed with `KEYROUTE_TEST_PICKER` set) with 4 threads each, 20,000 picks
//! in all, each worker on its own connection.
//!
//! With `LeastUsed` (the atomic script): every pick returns a member, the final counts sum
//! to initial + picks, each member's count grew by exactly the picks that returned it,
//! and the spread max − min is ≤ 1. The same harness and the same check run with a
//! non-atomic client (ZRANGE, then ZINCRBY) must fail: two workers see the same member at
//! the same minimum ("duplicate minima") and/or the spread exceeds 1 — proof that the
//! check can fail.

#[path = "common/standalone.rs"]
mod standalone;

use std::collections::{BTreeMap, HashMap};
use std::env;
use std::process::{Command, Stdio};
use std::thread;

use keyroute_redis::{LeastUsed, Timeouts};
use standalone::Server;

const CHILD_ENV: &str = "KEYROUTE_TEST_PICKER";
const POOL: &str = "{race}:pool";
const MEMBERS: usize = 10;
const INITIAL: u64 = 5;
const PARENT_THREADS: usize = 8;
const CHILDREN: usize = 2;
const CHILD_THREADS: usize = 4;
const PICKS_PER_THREAD: usize = 1250;
const TOTAL_PICKS: usize = (PARENT_THREADS + CHILDREN * CHILD_THREADS) * PICKS_PER_THREAD;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Atomic,
    Racy,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Atomic => "atomic",
            Mode::Racy => "racy",
        }
    }
}

/// What the workers saw: picks that returned a member (per member), picks that returned
/// none, and for the racy client the (member, score) it read before incrementing.
#[derive(Debug, Default)]
struct Outcome {
    tally: BTreeMap<String, u64>,
    misses: u64,
    observed: Vec<(String, u64)>,
}

impl Outcome {
    fn merge(&mut self, other: Outcome) {
        for (member, n) in other.tally {
            *self.tally.entry(member).or_default() += n;
        }
        self.misses += other.misses;
        self.observed.extend(other.observed);
    }
}

fn worker(url: &str, mode: Mode, picks: usize) -> Outcome {
    let mut con = keyroute_redis::connect(url, Timeouts::default()).expect("connect");
    let pool = LeastUsed::new(POOL).expect("pool key");
    let mut outcome = Outcome::default();
    for _ in 0..picks {
        let member = match mode {
            Mode::Atomic => pool.pick(&mut con).expect("pick"),
            Mode::Racy => {
                // Not atomic: another worker can read the same minimum in between.
                let lowest: Vec<(String, u64)> = redis::cmd("ZRANGE")
                    .arg(POOL)
                    .arg(0)
                    .arg(0)
                    .arg("WITHSCORES")
                    .query(&mut con)
                    .expect("ZRANGE");
                lowest.into_iter().next().map(|(member, score)| {
                    let _: f64 = redis::cmd("ZINCRBY")
                        .arg(POOL)
                        .arg(1)
                        .arg(&member)
                        .query(&mut con)
                        .expect("ZINCRBY");
                    outcome.observed.push((member.clone(), score));
                    member.into_bytes()
                })
            }
        };
        match member {
            Some(member) => {
                *outcome
                    .tally
                    .entry(String::from_utf8(member).expect("utf-8 member"))
                    .or_default() += 1;
            }
            None => outcome.misses += 1,
        }
    }
    outcome
}

fn run_threads(url: &str, mode: Mode, threads: usize) -> Outcome {
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let url = url.to_string();
            thread::spawn(move || worker(&url, mode, PICKS_PER_THREAD))
        })
        .collect();
    let mut outcome = Outcome::default();
    for handle in handles {
        outcome.merge(handle.join().expect("worker thread"));
    }
    outcome
}

/// The child process, run only by [`run`], which re-executes this binary with
/// `--ignored` and `KEYROUTE_TEST_PICKER` set (`url mode`); prints its outcome on stdout.
#[test]
#[ignore = "a child process of the concurrency tests, started by them"]
fn picker_child_process() {
    let spec =
        env::var(CHILD_ENV).expect("started by the concurrency tests with KEYROUTE_TEST_PICKER");
    let (url, mode) = spec.split_once(' ').expect("url mode");
    let mode = if mode == "racy" {
        Mode::Racy
    } else {
        Mode::Atomic
    };
    let outcome = run_threads(url, mode, CHILD_THREADS);
    // The harness may have printed "test ... " without a newline.
    println!();
    for (member, n) in &outcome.tally {
        println!("TALLY {member} {n}");
    }
    println!("MISSES {}", outcome.misses);
    for (member, score) in &outcome.observed {
        println!("OBSERVED {member} {score}");
    }
}

fn parse_child(stdout: &str) -> Outcome {
    let mut outcome = Outcome::default();
    for line in stdout.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["TALLY", member, n] => {
                outcome
                    .tally
                    .insert(member.to_string(), n.parse().expect("n"));
            }
            ["MISSES", n] => outcome.misses = n.parse().expect("n"),
            ["OBSERVED", member, score] => {
                outcome
                    .observed
                    .push((member.to_string(), score.parse().expect("score")));
            }
            _ => {}
        }
    }
    outcome
}

/// Seeds a fresh pool, runs 8 threads here and 2 child processes concurrently, and
/// returns what every worker saw and the final counts.
fn run(server: &Server, mode: Mode) -> (Outcome, Vec<(Vec<u8>, u64)>) {
    let mut con = server.connection();
    let _: () = redis::cmd("FLUSHALL").query(&mut con).expect("FLUSHALL");
    let pool = LeastUsed::new(POOL).expect("pool key");
    let members: Vec<String> = (0..MEMBERS).map(|i| format!("proxy-{i:02}")).collect();
    pool.seed(&mut con, &members, INITIAL, false).expect("seed");

    let exe = env::current_exe().expect("the test binary");
    let children: Vec<_> = (0..CHILDREN)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "picker_child_process",
                    "--exact",
                    "--ignored",
                    "--nocapture",
                    "--test-threads",
                    "1",
                ])
                .env(CHILD_ENV, format!("{} {}", server.url(), mode.name()))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawning a child picker process")
        })
        .collect();
    let mut outcome = run_threads(&server.url(), mode, PARENT_THREADS);
    for child in children {
        let output = child.wait_with_output().expect("child picker");
        assert!(
            output.status.success(),
            "child picker failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let child_outcome = parse_child(&String::from_utf8_lossy(&output.stdout));
        let child_picks: u64 = child_outcome.tally.values().sum::<u64>() + child_outcome.misses;
        assert_eq!(
            child_picks as usize,
            CHILD_THREADS * PICKS_PER_THREAD,
            "a child's report"
        );
        outcome.merge(child_outcome);
    }
    let counts = pool.counts(&mut con).expect("counts");
    (outcome, counts)
}

/// The check both clients are held to; returns what is wrong.
fn problems(outcome: &Outcome, counts: &[(Vec<u8>, u64)]) -> Vec<String> {
    let mut problems = Vec::new();
    let returned: u64 = outcome.tally.values().sum();
    if outcome.misses > 0 || returned != TOTAL_PICKS as u64 {
        problems.push(format!("{} picks returned no member", outcome.misses));
    }
    let sum: u64 = counts.iter().map(|(_, c)| c).sum();
    let expected = INITIAL * MEMBERS as u64 + TOTAL_PICKS as u64;
    if sum != expected {
        problems.push(format!("counts sum to {sum}, expected {expected}"));
    }
    for (member, count) in counts {
        let member = String::from_utf8_lossy(member).into_owned();
        let picked = outcome.tally.get(&member).copied().unwrap_or(0);
        if count - INITIAL != picked {
            problems.push(format!("{member}: count {count} but picked {picked} times"));
        }
    }
    let min = counts.iter().map(|(_, c)| *c).min().unwrap_or(0);
    let max = counts.iter().map(|(_, c)| *c).max().unwrap_or(0);
    if max - min > 1 {
        problems.push(format!("spread {} > 1: {counts:?}", max - min));
    }
    let mut seen: HashMap<&(String, u64), u32> = HashMap::new();
    for observation in &outcome.observed {
        *seen.entry(observation).or_default() += 1;
    }
    let duplicates = seen.values().filter(|&&n| n > 1).count();
    if duplicates > 0 {
        problems.push(format!(
            "{duplicates} duplicate minima (two workers read the same member at the same count)"
        ));
    }
    problems
}

#[test]
fn atomic_picks_from_threads_and_processes_stay_balanced() {
    let server = Server::start();
    let (outcome, counts) = run(&server, Mode::Atomic);
    let found = problems(&outcome, &counts);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(counts.len(), MEMBERS);
    let each = INITIAL + (TOTAL_PICKS / MEMBERS) as u64;
    assert!(counts.iter().all(|(_, c)| *c == each), "{counts:?}");
}

#[test]
fn the_same_check_catches_a_non_atomic_client() {
    let server = Server::start();
    let (outcome, counts) = run(&server, Mode::Racy);
    let found = problems(&outcome, &counts);
    eprintln!("non-atomic client, as expected: {found:#?}");
    assert!(
        !found.is_empty(),
        "the ZRANGE-then-ZINCRBY client passed the check: the check cannot tell a race"
    );
    // The race shows as duplicate minima; the counting itself is not what is broken.
    assert!(
        found.iter().any(|p| p.contains("duplicate minima")),
        "{found:#?}"
    );
}
