//! [`Router`]: one concrete type over every engine, built by name.

use alloc::vec::Vec;

use super::fleet::Pymemcache;
use super::{Engine, EngineEntry, EngineError, Jump, Modulo, PointRing, Rendezvous, Table};
use crate::ring::{NodeSpec, Ring};

/// The engine inside a [`Router`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Kind {
    /// A ketama-family or native ring ([`crate::ring`]).
    Ring(Ring),
    /// A fleet profile's sorted circle.
    Points(PointRing),
    /// Modulo over weights.
    Modulo(Modulo),
    /// A lookup table (Maglev, HAProxy map-based).
    Table(Table),
    /// Jump (paper or Guava).
    Jump(Jump),
    /// Rendezvous (and go-redis).
    Rendezvous(Rendezvous),
    /// pymemcache's rendezvous.
    Pymemcache(Pymemcache),
}

/// Any engine, by name: what the CLI and the bindings hold.
///
/// ```
/// use keyroute::engine::{Engine, Router};
/// use keyroute::ring::parse_nodes;
/// let r = Router::build("haproxy", &parse_nodes("s1,s2,s3=2")?, &[("hash", "djb2")])?;
/// assert_eq!(r.name(), "haproxy");
/// assert_eq!(r.len(), 3);
/// assert!(r.get(b"/index.html").is_some());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Router {
    name: &'static str,
    kind: Kind,
}

impl Router {
    pub(crate) fn from_engine(name: &'static str, kind: Kind) -> Router {
        Router { name, kind }
    }

    /// A ketama-family or native [`Ring`] behind the lookup interface.
    ///
    /// ```
    /// use keyroute::engine::{Engine, Router};
    /// use keyroute::ring::{Profile, Ring};
    /// let ring = Ring::with_nodes(Profile::libketama(), [("a", 1), ("b", 1)])?;
    /// let r = Router::from_ring(ring.clone());
    /// assert_eq!(r.name(), "libketama");
    /// assert_eq!(r.get(b"k"), ring.get(b"k"));
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub fn from_ring(ring: Ring) -> Router {
        Router {
            name: ring.profile().name().as_str(),
            kind: Kind::Ring(ring),
        }
    }

    /// The engine or profile `name` (one of [`NAMES`](super::NAMES), or an alias: see
    /// [`ENTRIES`](super::ENTRIES)) over `nodes`, with `options` as `(name, value)`
    /// text. The ring profiles take `vnodes`, `points_per_digest` and `default_port`, as
    /// [`Profile::from_options`](crate::ring::Profile::from_options); every entry lists
    /// its options ([`EngineEntry::options`]). `twemproxy` is nutcracker's rules (aliases,
    /// 272-byte point strings, every `hash:`).
    ///
    /// # Errors
    /// [`EngineError::UnknownEngine`], [`EngineError::BadOption`], node errors.
    pub fn build(
        name: &str,
        nodes: &[NodeSpec],
        options: &[(&str, &str)],
    ) -> Result<Router, EngineError> {
        EngineEntry::named(name)?.build(nodes, options)
    }

    /// The engine or profile name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The engine inside.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// The key's hash as the engine places it (`None` for rendezvous engines, whose
    /// scores are per node).
    pub fn hash_key(&self, key: &[u8]) -> Option<u64> {
        Some(match &self.kind {
            Kind::Ring(r) => r.hash_key(key),
            Kind::Points(p) => p.hash_key(key),
            Kind::Modulo(m) => m.hash_key(key),
            Kind::Table(t) => t.hash_key(key),
            Kind::Jump(j) => j.key_hash().hash(key),
            Kind::Rendezvous(_) | Kind::Pymemcache(_) => return None,
        })
    }

    fn engine(&self) -> &dyn DynEngine {
        match &self.kind {
            Kind::Ring(r) => r,
            Kind::Points(p) => p,
            Kind::Modulo(m) => m,
            Kind::Table(t) => t,
            Kind::Jump(j) => j,
            Kind::Rendezvous(r) => r,
            Kind::Pymemcache(p) => p,
        }
    }
}

/// The object-safe part of [`Engine`].
trait DynEngine {
    fn len(&self) -> usize;
    fn node_name(&self, i: usize) -> &str;
    fn node_weight(&self, i: usize) -> u32;
    fn node_address(&self, i: usize) -> Option<&str>;
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>);
}

impl<E: Engine> DynEngine for E {
    fn len(&self) -> usize {
        Engine::len(self)
    }
    fn node_name(&self, i: usize) -> &str {
        Engine::node_name(self, i)
    }
    fn node_weight(&self, i: usize) -> u32 {
        Engine::node_weight(self, i)
    }
    fn node_address(&self, i: usize) -> Option<&str> {
        Engine::node_address(self, i)
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        Engine::get_n_into(self, key, n, out)
    }
}

impl Engine for Router {
    fn len(&self) -> usize {
        self.engine().len()
    }
    fn node_name(&self, i: usize) -> &str {
        self.engine().node_name(i)
    }
    fn node_weight(&self, i: usize) -> u32 {
        self.engine().node_weight(i)
    }
    fn node_address(&self, i: usize) -> Option<&str> {
        self.engine().node_address(i)
    }
    #[inline]
    fn get_index(&self, key: &[u8]) -> Option<usize> {
        match &self.kind {
            Kind::Ring(r) => r.get_index(key),
            Kind::Points(p) => p.locate(key),
            Kind::Modulo(m) => Engine::get_index(m, key),
            Kind::Table(t) => Engine::get_index(t, key),
            Kind::Jump(j) => Engine::get_index(j, key),
            Kind::Rendezvous(r) => Engine::get_index(r, key),
            Kind::Pymemcache(p) => Engine::get_index(p, key),
        }
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        self.engine().get_n_into(key, n, out)
    }
}

impl Engine for Ring {
    fn len(&self) -> usize {
        Ring::len(self)
    }
    fn node_name(&self, i: usize) -> &str {
        self.nodes()[i].name()
    }
    fn node_weight(&self, i: usize) -> u32 {
        self.nodes()[i].weight()
    }
    #[inline]
    fn get_index(&self, key: &[u8]) -> Option<usize> {
        Ring::get_index(self, key)
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        Ring::get_n_into(self, key, n, out)
    }
}

impl Engine for PointRing {
    fn len(&self) -> usize {
        self.nodes().len()
    }
    fn node_name(&self, i: usize) -> &str {
        self.name(i)
    }
    fn node_weight(&self, i: usize) -> u32 {
        self.nodes()[i].weight
    }
    fn node_address(&self, i: usize) -> Option<&str> {
        self.nodes()[i].address.as_deref()
    }
    #[inline]
    fn get_index(&self, key: &[u8]) -> Option<usize> {
        self.locate(key)
    }
    fn get_n_into(&self, key: &[u8], n: usize, out: &mut Vec<usize>) {
        self.walk(key, n, out)
    }
}
