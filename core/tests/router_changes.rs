//! `Router::add` and `Router::remove` for every entry of the registry: the router after a
//! sequence of changes is the one a build over the new node list gives, except for
//! `java-hashcode` and `redis-rb`, whose peers change a map in place (a later put wins a
//! shared point, a removal deletes the positions the node hashes to); those two are held
//! to models written from the peers' code (a Java `ConcurrentSkipListMap`, redis-rb's
//! `Redis::HashRing`). `fleet_vectors.rs` holds `java-hashcode` to the reference class run
//! on the JDK (`java_reference.json`).

use std::collections::{BTreeMap, HashMap};

use keyroute::engine::{Engine, EngineError, Router, ENTRIES};
use keyroute::hashes::{crc32, java_abs, java_string_hash};
use keyroute::ring::NodeSpec;

fn node(name: &str, weight: u32) -> NodeSpec {
    NodeSpec {
        name: name.into(),
        weight,
        address: None,
    }
}

fn keys(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("key-{i}"))
        .chain(["", "{tag}x", "polygenelubricants", "日本語", "🎉"].map(String::from))
        .collect()
}

/// The names, owners and first candidates of `a` and `b` are the same.
fn same(a: &Router, b: &Router, keys: &[String], what: &str) {
    let names = |r: &Router| -> Vec<(String, u32)> {
        (0..r.len())
            .map(|i| (r.node_name(i).to_string(), r.node_weight(i)))
            .collect()
    };
    assert_eq!(names(a), names(b), "{what}: nodes");
    for (n, k) in keys.iter().enumerate() {
        assert_eq!(
            a.get(k.as_bytes()),
            b.get(k.as_bytes()),
            "{what}: key {k:?}"
        );
        if n % 50 == 0 {
            assert_eq!(
                a.get_n(k.as_bytes(), 3),
                b.get_n(k.as_bytes(), 3),
                "{what}: candidates of {k:?}"
            );
        }
    }
}

fn code(e: EngineError) -> &'static str {
    e.code().as_str()
}

/// Options under which each entry is also run (besides its defaults).
fn option_sets(name: &str) -> Vec<Vec<(&'static str, &'static str)>> {
    let mut sets = vec![vec![]];
    match name {
        "java-hashcode" => sets.push(vec![("node", "prefix"), ("vnodes", "40")]),
        "maglev" => sets.push(vec![("table_size", "1009")]),
        "twemproxy" => sets.push(vec![("distribution", "modula"), ("hash", "fnv1a_64")]),
        "redis-rb" => sets.push(vec![("replicas", "7"), ("hash_tag", "false")]),
        "jedis" => sets.push(vec![("version", "4")]),
        "envoy-ring" => sets.push(vec![("min_ring_size", "64"), ("max_ring_size", "64")]),
        "libketama" | "native" => sets.push(vec![("vnodes", "7")]),
        _ => {}
    }
    sets
}

#[test]
fn add_and_remove_give_what_a_build_over_the_new_list_gives_for_every_entry() {
    let keys = keys(600);
    let a = |i: u32| format!("10.0.0.{i}:11211");
    for e in ENTRIES {
        for options in option_sets(e.name()) {
            for weighted in [false, true] {
                let w = |i: u32| if weighted { 1 + i % 3 } else { 1 };
                let mut list: Vec<NodeSpec> = (1..=5).map(|i| node(&a(i), w(i))).collect();
                let Ok(mut r) = e.build(&list, &options) else {
                    assert!(weighted, "{}", e.name());
                    continue; // a peer without weights
                };
                let steps: [(bool, u32); 8] = [
                    (true, 6),
                    (false, 2),
                    (true, 7),
                    (false, 1),
                    (true, 2),
                    (false, 7),
                    (false, 6),
                    (true, 9),
                ];
                for (add, i) in steps {
                    let what = format!(
                        "{} {options:?} weighted {weighted}: {} {}",
                        e.name(),
                        if add { "add" } else { "remove" },
                        a(i)
                    );
                    if add {
                        r.add(node(&a(i), w(i))).expect(&what);
                        list.push(node(&a(i), w(i)));
                    } else {
                        let gone = r.remove(&a(i)).expect(&what);
                        assert_eq!((gone.name.as_str(), gone.weight), (a(i).as_str(), w(i)));
                        list.retain(|n| n.name != a(i));
                    }
                    let rebuilt = e.build(&list, &options).expect(&what);
                    same(&r, &rebuilt, &keys, &what);
                    assert_eq!(r.name(), e.name());
                }
            }
        }
    }
}

