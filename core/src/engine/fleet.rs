//! The rings of the fleet's proxies and client libraries, one file per peer. Each file
//! builds its entries of the registry ([`ENTRIES`](super::ENTRIES), `registry.rs`);
//! [`FleetProfile`] names them.

pub(crate) mod clients;
pub(crate) mod envoy;
mod fill;
pub(crate) mod haproxy;
pub(crate) mod java;
pub(crate) mod nginx;
pub(crate) mod pymemcache;
pub(crate) mod twemproxy;

pub use pymemcache::Pymemcache;

pub(crate) use haproxy::{consistent as haproxy_consistent, map_based as haproxy_map};
pub(crate) use twemproxy::{ketama_hashed as twemproxy_ketama, modula as twemproxy_modula};

use super::registry::FLEET_NAMES;
use super::{EngineEntry, EngineError, EntryKind, Router};
use crate::ring::NodeSpec;

/// An engine or fleet profile of [`Router::build`] (every entry of
/// [`ENTRIES`](super::ENTRIES) but the ring profiles); each entry lists its options
/// ([`EngineEntry::options`], and `keyroute route --help`).
///
/// ```
/// use keyroute::engine::{Engine, FleetProfile};
/// use keyroute::ring::parse_nodes;
/// let p = FleetProfile::from_name("envoy-ring")?;
/// let r = p.build(&parse_nodes("10.0.0.1:80,10.0.0.2:80")?, &[("hash", "murmur_hash_2")])?;
/// assert_eq!(r.name(), "envoy-ring");
/// assert!(r.get(b"x").is_some());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FleetProfile(&'static str);

impl FleetProfile {
    /// The profile of a name or alias (`_` and `-` are interchangeable, case is ignored).
    ///
    /// # Errors
    /// [`EngineError::UnknownEngine`], also for a ring profile's name.
    pub fn from_name(name: &str) -> Result<FleetProfile, EngineError> {
        match EngineEntry::named(name)? {
            e if e.kind() == EntryKind::RingProfile => Err(EngineError::UnknownEngine(name.into())),
            e => Ok(FleetProfile(e.name())),
        }
    }

    /// The name.
    pub fn name(self) -> &'static str {
        self.0
    }

    /// Every fleet profile and engine name.
    pub fn all() -> &'static [&'static str] {
        FLEET_NAMES
    }

    /// The engine over `nodes` with `options`.
    ///
    /// # Errors
    /// Node errors, [`EngineError::BadOption`].
    pub fn build(
        self,
        nodes: &[NodeSpec],
        options: &[(&str, &str)],
    ) -> Result<Router, EngineError> {
        EngineEntry::named(self.0)?.build(nodes, options)
    }
}
