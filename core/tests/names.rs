//! The bindings' type declarations of what core defines are generated from core: engine
//! and profile names (`keyroute::engine::ENTRIES`, `keyroute::ring::ProfileName::ALL`),
//! error codes (`keyroute::error::ErrorCode::ALL`), the limits and constants of one call
//! (`keyroute::keys`, `select`, `slot`, `ring`, `cache`) and the message types, transport
//! errors and header constants of `keyroute serve` (`keyroute::frame`: `_MsgTypeName` in
//! the `.pyi`, `MsgTypeName`, `TYPES`, ... in `serve.d.ts`). Each sits between
//! a `BEGIN GENERATED: <what> (...)` and an `END GENERATED` line of the files below; the
//! prose around them is written by hand. This test renders every block and fails when a
//! committed file differs, or holds a block it does not know (set `KEYROUTE_UPDATE_DOCS=1`
//! to write them).
//!
//! Java's `ErrorCode` enum (name, number and summary of every code), `Limits` and
//! `Keyroute.VERSION` (bindings-java/) are generated the same way; the jar refuses a
//! libkeyroute of another version at load time.
//!
//! The runtime values are checked against the generated types too: Python's by
//! `mypy.stubtest` (a `Final` constant's value must be the module's), JavaScript's by
//! `bindings-js/test/types.test.mjs` (`ERROR_CODES`, `LIMITS`, `SLOT_COUNT`,
//! `CACHE_LIMITS`).

use std::path::PathBuf;

use keyroute::cache::{
    ClientToken, PollSchedule, SessionId, DEFAULT_MAX_VALUE_LEN, MAX_CLIENT_ID_LEN,
    MAX_DEVICE_ID_LEN, MAX_ERROR_CODE_LEN, MAX_ERROR_MESSAGE_LEN, MAX_FENCED_LOADS, MAX_KIND_LEN,
    MAX_MS, MAX_OWNER_LEN, MAX_VALUE_LEN_LIMIT, MAX_VERSION_LEN, MAX_WARM_KINDS,
};
use keyroute::engine::NAMES;
use keyroute::error::ErrorCode;
use keyroute::frame::{
    MsgType, TransportError, FLAG_DATA_ERROR, HEADER_FIXED_LEN, MAX_HEADER_LEN, REPLY_BIT, SYSTEM,
    VERSION,
};
use keyroute::keys::{MAX_BATCH_BYTES, MAX_KEYS_PER_CALL, MAX_KEY_BYTES};
use keyroute::ring::{ProfileName, DEFAULT_NATIVE_VNODES};
use keyroute::select::{MAX_EXACT_COUNT, MAX_PICKS_PER_CALL};
use keyroute::slot::SLOT_COUNT;

const BEGIN: &str = "BEGIN GENERATED";
const HOW: &str = "(KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)";
const END: &str = "END GENERATED";

const NAMES_BLOCK: &str = "engine and profile names from core's registry";
const CODES_BLOCK: &str = "error codes from core's ErrorCode";
const LIMITS_BLOCK: &str = "limits and constants from core";
const SLOT_COUNT_BLOCK: &str = "the slot count from core";
const CACHE_LIMITS_BLOCK: &str = "the smart cache's limits from core";
const VERSION_BLOCK: &str = "the version from core";
const FRAME_BLOCK: &str = "message types, transport errors and header constants from core's frame";

fn profiles() -> Vec<&'static str> {
    ProfileName::ALL.iter().map(|p| p.as_str()).collect()
}

fn error_codes() -> Vec<&'static str> {
    ErrorCode::ALL.iter().map(|c| c.as_str()).collect()
}

/// A number as core has it (every constant below fits a u64).
fn n(x: impl TryInto<u64>) -> u64 {
    x.try_into()
        .unwrap_or_else(|_| panic!("a constant beyond u64"))
}

