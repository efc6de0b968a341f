//! keyroute: one routing core that tells every language the same answer to
//! "which node owns this key?" and "which proxy gets the next job?".
//!
//! * [`ring`]: consistent-hash rings, bit-exact with the ketama family of peers, plus a
//!   fast SipHash `native` profile.
//! * [`slot`]: Redis Cluster hash slots, the slot map, redirects and resharding plans.
//! * [`select`]: least-used selection: the Lua script text and an in-memory pool model.
//! * [`keys`]: [`keys::PackedKeys`], a batch of keys in one buffer, for bindings.
//!
//! The crate is `#![no_std]`; the `alloc` feature enables everything that needs a heap
//! (rings, maps, pools) and `std` (default) adds `std::error::Error` integration.
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "alloc")]
pub mod keys;
#[cfg(feature = "redis")]
pub mod redis;
#[cfg(feature = "alloc")]
pub mod ring;
pub mod select;
pub mod slot;
