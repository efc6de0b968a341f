//! Fleet profiles against the data in the peers' own test suites (cited per test), where
//! the peer does not run here or as a second source beside `tests/vectors/fleet/`.

use keyroute::engine::{Engine, Kind, Router};
use keyroute::ring::{parse_nodes, NodeSpec};

fn nodes(list: &str) -> Vec<NodeSpec> {
    parse_nodes(list).expect("nodes")
}

fn build(name: &str, list: &str, options: &[(&str, &str)]) -> Router {
    Router::build(name, &nodes(list), options).expect(name)
}

/// pingora-ketama 0.9.1 `tests::matches_nginx_sample` (its values come from nginx).
#[test]
fn nginx_pingora_sample() {
    let r = build("nginx", "127.0.0.1:7777,127.0.0.1:7778", &[]);
    for (key, want) in [
        ("/some/path", "127.0.0.1:7778"),
        ("/some/longer/path", "127.0.0.1:7777"),
        ("/sad/zaidoon", "127.0.0.1:7778"),
        ("/g", "127.0.0.1:7777"),
        (
            "/pingora/team/is/cool/and/this/is/a/long/uri",
            "127.0.0.1:7778",
        ),
        ("/i/am/not/confident/in/this/code", "127.0.0.1:7777"),
    ] {
        assert_eq!(r.get(key.as_bytes()), Some(want), "{key}");
    }
}

/// pingora-ketama 0.9.1 `test-data/sample-nginx-upstream.csv`: 1001 requests through a
/// real nginx, 9 servers of weight 100 (144,000 points before dedup).
#[test]
fn nginx_real_trace() {
    let list: Vec<String> = (1..=9).map(|i| format!("10.0.0.{i}:443=100")).collect();
    let r = build("nginx", &list.join(","), &[]);
    let text = include_str!("data/peers/nginx-sample-upstream.csv");
    let mut rows = 0;
    for line in text.lines().filter(|l| !l.is_empty()) {
        let (uri, upstream) = line.rsplit_once(',').expect("row");
        assert_eq!(r.get(uri.as_bytes()), Some(upstream), "{uri}");
        rows += 1;
    }
    assert_eq!(rows, 1001);
}

/// HAProxy `reg-tests/balance/balance-uri.vtc` (v2.6.0): `balance uri`, the default
/// map-based hash-type (sdbm, no avalanche), four servers of weight 1.
#[test]
fn haproxy_map_based_vtc() {
    let r = build(
        "haproxy-map",
        "srv1,srv2,srv3,srv4",
        &[("avalanche", "false")],
    );
    for (uri, want) in [
        ("/url1", "srv2"),
        ("/url2", "srv3"),
        ("/url3", "srv4"),
        ("/url4", "srv1"),
    ] {
        assert_eq!(r.get(uri.as_bytes()), Some(want), "{uri}");
    }
}

/// HAProxy `reg-tests/balance/balance-hash-maxconn.vtc` (after the 3.3 fix, which
/// restores 2.x's point keys): `hash-type consistent`, two servers, `/test-url` → srv0.
#[test]
fn haproxy_consistent_vtc() {
    let r = build("haproxy", "srv0,srv1", &[]);
    assert_eq!(r.get(b"/test-url"), Some("srv0"));
}

fn positions(r: &Router) -> Vec<u64> {
    match r.kind() {
        Kind::Points(p) => p.positions().to_vec(),
        _ => panic!("a point ring"),
    }
}

fn owner_names(r: &Router) -> Vec<&str> {
    match r.kind() {
        Kind::Points(p) => p.owners().iter().map(|o| r.node_name(o as usize)).collect(),
        _ => panic!("a point ring"),
    }
}

/// Envoy `ring_hash_lb_test.cc` `Basic` (xxHash64, minimum ring size 12): the ring's 12
/// positions and owners as the test's comment lists them.
#[test]
fn envoy_ring_basic() {
    let list: Vec<String> = (90..=95).map(|p| format!("127.0.0.1:{p}")).collect();
    let r = build("envoy-ring", &list.join(","), &[("min_ring_size", "12")]);
    assert_eq!(
        positions(&r),
        [
            833437586790550860,
            928266305478181108,
            1033482794131418490,
            3551244743356806947,
            3851675632748031481,
            5583722120771150861,
            6311230543546372928,
            7700377290971790572,
            13144177310400110813,
            13444792449719432967,
            15516499411664133160,
            16117243373044804889
        ]
    );
    let ports: Vec<&str> = owner_names(&r).iter().map(|n| &n[10..]).collect();
    assert_eq!(
        ports,
        ["94", "92", "90", "95", "93", "91", "91", "93", "95", "92", "94", "90"]
    );
}

/// Envoy `BasicWithMurmur2` (libstdc++'s MurmurHash2, seed 0xc70f6907).
#[test]
fn envoy_ring_murmur2() {
    let list: Vec<String> = (80..=85).map(|p| format!("127.0.0.1:{p}")).collect();
    let r = build(
        "envoy-ring",
        &list.join(","),
        &[("min_ring_size", "12"), ("hash", "murmur_hash_2")],
    );
    assert_eq!(
        positions(&r),
        [
            1358027074129602068,
            4361834613929391114,
            7224494972555149682,
            7701421856454313576,
            8649315368077433379,
            8739448859063030639,
            9887544217113020895,
            10150910876324007731,
            15168472011420622455,
            15427156902705414897,
            16375050414328759093,
            17613279263364193813
        ]
    );
    let ports: Vec<&str> = owner_names(&r).iter().map(|n| &n[10..]).collect();
    assert_eq!(
        ports,
        ["85", "83", "84", "81", "82", "84", "81", "82", "83", "80", "85", "80"]
    );
}

/// Envoy `BasicWithHostname` (hosts hashed by hostname "90".."95").
#[test]
fn envoy_ring_hostname() {
    let r = build(
        "envoy-ring",
        "90,91,92,93,94,95",
        &[("min_ring_size", "12")],
    );
    assert_eq!(
        positions(&r),
        [
            1975508444536362413,
            2376063919839173711,
            2386806903309390596,
            6749904478991551885,
            6803900775736438537,
            7225015537174310577,
            8787465352164086522,
            11282020843382717940,
            13723418369486627818,
            13776502110861797421,
            14338313586354474791,
            15364271037087512980
        ]
    );
    assert_eq!(
        owner_names(&r),
        ["95", "95", "93", "94", "93", "92", "90", "92", "91", "90", "91", "94"]
    );
}

/// Envoy `UnevenHosts`: two hosts, minimum ring size 3 → 2 hashes each.
#[test]
fn envoy_ring_uneven() {
    let r = build(
        "envoy-ring",
        "127.0.0.1:80,127.0.0.1:81",
        &[("min_ring_size", "3")],
    );
    assert_eq!(
        positions(&r),
        [
            5454692015285649509,
            7859399908942313493,
            13838424394637650569,
            16064866803292627174
        ]
    );
}
