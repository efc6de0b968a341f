//! Every ring a fleet runs, behind one lookup interface.
//!
//! keyroute's [`Ring`](crate::ring::Ring) reproduces the MD5 ketama family. This module adds
//! the rest of what production fleets route with:
//!
//! * **fleet profiles** ([`FleetProfile`]): the rings of nginx, HAProxy, twemproxy,
//!   Envoy, spymemcached, Jedis, go-redis, groupcache, Dubbo, redis-rb, Predis,
//!   pymemcache and a Java `hashCode` ring, each bit-exact with its peer;
//! * **engines beside the ring**: [`Jump`] (Lamping–Veach, and Guava's variant, which
//!   differs), [`Rendezvous`] (weighted HRW with top-k), [`Table`] (Maglev, HAProxy's
//!   map-based table), [`Modulo`] (nginx's plain `hash`, twemproxy's `modula`), and the
//!   [`Bounded`] overlay (consistent hashing with bounded loads) over any of them;
//! * proxy **configurations** read as they are, in [`crate::config`].
//!
//! Every engine answers through the [`Engine`] trait: a key's owner ([`Engine::get`]),
//! an ordered list of distinct candidates ([`Engine::get_n_into`]: the ring walk, the
//! rendezvous ranking, or the owner then the next nodes in list order for engines
//! without a natural order), and batches ([`Engine::get_many_into`]). [`Router`] is one
//! concrete type over all of them, built by name ([`Router::build`]) from one registry,
//! [`ENTRIES`]: every name, its aliases, kind, options and build.
//!
//! ```
//! use keyroute::engine::{Engine, Router};
//! use keyroute::ring::parse_nodes;
//!
//! let nodes = parse_nodes("cache-a,cache-b,cache-c")?;
//! for name in ["jump", "rendezvous", "maglev", "nginx", "go-redis", "libketama"] {
//!     let r = Router::build(name, &nodes, &[])?;
//!     let owner = r.get(b"user:42").expect("non-empty");
//!     assert!(["cache-a", "cache-b", "cache-c"].contains(&owner), "{name}");
//! }
//! # Ok::<(), keyroute::engine::EngineError>(())
//! ```

use alloc::vec::Vec;

mod bounded;
mod error;
mod error_text;
pub(crate) mod fleet;
mod jump;
mod keyhash;
mod maglev;
mod modulo;
mod options;
mod points;
mod registry;
mod rendezvous;
mod router;
mod table;

pub use bounded::{Bounded, Load};
pub use error::{ConfigSite, EngineError};
pub use fleet::FleetProfile;
pub use fleet::Pymemcache;
pub use jump::{guava_consistent_hash, jump_hash, Jump, JumpVariant};
pub use keyhash::{KeyHash, KeyTag, SpyHash};
pub use maglev::{maglev_table, next_prime};
pub use modulo::Modulo;
pub use options::Options;
pub use points::{Dedup, PointRing, PointRules, Seek, DOWN_TRIES};
pub use registry::{EngineEntry, EntryKind, OptionDoc, ENTRIES, NAMES};
pub use rendezvous::Rendezvous;
pub use router::{Kind, Router};
pub use table::Table;

pub(crate) use crate::util::push_decimal;
pub(crate) use points::{concat, NodePoints};

use crate::ring::{NodeSpec, RingError};

/// A key's owner and candidates, whatever the engine.
///
/// ```
/// use keyroute::engine::{Engine, Jump, JumpVariant, KeyHash};
/// use keyroute::ring::parse_nodes;
/// let jump = Jump::new(JumpVariant::Paper, KeyHash::Xxh64(0), parse_nodes("a,b,c")?)?;
/// let mut out = Vec::new();
/// jump.get_n_into(b"k", 2, &mut out);
/// assert_eq!(out.len(), 2);
/// assert_eq!(Some(out[0]), jump.get_index(b"k"));
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
pub trait Engine {
    /// The number of nodes.
    fn len(&self) -> usize;
    /// Whether there is no node.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The name of node `i` (as the configuration or node list names it).
    fn node_name(&self, i: usize) -> &str;
    /// The weight of node `i`.
    fn node_weight(&self, i: usize) -> u32;
    /// The address of node `i` when it is named by an alias.
    fn node_address(&self, i: usize) -> Option<&str> {
        let _ = i;
        None
    }
    /// The index of the node owning `key`, `None` when there is no node.
    fn get_index(&self, key: &[u8]) -> Option<usize>;
    /// Up to `n` distinct candidates for `key`, the owner first (see the module docs for
    /// the order); `out` is cleared first.
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>);

    /// The name of the node owning `key`.
    fn get(&self, key: &[u8]) -> Option<&str> {
        self.get_index(key).map(|i| self.node_name(i))
    }
    /// Up to `n` distinct candidate names for `key`, the owner first.
    fn get_n(&self, key: &[u8], n: usize) -> Vec<&str> {
        let mut idx = Vec::new();
        self.get_n_into(key, n, &mut idx);
        idx.into_iter().map(|i| self.node_name(i)).collect()
    }
    /// The owner index of every key, appended to `out`.
    fn get_many_into<I, K>(&self, keys: I, out: &mut Vec<Option<usize>>)
    where
        I: IntoIterator<Item = K>,
        K: AsRef<[u8]>,
        Self: Sized,
    {
        for k in keys {
            out.push(self.get_index(k.as_ref()));
        }
    }
}

/// The owner, then the following nodes in list order: the candidate order of engines that
/// have no natural one (jump, tables, modulo).
pub(crate) fn owner_then_next(owner: Option<usize>, len: usize, n: usize, out: &mut Vec<usize>) {
    out.clear();
    if let Some(o) = owner {
        for k in 0..n.min(len) {
            out.push((o + k) % len);
        }
    }
}

/// Checks a node list: names non-empty and distinct, weights at least 1 (as
/// [`Ring::with_nodes`](crate::ring::Ring::with_nodes)).
///
/// ```
/// use keyroute::engine::check_nodes;
/// use keyroute::ring::parse_nodes;
/// assert!(check_nodes(&parse_nodes("a,b")?).is_ok());
/// assert!(check_nodes(&parse_nodes("a,a")?).is_err());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
///
/// # Errors
/// [`RingError::EmptyNodeName`], [`RingError::ZeroWeight`], [`RingError::DuplicateNode`].
pub fn check_nodes(nodes: &[NodeSpec]) -> Result<(), EngineError> {
    let mut names: Vec<&str> = Vec::with_capacity(nodes.len());
    for n in nodes {
        if n.name.is_empty() {
            return Err(RingError::EmptyNodeName.into());
        }
        if n.weight == 0 {
            return Err(RingError::ZeroWeight(n.name.clone()).into());
        }
        names.push(&n.name);
    }
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(RingError::DuplicateNode(w[0].into()).into());
    }
    Ok(())
}
