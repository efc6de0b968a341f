//! `keyroute_status` (one status per `keyroute::error::ErrorCode`), the per-thread last
//! error message, and the library's version.

use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::panic::catch_unwind;
use std::sync::OnceLock;

use keyroute_core::error::ErrorCode;

/// The result of every fallible call: `KEYROUTE_OK` (0), `KEYROUTE_EMPTY` (1, an answer of
/// nothing), or an error whose value is the number of a keyroute error code (the table in
/// `docs/errors.md`; `KEYROUTE_<NAME>` for the code `<NAME>`, the same code Rust, Python
/// and JavaScript report). On an error the out-pointers are untouched and
/// `keyroute_last_error_message()` says what happened. Values are never renumbered; new
/// ones may be added.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum keyroute_status {
    /// Success.
    KEYROUTE_OK = 0,
    /// An answer of nothing: the ring or pool is empty, the slot has no owner. Not a
    /// failure of the call (no message is recorded): make no request.
    KEYROUTE_EMPTY = 1,
    /// A required pointer argument was NULL.
    KEYROUTE_NULL_ARGUMENT = 2,
    /// Text that must be UTF-8 (names, profile names, URLs) is not.
    KEYROUTE_BAD_UTF8 = 3,
    /// An argument has the wrong type (not produced by the C library: C types are static).
    KEYROUTE_BAD_TYPE = 4,
    /// A number is outside the range its parameter accepts (e.g. an index past the end).
    KEYROUTE_OUT_OF_RANGE = 5,
    /// A count or size is above the stated limit (`KEYROUTE_MAX_BATCH`, 2^24 picks, ...);
    /// nothing was allocated.
    KEYROUTE_TOO_LARGE = 6,
    /// An output buffer is too small: the length needed is written to `*len_out` (an
    /// exception to "out-pointers untouched"); each call states what happens to the
    /// answer (it is never lost).
    KEYROUTE_BUFFER_TOO_SMALL = 7,
    /// A handle is of another kind (a pool passed as a ring) or was already freed (as far
    /// as that can be detected: see "Handles" in the header's introduction).
    KEYROUTE_INVALID_HANDLE = 8,
    /// A bug in keyroute: a Rust panic was caught at the boundary. Please report it with
    /// `keyroute_last_error_message()`; the handle involved should be freed.
    KEYROUTE_INTERNAL = 9,
    /// A node name is empty.
    KEYROUTE_EMPTY_NODE_NAME = 10,
    /// A weight is 0 (remove the node instead).
    KEYROUTE_ZERO_WEIGHT = 11,
    /// A weight is negative.
    KEYROUTE_NEGATIVE_WEIGHT = 12,
    /// A weight is above 4294967295.
    KEYROUTE_WEIGHT_TOO_LARGE = 13,
    /// A weight is not an integer (in a node list).
    KEYROUTE_BAD_WEIGHT = 14,
    /// The node (or cluster node id) is already there.
    KEYROUTE_DUPLICATE_NODE = 15,
    /// The node is not on the ring or in the map (or, for pools, the member is not in
    /// the pool).
    KEYROUTE_UNKNOWN_NODE = 16,
    /// The profile name is not one keyroute knows.
    KEYROUTE_UNKNOWN_PROFILE = 17,
    /// The ring would hold more points than the limit (2^25); lower weights or vnodes.
    KEYROUTE_TOO_MANY_POINTS = 18,
    /// vnodes is outside 1..=65536.
    KEYROUTE_BAD_VNODES = 19,
    /// Points per digest is outside 1..=4.
    KEYROUTE_BAD_POINTS_PER_DIGEST = 20,
    /// An option the profile does not take (points per digest or a default port on
    /// `native`).
    KEYROUTE_BAD_OPTION = 21,
    /// The rings hash keys differently and cannot be compared.
    KEYROUTE_INCOMPATIBLE_RINGS = 22,
    /// A node list entry cannot be parsed.
    KEYROUTE_BAD_NODE_SPEC = 23,
    /// A node list entry can be read two ways; the message shows both.
    KEYROUTE_AMBIGUOUS_NODE_SPEC = 24,
    /// A port is outside 1..=65535.
    KEYROUTE_BAD_PORT = 25,
    /// A slot is above 16383.
    KEYROUTE_BAD_SLOT = 30,
    /// A slot range is reversed or reaches past 16383.
    KEYROUTE_BAD_RANGE = 31,
    /// An address is not host:port (e.g. an empty host).
    KEYROUTE_BAD_ADDRESS = 32,
    /// A replica was used where a master is needed.
    KEYROUTE_NOT_A_MASTER = 33,
    /// A cluster reply is inconsistent; fetch it again.
    KEYROUTE_INCONSISTENT_TOPOLOGY = 34,
    /// A slot map holds at most 65535 nodes.
    KEYROUTE_TOO_MANY_NODES = 35,
    /// The text is not a MOVED or ASK error.
    KEYROUTE_NOT_A_REDIRECT = 36,
    /// A MOVED/ASK error cannot be parsed.
    KEYROUTE_BAD_REDIRECT = 37,
    /// A resharding plan cannot be made from these weights.
    KEYROUTE_BAD_PLAN = 38,
    /// The slot map changed since the plan was made; plan again.
    KEYROUTE_STALE_PLAN = 39,
    /// A pool key is empty, or contains `}` without a non-empty hash tag (its companion
    /// keys could not share its slot; use e.g. `{proxies}:pool`).
    KEYROUTE_BAD_POOL_KEY = 50,
    /// A count is above 2^53 (the largest a Redis score holds exactly).
    KEYROUTE_BAD_COUNT = 51,
    /// The restore mode is not a `keyroute_restore` value.
    KEYROUTE_BAD_RESTORE_MODE = 52,
    /// A pool member is empty.
    KEYROUTE_EMPTY_MEMBER = 53,
    /// A TTL or timeout is 0 or too large.
    KEYROUTE_BAD_TTL = 54,
    /// A Redis URL cannot be used (nothing was sent).
    KEYROUTE_REDIS_BAD_URL = 60,
    /// The Redis server refused the connection or cannot be reached.
    KEYROUTE_REDIS_CONNECT = 61,
    /// Redis refused the credentials (the message never shows the password).
    KEYROUTE_REDIS_AUTH = 62,
    /// Connecting to Redis or waiting for its reply timed out; a pick or acquire may or
    /// may not have been counted.
    KEYROUTE_REDIS_TIMEOUT = 63,
    /// The connection broke mid-call; the command may or may not have run. The handle
    /// reconnects on its next call.
    KEYROUTE_REDIS_CONNECTION_LOST = 64,
    /// A key holds another type (WRONGTYPE); the script changed nothing.
    KEYROUTE_REDIS_WRONGTYPE = 65,
    /// Redis answered another error.
    KEYROUTE_REDIS_SERVER = 66,
    /// The reply is not what the command gives, or the peer does not speak Redis.
    KEYROUTE_REDIS_PROTOCOL = 67,
    /// No cluster node serves the slot.
    KEYROUTE_CLUSTER_NO_OWNER = 68,
    /// A command was retried as often as allowed.
    KEYROUTE_CLUSTER_RETRIES_EXHAUSTED = 69,
    /// No cluster node answered with a topology.
    KEYROUTE_CLUSTER_UNREACHABLE = 70,
    /// Another operation must finish first.
    KEYROUTE_BUSY = 71,
    /// A write reached a replica (READONLY).
    KEYROUTE_REDIS_READONLY = 72,
    /// The TLS handshake failed.
    KEYROUTE_REDIS_TLS = 73,
    /// The deadline passed before a value was served (another instance may still be
    /// loading it).
    KEYROUTE_CACHE_TIMEOUT = 80,
    /// The loader failed (or its failure is still cached for the negative TTL).
    KEYROUTE_BACKEND_ERROR = 81,
    /// The session does not exist or expired: log in again.
    KEYROUTE_SESSION_EXPIRED = 82,
    /// The session was created by another service version.
    KEYROUTE_VERSION_MISMATCH = 83,
    /// Nothing is stored under that name.
    KEYROUTE_NOT_FOUND = 84,
    /// A value or session data is larger than the configured maximum.
    KEYROUTE_VALUE_TOO_LARGE = 85,
    /// A client id is empty or too long.
    KEYROUTE_BAD_CLIENT_ID = 86,
    /// A cache kind is empty, too long, or holds '{', '}' or a control byte.
    KEYROUTE_BAD_KIND = 87,
    /// A device id is empty, too long, or holds '{', '}' or a control byte.
    KEYROUTE_BAD_DEVICE_ID = 88,
    /// A session id is not of the form keyroute gives.
    KEYROUTE_BAD_SESSION_ID = 89,
    /// A service version is too long.
    KEYROUTE_BAD_VERSION = 90,
    /// A request under a session names another client than the session's (nothing was
    /// run).
    KEYROUTE_SESSION_CLIENT_MISMATCH = 91,
    /// A configuration cannot be read (file, line and reason in the message).
    KEYROUTE_BAD_CONFIG = 100,
    /// A configuration cannot be reproduced exactly (file, line and reason in the message).
    KEYROUTE_UNSUPPORTED_CONFIG = 101,
}

