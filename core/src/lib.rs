//! keyroute: one routing core that tells every language the same answer to "which node
//! owns this key?" and "which proxy gets the next job?".
//!
//! * [`ring`]: consistent-hash rings, bit-exact with the ketama family of peers, plus a
//!   fast SipHash `native` profile; the node-list grammar ([`ring::parse_nodes`]).
//! * [`slot`]: Redis Cluster hash slots, the slot map, redirects and resharding plans.
//! * [`select`]: least-used selection: the Lua scripts and an in-memory pool model.
//! * [`script`]: every Lua script keyroute runs, as values ([`script::SCRIPTS`]).
//! * [`error`]: the error codes every language shows ([`error::ErrorCode`]).
//! * [`keys`]: [`keys::PackedKeys`], a batch of keys in one buffer, for bindings.
//!
//! This crate computes; it never does I/O. Running the scripts and the cluster operations
//! on a real Redis is the `keyroute-redis` crate's job.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `alloc` | via `std` | everything that needs a heap: rings, slot maps, plans, the pool model, [`keys`] |
//! | `std` | yes | `alloc`, and nothing else (`core::error::Error` is implemented without it) |
//! | `small-crc16` | no | the CRC16 tables of [`slot`] are filled on first use instead of stored in the binary (8 KiB smaller; the JavaScript package uses it) |
//!
//! Without `alloc` the crate still offers slot hashing ([`slot::key_slot`]), hash tags,
//! redirect parsing, the script texts and the error codes, for embedded clients.
//!
//! ```
//! use keyroute::ring::{Profile, Ring};
//! use keyroute::slot::key_slot;
//!
//! let ring = Ring::with_nodes(Profile::native(), [("cache-a", 1), ("cache-b", 2)])?;
//! assert!(ring.get(b"user:42").is_some());
//! assert_eq!(key_slot(b"{user:42}:cart"), key_slot(b"user:42"));
//! # Ok::<(), keyroute::ring::RingError>(())
//! ```
#![no_std]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

pub mod error;
#[cfg(feature = "alloc")]
pub mod keys;
#[cfg(feature = "alloc")]
pub mod ring;
pub mod script;
pub mod select;
pub mod slot;
