//! `tests/vectors/fleet_routes.json`: how to build each case of `tests/vectors/fleet/*.json`
//! with the one `Router` interface every binding exposes (an engine name, nodes and
//! options, or a proxy configuration and its pool), derived here from the vector files so
//! that Python, JavaScript and C run the same cases with one small loop. Keys and expected
//! answers stay in the vector files (the route names the file and the case); nothing is
//! typed in.
//!
//! This test derives the routes, checks every one against the vectors with the Rust
//! `Router`, and compares them with the committed file. `KEYROUTE_WRITE_ROUTES=1 cargo
//! test -p keyroute --test fleet_routes` rewrites it (after `make vectors-fleet`).

use keyroute::config::{read_config_with, ReadOptions};
use keyroute::engine::{Engine, Router};
use keyroute::ring::NodeSpec;
use serde_json::{json, Value};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/vectors");

fn load(name: &str) -> Value {
    let path = format!("{DIR}/fleet/{name}");
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect("json")
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_str().expect("string").to_string())
        .collect()
}

fn engine(
    file: &str,
    case: usize,
    name: &str,
    nodes: Vec<(String, u32)>,
    options: &[(&str, &str)],
    expect: Value,
) -> Value {
    json!({
        "file": file,
        "case": case,
        "engine": name,
        "nodes": nodes.iter().map(|(n, w)| json!([n, w])).collect::<Vec<_>>(),
        "options": options.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "expect": expect,
    })
}

