//! wasm-bindgen bindings of [`keyroute`], packaged as the npm package `keyroute`.
//!
//! This crate is the raw boundary: it converts types and errors and owns the Rust values.
//! The public, camelCase JavaScript API (`Ring`, `SlotMap`, `Pool`, `keySlot`, …) is the
//! thin wrapper in `js/` (`api.mjs` and the modules it imports, one per concept, over
//! `helpers.mjs`), which checks arguments before they cross, batches keys into one buffer
//! so that a batch call crosses the boundary once, and maps node indexes back to names on
//! the JS side.
//!
//! Conventions of the raw exports (prefixed `raw`/`Raw`, not part of the public API):
//! * keys come as `&str` (UTF-8 encoded by wasm-bindgen) or `&[u8]`;
//! * a batch of keys is one byte buffer plus a `Uint32Array` of end offsets;
//! * "no node" is `-1` where an index is returned;
//! * errors are JS `Error` objects with a string `code` (see [`error`]).
// no_std on wasm32 (as core): std's panic machinery would cost more than all of
// keyroute's code in the .wasm. A panic (a bug: core does not panic on any input) traps.
#![cfg_attr(target_arch = "wasm32", no_std)]

extern crate alloc;

// talc's single-threaded wasm allocator (wasm32-unknown-unknown without the atomics
// feature has one thread), growing the memory as needed.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

#[cfg(all(target_arch = "wasm32", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    core::arch::wasm32::unreachable()
}

mod batch;
// Four modules are built from this crate (see Cargo.toml): the main one (`routing`: rings,
// slots, least-used), the cluster module (`cluster`: slot maps, resharding plans), the
// smart cache's (`cache`) and the fleet's (`fleet`), each with its own size budget.
#[cfg(feature = "cache")]
mod cache;
#[cfg(feature = "cache")]
mod cache_driver;
#[cfg(feature = "cluster")]
mod cluster;
// The cache module uses a part of the shared helpers only.
#[cfg_attr(not(feature = "routing"), allow(dead_code))]
mod error;
// The fleet module (`keyroute/fleet`): engines, fleet profiles, proxy configurations.
#[cfg(feature = "fleet")]
mod fleet;
// The frame codec of `keyroute serve` (keyroute/serve) and the pools on Redis
// (keyroute/redis): Node only, in the cache module.
#[cfg(feature = "cache")]
mod frame;
#[cfg(feature = "routing")]
mod keys;
#[cfg(feature = "cache")]
mod pools;
#[cfg(feature = "routing")]
mod ring;
#[cfg(feature = "routing")]
mod select;
#[cfg(feature = "routing")]
mod slot;

pub use error::JsError;