/// A ring given to `Router::from_ring` keeps its profile's options through changes.
#[test]
fn a_router_over_a_ring_changes_as_the_ring_does() {
    use keyroute::ring::{Profile, Ring};
    let keys = keys(300);
    let profiles = [
        Profile::libketama().with_vnodes(7).expect("vnodes"),
        Profile::native().with_vnodes(3).expect("vnodes"),
    ];
    for p in profiles {
        let ring = Ring::with_nodes(p, [("a", 1), ("b", 2), ("c", 1)]).expect("ring");
        let mut r = Router::from_ring(ring);
        r.add(node("d", 3)).expect("add");
        r.remove("b").expect("remove");
        let want = Ring::with_nodes(p, [("a", 1), ("c", 1), ("d", 3)]).expect("ring");
        same(&r, &Router::from_ring(want), &keys, r.name());
    }
}

#[test]
fn every_entry_goes_down_to_no_node_and_back() {
    for e in ENTRIES {
        let n = e.name();
        let mut r = e.build(&[node("10.0.0.1:11211", 1)], &[]).expect(n);
        r.remove("10.0.0.1:11211").expect(n);
        assert!(r.is_empty(), "{n}");
        assert_eq!(r.get(b"k"), None, "{n}");
        assert!(r.get_n(b"k", 3).is_empty(), "{n}");
        r.add(node("10.0.0.2:11211", 1)).expect(n);
        assert_eq!(r.get(b"k"), Some("10.0.0.2:11211"), "{n}");
    }
}

#[test]
fn refused_changes_leave_the_router_as_it_was() {
    let keys = keys(200);
    for e in ENTRIES {
        let list = [node("10.0.0.1:11211", 1), node("10.0.0.2:11211", 1)];
        let n = e.name();
        let mut r = e.build(&list, &[]).expect(n);
        let before = r.clone();
        assert_eq!(
            code(r.add(node("10.0.0.1:11211", 1)).unwrap_err()),
            "DUPLICATE_NODE",
            "{n}"
        );
        assert_eq!(
            code(r.add(node("", 1)).unwrap_err()),
            "EMPTY_NODE_NAME",
            "{n}"
        );
        assert_eq!(code(r.add(node("x", 0)).unwrap_err()), "ZERO_WEIGHT", "{n}");
        assert_eq!(code(r.remove("nope").unwrap_err()), "UNKNOWN_NODE", "{n}");
        same(&r, &before, &keys, n);
    }
    let mut j = Router::build("java-hashcode", &[node("a", 1)], &[]).expect("j");
    assert_eq!(code(j.add(node("b", 2)).unwrap_err()), "BAD_OPTION");
    assert_eq!(j.len(), 1);
}

#[test]
fn a_router_read_from_a_configuration_is_changed_by_the_configuration() {
    let text =
        "backend app\n    balance uri\n    hash-type consistent\n    server web1 10.0.0.1:80\n";
    let mut r = keyroute::config::read_config(text, "h.cfg", None, &mut |_| None)
        .expect("config")
        .router;
    assert_eq!(
        code(r.add(node("web2", 1)).unwrap_err()),
        "UNSUPPORTED_CONFIG"
    );
    assert_eq!(code(r.remove("web1").unwrap_err()), "UNSUPPORTED_CONFIG");
    assert_eq!(r.len(), 1);
}

/// The reference ring as issue 38 describes it, in Rust: a `ConcurrentSkipListMap<Integer,
/// String>` of vnode names `node + "-N" + i` at `Math.abs(vnode.hashCode())`; `put`
/// overwrites, `removeNode` removes the keys its vnodes hash to, a key goes to
/// `tailMap(Math.abs(key.hashCode()))`, else the first entry, and the owner is the vnode
/// name cut at `-N<i>` (or, as the reference answers, `split("-")[0]`).
struct SkipList {
    map: BTreeMap<i32, String>,
    vnodes: u32,
    prefix: bool,
}

impl SkipList {
    fn hash(s: &str) -> i32 {
        java_abs(java_string_hash(s.as_bytes()))
    }
}

/// A peer's ring as its code reads, changed and asked as the router is.
trait Model {
    fn add(&mut self, node: &str);
    fn remove(&mut self, node: &str);
    fn get(&self, key: &str) -> Option<String>;
}

