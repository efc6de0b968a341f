//! The `serde` feature: rings (as specs), slot maps and plans round-trip through JSON and
//! TOML, and what is read back is checked like every other entrance.
#![cfg(feature = "serde")]

use keyroute::ring::{parse_nodes, Profile, ProfileOptions, Ring, RingSpec};
use keyroute::slot::{Address, Health, Plan, SlotMap};

/// Both rings give the same answer for every key: the same nodes, points and owners, and
/// the same owner and replicas for a sample of keys.
fn assert_same_ring(a: &Ring, b: &Ring) {
    assert_eq!(a.profile(), b.profile());
    assert_eq!(a.nodes(), b.nodes());
    assert_eq!(a.positions(), b.positions());
    assert_eq!(a.owners(), b.owners());
    for i in 0..2000u32 {
        let key = format!("key-{i}");
        assert_eq!(a.get(key.as_bytes()), b.get(key.as_bytes()), "{key}");
        assert_eq!(a.get_n(key.as_bytes(), 3), b.get_n(key.as_bytes(), 3));
    }
}

fn rings() -> Vec<Ring> {
    let nodes = [("10.0.0.1:11211", 1), ("10.0.0.2:6379", 3), ("cache-c", 2)];
    let mut out = Vec::new();
    for name in [
        "native",
        "libketama",
        "libmemcached",
        "twemproxy",
        "uhashring",
        "node-hashring",
        "hash_ring",
    ] {
        out.push(Ring::with_nodes(name.parse::<Profile>().expect("profile"), nodes).expect("ring"));
    }
    let options = ProfileOptions {
        vnodes: Some(100),
        points_per_digest: Some(3),
        default_port: Some(6379),
    };
    out.push(
        Ring::with_nodes(
            Profile::from_options("node-hashring", &options).expect("profile"),
            nodes,
        )
        .expect("ring"),
    );
    let no_port = ProfileOptions {
        default_port: Some(0),
        ..ProfileOptions::default()
    };
    out.push(
        Ring::with_nodes(
            Profile::from_options("libmemcached", &no_port).expect("profile"),
            nodes,
        )
        .expect("ring"),
    );
    let native = ProfileOptions {
        vnodes: Some(7),
        ..ProfileOptions::default()
    };
    out.push(
        Ring::with_nodes(
            Profile::from_options("native", &native).expect("profile"),
            nodes,
        )
        .expect("ring"),
    );
    out.push(Ring::new(Profile::libketama()));
    out
}

#[test]
fn rings_round_trip_through_json_and_toml() {
    for ring in rings() {
        let json = serde_json::to_string(&ring).expect("to json");
        let back: Ring = serde_json::from_str(&json).expect("from json");
        assert_same_ring(&ring, &back);
        let toml_text = toml::to_string(&ring).expect("to toml");
        let back: Ring = toml::from_str(&toml_text).expect("from toml");
        assert_same_ring(&ring, &back);
        // The spec alone round-trips too, and builds the same ring.
        let spec: RingSpec = serde_json::from_str(&json).expect("spec");
        assert_eq!(spec, ring.spec());
        assert_same_ring(&ring, &spec.build().expect("build"));
    }
}

#[test]
fn ring_shapes_are_stable() {
    let ring = Ring::with_nodes(Profile::native(), [("a", 1), ("b", 2)]).expect("ring");
    assert_eq!(
        serde_json::to_value(&ring).expect("json"),
        serde_json::json!({
            "profile": "native",
            "vnodes": 160,
            "nodes": [{"name": "a", "weight": 1}, {"name": "b", "weight": 2}]
        })
    );
    let ring = Ring::with_nodes(Profile::libmemcached(), [("a", 1)]).expect("ring");
    assert_eq!(
        toml::to_string(&ring).expect("toml"),
        "profile = \"libmemcached\"\nvnodes = 40\npoints_per_digest = 4\ndefault_port = 11211\n\n[[nodes]]\nname = \"a\"\nweight = 1\n"
    );
}

