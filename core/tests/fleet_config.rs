//! Proxy configurations: format detection, what each reader takes and refuses (file, line,
//! reason), and the twemproxy fixes.

use keyroute::config::{read_config, Format, ProxyConfig};
use keyroute::engine::{Engine, EngineError, Kind, Router};
use keyroute::ring::parse_nodes;

fn read(text: &str, pool: Option<&str>) -> Result<ProxyConfig, EngineError> {
    read_config(text, "test.conf", pool, &mut |_| None)
}

fn refusal(text: &str, pool: Option<&str>) -> (String, usize, String) {
    let e = read(text, pool).expect_err("refused");
    let site = e.config_site().expect("a config error").clone();
    (e.code().as_str().to_string(), site.line, site.reason)
}

const TWEMPROXY: &str = "\
alpha:
  listen: 127.0.0.1:22121
  hash: fnv1a_64
  distribution: ketama
  auto_eject_hosts: false
  servers:
   - 10.0.0.1:11211:1 cache-a
   - 10.0.0.2:11212:2
   - 10.0.0.3:11211:1

beta:
  listen: 127.0.0.1:22122
  hash: md5
  hash_tag: \"{}\"
  distribution: modula
  servers:
   - 10.0.1.1:11211:1
   - 10.0.1.2:11211:3
";

#[test]
fn twemproxy_pools() {
    let a = read(TWEMPROXY, Some("alpha")).expect("alpha");
    assert_eq!(a.format, Format::Twemproxy);
    let names: Vec<&str> = a.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["cache-a", "10.0.0.2:11212", "10.0.0.3:11211"]);
    assert_eq!(a.router.node_address(0), Some("10.0.0.1:11211"));
    // The same ring as the profile with the same nodes and hash.
    let nodes = parse_nodes("10.0.0.1:11211:1 cache-a,10.0.0.2:11212:2,10.0.0.3:11211:1").unwrap();
    let p = Router::build("twemproxy", &nodes, &[("hash", "fnv1a_64")]).unwrap();
    for i in 0..500 {
        let k = format!("key-{i}");
        assert_eq!(a.router.get(k.as_bytes()), p.get(k.as_bytes()), "{k}");
    }
    let b = read(TWEMPROXY, Some("beta")).expect("beta");
    assert!(matches!(b.router.kind(), Kind::Modulo(_)));
    // hash_tag: only the tag is hashed.
    assert_eq!(b.router.get(b"{user1}.a"), b.router.get(b"user1"));
    // Two pools: one must be named.
    let (code, _, reason) = refusal(TWEMPROXY, None);
    assert_eq!(code, "BAD_CONFIG");
    assert!(
        reason.contains("alpha") && reason.contains("beta"),
        "{reason}"
    );
}

#[test]
fn twemproxy_refusals() {
    let random = "p:\n  distribution: random\n  servers:\n   - 10.0.0.1:11211:1\n";
    assert_eq!(
        refusal(random, None),
        (
            "UNSUPPORTED_CONFIG".into(),
            2,
            "distribution: random picks a server at random for each request".into()
        )
    );
    let (code, line, _) = refusal(
        "p:\n  hash: sha1\n  servers:\n   - 10.0.0.1:11211:1\n",
        None,
    );
    assert_eq!((code.as_str(), line), ("BAD_CONFIG", 2));
    let (code, line, _) = refusal("p:\n  servers:\n   - 10.0.0.1:11211:0\n", None);
    assert_eq!((code.as_str(), line), ("BAD_CONFIG", 3));
    let (code, line, _) = refusal("p:\n  servers:\n   - a:1:1 x\n   - b:1:1 x\n", None);
    assert_eq!((code.as_str(), line), ("BAD_CONFIG", 4));
}