impl Model for SkipList {
    fn add(&mut self, node: &str) {
        for i in 0..self.vnodes {
            let v = format!("{node}-N{i}");
            self.map.insert(Self::hash(&v), v);
        }
    }
    fn remove(&mut self, node: &str) {
        for i in 0..self.vnodes {
            self.map.remove(&Self::hash(&format!("{node}-N{i}")));
        }
    }
    fn get(&self, key: &str) -> Option<String> {
        let h = Self::hash(key);
        let (_, v) = self
            .map
            .range(h..)
            .next()
            .or_else(|| self.map.iter().next())?;
        Some(if self.prefix {
            v.split('-').next().unwrap_or_default().to_string()
        } else {
            v[..v.rfind("-N").expect("-N")].to_string()
        })
    }
}

/// A xorshift generator for the sequences.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// 60 random adds and removes of names from `pool` on a router of `engine` and on
/// `model`: every key gets the same answer after each. Returns how many of the states
/// differ from a build over the same node list.
fn against_model(
    engine: &str,
    options: &[(&str, &str)],
    pool: &[&str],
    keys: &[String],
    model: &mut dyn Model,
    seed: u64,
) -> usize {
    let mut rng = Rng(seed);
    let mut r = Router::build(engine, &[], options).expect("empty");
    let mut on: Vec<&str> = Vec::new();
    let mut differed = 0;
    for step in 0..60 {
        let name = pool[rng.below(pool.len())];
        if on.contains(&name) {
            r.remove(name).expect("remove");
            model.remove(name);
            on.retain(|n| *n != name);
        } else {
            r.add(node(name, 1)).expect("add");
            model.add(name);
            on.push(name);
        }
        for k in keys {
            assert_eq!(
                r.get(k.as_bytes()).map(str::to_string),
                model.get(k),
                "{engine} step {step} ({name}), nodes {on:?}, key {k:?}"
            );
        }
        let list: Vec<NodeSpec> = on.iter().map(|n| node(n, 1)).collect();
        let rebuilt = Router::build(engine, &list, options).expect("build");
        differed += usize::from(
            keys.iter()
                .any(|k| rebuilt.get(k.as_bytes()) != r.get(k.as_bytes())),
        );
    }
    differed
}

#[test]
fn java_hashcode_changes_as_the_skip_list_does() {
    // "Aa" and "BB" share every hashCode, and so do "Aa-1" and "BB-1", and the four of
    // AaAa, AaBB, BBAa, BBBB; the rest are plain.
    let pool = [
        "Aa", "BB", "Aa-1", "BB-1", "AaAa", "AaBB", "BBAa", "BBBB", "cache3", "redis-1", "redis-2",
        "-lead", "a--b",
    ];
    let keys = keys(400);
    for (prefix, vnodes) in [(false, 150u32), (true, 150), (false, 3)] {
        let v = vnodes.to_string();
        let mode = if prefix { "prefix" } else { "name" };
        let options = [("vnodes", v.as_str()), ("node", mode)];
        let mut model = SkipList {
            map: BTreeMap::new(),
            vnodes,
            prefix,
        };
        let seed = 0x9e37_79b9_7f4a_7c15 ^ u64::from(vnodes) ^ u64::from(prefix);
        let differed = against_model("java-hashcode", &options, &pool, &keys, &mut model, seed);
        // The history shows: some states are not what a build over the same list gives.
        assert!(differed > 0, "{vnodes} {prefix}");
    }
}

#[test]
fn the_issue_s_sequence_leaves_aa_without_a_point() {
    let mut r = Router::build("java-hashcode", &[], &[]).expect("empty");
    for n in ["Aa", "BB", "cache3"] {
        r.add(node(n, 1)).expect("add");
    }
    r.remove("BB").expect("remove");
    let rebuilt =
        Router::build("java-hashcode", &[node("Aa", 1), node("cache3", 1)], &[]).expect("build");
    let keys = keys(2000);
    let differ = keys
        .iter()
        .filter(|k| r.get(k.as_bytes()) != rebuilt.get(k.as_bytes()))
        .count();
    assert!(keys.iter().all(|k| r.get(k.as_bytes()) == Some("cache3")));
    assert!(differ > 800, "{differ}");
    assert_eq!(r.len(), 2);
    assert_eq!(r.node_name(0), "Aa");
}

