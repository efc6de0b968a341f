//! The Lua scripts keyroute runs (`keyroute::script::SCRIPTS`), for C programs that run
//! them over their own Redis client.

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use keyroute_core::script::{Script, SCRIPTS};

use crate::ffi::{guard, out_of_range, required, text, Fail, Res};
use crate::status::keyroute_status;

/// One of keyroute's Lua scripts. Every string is NUL-terminated, in static storage.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct keyroute_script_info {
    /// The name, as the command line spells it (`"least-used"`, `"seed"`, ...).
    pub name: *const c_char,
    /// One line saying what the script does and what it takes.
    pub summary: *const c_char,
    /// The Lua text (for `SCRIPT LOAD`, or `EVAL`).
    pub text: *const c_char,
    /// The length of `text` in bytes (without the NUL).
    pub text_len: usize,
    /// The SHA1 of `text`, 40 lowercase hex digits, as `EVALSHA` takes it.
    pub sha1: *const c_char,
    /// How many keys the script takes (`numkeys` of `EVALSHA`).
    pub num_keys: usize,
}

/// NUL-terminated copies of every script's strings, made once.
struct Texts {
    scripts: Vec<(CString, CString, CString, CString)>,
}

// The pointers inside are to data owned by the `Texts` itself, never mutated.
fn texts() -> &'static Texts {
    static TEXTS: OnceLock<Texts> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let c = |s: &str| CString::new(s).unwrap_or_default();
        Texts {
            scripts: SCRIPTS
                .iter()
                .map(|s| (c(s.name()), c(s.summary()), c(s.text()), c(s.sha1())))
                .collect(),
        }
    })
}

fn info(i: usize, s: &Script) -> keyroute_script_info {
    let (name, summary, text, sha1) = &texts().scripts[i];
    keyroute_script_info {
        name: name.as_ptr(),
        summary: summary.as_ptr(),
        text: text.as_ptr(),
        text_len: s.text().len(),
        sha1: sha1.as_ptr(),
        num_keys: s.num_keys(),
    }
}

/// Writes script `i` to `*out` (checked non-NULL first).
fn put_info(i: usize, out: *mut keyroute_script_info) -> Res {
    let out = required(out, "out")?;
    let s = SCRIPTS
        .get(i)
        .ok_or_else(|| out_of_range("script index", i, SCRIPTS.len()))?;
    // SAFETY: non-NULL out-pointer, valid per the caller.
    unsafe { out.write(info(i, s)) };
    Ok(())
}

/// The number of scripts (`keyroute_script_at()` takes 0..count), in the order
/// `keyroute script --list` shows them.
#[no_mangle]
pub extern "C" fn keyroute_script_count() -> usize {
    SCRIPTS.len()
}

/// Script `index` (0..`keyroute_script_count()`), written to `*out`.
/// `KEYROUTE_OUT_OF_RANGE` past the end; `KEYROUTE_NULL_ARGUMENT`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_script_at(
    index: usize,
    out: *mut keyroute_script_info,
) -> keyroute_status {
    guard(|| put_info(index, out))
}

/// The script named `name` (NUL-terminated; `-` and `_` interchangeable, e.g.
/// `"least-used"`, `"lease_acquire"`), written to `*out`. Returns `KEYROUTE_EMPTY`
/// (nothing written) when no script has that name. Errors: `KEYROUTE_NULL_ARGUMENT`,
/// `KEYROUTE_BAD_UTF8`.
#[no_mangle]
pub unsafe extern "C" fn keyroute_script(
    name: *const c_char,
    out: *mut keyroute_script_info,
) -> keyroute_status {
    guard(|| {
        // SAFETY: NULL or NUL-terminated (documented contract).
        let name = unsafe { text(name, "name") }?;
        required(out, "out")?;
        let found = Script::by_name(name).ok_or(Fail::EMPTY)?;
        let i = SCRIPTS.iter().position(|s| s == found).ok_or(Fail::EMPTY)?;
        put_info(i, out)
    })
}