/// The limits of one call, as the JavaScript `LIMITS` names them: (name, value, doc).
fn js_limits() -> Vec<(&'static str, u64, &'static str)> {
    vec![
        (
            "batchKeys",
            n(MAX_KEYS_PER_CALL),
            "Keys, members or nodes in one batch call (core's `MAX_KEYS_PER_CALL`, 2^24).",
        ),
        (
            "batchBytes",
            n(MAX_BATCH_BYTES),
            "Bytes of all keys of one batch call (core's `MAX_BATCH_BYTES`, 1 GiB).",
        ),
        (
            "keyBytes",
            n(MAX_KEY_BYTES),
            "Bytes of one key (core's `MAX_KEY_BYTES`, 512 MiB: the largest string Redis holds).",
        ),
        (
            "picksPerCall",
            n(MAX_PICKS_PER_CALL),
            "Picks in one pickMany call (core's `MAX_PICKS_PER_CALL`, 2^24).",
        ),
    ]
}

/// The smart cache's limits, as the JavaScript `CACHE_LIMITS` names them.
fn js_cache_limits() -> Vec<(&'static str, u64, &'static str)> {
    vec![
        ("maxClientIdBytes", n(MAX_CLIENT_ID_LEN), "core's `MAX_CLIENT_ID_LEN`"),
        ("maxKindBytes", n(MAX_KIND_LEN), "core's `MAX_KIND_LEN`"),
        ("maxDeviceIdBytes", n(MAX_DEVICE_ID_LEN), "core's `MAX_DEVICE_ID_LEN`"),
        ("maxVersionBytes", n(MAX_VERSION_LEN), "core's `MAX_VERSION_LEN`"),
        ("maxWarmKinds", n(MAX_WARM_KINDS), "core's `MAX_WARM_KINDS`"),
        ("defaultMaxValueBytes", n(DEFAULT_MAX_VALUE_LEN), "core's `DEFAULT_MAX_VALUE_LEN`"),
        ("maxValueBytesLimit", n(MAX_VALUE_LEN_LIMIT), "core's `MAX_VALUE_LEN_LIMIT`"),
        ("maxOwnerBytes", n(MAX_OWNER_LEN), "core's `MAX_OWNER_LEN`"),
        ("maxErrorCodeBytes", n(MAX_ERROR_CODE_LEN), "core's `MAX_ERROR_CODE_LEN`"),
        ("maxErrorMessageBytes", n(MAX_ERROR_MESSAGE_LEN), "core's `MAX_ERROR_MESSAGE_LEN`"),
        ("tokenLength", n(ClientToken::LEN), "core's `ClientToken::LEN`"),
        ("sessionIdLength", n(SessionId::LEN), "core's `SessionId::LEN`"),
        ("maxMs", n(MAX_MS), "core's `MAX_MS`"),
        ("pollFirstMs", n(PollSchedule::FIRST_MS), "core's `PollSchedule::FIRST_MS`"),
        ("pollMaxMs", n(PollSchedule::MAX_MS), "core's `PollSchedule::MAX_MS`"),
        (
            "maxFencedLoads",
            n(MAX_FENCED_LOADS),
            "The most times one getOrLoad runs its loader when every fill is fenced (the last fenced value is returned, not stored): core's `MAX_FENCED_LOADS`",
        ),
    ]
}

/// The module constants of the Python package: (name, value).
fn py_constants() -> Vec<(&'static str, u64)> {
    vec![
        ("DEFAULT_NATIVE_VNODES", n(DEFAULT_NATIVE_VNODES)),
        ("SLOT_COUNT", n(SLOT_COUNT)),
        ("MAX_KEYS_PER_CALL", n(MAX_KEYS_PER_CALL)),
        ("MAX_PICKS_PER_CALL", n(MAX_PICKS_PER_CALL)),
        ("MAX_EXACT_COUNT", n(MAX_EXACT_COUNT)),
        ("MAX_WARM_KINDS", n(MAX_WARM_KINDS)),
    ]
}

/// The header constants of `keyroute::frame`, as the native module names them.
fn frame_constants() -> Vec<(&'static str, u64)> {
    vec![
        ("FRAME_VERSION", n(VERSION)),
        ("FRAME_SYSTEM", n(SYSTEM)),
        ("FRAME_REPLY_BIT", n(REPLY_BIT)),
        ("FRAME_FLAG_DATA_ERROR", n(FLAG_DATA_ERROR)),
        ("FRAME_HEADER_FIXED_LEN", n(HEADER_FIXED_LEN)),
        ("FRAME_MAX_HEADER_LEN", n(MAX_HEADER_LEN)),
    ]
}

