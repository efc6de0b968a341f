//! The entrance contract (`tests/contract/bad_inputs.json`) in Rust: every case the core's
//! API can express gives the listed value or error code. Python, JavaScript and C run the
//! same file.

use std::path::PathBuf;

use keyroute::error::ErrorCode;
use keyroute::ring::{self, checked_weight, Profile, ProfileOptions, Ring};
use keyroute::select::{checked_initial, checked_picks, Pool, Restore, SideKey};
use keyroute::slot::{Address, NodeIndex, Plan, Redirect, RedirectKind, SlotMap};
use serde_json::{json, Value};

fn table() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/contract/bad_inputs.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

/// A JSON integer as the wide integer bindings pass on (2^64 and beyond arrive as
/// floats, exact for the values the table uses).
fn int(v: &Value) -> i128 {
    if let Some(i) = v.as_i64() {
        return i.into();
    }
    if let Some(u) = v.as_u64() {
        return u.into();
    }
    let f = v.as_f64().expect("a number");
    assert_eq!(f.fract(), 0.0, "an integer: {v}");
    f as i128
}

fn text(v: &Value) -> &str {
    v.as_str().expect("a string")
}

type Outcome = Result<Value, ErrorCode>;

fn options(args: &Value) -> ProfileOptions {
    let o = &args["options"];
    ProfileOptions {
        vnodes: o.get("vnodes").map(int),
        points_per_digest: o.get("points_per_digest").map(int),
        default_port: o.get("default_port").map(int),
    }
}

fn ring(args: &Value) -> Result<Ring, ErrorCode> {
    let profile =
        Profile::from_options(text(&args["profile"]), &options(args)).map_err(|e| e.code())?;
    let mut nodes = Vec::new();
    for pair in args["nodes"].as_array().expect("a list of nodes") {
        let name = text(&pair[0]);
        nodes.push((
            name,
            checked_weight(name, int(&pair[1])).map_err(|e| e.code())?,
        ));
    }
    Ring::with_nodes(profile, nodes).map_err(|e| e.code())
}

fn pairs(nodes: Vec<(String, u32)>) -> Value {
    Value::Array(nodes.into_iter().map(|(n, w)| json!([n, w])).collect())
}

