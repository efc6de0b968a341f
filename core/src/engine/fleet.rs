//! [`FleetProfile`]: the rings of the fleet's proxies and client libraries, by name.

mod clients;
mod envoy;
mod fill;
mod haproxy;
mod java;
pub(crate) mod nginx;
mod pymemcache;
pub(crate) mod twemproxy;

use alloc::vec::Vec;

pub use pymemcache::Pymemcache;

pub(crate) use haproxy::{consistent as haproxy_consistent, map_based as haproxy_map};
pub(crate) use twemproxy::{ketama_hashed as twemproxy_ketama, modula as twemproxy_modula};

use super::{
    next_prime, EngineError, Jump, JumpVariant, KeyHash, KeyTag, Modulo, Options, Rendezvous,
    Router, SpyHash,
};
use crate::hashes::{HaproxyHash, TwemproxyHash};
use crate::ring::NodeSpec;

/// The profiles and engines [`Router::build`] knows beside the ketama family, with their
/// options (`name=value`):
///
/// | name | options (default) |
/// |---|---|
/// | `jump` | `hash`: `xxh64` (seed 0), `murmur3_128`, `murmur3_32`, `crc32` |
/// | `guava-jump` | `hash`: `murmur3_128`, `murmur3_32`, `xxh64`, `crc32` |
/// | `rendezvous` | `hash`: `xxh64`; `hash_tag` (`false`) |
/// | `maglev` | `table_size`: the smallest prime `>= max(100 × nodes, 65537)` |
/// | `nginx`, `nginx-hash` | none (node names are `server` strings as written) |
/// | `haproxy`, `haproxy-map` | `hash` (`sdbm`, `djb2`, `wt6`, `crc32`; `source` for `balance source`: the key is an IP address), `avalanche` (consistent: true without `hash`) |
/// | `twemproxy` | `hash` (`md5`, and the other eleven), `distribution` (`ketama`, `modula`), `hash_tag` (two characters) |
/// | `java-hashcode` | `vnodes` (150) |
/// | `spymemcached`, `spymemcached-weighted` | `format` (`spymemcached`, `libmemcached`), `hash` (`ketama`, `native`, `crc`, `fnv1_64`, `fnv1a_64`, `fnv1_32`, `fnv1a_32`) |
/// | `jedis` | `version` (`3`; `2`, `4`), `naming` (`unnamed`, `named`), `hash` (`murmur`, `md5`) |
/// | `envoy-ring` | `hash` (`xx_hash`, `murmur_hash_2`), `min_ring_size` (1024), `max_ring_size` (8388608) |
/// | `envoy-maglev` | `table_size` (65537) |
/// | `go-redis` | none |
/// | `groupcache` | `replicas` (50) |
/// | `dubbo` | `replicas` (`hash.nodes`, 160) |
/// | `redis-rb` | `replicas` (160), `hash_tag` (true) |
/// | `predis` | `replicas` (128), `hash_tag` (true) |
/// | `predis-ketama` | `hash_tag` (true) |
/// | `pymemcache` | `seed` (0), `bytes_keys` (false: keys are `str`) |
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

const FLEET: &[&str] = &[
    "jump",
    "guava-jump",
    "rendezvous",
    "maglev",
    "nginx",
    "nginx-hash",
    "haproxy",
    "haproxy-map",
    "twemproxy",
    "java-hashcode",
    "spymemcached",
    "spymemcached-weighted",
    "jedis",
    "envoy-ring",
    "envoy-maglev",
    "go-redis",
    "groupcache",
    "dubbo",
    "redis-rb",
    "predis",
    "predis-ketama",
    "pymemcache",
];

impl FleetProfile {
    /// The profile of a name (`_` and `-` are interchangeable, case is ignored).
    ///
    /// # Errors
    /// [`EngineError::UnknownEngine`].
    pub fn from_name(name: &str) -> Result<FleetProfile, EngineError> {
        let norm = name.trim().to_ascii_lowercase().replace('_', "-");
        FLEET
            .iter()
            .find(|n| **n == norm)
            .map(|n| FleetProfile(n))
            .ok_or_else(|| EngineError::UnknownEngine(name.into()))
    }

