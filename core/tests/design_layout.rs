//! docs/design.md §Layout stays true: it names every top-level folder of the repository
//! and every module of core (`src/NAME/` or `src/NAME.rs`, as it is on disk), and the crate
//! docs' feature table names every feature of core's Cargo.toml.

use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_path_buf()
}

/// The text of `## Layout`, up to the next `## ` heading.
fn layout() -> String {
    let design = fs::read_to_string(root().join("docs/design.md")).expect("docs/design.md");
    let start = design.find("\n## Layout\n").expect("a ## Layout section");
    let rest = &design[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    rest[..end].to_string()
}

/// Folders the build or the tools make at the top level: `/NAME` and `/NAME*` lines of
/// .gitignore.
fn ignored(name: &str) -> bool {
    let gitignore = fs::read_to_string(root().join(".gitignore")).unwrap_or_default();
    gitignore.lines().any(|line| {
        let Some(pattern) = line.trim().strip_prefix('/') else {
            return false;
        };
        match pattern.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == pattern.trim_end_matches('/'),
        }
    })
}

#[test]
fn every_top_level_folder_is_in_the_layout() {
    let layout = layout();
    let mut missing = Vec::new();
    for entry in fs::read_dir(root()).expect("the repository") {
        let entry = entry.expect("an entry");
        let name = entry.file_name().into_string().expect("a UTF-8 name");
        if !entry.path().is_dir() || name.starts_with('.') || ignored(&name) {
            continue;
        }
        if !layout.contains(&format!("`{name}/")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/design.md §Layout does not name {missing:?}"
    );
}

#[test]
fn every_core_module_is_in_the_layout() {
    let layout = layout();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let mut modules = Vec::new();
    for line in lib.lines() {
        let line = line.trim();
        let line = line.strip_prefix("pub ").unwrap_or(line);
        if let Some(name) = line.strip_prefix("mod ").and_then(|l| l.strip_suffix(';')) {
            modules.push(name.to_string());
        }
    }
    assert!(modules.len() >= 10, "lib.rs declares {modules:?}");
    let mut missing = Vec::new();
    for name in modules {
        let shown = if src.join(&name).is_dir() {
            format!("`src/{name}/`")
        } else {
            format!("`src/{name}.rs`")
        };
        if !layout.contains(&shown) {
            missing.push(shown);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/design.md §Layout does not name {missing:?}"
    );
}

#[test]
fn every_feature_is_in_the_crate_docs() {
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
        .expect("Cargo.toml");
    let lib = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("lib.rs");
    let table: Vec<&str> = lib.lines().filter(|l| l.starts_with("//! | `")).collect();
    let features = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("a [features] table")
        .split("\n[")
        .next()
        .expect("its lines");
    let mut missing = Vec::new();
    for line in features.lines() {
        let Some((name, _)) = line.split_once(" = ") else {
            continue;
        };
        if name == "default" || name.starts_with('#') {
            continue;
        }
        let row = format!("//! | `{name}` |");
        if !table.iter().any(|l| l.starts_with(&row)) {
            missing.push(name.to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "the feature table of core/src/lib.rs misses {missing:?}"
    );
}