/// `twemproxy`, the old name of the libmemcached ring, still reads: as that ring, written
/// back under its name.
#[test]
fn the_old_twemproxy_ring_profile_reads_as_libmemcached() {
    let ring: Ring = toml::from_str("profile = \"twemproxy\"\nnodes = [{ name = \"a\" }]\n")
        .expect("old spelling");
    let want = Ring::with_nodes(Profile::libmemcached(), [("a", 1)]).expect("ring");
    assert_same_ring(&want, &ring);
    assert!(toml::to_string(&ring)
        .expect("toml")
        .starts_with("profile = \"libmemcached\"\n"));
}

#[test]
fn a_hand_written_toml_ring_uses_defaults() {
    let ring: Ring = toml::from_str(
        r#"
        profile = "libmemcached"
        nodes = [
            { name = "10.0.0.1:11211" },
            { name = "10.0.0.2:11211", weight = 2 },
        ]
        "#,
    )
    .expect("toml ring");
    let want = Ring::with_nodes(
        Profile::libmemcached(),
        [("10.0.0.1:11211", 1), ("10.0.0.2:11211", 2)],
    )
    .expect("ring");
    assert_same_ring(&want, &ring);
}

#[test]
fn twemproxy_aliases_keep_their_address_in_a_spec() {
    let nodes = parse_nodes("10.0.0.1:11211:2 cache-a\n10.0.0.2:11211:1 cache-b").expect("nodes");
    let spec = RingSpec {
        profile: "twemproxy".parse().expect("name"),
        options: ProfileOptions::default(),
        nodes,
    };
    let json = serde_json::to_string(&spec).expect("json");
    assert!(json.contains(r#""address":"10.0.0.1:11211""#), "{json}");
    let back: RingSpec = serde_json::from_str(&json).expect("back");
    assert_eq!(back, spec);
}

#[test]
fn bad_rings_are_refused_with_the_library_code() {
    let cases = [
        (r#"{"profile":"ketama2","nodes":[]}"#, "UNKNOWN_PROFILE"),
        (
            r#"{"profile":"native","nodes":[{"name":"a","weight":0}]}"#,
            "ZERO_WEIGHT",
        ),
        (
            r#"{"profile":"native","nodes":[{"name":"a","weight":-4}]}"#,
            "NEGATIVE_WEIGHT",
        ),
        (
            r#"{"profile":"native","nodes":[{"name":"a","weight":4294967296}]}"#,
            "WEIGHT_TOO_LARGE",
        ),
        (
            r#"{"profile":"native","nodes":[{"name":"a"},{"name":"a"}]}"#,
            "DUPLICATE_NODE",
        ),
        (
            r#"{"profile":"native","nodes":[{"name":""}]}"#,
            "EMPTY_NODE_NAME",
        ),
        (
            r#"{"profile":"native","default_port":11211,"nodes":[]}"#,
            "BAD_OPTION",
        ),
        (
            r#"{"profile":"native","vnodes":0,"nodes":[]}"#,
            "BAD_VNODES",
        ),
        (
            r#"{"profile":"libketama","points_per_digest":5,"nodes":[]}"#,
            "BAD_POINTS_PER_DIGEST",
        ),
        (
            r#"{"profile":"libketama","default_port":70000,"nodes":[]}"#,
            "BAD_PORT",
        ),
        (
            r#"{"profile":"native","vnodes":65536,"nodes":[{"name":"a","weight":4000}]}"#,
            "TOO_MANY_POINTS",
        ),
    ];
    for (json, code) in cases {
        let err = serde_json::from_str::<Ring>(json).expect_err(json);
        assert!(
            err.to_string().contains(&format!("[{code}]")),
            "{json}: {err}"
        );
    }
    // Unknown fields (a typo) are refused, not ignored.
    let err = serde_json::from_str::<Ring>(r#"{"profile":"native","vnode":10,"nodes":[]}"#)
        .expect_err("typo");
    assert!(err.to_string().contains("vnode"), "{err}");
}

fn sample_map() -> SlotMap {
    let mut map = SlotMap::new();
    let a = map
        .add_master("aaaaaaaa", Address::new("10.0.0.1", 7000))
        .expect("a");
    let b = map.add_master("", Address::new("::1", 7001)).expect("b");
    let c = map
        .add_master("cccccccc", Address::new("cache.local", 7002))
        .expect("c");
    let r = map
        .add_replica(a, "rrrrrrrr", Address::new("10.0.0.9", 7000))
        .expect("r");
    map.set_health(a, Health::Online).expect("health");
    map.set_health(r, Health::Loading).expect("health");
    map.assign(0..=5000, a).expect("assign");
    map.assign(5001..=5001, b).expect("assign");
    map.assign(9000..=16000, b).expect("assign");
    map.assign(16001..=16383, a).expect("assign");
    let _ = c; // a master with no slots; 5002..=8999 unassigned
    map
}

#[test]
fn slot_maps_round_trip_through_json_and_toml() {
    let map = sample_map();
    let json = serde_json::to_string(&map).expect("json");
    let back: SlotMap = serde_json::from_str(&json).expect("from json");
    assert_eq!(back, map);
    let toml_text = toml::to_string(&map).expect("toml");
    let back: SlotMap = toml::from_str(&toml_text).expect("from toml");
    assert_eq!(back, map);
    let empty = SlotMap::new();
    let back: SlotMap =
        serde_json::from_str(&serde_json::to_string(&empty).expect("json")).expect("back");
    assert_eq!(back, empty);
}

#[test]
fn slot_map_shape_is_stable() {
    let value = serde_json::to_value(sample_map()).expect("json");
    assert_eq!(
        value,
        serde_json::json!({"nodes": [
            {"id": "aaaaaaaa", "addr": "10.0.0.1:7000", "role": "master", "health": "online",
             "slots": [[0, 5000], [16001, 16383]]},
            {"id": "", "addr": "[::1]:7001", "role": "master", "health": "unknown",
             "slots": [[5001, 5001], [9000, 16000]]},
            {"id": "cccccccc", "addr": "cache.local:7002", "role": "master", "health": "unknown"},
            {"id": "rrrrrrrr", "addr": "10.0.0.9:7000", "role": "replica", "master": 0,
             "health": "loading"}
        ]})
    );
}

#[test]
fn bad_slot_maps_are_refused_with_the_library_code() {
    let node = |extra: &str| format!(r#"{{"addr":"h:1","role":"master"{extra}}}"#);
    let cases = [
        (
            format!(
                r#"{{"nodes":[{},{}]}}"#,
                node(r#","slots":[[0,10]]"#),
                node(r#","slots":[[5,6]]"#)
            ),
            "INCONSISTENT_TOPOLOGY",
        ),
        (
            format!(r#"{{"nodes":[{}]}}"#, node(r#","slots":[[10,5]]"#)),
            "BAD_RANGE",
        ),
        (
            format!(r#"{{"nodes":[{}]}}"#, node(r#","slots":[[0,16384]]"#)),
            "BAD_RANGE",
        ),
        (
            r#"{"nodes":[{"addr":"h","role":"master"}]}"#.to_string(),
            "BAD_ADDRESS",
        ),
        (
            r#"{"nodes":[{"addr":"h:0","role":"master"}]}"#.to_string(),
            "BAD_PORT",
        ),
        (
            r#"{"nodes":[{"addr":"h:1","role":"replica","master":0}]}"#.to_string(),
            "UNKNOWN_NODE",
        ),
        (
            // Found by the serde_read fuzz target: a replica must name its master.
            format!(
                r#"{{"nodes":[{},{{"addr":"h:2","role":"replica"}}]}}"#,
                node(r#","slots":[[3,8191]]"#)
            ),
            "INCONSISTENT_TOPOLOGY",
        ),
        (
            format!(
                r#"{{"nodes":[{},{{"addr":"h:2","role":"replica","master":0}},{{"addr":"h:3","role":"replica","master":1}}]}}"#,
                node("")
            ),
            "NOT_A_MASTER",
        ),
        (
            format!(
                r#"{{"nodes":[{},{{"addr":"h:2","role":"replica","master":0,"slots":[[1,1]]}}]}}"#,
                node("")
            ),
            "NOT_A_MASTER",
        ),
        (
            format!(
                r#"{{"nodes":[{},{}]}}"#,
                node(r#","id":"x""#),
                node(r#","id":"x""#)
            ),
            "DUPLICATE_NODE",
        ),
    ];
    for (json, code) in cases {
        let err = serde_json::from_str::<SlotMap>(&json).expect_err(&json);
        assert!(
            err.to_string().contains(&format!("[{code}]")),
            "{json}: {err}"
        );
    }
    for bad in [
        r#"{"nodes":[{"addr":"h:1","role":"primary"}]}"#,
        r#"{"nodes":[{"addr":"h:1","role":"master","health":"sick"}]}"#,
        r#"{"nodes":[{"addr":"h:1","role":"master","colour":"red"}]}"#,
    ] {
        assert!(serde_json::from_str::<SlotMap>(bad).is_err(), "{bad}");
    }
}

#[test]
fn plans_round_trip_and_apply_after_reading() {
    let map = sample_map();
    let weights: Vec<_> = map.masters().map(|(i, _)| (i, 1)).collect();
    let plan = Plan::new(&map, &weights).expect("plan");
    assert!(!plan.is_empty());
    let json = serde_json::to_string(&plan).expect("json");
    let back: Plan = serde_json::from_str(&json).expect("from json");
    assert_eq!(back, plan);
    let toml_text = toml::to_string(&plan).expect("toml");
    let back: Plan = toml::from_str(&toml_text).expect("from toml");
    assert_eq!(back, plan);
    // A map and its plan, both read back, apply as the originals do.
    let mut want = map.clone();
    plan.apply(&mut want).expect("apply");
    let mut got: SlotMap =
        serde_json::from_str(&serde_json::to_string(&map).expect("map json")).expect("map back");
    back.apply(&mut got).expect("apply read-back plan");
    assert_eq!(got, want);
    // `ideal` is derived from the weights, whatever the text says.
    let mut value = serde_json::to_value(&plan).expect("value");
    value["targets"][0]["ideal"] = serde_json::json!(1.0);
    let read: Plan = serde_json::from_value(value).expect("read");
    assert_eq!(read, plan);
}

#[test]
fn plan_shape_and_refusals() {
    let mut map = SlotMap::new();
    let a = map.add_master("a", Address::new("h", 1)).expect("a");
    let b = map.add_master("b", Address::new("h", 2)).expect("b");
    map.assign(0..=16383, a).expect("assign");
    map.unassign(16383..=16383).expect("unassign");
    let plan = Plan::new(&map, &[(a, 1), (b, 1)]).expect("plan");
    assert_eq!(
        serde_json::to_value(&plan).expect("json"),
        serde_json::json!({
            "moves": [
                {"start": 8192, "end": 16382, "from": 0, "to": 1},
                {"start": 16383, "end": 16383, "to": 1}
            ],
            "targets": [
                {"node": 0, "weight": 1, "ideal": 8192.0, "before": 16383, "after": 8192},
                {"node": 1, "weight": 1, "ideal": 8192.0, "before": 0, "after": 8192}
            ]
        })
    );
    for (json, code) in [
        (
            r#"{"moves":[{"start":5,"end":4,"to":0}],"targets":[]}"#,
            "BAD_RANGE",
        ),
        (
            r#"{"moves":[{"start":5,"end":16384,"to":0}],"targets":[]}"#,
            "BAD_RANGE",
        ),
        (
            r#"{"moves":[],"targets":[{"node":0,"weight":0,"before":0,"after":0}]}"#,
            "BAD_PLAN",
        ),
    ] {
        let err = serde_json::from_str::<Plan>(json).expect_err(json);
        assert!(
            err.to_string().contains(&format!("[{code}]")),
            "{json}: {err}"
        );
    }
}
