//! The bindings' type declarations of engine and profile names are generated from core's
//! registry (`keyroute::engine::ENTRIES`, `keyroute::ring::ProfileName::ALL`): between a
//! `BEGIN GENERATED` and an `END GENERATED` line of each file below. This test renders
//! them and fails when a committed file differs (set `KEYROUTE_UPDATE_DOCS=1` to write
//! them).

use std::path::PathBuf;

use keyroute::engine::NAMES;
use keyroute::ring::ProfileName;

const BEGIN: &str = "BEGIN GENERATED: engine and profile names from core's registry \
(KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)";
const END: &str = "END GENERATED";

fn profiles() -> Vec<&'static str> {
    ProfileName::ALL.iter().map(|p| p.as_str()).collect()
}

/// `items` joined by spaces, in lines of at most 96 characters starting with `indent`.
fn wrap(items: &[String], indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::from(indent);
    for item in items {
        if line.len() > indent.len() && line.len() + 1 + item.len() > 96 {
            out.push_str(&line);
            out.push('\n');
            line = String::from(indent);
        }
        if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(item);
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// A TypeScript union type.
fn ts_union(doc: &str, name: &str, names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| format!("| '{n}'")).collect();
    format!(
        "/** {doc} */\nexport type {name} =\n{};\n",
        wrap(&items, "  ").trim_end()
    )
}

/// A Python `Literal` alias.
fn py_literal(name: &str, names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| format!("\"{n}\",")).collect();
    format!("{name}: TypeAlias = Literal[\n{}]\n", wrap(&items, "    "))
}

/// (file under the repository root, comment marker, generated text).
fn targets() -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "bindings-js/js/index.d.ts",
            "//",
            ts_union(
                "Ring profiles (`PROFILES`): `native` (SipHash, 64-bit points) and the bit-exact ketama family.",
                "ProfileName",
                &profiles(),
            ),
        ),
        (
            "bindings-js/js/fleet.d.ts",
            "//",
            ts_union(
                "Every engine, fleet profile and ring profile (`ENGINES`), as `Router.engine` names it.",
                "EngineName",
                NAMES,
            ),
        ),
        (
            "bindings-py/python/keyroute/_keyroute.pyi",
            "#",
            format!(
                "{}{}",
                py_literal("_ProfileName", &profiles()),
                py_literal("_EngineName", NAMES)
            ),
        ),
    ]
}

/// `text` with the block between the markers replaced by `body`, or why it cannot be.
fn with_block(text: &str, comment: &str, body: &str) -> Result<String, String> {
    let begin = format!("{comment} {BEGIN}\n");
    let end = format!("{comment} {END}\n");
    let a = text.find(&begin).ok_or("no BEGIN GENERATED line")? + begin.len();
    let b = a + text[a..].find(&end).ok_or("no END GENERATED line")?;
    Ok(format!("{}{body}{}", &text[..a], &text[b..]))
}

#[test]
fn generated_name_declarations_are_current() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let update = std::env::var_os("KEYROUTE_UPDATE_DOCS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (file, comment, body) in targets() {
        let path = root.join(file);
        let have = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let want = with_block(&have, comment, &body).unwrap_or_else(|e| panic!("{file}: {e}"));
        if have != want {
            if update {
                std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{file}: {e}"));
            } else {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?} out of date: run KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names"
    );
}

#[test]
fn wrapping_keeps_every_name_once() {
    let names: Vec<String> = (0..40).map(|i| format!("engine-{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let ts = ts_union("d", "T", &refs);
    assert!(ts.lines().all(|l| l.len() <= 96), "{ts}");
    for n in &refs {
        assert_eq!(ts.matches(&format!("'{n}'")).count(), 1, "{n}");
    }
    let py = py_literal("_T", &refs);
    let body: Vec<&str> = py.lines().skip(1).take_while(|l| *l != "]").collect();
    assert!(py.starts_with("_T: TypeAlias = Literal[\n") && py.ends_with("\n]\n"));
    for l in &body {
        assert!(
            l.len() <= 96 && l.starts_with("    \"") && l.ends_with("\","),
            "{l}"
        );
        assert!(!l.contains(",,") && !l.trim_start().starts_with(','), "{l}");
    }
    assert_eq!(body.concat().matches('"').count(), 2 * refs.len());
}
