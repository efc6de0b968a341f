//! [`Router`]: one concrete type over every engine, built by name.

use alloc::string::String;
use alloc::vec::Vec;

use super::fleet::Pymemcache;
use super::{
    ConfigSite, Engine, EngineEntry, EngineError, Jump, Modulo, PointRing, Rendezvous, Table,
};
use crate::ring::{NodeSpec, Ring, RingError};

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
    /// The options it was built with by name, for the build a change makes; `None` for
    /// a router read from a proxy configuration, which changes with the configuration.
    options: Option<Vec<(String, String)>>,
}

impl Router {
    /// A router read from a proxy configuration: [`Router::add`] and [`Router::remove`]
    /// refuse it (the configuration is what changes).
    pub(crate) fn from_engine(name: &'static str, kind: Kind) -> Router {
        Router {
            name,
            kind,
            options: None,
        }
    }

    /// The router the registry's entry `name` built with `options`.
    pub(crate) fn from_entry(name: &'static str, kind: Kind, options: &[(&str, &str)]) -> Router {
        let options = options.iter().map(|(k, v)| ((*k).into(), (*v).into()));
        Router {
            name,
            kind,
            options: Some(options.collect()),
        }
    }

    /// The same router, marked as read from a proxy configuration (see
    /// [`from_engine`](Self::from_engine)).
    pub(crate) fn read_from_config(mut self) -> Router {
        self.options = None;
        self
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
            options: Some(Vec::new()),
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

    /// Adds `node` at run time, last in the node list, as the engine's peer does. For
    /// every engine but two that is the router a new build over the new node list gives
    /// (the ring profiles change their circle in place to that same ring); `java-hashcode`
    /// and `redis-rb` change as their peers' maps do, where a later put wins a shared
    /// point, so their state depends on the order of the changes (see
    /// [`remove`](Self::remove)). The work is bounded as a build is: a node that would
    /// take the ring past its point limit is refused and the router is unchanged.
    ///
    /// ```
    /// use keyroute::engine::{Engine, Router};
    /// use keyroute::ring::{parse_nodes, NodeSpec};
    /// let mut r = Router::build("maglev", &parse_nodes("a,b")?, &[])?;
    /// r.add(NodeSpec { name: "c".into(), weight: 1, address: None })?;
    /// let again = Router::build("maglev", &parse_nodes("a,b,c")?, &[])?;
    /// assert_eq!(r.get(b"user:1"), again.get(b"user:1"));
    /// # Ok::<(), keyroute::engine::EngineError>(())
    /// ```
    ///
    /// # Errors
    /// [`RingError::DuplicateNode`], [`RingError::EmptyNodeName`], [`RingError::ZeroWeight`],
    /// [`RingError::TooManyPoints`], [`EngineError::BadOption`] (a weight for a peer
    /// without weights), [`EngineError::UnsupportedConfig`] (a router read from a proxy
    /// configuration: change the configuration and read it again, as the proxy reloads
    /// it).
    pub fn add(&mut self, node: NodeSpec) -> Result<(), EngineError> {
        self.changeable()?;
        let mut nodes = self.node_list();
        nodes.push(node);
        super::check_nodes(&nodes)?;
        let node = nodes.pop().unwrap_or_else(|| unreachable!());
        match &mut self.kind {
            #[cfg(not(feature = "small-sort"))]
            Kind::Ring(r) => Ok(r.add(&node.name, node.weight)?),
            #[cfg(feature = "small-sort")]
            Kind::Ring(r) => {
                nodes.push(node);
                ring_again(r, &nodes)
            }
            Kind::Points(p) if p.changes_in_place() => {
                super::error::unweighted(self.name, core::slice::from_ref(&node))?;
                p.put_node(node)
            }
            _ => {
                nodes.push(node);
                self.rebuild(&nodes)
            }
        }
    }

    /// Removes the node named `name` at run time, as the engine's peer does, and gives
    /// it back; the nodes after it move one index down. For every engine but two that is
    /// the router a new build over the remaining nodes gives. `java-hashcode` and
    /// `redis-rb` delete every position the node's points hash to, whoever holds it now:
    /// a node whose points another took (a later put won them) takes that node's points
    /// with it. Under `java-hashcode` `"Aa"` and `"BB"` have the same `hashCode`, so after
    /// adding `Aa`, `BB` and `cache3` and removing `BB`, `Aa` is left without a point, as in
    /// the Java ring. The work is bounded as a build is.
    ///
    /// ```
    /// use keyroute::engine::{Engine, Router};
    /// use keyroute::ring::{parse_nodes, NodeSpec};
    /// let mut r = Router::build("java-hashcode", &parse_nodes("Aa,BB,cache3")?, &[])?;
    /// r.remove("BB")?;
    /// assert_eq!(r.len(), 2);
    /// assert!((0..200).all(|i| r.get(format!("k{i}").as_bytes()) == Some("cache3")));
    /// # Ok::<(), keyroute::engine::EngineError>(())
    /// ```
    ///
    /// # Errors
    /// [`RingError::UnknownNode`], [`EngineError::UnsupportedConfig`] (a router read from
    /// a proxy configuration).
    pub fn remove(&mut self, name: &str) -> Result<NodeSpec, EngineError> {
        self.changeable()?;
        let mut nodes = self.node_list();
        let i = nodes
            .iter()
            .position(|n| n.name == name)
            .ok_or_else(|| RingError::UnknownNode(name.into()))?;
        match &mut self.kind {
            #[cfg(not(feature = "small-sort"))]
            Kind::Ring(r) => {
                r.remove(name)?;
                Ok(nodes.swap_remove(i))
            }
            #[cfg(feature = "small-sort")]
            Kind::Ring(r) => {
                let gone = nodes.remove(i);
                ring_again(r, &nodes)?;
                Ok(gone)
            }
            Kind::Points(p) if p.changes_in_place() => p.delete_node(i),
            _ => {
                let gone = nodes.remove(i);
                self.rebuild(&nodes)?;
                Ok(gone)
            }
        }
    }

    /// Refuses a change to a router read from a configuration.
    fn changeable(&self) -> Result<(), EngineError> {
        match self.options {
            Some(_) => Ok(()),
            None => Err(EngineError::UnsupportedConfig(ConfigSite {
                file: String::new(),
                line: 0,
                reason: "a router read from a proxy configuration changes with it: change the configuration and read it again, as the proxy reloads it".into(),
            })),
        }
    }

    /// The router a build of this entry over `nodes`, with the same options, gives.
    fn rebuild(&mut self, nodes: &[NodeSpec]) -> Result<(), EngineError> {
        let options = self.options.as_deref().unwrap_or_default();
        let pairs: Vec<(&str, &str)> = options
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        *self = EngineEntry::named(self.name)?.build(nodes, &pairs)?;
        Ok(())
    }

    /// The nodes as they were given (whole names, weights, addresses), in order.
    fn node_list(&self) -> Vec<NodeSpec> {
        match &self.kind {
            Kind::Points(p) => p.nodes().to_vec(),
            _ => {
                let e = self.engine();
                (0..e.len())
                    .map(|i| NodeSpec {
                        name: e.node_name(i).into(),
                        weight: e.node_weight(i),
                        address: e.node_address(i).map(Into::into),
                    })
                    .collect()
            }
        }
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

/// The ring of `r`'s profile (its options included) over `nodes`: in the size-minded build
/// (the fleet's .wasm) a ring profile's change builds again, the ring its in-place change
/// gives, without linking the ring's change paths (3.7 KB gzipped).
#[cfg(feature = "small-sort")]
fn ring_again(r: &mut Ring, nodes: &[NodeSpec]) -> Result<(), EngineError> {
    *r = Ring::with_nodes(
        *r.profile(),
        nodes.iter().map(|n| (n.name.as_str(), n.weight)),
    )?;
    Ok(())
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