    /// The name.
    pub fn name(self) -> &'static str {
        self.0
    }

    /// Every fleet profile and engine name.
    pub fn all() -> &'static [&'static str] {
        FLEET
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
        let mut o = Options::new(self.0, options);
        let nodes: Vec<NodeSpec> = nodes.to_vec();
        super::check_nodes(&nodes)?;
        let name = self.0;
        let r = match name {
            "jump" | "guava-jump" => {
                let guava = name == "guava-jump";
                let choices = ["xxh64", "murmur3_128", "murmur3_32", "crc32"];
                let h = o.choice("hash", &choices)?;
                let h = h.unwrap_or(if guava { "murmur3_128" } else { "xxh64" });
                let key_hash = match h {
                    "murmur3_128" => KeyHash::Murmur3_128,
                    "murmur3_32" => KeyHash::Murmur3_32,
                    "crc32" => KeyHash::Crc32,
                    _ => KeyHash::Xxh64(0),
                };
                let v = if guava {
                    JumpVariant::Guava
                } else {
                    JumpVariant::Paper
                };
                Router::from_engine(name, super::Kind::Jump(Jump::new(v, key_hash, nodes)?))
            }
            "rendezvous" | "go-redis" => {
                let tag = if name == "go-redis" {
                    unweighted(name, &nodes)?;
                    KeyTag::Braces
                } else if o.flag("hash_tag")?.unwrap_or(false) {
                    KeyTag::Braces
                } else {
                    KeyTag::Whole
                };
                let r = Rendezvous::new(KeyHash::Xxh64(0), tag, nodes)?;
                Router::from_engine(name, super::Kind::Rendezvous(r))
            }
            "maglev" | "envoy-maglev" => {
                // At least 100 slots per node and at least Envoy's 65537: one removal then
                // moves at most 2/n of the keys up to ~150 nodes (measured; the extra
                // disruption of Maglev's greedy fill shrinks as M/n grows).
                let default = if name == "maglev" {
                    next_prime((100 * nodes.len() as u64).max(65537))
                } else {
                    65537
                };
                let m = o.int("table_size", 2, 5_000_011)?.unwrap_or(default);
                if !super::maglev::is_prime(m) || (m as usize) <= nodes.len() {
                    return Err(EngineError::BadOption {
                        engine: self.0,
                        option: "table_size".into(),
                        reason: alloc::format!(
                            "{m} is not a prime above the number of nodes (Maglev needs one; e.g. {})",
                            next_prime(100 * nodes.len().max(1) as u64)
                        ),
                    });
                }
                Router::from_engine(name, super::Kind::Table(envoy::maglev(name, nodes, m)?))
            }
            "nginx" => Router::from_engine(name, super::Kind::Points(nginx::build(nodes)?)),
            "nginx-hash" => Router::from_engine(name, super::Kind::Modulo(Modulo::nginx(nodes)?)),
            "haproxy" | "haproxy-map" => {
                let hash = o.choice("hash", &["sdbm", "djb2", "wt6", "crc32", "source"])?;
                let named = hash.is_some();
                let consistent = name == "haproxy";
                let avalanche = o.flag("avalanche")?.unwrap_or(consistent && !named);
                let key_hash = match hash {
                    Some("source") => KeyHash::HaproxySource(avalanche),
                    h => KeyHash::Haproxy(
                        h.and_then(HaproxyHash::from_name)
                            .unwrap_or(HaproxyHash::Sdbm),
                        avalanche,
                    ),
                };
                if consistent {
                    let ids: Vec<u32> = (1..=nodes.len() as u32).collect();
                    let r = haproxy::consistent(nodes, &ids, key_hash)?;
                    Router::from_engine(name, super::Kind::Points(r))
                } else {
                    let t = haproxy::map_based(nodes, key_hash)?;
                    Router::from_engine(name, super::Kind::Table(t))
                }
            }
            "twemproxy" => {
                let names: Vec<&'static str> =
                    TwemproxyHash::ALL.iter().map(|h| h.as_str()).collect();
                let h = o.choice("hash", &names)?.and_then(TwemproxyHash::from_name);
                let h = h.unwrap_or(TwemproxyHash::Md5);
                let dist = o
                    .choice("distribution", &["ketama", "modula"])?
                    .unwrap_or("ketama");
                let tag = match o.text("hash_tag") {
                    None => KeyTag::Whole,
                    Some(t) if t.len() == 2 => KeyTag::Pair(t.as_bytes()[0], t.as_bytes()[1]),
                    Some(t) => {
                        return Err(EngineError::BadOption {
                            engine: "twemproxy",
                            option: "hash_tag".into(),
                            reason: alloc::format!(
                                "{t:?}: twemproxy's hash_tag is two characters, e.g. \"{{}}\""
                            ),
                        })
                    }
                };
                if dist == "modula" {
                    Router::from_engine(
                        name,
                        super::Kind::Modulo(twemproxy::modula(nodes, h, tag)?),
                    )
                } else {
                    Router::from_engine(
                        name,
                        super::Kind::Points(twemproxy::ketama(nodes, h, tag)?),
                    )
                }
            }
            "java-hashcode" => {
                unweighted(name, &nodes)?;
                let v = o.int("vnodes", 1, 65536)?.unwrap_or(150) as u32;
                Router::from_engine(name, super::Kind::Points(java::hashcode(nodes, v)?))
            }
            "spymemcached" | "spymemcached-weighted" => {
                let lib =
                    o.choice("format", &["spymemcached", "libmemcached"])? == Some("libmemcached");
                let alg = match o.text("hash") {
                    None => SpyHash::Ketama,
                    Some(h) => SpyHash::from_name(h.trim()).ok_or_else(|| EngineError::BadOption {
                        engine: self.0,
                        option: "hash".into(),
                        reason: alloc::format!(
                            "{h:?} is not one of ketama, native, crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32 (or KETAMA_HASH, ...)"
                        ),
                    })?,
                };
                let weighted = name == "spymemcached-weighted";
                if !weighted {
                    unweighted(name, &nodes)?;
                }
                Router::from_engine(
                    name,
                    super::Kind::Points(java::spymemcached(nodes, alg, lib, weighted)?),
                )
            }
            "jedis" => {
                let v = match o.choice("version", &["2", "3", "4"])?.unwrap_or("3") {
                    "2" => java::JedisVersion::V2,
                    "4" => java::JedisVersion::V4,
                    _ => java::JedisVersion::V3,
                };
                let named = o.choice("naming", &["unnamed", "named"])? == Some("named");
                let md5 = o.choice("hash", &["murmur", "md5"])? == Some("md5");
                Router::from_engine(
                    name,
                    super::Kind::Points(java::jedis(nodes, v, named, md5)?),
                )
            }
            "envoy-ring" => {
                let murmur =
                    o.choice("hash", &["xx_hash", "murmur_hash_2"])? == Some("murmur_hash_2");
                let min = o.int("min_ring_size", 1, 8_388_608)?.unwrap_or(1024);
                let max = o.int("max_ring_size", 1, 8_388_608)?.unwrap_or(8_388_608);
                if min > max {
                    return Err(EngineError::BadOption {
                        engine: "envoy-ring",
                        option: "min_ring_size".into(),
                        reason: alloc::format!("{min} is above max_ring_size {max}"),
                    });
                }
                Router::from_engine(
                    name,
                    super::Kind::Points(envoy::ring(nodes, murmur, min, max)?),
                )
            }
            "groupcache" => {
                unweighted(name, &nodes)?;
                let r = o.int("replicas", 1, 65536)?.unwrap_or(50) as u32;
                Router::from_engine(name, super::Kind::Points(clients::groupcache(nodes, r)?))
            }
            "dubbo" => {
                unweighted(name, &nodes)?;
                let r = o.int("replicas", 4, 65536)?.unwrap_or(160) as u32;
                Router::from_engine(name, super::Kind::Points(clients::dubbo(nodes, r)?))
            }
            "redis-rb" => {
                unweighted(name, &nodes)?;
                let r = o.int("replicas", 1, 65536)?.unwrap_or(160) as u32;
                let tag = o.flag("hash_tag")?.unwrap_or(true);
                Router::from_engine(name, super::Kind::Points(clients::redis_rb(nodes, r, tag)?))
            }
            "predis" => {
                let r = o.int("replicas", 1, 65536)?.unwrap_or(128) as u32;
                let tag = o.flag("hash_tag")?.unwrap_or(true);
                Router::from_engine(name, super::Kind::Points(clients::predis(nodes, r, tag)?))
            }
            "predis-ketama" => {
                let tag = o.flag("hash_tag")?.unwrap_or(true);
                let r = clients::predis_ketama(nodes, tag)?;
                Router::from_engine(name, super::Kind::Points(r))
            }
            "pymemcache" => {
                let seed = o.int("seed", 0, u64::from(u32::MAX))?.unwrap_or(0) as u32;
                let bytes = o.flag("bytes_keys")?.unwrap_or(false);
                let p = Pymemcache::with_options(nodes, seed, bytes)?;
                Router::from_engine(name, super::Kind::Pymemcache(p))
            }
            _ => return Err(EngineError::UnknownEngine(name.into())),
        };
        o.finish()?;
        Ok(r)
    }
}

/// Refuses weights other than 1 for a peer that has none.
pub(crate) fn unweighted(engine: &'static str, nodes: &[NodeSpec]) -> Result<(), EngineError> {
    match nodes.iter().find(|n| n.weight != 1) {
        Some(n) => Err(EngineError::BadOption {
            engine,
            option: alloc::format!("weight of {}", n.name),
            reason: "this peer has no weights: give every node weight 1".into(),
        }),
        None => Ok(()),
    }
}
