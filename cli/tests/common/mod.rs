//! Running the real `keyroute` binary.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_keyroute")
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

/// Runs `keyroute ARGS` with `stdin` (or an empty stdin) from `dir` (default: the
/// current directory).
pub fn run_in<S: AsRef<OsStr>>(dir: Option<&Path>, args: &[S], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().expect("run keyroute");
    let mut pipe = child.stdin.take().expect("stdin");
    if let Some(input) = stdin {
        pipe.write_all(input).expect("write stdin");
    }
    drop(pipe);
    child.wait_with_output().expect("wait")
}

/// Runs `keyroute ARGS` with `stdin`.
pub fn keyroute<S: AsRef<OsStr>>(args: &[S], stdin: Option<&[u8]>) -> Output {
    run_in(None, args, stdin)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns stdout.
pub fn ok(o: &Output) -> String {
    assert!(o.status.success(), "{o:?}\nstderr: {}", stderr(o));
    stdout(o)
}

/// Asserts the error format (`keyroute: error: ... [CODE]`, exit 2, no panic) and returns
/// stderr.
pub fn fails_with(o: &Output, code: &str) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("keyroute: error: ") && err.trim_end().ends_with(&format!("[{code}]")),
        "expected [{code}]: {err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("keyroute-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs `command` (a shell command line) under `script`, so that its stdin, stdout and
/// stderr are a terminal; returns everything it wrote to the terminal.
pub fn on_a_terminal(command: &str) -> String {
    let o = Command::new("script")
        .args(["-qec", command, "/dev/null"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("script (util-linux) runs");
    assert!(o.status.success(), "{o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}
