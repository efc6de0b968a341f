//! Child processes for multi-process tests: the test binary re-executed to run one
//! `#[ignore]`d test (the child's part), its configuration in an environment variable, its
//! results as `KEY value...` lines on stdout.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Starts this test binary running only the ignored test `name`, with `env` set.
pub fn spawn(name: &str, env: &[(&str, String)]) -> Child {
    let exe = std::env::current_exe().expect("the test binary");
    let mut cmd = Command::new(exe);
    cmd.args([
        name,
        "--exact",
        "--ignored",
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning a child test process")
}

/// Reads the child's stdout until a line starting with `prefix`; that line.
pub fn wait_line(out: &mut BufReader<ChildStdout>, prefix: &str) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        let n = out.read_line(&mut line).expect("reading the child");
        assert!(n > 0, "the child ended before printing {prefix}");
        if line.starts_with(prefix) {
            return line.trim_end().to_string();
        }
    }
}

/// Waits for the child and returns its stdout lines; panics with its stderr if it failed.
pub fn finish(child: Child) -> Vec<String> {
    let out = child.wait_with_output().expect("child");
    assert!(
        out.status.success(),
        "child failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Milliseconds since the Unix epoch (a start instant shared by processes).
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Sleeps until the wall clock reads `at_ms`.
pub fn sleep_until_wall(at_ms: u64) {
    let now = wall_ms();
    if at_ms > now {
        std::thread::sleep(Duration::from_millis(at_ms - now));
    }
}

/// The `p`-th percentile (nearest rank) of `values`.
pub fn percentile(values: &mut [u64], p: f64) -> u64 {
    values.sort_unstable();
    let rank = ((p / 100.0) * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

/// Sends `signal` to process `pid`.
pub fn signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) with a pid we spawned; no memory is passed.
    let rc = unsafe { libc::kill(pid as libc::pid_t, signal) };
    assert_eq!(rc, 0, "kill({pid}, {signal})");
}