use keyroute_status::*;

/// Every status, in number order (checked against the enum and `ErrorCode::ALL` by the
/// tests below).
pub(crate) const ALL: &[keyroute_status] = &[
    KEYROUTE_OK,
    KEYROUTE_EMPTY,
    KEYROUTE_NULL_ARGUMENT,
    KEYROUTE_BAD_UTF8,
    KEYROUTE_BAD_TYPE,
    KEYROUTE_OUT_OF_RANGE,
    KEYROUTE_TOO_LARGE,
    KEYROUTE_BUFFER_TOO_SMALL,
    KEYROUTE_INVALID_HANDLE,
    KEYROUTE_INTERNAL,
    KEYROUTE_EMPTY_NODE_NAME,
    KEYROUTE_ZERO_WEIGHT,
    KEYROUTE_NEGATIVE_WEIGHT,
    KEYROUTE_WEIGHT_TOO_LARGE,
    KEYROUTE_BAD_WEIGHT,
    KEYROUTE_DUPLICATE_NODE,
    KEYROUTE_UNKNOWN_NODE,
    KEYROUTE_UNKNOWN_PROFILE,
    KEYROUTE_TOO_MANY_POINTS,
    KEYROUTE_BAD_VNODES,
    KEYROUTE_BAD_POINTS_PER_DIGEST,
    KEYROUTE_BAD_OPTION,
    KEYROUTE_INCOMPATIBLE_RINGS,
    KEYROUTE_BAD_NODE_SPEC,
    KEYROUTE_AMBIGUOUS_NODE_SPEC,
    KEYROUTE_BAD_PORT,
    KEYROUTE_BAD_SLOT,
    KEYROUTE_BAD_RANGE,
    KEYROUTE_BAD_ADDRESS,
    KEYROUTE_NOT_A_MASTER,
    KEYROUTE_INCONSISTENT_TOPOLOGY,
    KEYROUTE_TOO_MANY_NODES,
    KEYROUTE_NOT_A_REDIRECT,
    KEYROUTE_BAD_REDIRECT,
    KEYROUTE_BAD_PLAN,
    KEYROUTE_STALE_PLAN,
    KEYROUTE_BAD_POOL_KEY,
    KEYROUTE_BAD_COUNT,
    KEYROUTE_BAD_RESTORE_MODE,
    KEYROUTE_EMPTY_MEMBER,
    KEYROUTE_BAD_TTL,
    KEYROUTE_REDIS_BAD_URL,
    KEYROUTE_REDIS_CONNECT,
    KEYROUTE_REDIS_AUTH,
    KEYROUTE_REDIS_TIMEOUT,
    KEYROUTE_REDIS_CONNECTION_LOST,
    KEYROUTE_REDIS_WRONGTYPE,
    KEYROUTE_REDIS_SERVER,
    KEYROUTE_REDIS_PROTOCOL,
    KEYROUTE_CLUSTER_NO_OWNER,
    KEYROUTE_CLUSTER_RETRIES_EXHAUSTED,
    KEYROUTE_CLUSTER_UNREACHABLE,
    KEYROUTE_BUSY,
    KEYROUTE_REDIS_READONLY,
    KEYROUTE_REDIS_TLS,
    KEYROUTE_CACHE_TIMEOUT,
    KEYROUTE_BACKEND_ERROR,
    KEYROUTE_SESSION_EXPIRED,
    KEYROUTE_VERSION_MISMATCH,
    KEYROUTE_NOT_FOUND,
    KEYROUTE_VALUE_TOO_LARGE,
    KEYROUTE_BAD_CLIENT_ID,
    KEYROUTE_BAD_KIND,
    KEYROUTE_BAD_DEVICE_ID,
    KEYROUTE_BAD_SESSION_ID,
    KEYROUTE_BAD_VERSION,
    KEYROUTE_SESSION_CLIENT_MISMATCH,
    KEYROUTE_BAD_CONFIG,
    KEYROUTE_UNSUPPORTED_CONFIG,
];

