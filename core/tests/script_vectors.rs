//! Every script's name, text, SHA1, key count and summary are the recorded ones
//! (`tests/vectors/scripts/scripts.json`, the output of `cargo run -p keyroute --example
//! scripts`): a script changes only on purpose, with its vector regenerated, since clients
//! and servers that cache scripts by SHA1 see a new script.

use keyroute::script::SCRIPTS;
use serde_json::Value;

fn recorded() -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/vectors/scripts/scripts.json");
    let text = std::fs::read_to_string(&path).expect("tests/vectors/scripts/scripts.json");
    serde_json::from_str(&text).expect("a JSON array")
}

#[test]
fn scripts_are_the_recorded_ones() {
    let recorded = recorded();
    let names: Vec<&str> = recorded
        .iter()
        .map(|s| s["name"].as_str().expect("name"))
        .collect();
    let ours: Vec<&str> = SCRIPTS.iter().map(|s| s.name()).collect();
    assert_eq!(
        ours, names,
        "regenerate: cargo run -q -p keyroute --example scripts > tests/vectors/scripts/scripts.json"
    );
    for (script, want) in SCRIPTS.iter().zip(&recorded) {
        let name = script.name();
        assert_eq!(Some(script.text()), want["text"].as_str(), "{name}: text");
        assert_eq!(Some(script.sha1()), want["sha1"].as_str(), "{name}: SHA1");
        assert_eq!(
            Some(script.num_keys() as u64),
            want["numKeys"].as_u64(),
            "{name}: keys"
        );
        assert_eq!(
            Some(script.summary()),
            want["summary"].as_str(),
            "{name}: summary"
        );
    }
}
