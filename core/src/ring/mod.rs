//! Consistent-hash rings: the ketama family, bit-exact with each peer, and `native`.
//!
//! One engine ([`Ring`]) serves every profile; a [`Profile`] holds the few parameters in
//! which the peers differ (hash, points per digest, weight arithmetic, server string,
//! `>=`/`>` lookup, tie rule).
//!
//! ```
//! use keyroute::ring::{Profile, Ring};
//!
//! let ring = Ring::with_nodes(Profile::native(), [("cache-a", 1), ("cache-b", 1), ("cache-c", 2)])?;
//! let owner = ring.get(b"user:42").expect("a non-empty ring always answers");
//! assert!(ring.contains(owner));
//! # Ok::<(), keyroute::ring::RingError>(())
//! ```

mod analysis;
mod error;
mod hash;
pub(crate) mod index;
pub(crate) mod leaf;
pub(crate) mod md5_many;
mod owner_vec;
mod owners;
mod positions;
pub(crate) mod profile;
mod profile_name;
// The `Ring` type itself (nodes, weights, the circle, changes, lookups): `ring::Ring`
// is its public path.
#[allow(clippy::module_inception)]
mod ring;
mod sip_many;
pub(crate) mod sort;
mod spec;

pub use analysis::{diff, Arc, Diff, MovedArc};
pub use error::{checked_weight, RingError};
pub use hash::key_hash;
pub use md5_many::{md5_key_hashes_with, Md5Path};
pub use owners::{Owners, OwnersIter};
pub use positions::{Positions, PositionsIter};
pub use profile::{
    Lookup, PointHash, Profile, ProfileName, ProfileOptions, Ties, WeightRule,
    DEFAULT_NATIVE_VNODES, NATIVE_SIP_KEY,
};
pub use ring::{Node, Ring, MAX_POINTS, NO_NODE};
#[cfg(feature = "fleet")]
pub(crate) use spec::is_control;
pub use spec::{parse_node, parse_nodes, parse_weights, NodeSpec, RingSpec};
