//! `libkeyroute`: the keyroute routing core as a C library.
//!
//! The header `include/keyroute.h` is generated from these sources by cbindgen (see
//! `build.rs`); the documentation comments are the C documentation.
//!
//! Conventions (those of rure and BLAKE3):
//! * opaque handles made by `keyroute_*_new` (or `_open`, `_from_spec`, ...) and released
//!   by `keyroute_*_free`; each handle carries a type tag checked on every call;
//! * every fallible call returns a `keyroute_status` whose value is the number of a core
//!   error code (`keyroute::error::ErrorCode`), writes its results through out-pointers
//!   (left untouched unless it returns `KEYROUTE_OK`), and records its message for
//!   `keyroute_last_error_message()` (per thread);
//! * every export catches Rust panics and reports `KEYROUTE_INTERNAL` instead of
//!   unwinding into C;
//! * keys are byte strings `(const uint8_t *key, size_t len)`; `key` may be NULL when
//!   `len` is 0. Names (node names, profile names) are NUL-terminated UTF-8.
//!
//! Modules follow the core: [`ring`], [`slot`], [`plan`], [`select`], [`redis`],
//! [`cache`], [`script`]; [`status`] holds the statuses and the last error message, and [`ffi`] the
//! one guard every export runs in, the argument checks and the handles. The logic lives in
//! the `keyroute` and `keyroute-redis` crates; this crate converts types and errors only.
#![allow(non_camel_case_types)]
// The exported functions check every pointer they dereference for NULL; the remaining
// contract (pointers valid for the lengths given) is the C caller's and is documented.
#![allow(clippy::missing_safety_doc)]

// In the order of the header: the library and its statuses, then the core's areas.
pub mod status;
// Slots, slot maps and redirections.
pub mod slot;
// Rings, node lists, diffs.
pub mod ring;
// Engines, fleet profiles and proxy configurations.
pub mod engine;
// Resharding plans.
pub mod plan;
// The in-memory least-used pool, pool keys.
pub mod select;
// Least-used pools and leases on Redis.
pub mod redis;
// The smart cache, sessions and devices on Redis.
pub mod cache;
// The Lua scripts.
pub mod script;
// The guard, argument checks and handles.
pub mod ffi;

/// Every kind of handle, for the message naming what a wrong handle is instead
/// (`ffi::get`). Here, beside the list of modules, so that the boundary (`ffi`) does not
/// reach into the modules built on it.
pub(crate) const KINDS: &[(u64, &str)] = {
    use ffi::kind;
    &[
        kind::<ring::keyroute_ring>(),
        kind::<ring::keyroute_diff>(),
        kind::<engine::keyroute_router>(),
        kind::<engine::keyroute_bounded>(),
        kind::<select::keyroute_pool>(),
        kind::<slot::keyroute_slot_map>(),
        kind::<plan::keyroute_plan>(),
        kind::<redis::keyroute_least_used>(),
        kind::<redis::keyroute_leases>(),
        kind::<redis::keyroute_affinity>(),
        kind::<cache::keyroute_cache>(),
        kind::<cache::keyroute_sessions>(),
        kind::<cache::keyroute_devices>(),
        kind::<cache::keyroute_load>(),
    ]
};

pub use cache::*;
pub use engine::*;
pub use ffi::KEYROUTE_MAX_BATCH;
pub use plan::*;
pub use redis::*;
pub use ring::*;
pub use script::*;
pub use select::*;
pub use slot::*;
pub use status::*;

#[cfg(test)]
mod tests {
    use super::KINDS;

    #[test]
    fn tags_are_distinct() {
        for (i, (a, an)) in KINDS.iter().enumerate() {
            assert_ne!(*a, 0, "{an}: 0 marks freed handles");
            for (b, bn) in &KINDS[i + 1..] {
                assert_ne!(a, b, "{an} {bn}");
            }
        }
    }

    /// Every `impl Handle for` of the sources is in [`KINDS`] (a kind left out is named
    /// "freed, or not a keyroute handle" when passed where another is expected).
    #[test]
    fn every_handle_is_listed() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut impls = Vec::new();
        for entry in std::fs::read_dir(&src).expect("src") {
            let text = std::fs::read_to_string(entry.expect("entry").path()).expect("source");
            for line in text.lines() {
                if let Some(rest) = line.strip_prefix("impl Handle for ") {
                    impls.push(rest.trim_end_matches(" {").to_string());
                }
            }
        }
        impls.sort();
        let mut listed: Vec<String> = KINDS.iter().map(|(_, n)| n.to_string()).collect();
        listed.sort();
        assert_eq!(impls, listed);
    }
}
