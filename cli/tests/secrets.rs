//! Secrets are never printed: one known secret fed through every URL form of the grammar
//! (`user:password@`, `pass=`, `password=`, `sentinel_password=`, TLS URLs) to the CLI's
//! subcommands against a real redis-server (TCP and Unix socket, password required), and
//! to `keyroute serve` (its log, its errors and its `/metrics` page). Every output is
//! searched for the secret.
#![allow(clippy::unwrap_used)]

mod common;
#[path = "../../redis/tests/common/mod.rs"]
mod servers;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, keyroute, stderr, stdout};
use servers::secure::{free_port, redis_server, temp_dir};

const SECRET: &str = "Zq8-s3cr3t-Wv";

fn assert_hidden(what: &str, text: &str) {
    assert!(!text.contains(SECRET), "{what} shows the secret: {text}");
    // Nor a part of it long enough to matter.
    assert!(
        !text.contains(&SECRET[2..10]),
        "{what} shows part of the secret: {text}"
    );
}

#[test]
fn no_output_shows_a_secret() {
    let dir = temp_dir("secrets");
    let port = free_port(false);
    let sock = dir.join("redis.sock");
    let _server = redis_server(
        &dir,
        port,
        &[
            "--port".into(),
            port.to_string(),
            "--requirepass".into(),
            SECRET.into(),
            "--unixsocket".into(),
            sock.display().to_string(),
            "--unixsocketperm".into(),
            "700".into(),
        ],
    );
    let s = sock.display();
    let good = [
        format!("redis://:{SECRET}@127.0.0.1:{port}"),
        format!("redis://default:{SECRET}@127.0.0.1:{port}/0"),
        format!("127.0.0.1:{port}?pass={SECRET}"),
        format!("redis+unix://{s}?pass={SECRET}"),
        format!("redis+unix://{s}?db=1&password={SECRET}"),
    ];
    for url in &good {
        // An empty pool: the hint repeats the URL.
        let out = keyroute(&["pick", "--redis", url, "--pool", "{p}:pool"], None);
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert_eq!(out.status.code(), Some(1), "{url}: {text}");
        assert!(text.contains("seed it"), "{text}");
        assert_hidden(url, &text);
    }
    let bad = [
        format!("redis://:{SECRET}x@127.0.0.1:{port}"),
        format!("redis+unix://{s}?pass={SECRET}x"),
        format!("redis+sentinel://:{SECRET}@127.0.0.1:1/m?sentinel_password={SECRET}"),
        format!("rediss://:{SECRET}@127.0.0.1:{port}?ssl_ca_certs=/nonexistent/ca.pem"),
        format!("redis://:{SECRET}@127.0.0.1:{port}?colour=red"),
        format!("redis://u:{SECRET}@127.0.0.1:notaport"),
    ];
    for url in &bad {
        for args in [
            vec!["pick", "--redis", url, "--pool", "{p}:pool"],
            vec!["pool", "show", "--redis", url, "--pool", "{p}:pool"],
            vec![
                "pool",
                "show",
                "--cluster",
                "--redis",
                url,
                "--pool",
                "{p}:pool",
            ],
            vec!["cluster", "slots", "--redis", url],
        ] {
            let out = keyroute(&args, None);
            let text = format!("{}{}", stdout(&out), stderr(&out));
            assert!(!out.status.success(), "{args:?}: {text}");
            assert!(
                text.contains("[REDIS_") || text.contains("[CLUSTER_"),
                "{args:?}: {text}"
            );
            assert_hidden(&format!("{args:?}"), &text);
        }
    }
    // A wrong password is REDIS_AUTH.
    let out = keyroute(&["pick", "--redis", &bad[0], "--pool", "{p}:pool"], None);
    assert!(stderr(&out).contains("[REDIS_AUTH]"), "{}", stderr(&out));

    // The service: its start log, and the store's address label on /metrics.
    let metrics = free_port(false);
    let serve = Command::new(bin())
        .args(["serve", "--redis", &good[3]])
        .args(["--bind", &format!("tcp://127.0.0.1:{}", free_port(false))])
        .args([
            "--workers-bind",
            &format!("tcp://127.0.0.1:{}", free_port(false)),
        ])
        .args(["--metrics", &format!("127.0.0.1:{metrics}")])
        .env("RUST_LOG", "debug")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let page = loop {
        if let Ok(mut con) = TcpStream::connect(("127.0.0.1", metrics)) {
            con.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            con.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
                .unwrap();
            let mut page = String::new();
            let _ = con.read_to_string(&mut page);
            if page.contains("keyroute_serve_store") {
                break page;
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "serve did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        page.contains("pass=***"),
        "the label keeps the URL's shape: {page}"
    );
    assert_hidden("/metrics", &page);
    sigterm(serve.id());
    let out = serve.wait_with_output().unwrap();
    let log = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!log.is_empty(), "serve logs at start");
    assert_hidden("serve's log", &log);
    // --help never carries a secret from the environment either.
    let out = Command::new(bin())
        .args(["serve", "--help"])
        .env("KEYROUTE_REDIS", &good[0])
        .output()
        .unwrap();
    assert_hidden("serve --help", &format!("{}{}", stdout(&out), stderr(&out)));
}

fn sigterm(pid: u32) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
}

/// The CLI's TLS flags on a TLS-only server with a password: `--tls-ca` turns TLS on
/// (`host:port` becomes `rediss://`), a pool is seeded and picked; without the CA the
/// certificate is refused (`REDIS_TLS`), never accepted silently.
#[test]
fn tls_flags_reach_a_tls_only_server() {
    let certs = servers::secure::Certs::make();
    let dir = temp_dir("cli-tls");
    let port = free_port(false);
    let mut args = vec![
        "--port".to_string(),
        "0".into(),
        "--tls-port".into(),
        port.to_string(),
        "--requirepass".into(),
        SECRET.into(),
    ];
    args.extend(certs.server_args(false));
    let _server = redis_server(&dir, port, &args);
    let url = format!("redis://:{SECRET}@127.0.0.1:{port}");
    let ca = certs.path("ca.crt");
    let seeded = keyroute(
        &[
            "pool", "seed", "--redis", &url, "--tls-ca", &ca, "--pool", "{t}:pool", "p1", "p2",
        ],
        None,
    );
    assert!(seeded.status.success(), "{}", stderr(&seeded));
    let picked = keyroute(
        &[
            "pick", "--redis", &url, "--tls-ca", &ca, "--pool", "{t}:pool",
        ],
        None,
    );
    assert_eq!(stdout(&picked), "p1\n", "{}", stderr(&picked));
    let refused = keyroute(
        &[
            "pick",
            "--redis",
            &url.replace("redis://", "rediss://"),
            "--pool",
            "{t}:pool",
        ],
        None,
    );
    let text = stderr(&refused);
    assert!(text.contains("[REDIS_TLS]"), "{text}");
    assert_hidden("a refused certificate", &text);
}