/// The status of an error code (`KEYROUTE_INTERNAL` for a code this library does not
/// know yet, which the tests below rule out).
pub(crate) fn status_of(code: ErrorCode) -> keyroute_status {
    let n = i32::from(code.number());
    ALL.iter()
        .copied()
        .find(|&s| s as i32 == n)
        .unwrap_or(KEYROUTE_INTERNAL)
}

/// What `keyroute_status_str()` and `keyroute_status_name()` give, NUL-terminated once.
struct Texts {
    /// (status, name, summary) for every status.
    all: Vec<(i32, CString, CString)>,
}

fn texts() -> &'static Texts {
    static TEXTS: OnceLock<Texts> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let c = |s: &str| CString::new(s).unwrap_or_default();
        let mut all = vec![
            (KEYROUTE_OK as i32, c("OK"), c("ok")),
            (
                KEYROUTE_EMPTY as i32,
                c("EMPTY"),
                c("an answer of nothing (an empty ring or pool, an unowned slot): make no request"),
            ),
        ];
        for &code in ErrorCode::ALL {
            all.push((
                i32::from(code.number()),
                c(code.as_str()),
                c(code.summary()),
            ));
        }
        Texts { all }
    })
}

/// The one-line summary of a status: `"ok"`, the answer-of-nothing text for
/// `KEYROUTE_EMPTY`, and for an error the summary of its code (the "when" column of
/// `docs/errors.md`). Static storage; never NULL; a value that is no status gives
/// `"unknown status"`. For what happened in a call, use `keyroute_last_error_message()`.
#[no_mangle]
pub extern "C" fn keyroute_status_str(status: i32) -> *const c_char {
    text_of(status, c"unknown status", |(.., summary)| summary)
}

