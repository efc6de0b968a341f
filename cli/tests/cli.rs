//! The `keyroute` binary end to end (no Redis): output, stdin, node lists, JSON, limits,
//! terminals, exit codes and error messages.

mod common;

use common::{fails_with, keyroute, ok, on_a_terminal, repo_root, run_in, stderr, temp_dir};
use keyroute::ring::{Profile, Ring};

/// What the library answers: the owner (and replicas) of each key, one line per key.
fn library_lines(ring: &Ring, keys: &[&[u8]], replicas: usize) -> String {
    keys.iter()
        .map(|k| format!("{}\n", ring.get_n(k, replicas).join(" ")))
        .collect()
}

#[test]
fn route_matches_the_library_for_arguments_and_stdin() {
    let ring = Ring::with_nodes(
        Profile::libmemcached(),
        [("10.0.0.1:11211", 1), ("10.0.0.2:11211", 2)],
    )
    .expect("ring");
    let keys: [&[u8]; 4] = [b"user:1", b"user:2", b"", "ключ".as_bytes()];
    let want = library_lines(&ring, &keys, 1);
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
    assert_eq!(ok(&o), want);
    // From stdin, with CRLF line ends: the empty line is skipped, not routed.
    let o = keyroute(
        &["route", "-p", "libmemcached", "-n", nodes],
        Some("user:1\r\nuser:2\n\n\r\nключ\n".as_bytes()),
    );
    let want_stdin = library_lines(&ring, &[b"user:1", b"user:2", "ключ".as_bytes()], 1);
    assert_eq!(ok(&o), want_stdin);
    assert_eq!(
        stderr(&o),
        "",
        "nothing on stderr when stdin is not a terminal"
    );
}

