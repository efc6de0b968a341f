//! keyroute: one routing core that tells every language the same answer to "which node
//! owns this key?" and "which proxy gets the next job?".
//!
//! * [`ring`]: consistent-hash rings, bit-exact with the ketama family of peers, plus a
//!   fast SipHash `native` profile; the node-list grammar ([`ring::parse_nodes`]).
//! * [`engine`]: every ring a fleet runs behind one [`engine::Engine`] interface: the
//!   rings of nginx, HAProxy, twemproxy, Envoy and the Java, Go, Ruby, PHP and Python
//!   clients ([`engine::FleetProfile`]), jump, rendezvous, Maglev and bounded loads, every
//!   name in one registry ([`engine::ENTRIES`]).
//! * [`config`]: twemproxy, nginx and HAProxy configurations read as they are.
//! * [`hashes`]: the fleet's hash functions, each as its peer computes it.
//! * [`slot`]: Redis Cluster hash slots, the slot map, redirects and resharding plans.
//! * [`select`]: least-used selection: the Lua scripts and an in-memory pool model.
//! * [`cache`]: the smart cache on Redis (entries loaded once across instances with a
//!   fenced lease, sessions, devices): key names, scripts, reply decoders, state models.
//! * [`script`]: every Lua script keyroute runs, as values ([`script::SCRIPTS`]).
//! * [`error`]: the error codes every language shows ([`error::ErrorCode`]).
//! * [`frame`]: the binary header, message types and transport errors of `keyroute serve`.
//! * [`queue`]: [`queue::DeadlineQueue`], the service's fixed-capacity deadline queue.
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
//! | `fleet` | yes | [`engine`], [`config`] and [`hashes`]: the engines, fleet profiles, proxy configuration readers and the fleet's hash functions (implies `alloc`; the JavaScript package's main `.wasm` leaves it out, its fleet module has it) |
//! | `serde` | no | `Serialize`/`Deserialize` (serde without std): rings as specs ([`ring::RingSpec`]: profile, options, nodes), slot maps, resharding plans; shapes below |
//! | `small-crc16` | no | the CRC16 tables of [`slot`] are filled on first use instead of stored in the binary (8 KiB smaller; the JavaScript package uses it) |
//! | `small-sort` | no | the size-minded ring (the JavaScript package uses it): builds sort with a compact radix sort instead of `sort_unstable`, owners are stored in 32 bits, and the ketama family's changes rebuild. The same rings, less code, faster builds in WebAssembly, slower natively, 2 bytes per point more |
//! | `small-leaves` | no | for tests only: rings of 64 points or more are cut into leaves of about 8 points (every build cuts them from 262,144 points on), so that small rings run every leaf path |
//!
//! ## serde
//!
//! With `serde`, [`ring::Ring`] (as a [`ring::RingSpec`]), [`slot::SlotMap`] and
//! [`slot::Plan`] serialize to and from any serde format (JSON, TOML, ...):
//!
//! * a ring: `{"profile": "libmemcached", "vnodes": 40, "points_per_digest": 4,
//!   "default_port": 11211, "nodes": [{"name": "a", "weight": 1}]}` (an option left out
//!   takes the profile's default, `default_port: 0` is "none", `weight` defaults to 1);
//! * a slot map: `{"nodes": [{"id": "…", "addr": "10.0.0.1:7000", "role": "master",
//!   "health": "online", "slots": [[0, 8191]]}, {"addr": "10.0.0.2:7000", "role":
//!   "replica", "master": 0}]}` (node indexes are positions; ranges are inclusive);
//! * a plan: `{"moves": [{"start": 0, "end": 10, "from": 0, "to": 2}], "targets":
//!   [{"node": 0, "weight": 1, "ideal": 5461.33, "before": 8192, "after": 5461}]}`.
//!
//! Reading checks everything the constructors check (unknown fields too); a refusal
//! carries the library's message and its code in brackets (`... [ZERO_WEIGHT]`). A ring
//! read back answers every key as the ring that was written.
//!
//! ```
//! # #[cfg(feature = "serde")] {
//! use keyroute::ring::Ring;
//! let ring: Ring = serde_json::from_str(
//!     r#"{"profile": "libketama", "nodes": [{"name": "10.0.0.1:11211", "weight": 600}, {"name": "10.0.0.2:11211", "weight": 400}]}"#,
//! ).unwrap();
//! assert_eq!(ring.point_count(), 160 * 2);
//! let text = serde_json::to_string(&ring).unwrap();
//! assert!(text.starts_with(r#"{"profile":"libketama","vnodes":40,"points_per_digest":4,"default_port":0,"#));
//! let bad = serde_json::from_str::<Ring>(r#"{"profile": "native", "nodes": [{"name": "a", "weight": -1}]}"#);
//! assert!(bad.unwrap_err().to_string().contains("[NEGATIVE_WEIGHT]"));
//! # }
//! ```
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

pub mod cache;
#[cfg(feature = "fleet")]
pub mod config;
#[cfg(feature = "fleet")]
pub mod engine;
pub mod error;
pub mod frame;
#[cfg(feature = "fleet")]
pub mod hashes;
#[cfg(feature = "alloc")]
pub mod keys;
#[cfg(feature = "alloc")]
pub mod queue;
#[cfg(feature = "alloc")]
pub mod ring;
pub mod script;
pub mod select;
#[cfg(feature = "serde")]
mod serde_impl;
pub mod slot;
mod util;