/// The name of a status without the `KEYROUTE_` prefix, e.g. `"ZERO_WEIGHT"`: the error
/// code Rust, Python and JavaScript report for the same failure (`"OK"`, `"EMPTY"` for
/// the two non-errors). Static storage; never NULL; `"UNKNOWN"` for a value that is no
/// status.
#[no_mangle]
pub extern "C" fn keyroute_status_name(status: i32) -> *const c_char {
    text_of(status, c"UNKNOWN", |(_, name, _)| name)
}

/// One text of `status` from [`texts`], or `fallback` for a value that is no status. The
/// two exports above cannot run in `ffi::guard_or` (the boundary is built on this module),
/// so they stop a panic here: none is expected (the texts are built once, from the
/// tables), and should one happen it never crosses into C; the fallback is returned.
fn text_of(
    status: i32,
    fallback: &'static CStr,
    pick: fn(&'static (i32, CString, CString)) -> &'static CString,
) -> *const c_char {
    let find = || {
        texts()
            .all
            .iter()
            .find(|(s, ..)| *s == status)
            .map_or(fallback.as_ptr(), |t| pick(t).as_ptr())
    };
    catch_unwind(find).unwrap_or(fallback.as_ptr())
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `message` as this thread's last error message (a NUL inside, which a Rust
/// string may hold, is shown as `\0`).
pub(crate) fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; the message is then lost.
    let _ = LAST_ERROR.try_with(|slot| {
        if let Ok(mut slot) = slot.try_borrow_mut() {
            *slot = text;
        }
    });
}

/// The message of the last call on this thread that failed (returned neither
/// `KEYROUTE_OK` nor `KEYROUTE_EMPTY`): the core error's text, naming the argument, node
/// or key at fault (Redis passwords are never shown). `""` before any failure. Calls that
/// succeed leave it unchanged. The pointer stays valid until the next failing call on
/// this thread; copy the text to keep it. Never NULL.
#[no_mangle]
pub extern "C" fn keyroute_last_error_message() -> *const c_char {
    LAST_ERROR
        .try_with(|slot| slot.try_borrow().map_or(c"".as_ptr(), |s| s.as_ptr()))
        .unwrap_or(c"".as_ptr())
}

/// The library version, `"MAJOR.MINOR.PATCH"` (static storage; never NULL). Compare with
/// the `KEYROUTE_VERSION_STRING` macro to detect a header/library mismatch.
#[no_mangle]
pub extern "C" fn keyroute_version() -> *const c_char {
    static VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(v) => v,
            Err(_) => c"",
        };
    VERSION.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(name, number)` of every variant as written in the enum above (what cbindgen
    /// turns into the header).
    fn declared() -> Vec<(String, i32)> {
        let src = include_str!("status.rs");
        let start = src.find("pub enum keyroute_status {").expect("the enum");
        let body = &src[start..src[start..].find("\n}").expect("its end") + start];
        body.lines()
            .map(str::trim)
            .filter(|l| l.starts_with("KEYROUTE_"))
            .map(|l| {
                let (name, num) = l.trim_end_matches(',').split_once(" = ").expect("NAME = N");
                (name.to_string(), num.parse().expect("a number"))
            })
            .collect()
    }

    #[test]
    fn every_error_code_has_its_status_and_back() {
        let declared = declared();
        assert_eq!(declared.len(), ALL.len(), "ALL lists every variant");
        for (s, (name, num)) in ALL.iter().zip(&declared) {
            assert_eq!(format!("{s:?}"), *name);
            assert_eq!(*s as i32, *num);
        }
        assert_eq!(
            &declared[..2],
            &[("KEYROUTE_OK".into(), 0), ("KEYROUTE_EMPTY".into(), 1)]
        );
        // Every code has its status, same name and number.
        for &code in ErrorCode::ALL {
            let want = format!("KEYROUTE_{}", code.as_str());
            let s = status_of(code);
            assert_eq!(format!("{s:?}"), want, "{code:?}");
            assert_eq!(s as i32, i32::from(code.number()));
        }
        // And every status but OK and EMPTY is a code.
        for (name, num) in &declared[2..] {
            let code = u16::try_from(*num)
                .ok()
                .and_then(ErrorCode::from_number)
                .unwrap_or_else(|| panic!("{name} = {num} is no ErrorCode"));
            assert_eq!(*name, format!("KEYROUTE_{}", code.as_str()));
        }
        assert_eq!(declared.len(), ErrorCode::ALL.len() + 2);
    }

    #[test]
    fn names_and_summaries() {
        let name = |s: i32| {
            unsafe { CStr::from_ptr(keyroute_status_name(s)) }
                .to_string_lossy()
                .into_owned()
        };
        let text = |s: i32| {
            unsafe { CStr::from_ptr(keyroute_status_str(s)) }
                .to_string_lossy()
                .into_owned()
        };
        assert_eq!(name(0), "OK");
        assert_eq!(name(11), "ZERO_WEIGHT");
        assert_eq!(name(-1), "UNKNOWN");
        assert_eq!(text(11), ErrorCode::ZeroWeight.summary());
        assert_eq!(text(1000), "unknown status");
    }

    #[test]
    fn last_error_is_per_thread() {
        set_last_error("here");
        let here = || unsafe { CStr::from_ptr(keyroute_last_error_message()) }.to_owned();
        assert_eq!(here().to_bytes(), b"here");
        let other = std::thread::spawn(move || {
            assert_eq!(here().to_bytes(), b"");
            set_last_error("there\0!");
            assert_eq!(here().to_bytes(), b"there\\0!");
        })
        .join();
        assert!(other.is_ok(), "the other thread's checks failed");
        assert_eq!(here().to_bytes(), b"here");
    }
}