/// twemproxy hashes an alias verbatim, even one ending in `:11211` (the old `twemproxy`
/// ring profile stripped it); a server without alias on port 11211 hashes as `host`.
#[test]
fn twemproxy_alias_with_11211_is_hashed_verbatim() {
    let aliased = parse_nodes("10.0.0.1:11211:1 mc-1:11211,10.0.0.2:11211:1 mc-2:11211").unwrap();
    let plain = parse_nodes("mc-1:11211=1,mc-2:11211=1").unwrap();
    let a = Router::build("twemproxy", &aliased, &[]).unwrap();
    let p = Router::build("twemproxy", &plain, &[]).unwrap();
    let (Kind::Points(a), Kind::Points(p)) = (a.kind(), p.kind()) else {
        panic!()
    };
    assert_ne!(a.positions(), p.positions());
    // The plain servers hash as "mc-1-0", ... : the libmemcached ring of "mc-1", "mc-2".
    let lm = keyroute::ring::Ring::with_nodes(
        keyroute::ring::Profile::libmemcached(),
        [("mc-1", 1), ("mc-2", 1)],
    )
    .unwrap();
    let mut lp: Vec<u64> = lm.positions().to_vec();
    lp.dedup();
    assert_eq!(p.positions(), lp.as_slice());
}

/// twemproxy cuts each point string (`alias-i`) to 272 bytes: an alias of 272 bytes or
/// more has the same string for every i, so 4 distinct points.
#[test]
fn twemproxy_cuts_point_strings_at_272_bytes() {
    let long = "x".repeat(280);
    let nodes = parse_nodes(&format!("10.0.0.1:11211:1 {long},10.0.0.2:11211:1 short")).unwrap();
    let r = Router::build("twemproxy", &nodes, &[]).unwrap();
    let Kind::Points(p) = r.kind() else { panic!() };
    let long_points = p.owners().iter().filter(|&o| o == 0).count();
    assert_eq!(long_points, 4);
    assert_eq!(p.owners().iter().filter(|&o| o == 1).count(), 160);
}

const NGINX: &str = "\
http {
    upstream app {
        hash $request_uri consistent;
        server 10.0.0.1:80;
        server app2.internal:8080 weight=2;   # a hostname
        server [::1]:81;
        server unix:/tmp/app.sock;
    }
    upstream plain {
        hash $arg_user;
        server 10.0.0.1:80;
        server 10.0.0.2:80 weight=3;
    }
    upstream rr {
        server 10.0.0.1:80;
    }
    server {
        location / { proxy_pass http://app; }
    }
}
";

#[test]
fn nginx_upstreams() {
    let c = read(NGINX, Some("app")).expect("app");
    assert_eq!(c.format, Format::Nginx);
    assert_eq!(c.key, "$request_uri");
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "10.0.0.1:80",
            "app2.internal:8080",
            "[::1]:81",
            "unix:/tmp/app.sock"
        ]
    );
    let p = read(NGINX, Some("plain")).expect("plain");
    assert!(matches!(p.router.kind(), Kind::Modulo(_)));
    assert_eq!(p.key, "$arg_user");
    let (code, line, reason) = refusal(NGINX, Some("rr"));
    assert_eq!(
        (code.as_str(), line),
        ("UNSUPPORTED_CONFIG", 14),
        "{reason}"
    );
    let (code, _, _) = refusal(NGINX, Some("missing"));
    assert_eq!(code, "BAD_CONFIG");
}

#[test]
fn nginx_refusals() {
    let down = "upstream u {\n hash $uri consistent;\n server 10.0.0.1 down;\n}\n";
    assert_eq!(refusal(down, None).1, 3);
    assert_eq!(refusal(down, None).0, "UNSUPPORTED_CONFIG");
    let host_plain = "upstream u {\n hash $uri;\n server a.example:80;\n}\n";
    assert_eq!(refusal(host_plain, None).0, "UNSUPPORTED_CONFIG");
    let include = "http {\n include upstreams.conf;\n}\nupstream u { hash $uri consistent; server 10.0.0.1; }\n";
    let (code, line, reason) = refusal(include, None);
    assert_eq!((code.as_str(), line), ("UNSUPPORTED_CONFIG", 2));
    assert!(reason.contains("upstreams.conf"), "{reason}");
    // An include the resolver provides is read.
    let c = read_config(include, "n.conf", Some("v"), &mut |f| {
        (f == "upstreams.conf")
            .then(|| "upstream v { hash $uri consistent; server 10.9.9.9:1; }".to_string())
    })
    .expect("included");
    assert_eq!(c.servers[0].name, "10.9.9.9:1");
    let unclosed = "upstream u {\n hash $uri consistent;\n server 10.0.0.1\n";
    assert_eq!(refusal(unclosed, None).0, "BAD_CONFIG");
}

