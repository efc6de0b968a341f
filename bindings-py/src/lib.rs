//! Python bindings of keyroute: the native module `keyroute._keyroute`.
//!
//! Thin by design: this crate converts Python values to the core's types and the core's
//! errors to Python exceptions, and releases the GIL for batch and network calls (the
//! smart cache's loaders take it back for their call only). Every answer comes
//! from the `keyroute` crate; the Python package (`python/keyroute/`) re-exports this
//! module with type stubs.

use pyo3::prelude::*;

mod args;
mod cache;
mod engine;
mod errors;
mod frame;
mod keys;
mod remote;
mod ring;
mod select;
mod slot;
mod slotmap;

/// The native module. `keyroute/__init__.py` re-exports everything public.
#[pymodule]
fn _keyroute(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    errors::register_test_hooks(m)?;
    ring::register(m)?;
    engine::register(m)?;
    slot::register(m)?;
    slotmap::register(m)?;
    select::register(m)?;
    remote::register(m)?;
    cache::register(m)?;
    frame::register(m)?;
    Ok(())
}
