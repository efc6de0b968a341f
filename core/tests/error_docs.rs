//! `docs/errors.md` holds the table of every error code; this test regenerates it from
//! [`ErrorCode::ALL`] and fails when the committed file differs (set
//! `KEYROUTE_UPDATE_DOCS=1` to write it).

use std::fmt::Write as _;
use std::path::PathBuf;

use keyroute::error::ErrorCode;

const HEAD: &str = "# Error codes

Every error keyroute reports carries one of these codes, the same in every language:
`err.code()` in Rust (an `ErrorCode`; `.as_str()` is the name), `.code` on Python
exceptions and JavaScript errors, and in C the status `KEYROUTE_<NAME>` (whose value is the
number) with the message in `keyroute_last_error_message()`. Codes are never renamed or
renumbered; new ones are only added. `0` (`KEYROUTE_OK`) and `1` (`KEYROUTE_EMPTY`: an
answer of nothing, such as an empty ring or pool) are C statuses, not errors.

This file is generated from `core/src/error/code.rs` by `core/tests/error_docs.rs`.

| number | code | when |
|---|---|---|
";

fn render() -> String {
    let mut out = String::from(HEAD);
    for code in ErrorCode::ALL {
        let _ = writeln!(
            out,
            "| {} | `{}` | {} |",
            code.number(),
            code.as_str(),
            code.summary()
        );
    }
    out
}

#[test]
fn docs_errors_md_lists_every_code() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/errors.md");
    let want = render();
    if std::env::var_os("KEYROUTE_UPDATE_DOCS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &want).expect("write docs/errors.md");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        have, want,
        "docs/errors.md is out of date: run KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test error_docs"
    );
}