fn run(op: &str, args: &Value) -> Outcome {
    let code = |e: keyroute::slot::MapError| e.code();
    match op {
        "parse_nodes" => {
            let nodes = ring::parse_nodes(text(&args["text"])).map_err(|e| e.code())?;
            Ok(pairs(
                nodes.into_iter().map(|n| (n.name, n.weight)).collect(),
            ))
        }
        "parse_weights" => Ok(pairs(
            ring::parse_weights(text(&args["text"])).map_err(|e| e.code())?,
        )),
        "ring" => {
            let r = ring(args)?;
            Ok(json!(r
                .nodes()
                .iter()
                .map(|n| n.name())
                .collect::<Vec<_>>()))
        }
        "ring_change" => {
            let mut r = ring(args)?;
            let name = text(&args["name"]);
            let weight = || checked_weight(name, int(&args["weight"]));
            match text(&args["change"]) {
                "add" => weight().and_then(|w| r.add(name, w)),
                "remove" => r.remove(name).map(|_| ()),
                "set_weight" => weight().and_then(|w| r.set_weight(name, w)),
                other => panic!("unknown change {other}"),
            }
            .map_err(|e| e.code())?;
            Ok(Value::Null)
        }
        "ring_get_n" => {
            let r = ring(args)?;
            let n = usize::try_from(int(&args["n"])).unwrap_or(usize::MAX);
            Ok(json!(r.get_n(text(&args["key"]).as_bytes(), n).len()))
        }
        "diff" => {
            let (a, b) = (ring(&args["a"])?, ring(&args["b"])?);
            ring::diff(&a, &b).map_err(|e| e.code())?;
            Ok(Value::Null)
        }
        "pool_seed" => {
            let initial = checked_initial(int(&args["initial"])).map_err(|e| e.code())?;
            let members: Vec<&str> = args["members"]
                .as_array()
                .expect("members")
                .iter()
                .map(text)
                .collect();
            let added = Pool::new()
                .seed(members, initial, false)
                .map_err(|e| e.code())?;
            Ok(json!(added))
        }
        "pool_restore" => {
            let mode: Restore = text(&args["mode"])
                .parse()
                .map_err(|e: keyroute::select::UnknownRestoreMode| e.code())?;
            let count = Pool::new()
                .restore(text(&args["member"]).as_bytes(), mode)
                .map_err(|e| e.code())?;
            Ok(json!(count))
        }
        "pool_pick_many" => {
            let n = checked_picks(int(&args["n"])).map_err(|e| e.code())?;
            let mut pool = Pool::new();
            let members: Vec<&str> = args["members"]
                .as_array()
                .expect("members")
                .iter()
                .map(text)
                .collect();
            pool.seed(members, 0, false).map_err(|e| e.code())?;
            Ok(json!(pool.pick_many(n).len()))
        }
        "pool_key" => {
            SideKey::new(text(&args["key"]).as_bytes()).map_err(|e| e.code())?;
            Ok(Value::Null)
        }
        "slot_map_add_master" => {
            let addr =
                Address::checked(text(&args["host"]), int(&args["port"])).map_err(|e| e.code())?;
            SlotMap::new().add_master("", addr).map_err(|e| e.code())?;
            Ok(Value::Null)
        }
        "slot_map_assign" => {
            let mut map = SlotMap::new();
            let node = map
                .add_master("", Address::new("10.0.0.1", 7000))
                .map_err(code)?;
            let (start, end) = (int(&args["start"]), int(&args["end"]));
            let start = u16::try_from(start).map_err(|_| ErrorCode::BadRange)?;
            let end = u16::try_from(end).map_err(|_| ErrorCode::BadRange)?;
            map.assign(start..=end, node).map_err(|e| e.code())?;
            Ok(Value::Null)
        }
        "redirect" => {
            let r = Redirect::parse(text(&args["text"])).map_err(|e| e.code())?;
            let kind = match r.kind {
                RedirectKind::Moved => "MOVED",
                RedirectKind::Ask => "ASK",
            };
            Ok(json!([kind, r.slot, r.host, r.port]))
        }
        "plan" => {
            let mut map = SlotMap::new();
            let mut index: Vec<(String, NodeIndex)> = Vec::new();
            for master in args["masters"].as_array().expect("masters") {
                let name = text(&master[0]);
                let node = map
                    .add_master("", Address::parse(name).expect("address"))
                    .map_err(code)?;
                for range in master[1].as_array().expect("ranges") {
                    let (a, b) = (int(&range[0]) as u16, int(&range[1]) as u16);
                    map.assign(a..=b, node).map_err(|e| e.code())?;
                }
                index.push((name.to_string(), node));
            }
            let weights: Vec<(NodeIndex, u64)> = args["weights"]
                .as_array()
                .expect("weights")
                .iter()
                .map(|w| {
                    let node = index
                        .iter()
                        .find(|(n, _)| n == text(&w[0]))
                        .expect("a master")
                        .1;
                    (node, int(&w[1]) as u64)
                })
                .collect();
            Plan::new(&map, &weights).map_err(|e| e.code())?;
            Ok(Value::Null)
        }
        "get_many" | "key_slots" => unreachable!("skipped for rust"),
        other => panic!("unknown op {other}"),
    }
}

#[test]
fn every_case_gives_its_value_or_code() {
    let table = table();
    let mut ran = 0;
    for case in table["cases"].as_array().expect("cases") {
        let id = text(&case["id"]);
        if case["skip"].get("rust").is_some() {
            continue;
        }
        let got = run(text(&case["op"]), &case["args"]);
        match (case.get("code"), case.get("ok")) {
            (Some(code), None) => {
                let want = ErrorCode::from_name(text(code))
                    .unwrap_or_else(|| panic!("{id}: unknown code {code}"));
                assert_eq!(got, Err(want), "{id}");
            }
            (None, Some(ok)) => {
                let got = got.unwrap_or_else(|e| panic!("{id}: expected {ok}, got error {e}"));
                assert_eq!(&got, ok, "{id}");
            }
            _ => panic!("{id}: a case has exactly one of code and ok"),
        }
        ran += 1;
    }
    assert!(ran >= 60, "only {ran} cases ran");
}

#[test]
fn every_code_in_the_table_exists() {
    for case in table()["cases"].as_array().expect("cases") {
        if let Some(code) = case.get("code") {
            assert!(ErrorCode::from_name(text(code)).is_some(), "{case}");
        }
    }
}