/// A Java string literal of `s`.
fn java_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The constants of Java's `ErrorCode` enum: `NAME(number, "summary"),`, in number order.
fn java_error_codes() -> String {
    let mut out = String::new();
    let last = ErrorCode::ALL.len() - 1;
    for (i, c) in ErrorCode::ALL.iter().enumerate() {
        let end = if i == last { ";" } else { "," };
        out.push_str(&format!(
            "    /** {} */\n    {}({}, {}){end}\n",
            c.summary().replace("*/", "* /"),
            c.as_str(),
            c.number(),
            java_str(c.summary())
        ));
    }
    out
}

/// The header constants of `keyroute::frame`, as `keyroute/serve` names them.
fn js_frame_constants() -> Vec<(&'static str, u64, &'static str)> {
    vec![
        (
            "VERSION",
            n(VERSION),
            "The protocol version core writes and reads.",
        ),
        ("SYSTEM", n(SYSTEM), "The system byte of `keyroute serve`."),
        (
            "REPLY_BIT",
            n(REPLY_BIT),
            "The bit a reply sets on its request's type.",
        ),
        (
            "FLAG_DATA_ERROR",
            n(FLAG_DATA_ERROR),
            "Flag bit 0: the reply is a data error (its body is {code, message}).",
        ),
        (
            "HEADER_FIXED_LEN",
            n(HEADER_FIXED_LEN),
            "The header's length with an empty session id.",
        ),
        (
            "MAX_HEADER_LEN",
            n(MAX_HEADER_LEN),
            "The longest header a reader accepts.",
        ),
    ]
}

