//! `docs/parity.md` covers every public function of the core: each must be named (or
//! covered by a `Type::*`) in the `core items` column of some row, so that a new core
//! capability cannot ship without saying where each language stands.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `Type::name` for public methods of inherent impls, `name` for free functions, read
/// from the sources (test modules excluded).
fn public_functions() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut files = Vec::new();
    collect(&root().join("src"), &mut files);
    for file in files {
        let text = std::fs::read_to_string(&file).expect("source");
        let text = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or(&text);
        // (type of the inherent impl, brace depth at which it opened)
        let mut impl_stack: Vec<(Option<String>, i32)> = Vec::new();
        let mut depth = 0i32;
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("").trim();
            if let Some(rest) = code.strip_prefix("impl") {
                if rest.starts_with(' ') || rest.starts_with('<') {
                    let ty = if code.contains(" for ") {
                        None
                    } else {
                        let after_generics = match rest.trim_start().strip_prefix('<') {
                            Some(r) => r.split_once('>').map_or(r, |(_, t)| t),
                            None => rest,
                        };
                        after_generics
                            .trim()
                            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .next()
                            .map(str::to_string)
                    };
                    impl_stack.push((ty, depth));
                }
            }
            for prefix in ["pub fn ", "pub const fn "] {
                if let Some(rest) = code.strip_prefix(prefix) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    match impl_stack.last() {
                        Some((Some(ty), _)) => {
                            out.insert(format!("{ty}::{name}"));
                        }
                        Some((None, _)) => {}
                        None => {
                            out.insert(name);
                        }
                    }
                }
            }
            let bare = without_literals(code);
            depth += bare.matches('{').count() as i32 - bare.matches('}').count() as i32;
            while impl_stack.last().is_some_and(|&(_, d)| depth <= d) {
                impl_stack.pop();
            }
        }
    }
    out
}

/// `code` with the contents of string and char literals removed (they may hold braces).
fn without_literals(code: &str) -> String {
    let mut out = String::new();
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            '\'' if chars.clone().nth(1) == Some('\'') || chars.peek() == Some(&'\\') => {
                // A char literal such as '{' or '\''.
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names in backticks of every row's `core items` cell.
fn covered() -> (BTreeSet<String>, usize) {
    let path = root().join("../docs/parity.md");
    let text = std::fs::read_to_string(&path).expect("docs/parity.md");
    let mut items = BTreeSet::new();
    let mut rows = 0;
    for line in text.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // "", capability, core items, Rust, Python, JavaScript, C, Java, ""
        if cells.len() < 9 || cells[1] == "capability" || cells[1].starts_with("---") {
            continue;
        }
        rows += 1;
        for lang in &cells[3..cells.len() - 1] {
            assert!(
                lang.starts_with("yes: ") || lang.starts_with("no: "),
                "docs/parity.md: a cell must start with `yes: ` or `no: `, in row {:?}: {lang:?}",
                cells[1]
            );
        }
        for item in cells[2].split('`').skip(1).step_by(2) {
            items.insert(item.to_string());
        }
    }
    (items, rows)
}

#[test]
fn every_public_function_has_a_parity_row() {
    let (items, rows) = covered();
    assert!(rows >= 20, "docs/parity.md has {rows} rows");
    let functions = public_functions();
    assert!(
        functions.len() > 100,
        "scanned only {} functions",
        functions.len()
    );
    let missing: Vec<&String> = functions
        .iter()
        .filter(|f| {
            let wildcard = f.split_once("::").map(|(ty, _)| format!("{ty}::*"));
            !items.contains(*f) && !wildcard.is_some_and(|w| items.contains(&w))
        })
        // Error codes are one row for every error type.
        .filter(|f| !f.ends_with("::code"))
        .collect();
    assert!(
        missing.is_empty(),
        "public core functions without a row in docs/parity.md: {missing:?}"
    );
}