#[test]
fn a_node_list_equals_a_nodes_file_with_those_lines() {
    let dir = temp_dir("nodes-equal");
    let keys: Vec<String> = (0..10_000).map(|i| format!("key-{i}")).collect();
    let stdin = keys.join("\n");
    for (list, names) in [
        (
            "10.0.0.1:11211,10.0.0.2:11211",
            vec!["10.0.0.1:11211", "10.0.0.2:11211"],
        ),
        ("[::1]:6379,[::2]:6379", vec!["[::1]:6379", "[::2]:6379"]),
        (
            "2001:db8::1,2001:db8::2",
            vec!["2001:db8::1", "2001:db8::2"],
        ),
    ] {
        let file = dir.join("nodes.txt");
        std::fs::write(&file, list.replace(',', "\n")).expect("write");
        let from_list = ok(&keyroute(
            &["route", "-p", "libketama", "--nodes", list],
            Some(stdin.as_bytes()),
        ));
        let from_file = ok(&keyroute(
            &[
                "route",
                "-p",
                "libketama",
                "--nodes-file",
                file.to_str().expect("utf-8"),
            ],
            Some(stdin.as_bytes()),
        ));
        assert_eq!(from_list, from_file, "{list}");
        // host:port keeps its port: the nodes are exactly these names, weight 1 each.
        let ring =
            Ring::with_nodes(Profile::libketama(), names.iter().map(|n| (*n, 1))).expect("ring");
        let key_bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        assert_eq!(from_list, library_lines(&ring, &key_bytes, 1), "{list}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_ambiguous_form_is_refused_showing_both_readings() {
    for args in [
        &["route", "--nodes", "a:2", "k"][..],
        &["route", "--nodes", "redis-1:6379,redis-2:6379", "k"][..],
    ] {
        let err = fails_with(&keyroute(args, None), "AMBIGUOUS_NODE_SPEC");
        assert!(err.contains("can be read two ways"), "{err}");
    }
    let err = fails_with(
        &keyroute(&["route", "--nodes", "a:2", "k"], None),
        "AMBIGUOUS_NODE_SPEC",
    );
    assert!(
        err.contains("\"a:2=1\"") && err.contains("\"a=2\""),
        "{err}"
    );
    // In a nodes file too, with the file named.
    let dir = temp_dir("ambiguous");
    let file = dir.join("fleet.txt");
    std::fs::write(&file, "cache-a:3\n").expect("write");
    let err = fails_with(
        &keyroute(
            &["route", "--nodes-file", file.to_str().expect("utf-8"), "k"],
            None,
        ),
        "AMBIGUOUS_NODE_SPEC",
    );
    assert!(err.contains("fleet.txt"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_nodes_file_gives_each_node_its_weight() {
    let dir = temp_dir("weights");
    let file = dir.join("nodes.txt");
    std::fs::write(&file, "# fleet\nalpha 1\n\nbeta 3   # the big one\n").expect("write");
    let keys: Vec<String> = (0..2000).map(|i| format!("user:{i}")).collect();
    let key_bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
    let got = ok(&keyroute(
        &[
            "route",
            "--nodes-file",
            file.to_str().expect("utf-8"),
            "--replicas",
            "2",
        ],
        Some(keys.join("\n").as_bytes()),
    ));
    let weighted = Ring::with_nodes(Profile::native(), [("alpha", 1), ("beta", 3)]).expect("ring");
    assert_eq!(got, library_lines(&weighted, &key_bytes, 2));
    // The weights matter: owners differ from an unweighted ring, and beta owns about 3/4.
    let owners: Vec<&str> = got
        .lines()
        .map(|l| l.split(' ').next().expect("owner"))
        .collect();
    let beta = owners.iter().filter(|o| **o == "beta").count();
    assert!((1300..1700).contains(&beta), "beta owns {beta} of 2000");
    let equal = Ring::with_nodes(Profile::native(), [("alpha", 1), ("beta", 1)]).expect("ring");
    assert_ne!(got, library_lines(&equal, &key_bytes, 2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_readme_fleet_routes_from_the_repository_root() {
    let keys: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    let o = run_in(
        Some(&repo_root()),
        &[
            "route",
            "--nodes-file",
            "examples/fleet.txt",
            "--replicas",
            "2",
        ],
        Some(keys.as_bytes()),
    );
    let got = ok(&o);
    let text = std::fs::read_to_string(repo_root().join("examples/fleet.txt")).expect("fleet");
    let nodes = keyroute::ring::parse_nodes(&text).expect("fleet parses");
    assert!(nodes.len() >= 3);
    let ring = Ring::with_nodes(
        Profile::native(),
        nodes.iter().map(|n| (n.name.clone(), n.weight)),
    )
    .expect("ring");
    let key_list: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    let key_bytes: Vec<&[u8]> = key_list.iter().map(|k| k.as_bytes()).collect();
    assert_eq!(got, library_lines(&ring, &key_bytes, 2));
}

#[test]
fn route_replicas_are_distinct_and_start_with_the_owner() {
    let got = ok(&keyroute(
        &["route", "--nodes", "a,b,c", "--replicas", "5", "k1", "k2"],
        None,
    ));
    for line in got.lines() {
        let mut names: Vec<&str> = line.split(' ').collect();
        assert_eq!(names.len(), 3, "{line}");
        names.sort_unstable();
        assert_eq!(names, ["a", "b", "c"]);
    }
}

#[test]
fn huge_counts_are_capped_or_refused_never_an_abort() {
    // Replicas beyond the ring's size are capped by it, whatever the number.
    for replicas in ["18446744073709551615", "1000000000000"] {
        let got = ok(&keyroute(
            &["route", "--nodes", "a,b", "--replicas", replicas, "foo"],
            None,
        ));
        let mut names: Vec<&str> = got.trim_end().split(' ').collect();
        names.sort_unstable();
        assert_eq!(names, ["a", "b"], "--replicas {replicas}");
    }
    let err = fails_with(
        &keyroute(
            &["pool", "simulate", "--picks", "100000000000", "p1", "p2"],
            None,
        ),
        "TOO_LARGE",
    );
    assert!(err.contains("16777216"), "the limit is stated: {err}");
    let err = fails_with(
        &keyroute(
            &[
                "simulate",
                "--nodes",
                "3",
                "--add",
                "1",
                "--keys",
                "100000000000",
            ],
            None,
        ),
        "TOO_LARGE",
    );
    assert!(err.contains("1000000000"), "{err}");
    let err = fails_with(
        &keyroute(
            &[
                "simulate",
                "--nodes",
                "3",
                "--add",
                "1",
                "--keys",
                "18446744073709551615",
            ],
            None,
        ),
        "TOO_LARGE",
    );
    assert!(err.contains("the limit is"), "{err}");
    fails_with(
        &keyroute(
            &["simulate", "--nodes", "3", "--add", "18446744073709551615"],
            None,
        ),
        "TOO_LARGE",
    );
    fails_with(
        &keyroute(
            &[
                "simulate",
                "--nodes",
                "3",
                "--add",
                "1",
                "--width",
                "100000000000000",
            ],
            None,
        ),
        "TOO_LARGE",
    );
    // Within the limit, picks stream: the last of many is printed, memory stays flat.
    let got = ok(&keyroute(
        &["pool", "simulate", "--picks", "200000", "p1", "p2"],
        None,
    ));
    let picks = got
        .lines()
        .find(|l| l.starts_with("picks:"))
        .expect("picks line");
    assert_eq!(picks.split(' ').count(), 200_001);
}

#[cfg(unix)]
#[test]
fn keys_are_bytes_in_route_and_slot_alike() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let key = OsStr::from_bytes(b"caf\xe9:1");
    let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1), ("c", 1)]).expect("ring");
    let route = ok(&keyroute(
        &[
            OsStr::new("route"),
            OsStr::new("--nodes"),
            OsStr::new("a,b,c"),
            key,
        ],
        None,
    ));
    assert_eq!(route, library_lines(&ring, &[b"caf\xe9:1"], 1));
    let slot = ok(&keyroute(&[OsStr::new("slot"), key], None));
    assert_eq!(
        slot,
        format!("{}\n", keyroute::slot::key_slot(b"caf\xe9:1"))
    );
    // The same bytes from stdin give the same answers.
    let route_stdin = ok(&keyroute(
        &["route", "--nodes", "a,b,c"],
        Some(b"caf\xe9:1\n"),
    ));
    assert_eq!(route_stdin, route);
    let slot_stdin = ok(&keyroute(&["slot"], Some(b"caf\xe9:1\n")));
    assert_eq!(slot_stdin, slot);
}

#[test]
fn slot_skips_empty_stdin_lines_and_help_says_so() {
    let got = ok(&keyroute(&["slot"], Some(b"foo\n\n\r\nbar\r\n")));
    assert_eq!(
        got,
        format!(
            "{}\n{}\n",
            keyroute::slot::key_slot(b"foo"),
            keyroute::slot::key_slot(b"bar")
        )
    );
    let got = ok(&keyroute(&["slot", "--hex"], Some(b"7b617d\n\n666f6f\n")));
    assert_eq!(got, format!("{}\n12182\n", keyroute::slot::key_slot(b"a")));
    for cmd in ["route", "slot"] {
        let help = ok(&keyroute(&[cmd, "--help"], None));
        assert!(
            help.contains("empty lines are skipped"),
            "{cmd} --help: {help}"
        );
    }
}

#[test]
fn json_output_of_route_and_slot() {
    let got = ok(&keyroute(
        &[
            "route",
            "--nodes",
            "a,b,c",
            "--replicas",
            "2",
            "--format",
            "json",
            "user:1",
            "x",
        ],
        None,
    ));
    let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1), ("c", 1)]).expect("ring");
    let lines: Vec<serde_json::Value> = got
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0],
        serde_json::json!({"key": "user:1", "nodes": ring.get_n(b"user:1", 2)})
    );
    let got = ok(&keyroute(
        &["route", "--nodes", "a,b", "--format", "json"],
        Some(b"\xff\xfe\n"),
    ));
    let value: serde_json::Value = serde_json::from_str(got.trim_end()).expect("json");
    let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 1)]).expect("ring");
    assert_eq!(
        value,
        serde_json::json!({"key_hex": "fffe", "nodes": [ring.get(b"\xff\xfe").expect("owner")]})
    );
    let got = ok(&keyroute(
        &["slot", "--format", "json", "foo", "{user:1}:cart"],
        None,
    ));
    assert_eq!(
        got,
        format!(
            "{{\"key\":\"foo\",\"slot\":12182}}\n{{\"key\":\"{{user:1}}:cart\",\"slot\":{}}}\n",
            keyroute::slot::key_slot(b"user:1")
        )
    );
}

