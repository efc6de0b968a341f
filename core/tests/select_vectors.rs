//! Replays every pool operation sequence recorded from a real redis-server
//! (`tests/vectors/pool/*.json`, made by `tests/vectors/gen/pool/generate.py`) on the
//! in-memory [`Pool`] and on the side-key rule, asserting identical results.
#![cfg(feature = "alloc")]

use std::fs;
use std::path::{Path, PathBuf};

use keyroute::script::Script;
use keyroute::select::{side_key, Pool, Restore};
use serde_json::Value;

fn vector_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/pool");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("reading {}: {err}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no vectors in {}", dir.display());
    files
}

fn hex(value: &Value) -> Vec<u8> {
    let text = value.as_str().expect("hex string");
    assert!(text.len().is_multiple_of(2), "odd hex {text:?}");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn opt_u64(value: &Value) -> Option<u64> {
    if value.is_null() {
        None
    } else {
        Some(value.as_u64().expect("a non-negative integer"))
    }
}

fn pairs(value: &Value) -> Vec<(Vec<u8>, u64)> {
    value
        .as_array()
        .expect("array of [hex, count]")
        .iter()
        .map(|pair| (hex(&pair[0]), pair[1].as_u64().expect("count")))
        .collect()
}

fn replay(file: &Path, sequence: &Value) {
    let name = sequence["name"].as_str().expect("name");
    let pool_key = hex(&sequence["pool_key_hex"]);
    assert_eq!(
        side_key(&pool_key).ok(),
        Some(hex(&sequence["side_key_hex"])),
        "{name}: side key"
    );
    let mut pool = Pool::new();
    for (i, op) in sequence["ops"].as_array().expect("ops").iter().enumerate() {
        let at = format!("{}: {name} op {i} {op}", file.display());
        match op["op"].as_str().expect("op") {
            "pick" => {
                let want = if op["result_hex"].is_null() {
                    None
                } else {
                    Some(hex(&op["result_hex"]))
                };
                assert_eq!(pool.pick(), want, "{at}");
            }
            "pick_many" => {
                let n = usize::try_from(op["n"].as_u64().expect("n")).expect("n fits");
                let want: Vec<Vec<u8>> = op["result_hex"]
                    .as_array()
                    .expect("picks")
                    .iter()
                    .map(hex)
                    .collect();
                assert_eq!(pool.pick_many(n), want, "{at}");
            }
            "seed" => {
                let members: Vec<Vec<u8>> = op["members_hex"]
                    .as_array()
                    .expect("members")
                    .iter()
                    .map(hex)
                    .collect();
                let initial = op["initial"].as_u64().expect("initial");
                let overwrite = op["overwrite"].as_bool().expect("overwrite");
                let got = pool.seed(&members, initial, overwrite);
                if op.get("error").is_some() {
                    assert!(got.is_err(), "{at}: expected an error, got {got:?}");
                } else {
                    let want = op["result"].as_u64().expect("result");
                    assert_eq!(got.map(|n| n as u64), Ok(want), "{at}");
                }
            }
            "remove" => {
                let member = hex(&op["member_hex"]);
                assert_eq!(pool.remove(&member), opt_u64(&op["result"]), "{at}");
            }
            "restore" => {
                let member = hex(&op["member_hex"]);
                let mode: Restore = op["mode"].as_str().expect("mode").parse().expect("mode");
                let got = pool.restore(&member, mode);
                if op.get("error").is_some() {
                    assert!(got.is_err(), "{at}: expected an error, got {got:?}");
                } else {
                    let want = op["result"].as_u64().expect("result");
                    assert_eq!(got, Ok(want), "{at}");
                }
            }
            other => panic!("{at}: unknown op {other:?}"),
        }
        let counts: Vec<(Vec<u8>, u64)> = pool.counts().map(|(m, c)| (m.to_vec(), c)).collect();
        assert_eq!(counts, pairs(&op["counts"]), "{at}: counts");
        let removed: Vec<(Vec<u8>, u64)> = pool.removed().map(|(m, c)| (m.to_vec(), c)).collect();
        assert_eq!(removed, pairs(&op["removed"]), "{at}: removed");
        assert_eq!(pool.len(), counts.len(), "{at}: len");
        assert_eq!(pool.is_empty(), counts.is_empty(), "{at}: is_empty");
    }
}

#[test]
fn pool_matches_redis_on_every_recorded_sequence() {
    let mut replayed = 0;
    for file in vector_files() {
        let text = fs::read_to_string(&file).expect("readable vector file");
        let doc: Value = serde_json::from_str(&text).expect("valid JSON");
        for (name, script) in doc["scripts"].as_object().expect("scripts") {
            let ours = Script::by_name(name).unwrap_or_else(|| panic!("unknown script {name}"));
            assert_eq!(
                script["sha1"].as_str(),
                Some(ours.sha1()),
                "{name}: SCRIPT LOAD sha1"
            );
        }
        for sequence in doc["sequences"].as_array().expect("sequences") {
            replay(&file, sequence);
            replayed += 1;
        }
    }
    assert!(replayed >= 10, "only {replayed} sequences");
}
