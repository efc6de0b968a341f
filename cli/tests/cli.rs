//! The `keyroute` binary end to end: output, stdin, exit codes and error messages.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn keyroute(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_keyroute"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run keyroute");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input)
            .expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("wait")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn route_matches_the_library_for_arguments_and_stdin() {
    use keyroute::ring::{Profile, Ring};
    let ring = Ring::with_nodes(
        Profile::libmemcached(),
        [("10.0.0.1:11211", 1), ("10.0.0.2:11211", 2)],
    )
    .expect("ring");
    let keys = ["user:1", "user:2", "", "ключ"];
    let want: String = keys
        .iter()
        .map(|k| format!("{}\n", ring.get(k.as_bytes()).expect("node")))
        .collect();
    let nodes = "10.0.0.1:11211:1,10.0.0.2:11211=2";
    let o = keyroute(
        &[
            "route",
            "--profile",
            "libmemcached",
            "--nodes",
            nodes,
            "--",
            "user:1",
            "user:2",
            "",
            "ключ",
        ],
        None,
    );
    assert!(o.status.success(), "{o:?}");
    assert_eq!(stdout(&o), want);
    // The same keys from stdin, with CRLF line ends.
    let o = keyroute(
        &["route", "-p", "libmemcached", "-n", nodes],
        Some("user:1\r\nuser:2\n\nключ\n".as_bytes()),
    );
    assert_eq!(stdout(&o), want);
}

#[test]
fn route_replicas_are_distinct_and_start_with_the_owner() {
    let o = keyroute(
        &["route", "--nodes", "a,b,c", "--replicas", "5", "k1", "k2"],
        None,
    );
    assert!(o.status.success());
    for line in stdout(&o).lines() {
        let mut names: Vec<&str> = line.split(' ').collect();
        assert_eq!(names.len(), 3, "{line}");
        names.sort_unstable();
        assert_eq!(names, ["a", "b", "c"]);
    }
}

#[test]
fn route_reads_a_nodes_file() {
    let dir = std::env::temp_dir().join(format!("keyroute-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = dir.join("nodes.txt");
    std::fs::write(&file, "# fleet\nalpha 1\nbeta 3\n").expect("write");
    let o = keyroute(
        &["route", "--nodes-file", file.to_str().expect("utf-8"), "x"],
        None,
    );
    assert!(o.status.success(), "{o:?}");
    assert!(matches!(stdout(&o).trim(), "alpha" | "beta"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_input_is_a_clear_error_and_exit_2() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["route", "--profile", "nope", "--nodes", "a", "k"],
            "unknown profile",
        ),
        (&["route", "--nodes", "a=0", "k"], "weight 0"),
        (&["route", "--nodes", "a=-3", "k"], "negative weight"),
        (&["route", "--nodes", "a=x", "k"], "not an integer"),
        (&["route", "--nodes", "a:2", "k"], "can be read two ways"),
        (&["route", "--nodes", "a,a", "k"], "already on the ring"),
        (
            &["route", "--nodes-file", "/nonexistent/nodes", "k"],
            "cannot read nodes file",
        ),
        (
            &["route", "--nodes", "a", "--replicas", "0", "k"],
            "at least 1",
        ),
        (
            &["simulate", "--nodes", "3", "--remove", "3"],
            "at least one must stay",
        ),
        (&["simulate", "--nodes", "0", "--add", "1"], "at least 1"),
    ];
    for (args, msg) in cases {
        let o = keyroute(args, None);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("keyroute: error:") && err.contains(msg),
            "{args:?}: {err}"
        );
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn simulate_reports_moves_against_the_ideal() {
    let o = keyroute(
        &["simulate", "--nodes", "10", "--keys", "20000", "--add", "1"],
        None,
    );
    assert!(o.status.success(), "{o:?}");
    let out = stdout(&o);
    assert!(out.contains("node-11"), "{out}");
    assert!(out.contains("ideal 9.09%"), "{out}");
    assert!(out.contains("peak-to-mean"), "{out}");
}
