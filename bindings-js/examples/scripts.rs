//! Prints core's `keyroute::script::SCRIPTS` as a JSON array of `{name, text, sha1,
//! numKeys, summary}`: `make build-js` writes it into the package (`SCRIPTS` in
//! JavaScript), so that the Lua texts ship as JavaScript strings rather than inside the
//! size-budgeted .wasm.
//!
//! ```text
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