fn routes() -> Vec<Value> {
    let mut out = Vec::new();
    let ones = |v: &Value| -> Vec<(String, u32)> { strs(v).into_iter().map(|n| (n, 1)).collect() };
    for (file, field) in [
        ("nginx.json", "upstream"),
        ("haproxy.json", "backend"),
        ("twemproxy.json", "pool"),
    ] {
        let v = load(file);
        for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
            out.push(json!({
                "file": file,
                "case": i,
                "config": {
                    "pool": c[field],
                    "allow_down": true,
                    "resolved": [["localhost", 1]],
                },
                "expect": "name",
            }));
        }
    }
    let v = load("spymemcached.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let nodes = c["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| {
                (
                    n["name"].as_str().expect("name").to_string(),
                    n["weight"].as_u64().expect("w") as u32,
                )
            })
            .collect();
        let name = if c["weighted"] == true {
            "spymemcached-weighted"
        } else {
            "spymemcached"
        };
        let format = c["format"].as_str().expect("format").to_ascii_lowercase();
        let hash = c["hash"].as_str().expect("hash");
        out.push(engine(
            "spymemcached.json",
            i,
            name,
            nodes,
            &[("format", &format), ("hash", hash)],
            json!("name"),
        ));
    }
    let v = load("java_hashcode.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let nodes = ones(&c["nodes"]);
        out.push(engine(
            "java_hashcode.json",
            i,
            "java-hashcode",
            nodes,
            &[],
            json!("name"),
        ));
    }
    let v = load("java_reference.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let prefix = c["node"] == "prefix";
        let options: &[(&str, &str)] = if prefix { &[("node", "prefix")] } else { &[] };
        let mut route = engine(
            "java_reference.json",
            i,
            "java-hashcode",
            ones(&c["nodes"]),
            options,
            json!("name"),
        );
        let ops: Vec<Value> = c["ops"]
            .as_array()
            .expect("ops")
            .iter()
            .map(|o| match o["op"].as_str().expect("op") {
                "add" => json!(["add", o["node"], 1]),
                _ => json!(["remove", o["node"]]),
            })
            .collect();
        if !ops.is_empty() {
            route["ops"] = json!(ops);
        }
        out.push(route);
    }
    let v = load("guava_jump.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        if c.get("keys").is_none() {
            continue; // raw longs: guava_consistent_hash, tested in Rust
        }
        let hash = if c["hash"] == "murmur3_128" {
            "murmur3_128"
        } else {
            "murmur3_32"
        };
        for (j, b) in c["buckets"].as_array().expect("buckets").iter().enumerate() {
            let b = b.as_u64().expect("b");
            if b > 1000 {
                continue; // 65536 nodes: Rust only
            }
            let nodes = (0..b).map(|k| (format!("bucket-{k}"), 1)).collect();
            out.push(engine(
                "guava_jump.json",
                i,
                "guava-jump",
                nodes,
                &[("hash", hash)],
                json!({"index_column": j}),
            ));
        }
    }
    let v = load("redis_rb.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let replicas = c
            .get("replicas")
            .and_then(Value::as_u64)
            .unwrap_or(160)
            .to_string();
        let tag = if c["mode"] == "distributed" {
            "true"
        } else {
            "false"
        };
        out.push(engine(
            "redis_rb.json",
            i,
            "redis-rb",
            ones(&c["ids"]),
            &[("replicas", &replicas), ("hash_tag", tag)],
            json!("name"),
        ));
    }
    let v = load("predis.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let mode = c["mode"].as_str().expect("mode");
        let nodes: Vec<(String, u32)> = if mode == "client" {
            strs(&c["params"])
                .iter()
                .map(|p| {
                    let rest = p.strip_prefix("tcp://").expect("tcp://");
                    let (addr, query) = rest.split_once('?').unwrap_or((rest, ""));
                    let w = query
                        .split('&')
                        .find_map(|kv| kv.strip_prefix("weight="))
                        .map_or(100, |w| w.parse().expect("weight"));
                    (addr.to_string(), if w == 0 { 100 } else { w })
                })
                .collect()
        } else {
            c["nodes"]
                .as_array()
                .expect("nodes")
                .iter()
                .map(|n| {
                    (
                        n[0].as_str().expect("name").to_string(),
                        n[1].as_u64().unwrap_or(100) as u32,
                    )
                })
                .collect()
        };
        let tag = if mode == "client" { "true" } else { "false" };
        let profile = if mode == "ketama" {
            "predis-ketama"
        } else {
            "predis"
        };
        out.push(engine(
            "predis.json",
            i,
            profile,
            nodes,
            &[("hash_tag", tag)],
            json!("name"),
        ));
    }
    let v = load("pymemcache.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let seed = c
            .get("seed")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .to_string();
        let bytes = if c.get("keys_are_bytes") == Some(&Value::Bool(true)) {
            "true"
        } else {
            "false"
        };
        out.push(engine(
            "pymemcache.json",
            i,
            "pymemcache",
            ones(&c["nodes"]),
            &[("seed", &seed), ("bytes_keys", bytes)],
            json!("name"),
        ));
    }
    let v = load("groupcache.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let replicas = c["replicas"].as_u64().expect("replicas").to_string();
        out.push(engine(
            "groupcache.json",
            i,
            "groupcache",
            ones(&c["peers"]),
            &[("replicas", &replicas)],
            json!("name"),
        ));
    }
    let v = load("go_redis.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        out.push(engine(
            "go_redis.json",
            i,
            "go-redis",
            ones(&c["shards"]),
            &[],
            json!("name"),
        ));
    }
    let v = load("dubbo.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let replicas = c["replicas"].as_u64().expect("replicas").to_string();
        out.push(engine(
            "dubbo.json",
            i,
            "dubbo",
            ones(&c["addresses"]),
            &[("replicas", &replicas)],
            json!("name"),
        ));
    }
    let v = load("jedis.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        let Some(shards) = c.get("shards").and_then(Value::as_array) else {
            continue;
        };
        let version = match c["jedis"].as_str().expect("jedis") {
            "<= 2.9.3" => "2",
            "2.10.0 - 3.x" => "3",
            _ => "4",
        };
        let named = shards[0][0].is_string();
        let nodes = shards
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let name = s[0].as_str().map_or(format!("shard-{k}"), str::to_string);
                let w = if version == "4" {
                    1
                } else {
                    s[1].as_u64().expect("w") as u32
                };
                (name, w)
            })
            .collect();
        let algo = c["algo"].as_str().expect("algo");
        out.push(engine(
            "jedis.json",
            i,
            "jedis",
            nodes,
            &[
                ("version", version),
                ("naming", if named { "named" } else { "unnamed" }),
                ("hash", algo),
            ],
            json!("index"),
        ));
    }
    let v = load("envoy.json");
    for (i, c) in v["cases"].as_array().expect("cases").iter().enumerate() {
        if c.get("keys").is_none() {
            continue; // ring positions and tables by hash: Rust only
        }
        let nodes = strs(&c["host_keys"])
            .into_iter()
            .zip(c["weights"].as_array().expect("w"))
            .map(|(k, w)| (k, w.as_u64().expect("w") as u32))
            .collect();
        if c["kind"] == "maglev" {
            let m = c["table_size"].as_u64().expect("size").to_string();
            out.push(engine(
                "envoy.json",
                i,
                "envoy-maglev",
                nodes,
                &[("table_size", &m)],
                json!("index"),
            ));
        } else {
            let min = c["min_ring_size"].as_u64().expect("min").to_string();
            let max = c["max_ring_size"].as_u64().expect("max").to_string();
            let hash = c["hash_function"].as_str().expect("hash");
            out.push(engine(
                "envoy.json",
                i,
                "envoy-ring",
                nodes,
                &[
                    ("hash", hash),
                    ("min_ring_size", &min),
                    ("max_ring_size", &max),
                ],
                json!("index"),
            ));
        }
    }
    out
}

