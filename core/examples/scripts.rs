//! Prints core's `keyroute::script::SCRIPTS` as a JSON array of `{name, text, sha1,
//! numKeys, summary}`, in order:
//!
//! * `tests/vectors/scripts/scripts.json` is its output, recorded (core's
//!   `tests/script_vectors.rs` fails when a script's text, SHA1, keys or summary change
//!   without it; regenerate it with the first command below);
//! * `make build-js` writes it into the npm package (`SCRIPTS` in JavaScript), so that the
//!   Lua texts ship as JavaScript strings rather than inside the size-budgeted .wasm
//!   (keyroute-js builds this same file as its own example).
//!
//! ```text
//! cargo run -q -p keyroute --example scripts > tests/vectors/scripts/scripts.json
//! cargo run -q -p keyroute-js --example scripts > scripts.json
//! ```
use keyroute::script::SCRIPTS;

/// `s` as a JSON string literal.
fn json(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() {
    let items: Vec<String> = SCRIPTS
        .iter()
        .map(|s| {
            format!(
                "{{\"name\": {}, \"text\": {}, \"sha1\": {}, \"numKeys\": {}, \"summary\": {}}}",
                json(s.name()),
                json(s.text()),
                json(s.sha1()),
                s.num_keys(),
                json(s.summary())
            )
        })
        .collect();
    println!("[\n{}\n]", items.join(",\n"));
}
