//! `keyroute route --config/--engine` and `keyroute simulate` over several engines, end to
//! end: against the proxies' recorded answers (tests/vectors/fleet) and the library.

mod common;

use common::{fails_with, keyroute, ok, repo_root, temp_dir};
use keyroute::engine::{Engine, EntryKind, Router, ENTRIES};
use keyroute::ring::parse_nodes;

fn vector(name: &str) -> serde_json::Value {
    let path = repo_root().join("tests/vectors/fleet").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("vector")).expect("json")
}

/// Each proxy's own configuration file, routed by the CLI, answers as the proxy did.
#[test]
fn route_config_answers_as_the_proxy() {
    let dir = temp_dir("fleet-config");
    for (file, pool_field, ext) in [
        ("nginx.json", "upstream", "conf"),
        ("haproxy.json", "backend", "cfg"),
        ("twemproxy.json", "pool", "yml"),
    ] {
        let v = vector(file);
        let path = dir.join(format!("proxy.{ext}"));
        std::fs::write(&path, v["config_file"].as_str().expect("config")).expect("write");
        for case in v["cases"].as_array().expect("cases").iter().take(6) {
            let pool = case[pool_field].as_str().expect("pool");
            let keys: Vec<String> = case["keys"]
                .as_array()
                .expect("keys")
                .iter()
                .take(60)
                .map(|k| k.as_str().expect("key").to_string())
                .collect();
            let mut args = vec![
                "route".to_string(),
                "--config".into(),
                path.display().to_string(),
                "--pool".into(),
                pool.into(),
                "--allow-down".into(),
                "--".into(),
            ];
            args.extend(keys.iter().cloned());
            let out = ok(&keyroute(&args, None));
            let want: Vec<&str> = case["expect"]
                .as_array()
                .expect("expect")
                .iter()
                .take(60)
                .map(|e| e.as_str().expect("name"))
                .collect();
            assert_eq!(out.lines().collect::<Vec<_>>(), want, "{file} {pool}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn route_config_json_gives_addresses_and_refusals_name_the_line() {
    let dir = temp_dir("fleet-config-json");
    let path = dir.join("haproxy.cfg");
    std::fs::write(
        &path,
        "backend app\n    balance uri\n    hash-type consistent\n    server web1 10.0.0.1:80\n    server web2 10.0.0.2:80 backup\n",
    )
    .expect("write");
    let err = fails_with(
        &keyroute(
            &["route", "--config", path.to_str().expect("p"), "/x"],
            None,
        ),
        "UNSUPPORTED_CONFIG",
    );
    assert!(
        err.contains("haproxy.cfg:5:") && err.contains("backup"),
        "{err}"
    );
    std::fs::write(&path, "backend app\n    balance uri\n    hash-type consistent\n    server web1 10.0.0.1:80\n    server web2 10.0.0.2:80\n").expect("write");
    let out = ok(&keyroute(
        &[
            "route",
            "--config",
            path.to_str().expect("p"),
            "--format",
            "json",
            "/index.html",
        ],
        None,
    ));
    let v: serde_json::Value = serde_json::from_str(out.trim()).expect("json");
    let node = v["nodes"][0].as_str().expect("node");
    let addr = v["addresses"][0].as_str().expect("address");
    assert_eq!(
        addr,
        if node == "web1" {
            "10.0.0.1:80"
        } else {
            "10.0.0.2:80"
        }
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn route_engine_matches_the_library() {
    let nodes = "cache-a,cache-b,cache-c,cache-d";
    let keys = ["user:1", "user:2", "{tag}x", "ключ"];
    for (engine, options) in [
        ("jump", vec![]),
        ("guava-jump", vec![]),
        ("rendezvous", vec![]),
        ("maglev", vec![("table_size", "1009")]),
        ("jedis", vec![("version", "2"), ("naming", "named")]),
        ("go-redis", vec![]),
        ("twemproxy", vec![("hash", "fnv1a_64")]),
    ] {
        let r =
            Router::build(engine, &parse_nodes(nodes).expect("nodes"), &options).expect("router");
        let mut args = vec![
            "route".to_string(),
            "--engine".into(),
            engine.into(),
            "--nodes".into(),
            nodes.into(),
            "-r".into(),
            "2".into(),
        ];
        for (k, v) in &options {
            args.push("--option".into());
            args.push(format!("{k}={v}"));
        }
        args.push("--".into());
        args.extend(keys.iter().map(|k| k.to_string()));
        let out = ok(&keyroute(&args, None));
        let want: String = keys
            .iter()
            .map(|k| format!("{}\n", r.get_n(k.as_bytes(), 2).join(" ")))
            .collect();
        assert_eq!(out, want, "{engine}");
    }
    fails_with(
        &keyroute(
            &[
                "route",
                "--engine",
                "maglev",
                "--option",
                "table_size=100",
                "--nodes",
                "a,b",
                "k",
            ],
            None,
        ),
        "BAD_OPTION",
    );
    fails_with(
        &keyroute(
            &["route", "--engine", "jump", "--nodes", "a=2,b", "k"],
            None,
        ),
        "BAD_OPTION",
    );
    fails_with(
        &keyroute(&["route", "--engine", "nope", "--nodes", "a", "k"], None),
        "UNKNOWN_PROFILE",
    );
    fails_with(
        &keyroute(
            &[
                "route", "--engine", "jump", "--option", "colour", "--nodes", "a", "k",
            ],
            None,
        ),
        "BAD_OPTION",
    );
}

#[test]
fn simulate_compares_engines_side_by_side() {
    let out = ok(&keyroute(
        &[
            "simulate",
            "--engine",
            "jump,maglev,rendezvous,native",
            "--nodes",
            "10",
            "--keys",
            "20000",
            "--remove",
            "1",
        ],
        None,
    ));
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| {
            ["jump", "maglev", "rendezvous", "native"]
                .iter()
                .any(|e| l.starts_with(e))
        })
        .collect();
    assert_eq!(rows.len(), 4, "{out}");
    for row in rows {
        let cols: Vec<f64> = row
            .split_whitespace()
            .skip(1)
            .map(|c| c.parse().expect("number"))
            .collect();
        // peak before, peak after, moved %, ideal %, x ideal, ns
        assert!(cols[0] >= 1.0 && cols[0] < 1.5, "{row}");
        assert!((cols[3] - 10.0).abs() < 1e-9, "{row}");
        assert!(cols[4] < 1.5, "{row}: moves within 1.5x the ideal");
    }
}

/// `/dev/zero` as `--config`, `--nodes-file` or an nginx `include` is refused with
/// BAD_CONFIG naming it once 64 MiB are read (it was read until memory ran out).
#[test]
fn endless_files_are_refused_by_name() {
    let o = keyroute(&["route", "--config", "/dev/zero", "k"], None);
    let err = fails_with(&o, "BAD_CONFIG");
    assert!(
        err.contains("configuration /dev/zero is over 64 MiB"),
        "{err}"
    );
    let o = keyroute(&["route", "--nodes-file", "/dev/zero", "k"], None);
    let err = fails_with(&o, "BAD_CONFIG");
    assert!(err.contains("nodes file /dev/zero is over 64 MiB"), "{err}");
    let dir = temp_dir("fleet-zero");
    let conf = dir.join("nginx.conf");
    std::fs::write(
        &conf,
        "upstream u {\n hash $uri consistent;\n server 10.0.0.1:80;\n include /dev/zero;\n}\n",
    )
    .expect("write");
    let o = keyroute(
        &["route", "--config", conf.to_str().expect("path"), "k"],
        None,
    );
    let err = fails_with(&o, "BAD_CONFIG");
    assert!(
        err.contains("/dev/zero: the configuration and its includes are over 64 MiB"),
        "{err}"
    );
}

/// `route --help` is core's registry: every name and alias with each of its options, and
/// `-p` takes any of them (ring profiles too), all through `Router::build`.
#[test]
fn route_help_and_profiles_are_the_registry() {
    let long = ok(&keyroute(&["route", "--help"], None));
    let short = ok(&keyroute(&["route", "-h"], None));
    for e in ENTRIES {
        assert!(
            long.contains(&format!("\n    {} ", e.name())),
            "{}",
            e.name()
        );
        assert!(short.contains(e.name()), "{}", e.name());
        for a in e.aliases() {
            assert!(long.contains(a), "{a}");
        }
        for o in e.options() {
            assert!(long.contains(&format!("      {:<22} {}\n", o.name(), o.doc())));
        }
        let nodes = if e.kind() == EntryKind::RingProfile {
            "a,b=2,c"
        } else {
            "a,b,c"
        };
        let r = Router::build(e.name(), &parse_nodes(nodes).expect("nodes"), &[]).expect("build");
        let want = format!("{}\n", r.get_n(b"user:1", 2).join(" "));
        let got = ok(&keyroute(
            &[
                "route",
                "-p",
                e.name(),
                "--nodes",
                nodes,
                "-r",
                "2",
                "user:1",
            ],
            None,
        ));
        assert_eq!(got, want, "{}", e.name());
    }
    // A ring profile's options as --option too, and the flags for an engine that takes them.
    let flag = ok(&keyroute(
        &[
            "route",
            "-p",
            "libketama",
            "--vnodes",
            "100",
            "--nodes",
            "a,b",
            "k1",
            "k2",
        ],
        None,
    ));
    let option = ok(&keyroute(
        &[
            "route",
            "-p",
            "libketama",
            "-o",
            "vnodes=100",
            "--nodes",
            "a,b",
            "k1",
            "k2",
        ],
        None,
    ));
    assert_eq!(flag, option);
    let nodes = "10.0.0.1:11211,10.0.0.2:11211,10.0.0.3:11211";
    let mut java: Vec<String> = ["route", "-p", "java-hashcode", "--nodes", nodes]
        .map(String::from)
        .to_vec();
    java.extend((0..30).map(|k| format!("user:{k}")));
    let seven = [&java[..], &["--vnodes".into(), "7".into()]].concat();
    assert_ne!(ok(&keyroute(&seven, None)), ok(&keyroute(&java, None)));
    // An option the entry does not take: refused, saying which it takes.
    let err = fails_with(
        &keyroute(
            &[
                "route",
                "--engine",
                "jedis",
                "--default-port",
                "1",
                "--nodes",
                "a",
                "k",
            ],
            None,
        ),
        "BAD_OPTION",
    );
    assert!(
        err.contains("default_port") && err.contains("it takes version, naming, hash"),
        "{err}"
    );
    let err = fails_with(
        &keyroute(
            &[
                "route", "-p", "native", "-o", "hash=md5", "--nodes", "a", "k",
            ],
            None,
        ),
        "BAD_OPTION",
    );
    assert!(err.contains("it takes vnodes"), "{err}");
    // twemproxy is nutcracker's rules, also by its other name.
    let keys = [
        "route",
        "--nodes",
        "10.0.0.1:11211:1 cache-a:11211,10.0.0.2:11211:1",
        "k1",
        "k2",
        "k3",
    ];
    assert_eq!(
        ok(&keyroute(&[&keys[..], &["-p", "twemproxy"]].concat(), None)),
        ok(&keyroute(
            &[&keys[..], &["-p", "nutcracker"]].concat(),
            None
        ))
    );
}