#[test]
fn node_prefix_shows_the_part_before_the_first_dash() {
    let list: Vec<NodeSpec> = ["redis-1", "redis-2", "plain", "-lead", "a--b", "узел-2"]
        .iter()
        .map(|n| node(n, 1))
        .collect();
    let named = Router::build("java-hashcode", &list, &[]).expect("name");
    let cut = Router::build("java-hashcode", &list, &[("node", "prefix")]).expect("prefix");
    let shown: Vec<&str> = (0..cut.len()).map(|i| cut.node_name(i)).collect();
    assert_eq!(shown, ["redis", "redis", "plain", "", "a", "узел"]);
    for k in keys(300) {
        let i = named.get_index(k.as_bytes());
        assert_eq!(cut.get_index(k.as_bytes()), i);
        let whole = named.get(k.as_bytes()).expect("owner");
        assert_eq!(cut.get(k.as_bytes()), whole.split('-').next());
    }
    let err = Router::build("java-hashcode", &list, &[("node", "host")]).unwrap_err();
    assert_eq!(code(err), "BAD_OPTION");
    // A removal names the node by its own name.
    let mut cut = cut;
    assert_eq!(cut.remove("redis-2").expect("remove").name, "redis-2");
    assert_eq!(code(cut.remove("redis").unwrap_err()), "UNKNOWN_NODE");
}

/// redis-rb's `Redis::HashRing` (4.x), as its source reads: `add_node` appends the node
/// and sets `@ring[crc32("#{id}:#{i}")] = node` (pushing each key to `@sorted_keys`,
/// repeats and all), `remove_node` deletes those keys from `@ring` and `@sorted_keys`;
/// `get_node` takes the last sorted key `<=` the key's CRC32, else the last one.
#[derive(Default)]
struct HashRing {
    ring: HashMap<u32, String>,
    sorted: Vec<u32>,
}

impl Model for HashRing {
    fn add(&mut self, id: &str) {
        for i in 0..160 {
            let k = crc32(format!("{id}:{i}").as_bytes());
            self.ring.insert(k, id.into());
            self.sorted.push(k);
        }
        self.sorted.sort_unstable();
    }
    fn remove(&mut self, id: &str) {
        for i in 0..160 {
            let k = crc32(format!("{id}:{i}").as_bytes());
            self.ring.remove(&k);
            self.sorted.retain(|&s| s != k);
        }
    }
    fn get(&self, key: &str) -> Option<String> {
        let h = crc32(key.as_bytes());
        let i = match self.sorted.partition_point(|&s| s <= h) {
            0 => self.sorted.len().checked_sub(1)?,
            n => n - 1,
        };
        self.ring.get(&self.sorted[i]).cloned()
    }
}

#[test]
fn redis_rb_changes_as_its_hash_ring_does() {
    // Two ids sharing one point (from tests/vectors/fleet/redis_rb.json's tie case, found
    // by choose.py), and plain ones.
    let pool = ["node-hxx9iy7g", "node-sse15tpl", "node-x", "a", "b", "c"];
    let points = |id: &str| -> Vec<u32> {
        (0..160)
            .map(|i| crc32(format!("{id}:{i}").as_bytes()))
            .collect()
    };
    let other = points("node-sse15tpl");
    assert!(points("node-hxx9iy7g").iter().any(|p| other.contains(p)));
    let opts = [("hash_tag", "false")];
    let mut keys = keys(400);
    // Keys just at and below the shared point 3060411278 (where the tie shows).
    keys.extend((0..400_000u32).map(|i| format!("t{i}")).filter(|k| {
        let h = crc32(k.as_bytes());
        (3_060_000_000..=3_060_411_278).contains(&h)
    }));
    let mut model = HashRing::default();
    let differed = against_model(
        "redis-rb",
        &opts,
        &pool,
        &keys,
        &mut model,
        0x2545_f491_4f6c_dd1d,
    );
    assert!(differed > 0);
}

/// docs/design.md's table of run-time changes names every engine and profile once.
#[test]
fn the_design_names_what_each_engine_s_peer_does_at_run_time() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/design.md");
    let text = std::fs::read_to_string(path).expect("design.md");
    let section = text
        .split("### Run-time changes")
        .nth(1)
        .and_then(|s| s.split("\n### ").next())
        .expect("the section");
    let mut named = Vec::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).expect("cell");
        named.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    named.sort();
    let mut names: Vec<String> = keyroute::engine::NAMES
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.sort();
    assert_eq!(named, names);
    // The two that change in place are the two held to their peers' models above.
    let in_place: Vec<&str> = section
        .lines()
        .filter(|l| l.contains("in place, as the map"))
        .filter_map(|l| l.split('`').nth(1))
        .collect();
    assert_eq!(in_place, ["java-hashcode", "redis-rb"]);
}