/// Builds a route's router as a binding would and checks every key of its case.
fn check(route: &Value) -> usize {
    let file = route["file"].as_str().expect("file");
    let v = load(file);
    let case = &v["cases"][route["case"].as_u64().expect("case") as usize];
    let router = if let Some(cfg) = route.get("config") {
        let resolved: Vec<(String, u32)> = cfg["resolved"]
            .as_array()
            .expect("resolved")
            .iter()
            .map(|p| {
                (
                    p[0].as_str().expect("h").into(),
                    p[1].as_u64().expect("n") as u32,
                )
            })
            .collect();
        read_config_with(
            v["config_file"].as_str().expect("config_file"),
            file,
            cfg["pool"].as_str(),
            &mut ReadOptions {
                resolve: &mut |_| None,
                addresses: &resolved,
                allow_down: cfg["allow_down"] == true,
            },
        )
        .expect("config")
        .router
    } else {
        let nodes: Vec<NodeSpec> = route["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .map(|n| NodeSpec {
                name: n[0].as_str().expect("name").into(),
                weight: n[1].as_u64().expect("w") as u32,
                address: None,
            })
            .collect();
        let options: Vec<(&str, &str)> = route["options"]
            .as_array()
            .expect("options")
            .iter()
            .map(|o| (o[0].as_str().expect("k"), o[1].as_str().expect("v")))
            .collect();
        let mut r = Router::build(route["engine"].as_str().expect("engine"), &nodes, &options)
            .expect("router");
        for op in route
            .get("ops")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = op[1].as_str().expect("name");
            if op[0] == "add" {
                let weight = op[2].as_u64().expect("weight") as u32;
                r.add(NodeSpec {
                    name: name.into(),
                    weight,
                    address: None,
                })
                .expect("add");
            } else {
                r.remove(name).expect("remove");
            }
        }
        r
    };
    let keys = strs(&case["keys"]);
    let expect = case["expect"].as_array().expect("expect");
    assert_eq!(keys.len(), expect.len());
    for (k, e) in keys.iter().zip(expect) {
        let want = match &route["expect"] {
            Value::String(s) if s == "name" => e.as_str().expect("name").to_string(),
            Value::String(s) if s == "index" => router
                .node_name(e.as_u64().expect("index") as usize)
                .to_string(),
            Value::Object(o) => {
                let j = o["index_column"].as_u64().expect("column") as usize;
                router
                    .node_name(e[j].as_u64().expect("index") as usize)
                    .to_string()
            }
            other => panic!("expect {other}"),
        };
        assert_eq!(
            router.get(k.as_bytes()),
            Some(want.as_str()),
            "{file} case {} key {k:?}",
            route["case"]
        );
    }
    keys.len()
}

#[test]
fn routes_match_the_vectors_and_the_committed_file() {
    let routes = routes();
    let keys: usize = routes.iter().map(check).sum();
    assert!(keys > 25_000, "{keys} keys");
    let doc = json!({
        "about": "How to build each case of tests/vectors/fleet/*.json with the Router every \
    binding exposes; derived by core/tests/fleet_routes.rs (KEYROUTE_WRITE_ROUTES=1 rewrites it). \
    A route names its vector `file` and `case` (keys and expected answers are read from there), \
    then either `engine`, `nodes` ([name, weight]) and `options` ([name, value]), or `config` \
    (the file's config_file read for `pool`, with allow_down and resolved [host, count]). \
    `ops` (when present): changes made after the build, in order: [\"add\", name, weight] \
    (Router.add) or [\"remove\", name] (Router.remove). `expect`: \"name\" (the case's expect is the node name), \"index\" (the index of the node in \
    the router's node list) or {\"index_column\": j} (expect[i][j] is that index).",
        "routes": routes,
    });
    let text = serde_json::to_string_pretty(&doc).expect("json") + "\n";
    let path = format!("{DIR}/fleet_routes.json");
    if std::env::var_os("KEYROUTE_WRITE_ROUTES").is_some() {
        std::fs::write(&path, &text).expect("write");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "{path} is stale: KEYROUTE_WRITE_ROUTES=1 cargo test -p keyroute --test fleet_routes"
    );
}
