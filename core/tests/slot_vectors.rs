//! Every vector in `tests/vectors/slot/` (answers of a real `redis-server` to
//! `CLUSTER KEYSLOT`) must match `key_slot`, the batch form and the hash tag rules.
use std::{fs, path::PathBuf};

use keyroute::slot::{crc16_xmodem, hash_tag, key_slot, key_slot_with, key_slots, Crc16Path};
use serde::Deserialize;

#[derive(Deserialize)]
struct VectorFile {
    generator: String,
    peer: String,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    key_hex: String,
    slot: u16,
}

fn unhex(s: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "odd-length hex {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn vector_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors/slot");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// The vectors again with each CRC16 path this CPU has forced (`key_slot_with`); the
/// whole suite also runs under `KEYROUTE_CRC16=table|pclmul` (mk/10-rust.mk).
#[test]
fn every_slot_vector_agrees_on_every_crc16_path() {
    let mut checked = 0;
    for path in vector_files() {
        let text = fs::read_to_string(&path).expect("readable vector file");
        let file: VectorFile = serde_json::from_str(&text).expect("vector file");
        for case in &file.cases {
            let key = unhex(&case.key_hex);
            for p in Crc16Path::ALL.into_iter().filter(|p| p.available()) {
                assert_eq!(
                    key_slot_with(p, &key),
                    Some(case.slot),
                    "{}: key {} by {p:?}",
                    path.display(),
                    case.key_hex
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 5000, "only {checked} forced-path checks");
}

#[test]
fn every_slot_vector_agrees() {
    let files = vector_files();
    assert!(!files.is_empty(), "no slot vectors found");
    let mut total = 0;
    for path in files {
        let text = fs::read_to_string(&path).expect("readable vector file");
        let file: VectorFile = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: bad vector file: {e}", path.display()));
        assert!(!file.generator.is_empty() && !file.peer.is_empty());
        assert!(!file.cases.is_empty(), "{}: no cases", path.display());
        let keys: Vec<Vec<u8>> = file.cases.iter().map(|c| unhex(&c.key_hex)).collect();
        let mut batch = vec![0u16; keys.len()];
        key_slots(&keys, &mut batch).expect("output is long enough");
        let mut wrong = Vec::new();
        for ((case, key), &b) in file.cases.iter().zip(&keys).zip(&batch) {
            let got = key_slot(key);
            assert_eq!(got, crc16_xmodem(hash_tag(key)) & 16383);
            if got != case.slot || b != case.slot {
                wrong.push(format!(
                    "key {} expected {} got {got} (batch {b})",
                    case.key_hex, case.slot
                ));
            }
        }
        assert!(
            wrong.is_empty(),
            "{}: {} of {} cases disagree with {}:\n{}",
            path.display(),
            wrong.len(),
            file.cases.len(),
            file.peer,
            wrong.join("\n")
        );
        total += file.cases.len();
    }
    assert!(total >= 5000, "only {total} slot vectors");
}