const HAPROXY: &str = "\
global
    maxconn 100

defaults
    mode http
    balance uri
    hash-type consistent

backend web
    server s1 10.0.0.1:80 check
    server s2 10.0.0.2:80 weight 3 id 7
    server s3 10.0.0.3:80

backend api
    balance url_param userid
    hash-type map-based djb2
    default-server weight 2
    server a1 10.0.1.1:80
    server a2 10.0.1.2:80 weight 4

listen rr
    bind :80
    balance roundrobin
    server r1 10.0.2.1:80
";

#[test]
fn haproxy_backends() {
    let w = read(HAPROXY, Some("web")).expect("web");
    assert_eq!(w.format, Format::Haproxy);
    assert_eq!(w.key, "uri");
    assert!(matches!(w.router.kind(), Kind::Points(_)));
    // ids: s1 = 1, s2 = 7, s3 = the first free id from position 3 = 3.
    let nodes = parse_nodes("s1,s2=3,s3").unwrap();
    let by_position = Router::build("haproxy", &nodes, &[]).unwrap();
    let differ = (0..2000).any(|i| {
        let k = format!("/p/{i}");
        w.router.get(k.as_bytes()) != by_position.get(k.as_bytes())
    });
    assert!(differ, "s2's explicit id 7 must move its points");
    let a = read(HAPROXY, Some("api")).expect("api");
    assert_eq!(a.key, "url_param userid");
    assert_eq!(a.servers[0].weight, 2);
    let Kind::Table(t) = a.router.kind() else {
        panic!()
    };
    // Weights 2 and 4 are 1 and 2 after the GCD; recalc_server_map interleaves them.
    assert_eq!(t.slots(), [0, 1, 1]);
    let (code, line, _) = refusal(HAPROXY, Some("rr"));
    assert_eq!((code.as_str(), line), ("UNSUPPORTED_CONFIG", 23));
}

#[test]
fn haproxy_refusals() {
    let backup = "backend b\n balance uri\n server s1 10.0.0.1:80\n server s2 10.0.0.2:80 backup\n";
    assert_eq!(refusal(backup, None), ("UNSUPPORTED_CONFIG".into(), 4, "server s2 is a backup: it takes keys only when every active server is down (keyroute refuses backup servers)".into()));
    let factor = "backend b\n balance uri\n hash-type consistent\n hash-balance-factor 150\n server s1 a:1\n";
    assert_eq!(refusal(factor, None).1, 4);
    let heavy = "backend b\n balance uri\n server s1 a:1 weight 300\n";
    assert_eq!(refusal(heavy, None).0, "BAD_CONFIG");
}

/// Found by the config_read fuzz target: a server name with a multi-byte character at
/// byte 4 or 5 panicked in the `unix:` prefix check (a str sliced inside a character).
#[test]
fn a_server_name_with_a_multibyte_character_is_read_not_a_panic() {
    for server in [
        "loc\u{fffd}al:53",
        "lo\u{e9}\u{e9}x",
        "unix\u{e9}:/x",
        "\u{1f600}\u{1f600}",
    ] {
        let text =
            format!("upstream u {{\n hash $uri;\n server 10.0.0.1;\n server {server};\n}}\n");
        match read(&text, None) {
            Ok(cfg) => assert_eq!(cfg.servers.len(), 2),
            Err(e) => assert!(!e.code().as_str().is_empty()),
        }
    }
}