#[test]
fn plan_weights_use_the_node_grammar_and_json_reads_back() {
    let dir = temp_dir("plan");
    let map = dir.join("map.txt");
    std::fs::write(&map, "a 0-8191\nb 8192-16383\n").expect("write");
    let map_arg = map.to_str().expect("utf-8");
    let text = ok(&keyroute(
        &["plan", "--from", map_arg, "--weights", "a=1,b=1,c=2"],
        None,
    ));
    assert!(text.contains("8192 of 16384 slots change owner"), "{text}");
    // a bare name has weight 1
    let same = ok(&keyroute(
        &["plan", "--from", map_arg, "--weights", "a,b,c=2"],
        None,
    ));
    assert_eq!(same, text);
    let json = ok(&keyroute(
        &[
            "plan",
            "--from",
            map_arg,
            "--weights",
            "a=1,b=1,c=2",
            "--format",
            "json",
        ],
        None,
    ));
    let value: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(value["nodes"], serde_json::json!(["a", "b", "c"]));
    assert_eq!(value["slots_moved"], 8192);
    let plan: keyroute::slot::Plan =
        serde_json::from_value(value["plan"].clone()).expect("reads back as a Plan");
    // The plan applies to the map in the file (nodes in file order, then new ones).
    let mut slot_map = keyroute::slot::SlotMap::new();
    let mut index = Vec::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        index.push(
            slot_map
                .add_master(name, keyroute::slot::Address::new("h", 1 + i as u16))
                .expect("master"),
        );
    }
    slot_map.assign(0..=8191, index[0]).expect("a");
    slot_map.assign(8192..=16383, index[1]).expect("b");
    plan.apply(&mut slot_map).expect("applies");
    assert_eq!(slot_map.slot_counts(), [4096, 4096, 8192]);
    for (weights, code) in [
        ("a:1,b:1", "AMBIGUOUS_NODE_SPEC"),
        ("a=x", "BAD_WEIGHT"),
        ("a=-1,b=1", "NEGATIVE_WEIGHT"),
        ("a=1,b=1,a=2", "BAD_PLAN"),
        ("a=1", "BAD_PLAN"),
        ("a=0,b=0", "BAD_PLAN"),
        ("", "BAD_NODE_SPEC"),
    ] {
        let err = fails_with(
            &keyroute(&["plan", "--from", map_arg, "--weights", weights], None),
            code,
        );
        if weights.contains(':') {
            assert!(err.contains("a=1"), "says how to write it: {err}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn errors_name_their_code_and_exit_2() {
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["route", "--profile", "nope", "--nodes", "a", "k"],
            "UNKNOWN_PROFILE",
            "nope",
        ),
        (&["route", "--nodes", "a=0", "k"], "ZERO_WEIGHT", "weight 0"),
        (&["route", "--nodes", "a=-3", "k"], "NEGATIVE_WEIGHT", "-3"),
        (&["route", "--nodes", "a=x", "k"], "BAD_WEIGHT", "\"x\""),
        (&["route", "--nodes", "a,a", "k"], "DUPLICATE_NODE", "\"a\""),
        (
            &["route", "--nodes", "a", "--default-port", "11211", "k"],
            "BAD_OPTION",
            "default_port",
        ),
        (
            &[
                "route",
                "-p",
                "native",
                "--nodes",
                "a",
                "--points-per-digest",
                "3",
                "k",
            ],
            "BAD_OPTION",
            "points_per_digest",
        ),
        (
            &["route", "--nodes", "a", "--vnodes", "0", "k"],
            "BAD_VNODES",
            "0",
        ),
        (
            &[
                "route",
                "--nodes",
                "a",
                "--vnodes",
                "99999999999999999999",
                "k",
            ],
            "BAD_VNODES",
            "99999999999999999999",
        ),
        (
            &[
                "route",
                "-p",
                "libketama",
                "--nodes",
                "a",
                "--default-port",
                "70000",
                "k",
            ],
            "BAD_PORT",
            "70000",
        ),
        (
            &["route", "--nodes-file", "/nonexistent/nodes", "k"],
            "",
            "cannot read nodes file /nonexistent/nodes",
        ),
        (
            &["route", "--nodes", "a", "--replicas", "0", "k"],
            "OUT_OF_RANGE",
            "at least 1",
        ),
        (
            &["simulate", "--nodes", "3", "--remove", "3"],
            "OUT_OF_RANGE",
            "at least one must stay",
        ),
        (
            &["simulate", "--nodes", "0", "--add", "1"],
            "OUT_OF_RANGE",
            "at least 1",
        ),
        (&["slot", "--hex", "7"], "BAD_TYPE", "odd number"),
        (
            &["pool", "simulate", "p1", ""],
            "EMPTY_MEMBER",
            "must not be empty",
        ),
        (
            &["pick", "--redis", "redis://h:notaport", "--pool", "p"],
            "REDIS_BAD_URL",
            "h:notaport",
        ),
    ];
    for (args, code, msg) in cases {
        let o = keyroute(args, None);
        let err = stderr(&o);
        if code.is_empty() {
            // An operating-system error has no code.
            assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
            assert!(
                err.starts_with("keyroute: error: ") && !err.contains('['),
                "{err}"
            );
        } else {
            fails_with(&o, code);
        }
        assert!(err.contains(msg), "{args:?}: {err}");
    }
}