/// The message types, transport errors and header constants of `keyroute/serve`'s
/// `serve.d.ts`: the name unions, `TYPES` and `TRANSPORT_ERRORS` with their numbers as
/// literal types, and the constants.
fn ts_frame() -> String {
    let msg_types: Vec<&str> = MsgType::ALL.iter().map(|t| t.name()).collect();
    let transport: Vec<&str> = TransportError::ALL.iter().map(|e| e.name()).collect();
    let mut out = ts_union(
        Some("A message type of the protocol (core's `MsgType`)."),
        "MsgTypeName",
        &msg_types,
    );
    out.push_str(&ts_union(
        Some("A transport error of the protocol (core's `TransportError`)."),
        "TransportErrorName",
        &transport,
    ));
    out.push_str(
        "/** Message types by name (core's `MsgType`). */
export const TYPES: Readonly<{
",
    );
    for t in MsgType::ALL {
        out.push_str(&format!(
            "  '{}': {};
",
            t.name(),
            t.number()
        ));
    }
    out.push_str(
        "}>;
/** Transport errors by number (core's `TransportError`). */
export const TRANSPORT_ERRORS: Readonly<{
",
    );
    for e in TransportError::ALL {
        out.push_str(&format!(
            "  {}: '{}';
",
            e.number(),
            e.name()
        ));
    }
    out.push_str(
        "}>;
",
    );
    for (name, value, doc) in js_frame_constants() {
        out.push_str(&format!(
            "/** {doc} */
export const {name}: {value};
"
        ));
    }
    out
}

/// Java's `Limits` constants: `public static final int|long NAME = value;`.
fn java_constants() -> String {
    let mut all = py_constants();
    all.extend([
        ("MAX_BATCH_BYTES", n(MAX_BATCH_BYTES)),
        ("MAX_KEY_BYTES", n(MAX_KEY_BYTES)),
        ("SESSION_ID_LENGTH", n(SessionId::LEN)),
        ("MAX_CLIENT_ID_BYTES", n(MAX_CLIENT_ID_LEN)),
        ("MAX_KIND_BYTES", n(MAX_KIND_LEN)),
    ]);
    all.iter()
        .map(|(name, v)| {
            if *v <= i32::MAX as u64 {
                format!("    public static final int {name} = {v};\n")
            } else {
                format!("    public static final long {name} = {v}L;\n")
            }
        })
        .collect()
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

/// A TypeScript union type (with its doc comment, when there is one).
fn ts_union(doc: Option<&str>, name: &str, names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| format!("| '{n}'")).collect();
    let doc = doc.map(|d| format!("/** {d} */\n")).unwrap_or_default();
    format!(
        "{doc}export type {name} =\n{};\n",
        wrap(&items, "  ").trim_end()
    )
}

/// A TypeScript constant object whose fields have their values as literal types.
fn ts_const_object(doc: &str, name: &str, fields: &[(&str, u64, &str)]) -> String {
    let mut out = format!("/** {doc} */\nexport const {name}: Readonly<{{\n");
    for (field, value, field_doc) in fields {
        out.push_str(&format!("  /** {field_doc} */\n  {field}: {value};\n"));
    }
    out.push_str("}>;\n");
    out
}

/// A Python `Literal` alias.
fn py_literal(name: &str, names: &[&str]) -> String {
    let items: Vec<String> = names.iter().map(|n| format!("\"{n}\",")).collect();
    format!("{name}: TypeAlias = Literal[\n{}]\n", wrap(&items, "    "))
}

/// Python `Final` constants with their values (mypy.stubtest checks the runtime's).
fn py_finals(constants: &[(&str, u64)]) -> String {
    constants
        .iter()
        .map(|(name, value)| format!("{name}: Final = {value}\n"))
        .collect()
}

/// (file under the repository root, comment marker, block label, generated text).
fn targets() -> Vec<(&'static str, &'static str, &'static str, String)> {
    let msg_types: Vec<&str> = MsgType::ALL.iter().map(|t| t.name()).collect();
    let transport: Vec<&str> = TransportError::ALL.iter().map(|e| e.name()).collect();
    vec![
        (
            "bindings-java/src/main/java/org/keyroute/ErrorCode.java",
            "    //",
            CODES_BLOCK,
            java_error_codes(),
        ),
        (
            "bindings-java/src/main/java/org/keyroute/Limits.java",
            "    //",
            LIMITS_BLOCK,
            java_constants(),
        ),
        (
            "bindings-java/src/main/java/org/keyroute/Keyroute.java",
            "    //",
            VERSION_BLOCK,
            format!(
                "    /** This jar's version: libkeyroute must be the same. */\n    public static final String VERSION = {};\n",
                java_str(env!("CARGO_PKG_VERSION"))
            ),
        ),
        (
            "bindings-js/js/index.d.ts",
            "//",
            CODES_BLOCK,
            ts_union(None, "ErrorCode", &error_codes()),
        ),
        (
            "bindings-js/js/index.d.ts",
            "//",
            LIMITS_BLOCK,
            ts_const_object(
                "The limits of one call, stated once: core's (`keyroute::keys`, `keyroute::select`).",
                "LIMITS",
                &js_limits(),
            ),
        ),
        (
            "bindings-js/js/index.d.ts",
            "//",
            NAMES_BLOCK,
            ts_union(
                Some("Ring profiles (`PROFILES`): `native` (SipHash, 64-bit points) and the bit-exact ketama family."),
                "ProfileName",
                &profiles(),
            ),
        ),
        (
            "bindings-js/js/index.d.ts",
            "//",
            SLOT_COUNT_BLOCK,
            format!(
                "/** The number of hash slots of Redis Cluster (core's `SLOT_COUNT`). */\nexport const SLOT_COUNT: {SLOT_COUNT};\n"
            ),
        ),
        (
            "bindings-js/js/cache.d.ts",
            "//",
            CACHE_LIMITS_BLOCK,
            ts_const_object(
                "Core's limits of the smart cache (`keyroute::cache`): bytes, counts and ms.",
                "CACHE_LIMITS",
                &js_cache_limits(),
            ),
        ),
        (
            "bindings-js/js/fleet.d.ts",
            "//",
            NAMES_BLOCK,
            ts_union(
                Some("Every engine, fleet profile and ring profile (`ENGINES`), as `Router.engine` names it."),
                "EngineName",
                NAMES,
            ),
        ),
        ("bindings-js/js/serve.d.ts", "//", FRAME_BLOCK, ts_frame()),
        (
            "bindings-py/python/keyroute/_keyroute.pyi",
            "#",
            NAMES_BLOCK,
            format!(
                "{}{}",
                py_literal("_ProfileName", &profiles()),
                py_literal("_EngineName", NAMES)
            ),
        ),
        (
            "bindings-py/python/keyroute/_keyroute.pyi",
            "#",
            CODES_BLOCK,
            py_literal("_ErrorCode", &error_codes()),
        ),
        (
            "bindings-py/python/keyroute/_keyroute.pyi",
            "#",
            LIMITS_BLOCK,
            py_finals(&py_constants()),
        ),
        (
            "bindings-py/python/keyroute/_keyroute.pyi",
            "#",
            FRAME_BLOCK,
            format!(
                "{}{}{}",
                py_literal("_MsgTypeName", &msg_types),
                py_literal("_TransportErrorName", &transport),
                py_finals(&frame_constants())
            ),
        ),
    ]
}

/// The BEGIN line of block `label`.
fn begin_line(comment: &str, label: &str) -> String {
    format!("{comment} {BEGIN}: {label} {HOW}\n")
}

/// `text` with the block `label` replaced by `body`, or why it cannot be.
fn with_block(text: &str, comment: &str, label: &str, body: &str) -> Result<String, String> {
    let begin = begin_line(comment, label);
    let end = format!("{comment} {END}\n");
    let a = text
        .find(&begin)
        .ok_or_else(|| format!("no line {begin:?}"))?
        + begin.len();
    let b = a + text[a..]
        .find(&end)
        .ok_or_else(|| format!("no END GENERATED line after {label:?}"))?;
    Ok(format!("{}{body}{}", &text[..a], &text[b..]))
}

#[test]
fn generated_declarations_are_current() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let update = std::env::var_os("KEYROUTE_UPDATE_DOCS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let targets = targets();
    let mut files: Vec<(&str, &str)> = targets.iter().map(|t| (t.0, t.1)).collect();
    files.sort_unstable();
    files.dedup();
    for (file, comment) in files {
        let path = root.join(file);
        let have = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut want = have.clone();
        for (_, _, label, body) in targets.iter().filter(|t| t.0 == file) {
            want =
                with_block(&want, comment, label, body).unwrap_or_else(|e| panic!("{file}: {e}"));
        }
        // Every block of the file is one of the above (a block nobody renders would go
        // stale unnoticed).
        let blocks = want.matches(&format!("{comment} {BEGIN}:")).count();
        let known = targets.iter().filter(|t| t.0 == file).count();
        assert_eq!(
            blocks, known,
            "{file}: a BEGIN GENERATED block this test does not render"
        );
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
    let ts = ts_union(Some("d"), "T", &refs);
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

#[test]
fn constants_render_with_their_values() {
    let ts = ts_const_object("d", "L", &[("a", 16_777_216, "doc a"), ("b", 3, "doc b")]);
    assert_eq!(
        ts,
        "/** d */\nexport const L: Readonly<{\n  /** doc a */\n  a: 16777216;\n  /** doc b */\n  b: 3;\n}>;\n"
    );
    assert_eq!(py_finals(&[("X", 29)]), "X: Final = 29\n");
    // Every JavaScript limit and Python constant is named once.
    let mut js: Vec<&str> = js_limits().iter().map(|l| l.0).collect();
    js.extend(js_cache_limits().iter().map(|l| l.0));
    let mut py: Vec<&str> = py_constants().iter().map(|c| c.0).collect();
    py.extend(frame_constants().iter().map(|c| c.0));
    for list in [&mut js, &mut py] {
        let len = list.len();
        list.sort_unstable();
        list.dedup();
        assert_eq!(list.len(), len);
    }
}

#[test]
fn a_block_is_replaced_in_place_and_a_missing_one_is_named() {
    let text = format!("a\n{}old\n// {END}\nz\n", begin_line("//", "x"));
    let out = with_block(&text, "//", "x", "new\n").expect("block x");
    assert_eq!(
        out,
        format!("a\n{}new\n// {END}\nz\n", begin_line("//", "x"))
    );
    let e = with_block(&text, "//", "y", "new\n").expect_err("no block y");
    assert!(e.contains("BEGIN GENERATED: y"), "{e}");
}