#[test]
fn a_closed_pipe_is_not_an_error() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(common::bin())
        .args(["pool", "simulate", "--picks", "16777216", "a", "b"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 16];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("read");
    // stdout is dropped (closed) here.
    let o = child.wait_with_output().expect("wait");
    assert!(o.status.success(), "{o:?}");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn simulate_reports_moves_against_the_ideal() {
    let out = ok(&keyroute(
        &["simulate", "--nodes", "10", "--keys", "20000", "--add", "1"],
        None,
    ));
    assert!(out.contains("node-11"), "{out}");
    assert!(out.contains("ideal 9.09%"), "{out}");
    assert!(out.contains("peak-to-mean"), "{out}");
}

#[test]
fn terminals_get_a_stdin_note_and_a_progress_bar() {
    let bin = common::bin();
    // `route` with no keys on a terminal says where it reads from (stdin is at its end).
    let screen = on_a_terminal(&format!("{bin} route --nodes a,b"));
    assert!(
        screen.contains("keyroute: reading keys from stdin"),
        "{screen:?}"
    );
    // Not when stdin is a pipe (stdout and stderr are captured in the other tests).
    let o = keyroute(&["route", "--nodes", "a,b"], Some(b"k\n"));
    assert_eq!(stderr(&o), "");
    // `simulate` with a million keys draws a bar on a terminal's stderr...
    let screen = on_a_terminal(&format!(
        "{bin} simulate --nodes 3 --add 1 --keys 1000000 >/dev/null"
    ));
    assert!(screen.contains("keyroute: routing keys"), "{screen:?}");
    assert!(screen.contains("/1,000,000"), "{screen:?}");
    // ...and nothing when stderr is not a terminal.
    let o = keyroute(
        &[
            "simulate", "--nodes", "3", "--add", "1", "--keys", "1000000",
        ],
        None,
    );
    ok(&o);
    assert_eq!(stderr(&o), "");
}
