//! The registry: every name [`Router::build`] knows, once, with its kind, its options and
//! how to build it. Every list of names is derived from [`ENTRIES`]: [`NAMES`], the CLI's
//! help, the bindings' `ENGINES` and `PROFILES`, and the TypeScript and Python name
//! types (generated from here and checked by `core/tests/names.rs`).
//!
//! Adding a ring: see "Adding a ring profile or engine" in `docs/design.md`.

use alloc::vec::Vec;

use super::{check_nodes, EngineError, Kind, Options, Router};
use crate::ring::{NodeSpec, Profile, ProfileName, ProfileOptions, Ring};
use crate::util::{join, joined_len, same_name, utf8};

use super::fleet::{clients, envoy, haproxy, java, nginx, pymemcache, twemproxy};
use super::{jump, maglev, rendezvous};

/// What an entry builds.
///
/// ```
/// use keyroute::engine::{EngineEntry, EntryKind};
/// assert_eq!(EngineEntry::named("libketama")?.kind(), EntryKind::RingProfile);
/// assert_eq!(EngineEntry::named("maglev")?.kind(), EntryKind::Engine);
/// assert_eq!(EngineEntry::named("nginx")?.kind(), EntryKind::FleetProfile);
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntryKind {
    /// A ketama-family or native ring profile ([`crate::ring::Profile`]): a
    /// [`Ring`](crate::ring::Ring), which also changes in place, diffs and tells shares.
    RingProfile,
    /// A hashing engine of its own (jump, rendezvous, Maglev), not tied to one peer.
    Engine,
    /// A proxy's or client library's ring, table or hash, bit-exact with that peer.
    FleetProfile,
}

impl EntryKind {
    /// How documentation names the kind: `"ring profile"`, `"engine"`, `"fleet profile"`.
    ///
    /// ```
    /// use keyroute::engine::EntryKind;
    /// assert_eq!(EntryKind::FleetProfile.as_str(), "fleet profile");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            EntryKind::RingProfile => "ring profile",
            EntryKind::Engine => "engine",
            EntryKind::FleetProfile => "fleet profile",
        }
    }
}

/// One option an entry takes (`name=value`), with what it means and its default.
///
/// ```
/// use keyroute::engine::EngineEntry;
/// let o = EngineEntry::named("maglev")?.options()[0];
/// assert_eq!(o.name(), "table_size");
/// assert!(o.doc().contains("prime"));
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OptionDoc {
    name: &'static str,
    doc: &'static str,
}

impl OptionDoc {
    /// The option's name (`-` and `_` are interchangeable when given).
    pub const fn name(&self) -> &'static str {
        self.name
    }
    /// Its values and default, in a line.
    pub const fn doc(&self) -> &'static str {
        self.doc
    }
}

/// An entry's build: a ring profile's, or a function over checked nodes.
#[derive(Clone, Copy)]
enum Build {
    /// A [`Ring`] under this profile, from the ring options.
    Ring(ProfileName),
    /// Given the entry's name and the nodes after [`check_nodes`].
    Nodes(fn(&'static str, Vec<NodeSpec>, &mut Options) -> Result<Kind, EngineError>),
}

/// One name [`Router::build`] knows: its aliases, kind, the peer it reproduces, its
/// options and how to build it.
///
/// ```
/// use keyroute::engine::{Engine, EngineEntry};
/// use keyroute::ring::parse_nodes;
/// let e = EngineEntry::named("nutcracker")?;
/// assert_eq!(e.name(), "twemproxy");
/// assert_eq!(e.option_names(), ["hash", "distribution", "hash_tag"]);
/// assert!(e.options()[1].doc().contains("modula"));
/// let r = e.build(&parse_nodes("10.0.0.1:11211,10.0.0.2:11211")?, &[("hash", "fnv1a_64")])?;
/// assert_eq!(r.name(), "twemproxy");
/// assert!(r.get(b"user:1").is_some());
/// # Ok::<(), keyroute::engine::EngineError>(())
/// ```
#[derive(Clone, Copy)]
pub struct EngineEntry {
    name: &'static str,
    aliases: &'static [&'static str],
    kind: EntryKind,
    options: &'static [&'static str],
    build: Build,
}

/// An entry's words for people: what it reproduces and each option's values and default.
/// A table of its own ([`DOCS`], beside [`TABLE`], both from the one list of
/// `registry!`), so that a build which never shows them (the fleet's .wasm) does not
/// carry them: about 1 KB gzipped.
struct EntryDoc {
    peer: &'static str,
    options: &'static [OptionDoc],
}

impl core::fmt::Debug for EngineEntry {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("EngineEntry")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .field("kind", &self.kind)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl EngineEntry {
    /// The entry of a name or alias (`_` and `-` are interchangeable, case and
    /// surrounding blanks are ignored).
    ///
    /// # Errors
    /// [`EngineError::UnknownEngine`].
    pub fn named(name: &str) -> Result<&'static EngineEntry, EngineError> {
        let given = name.trim();
        ENTRIES
            .iter()
            .find(|e| same_name(e.name, given))
            .or_else(|| {
                ENTRIES
                    .iter()
                    .find(|e| e.aliases.iter().any(|a| same_name(a, given)))
            })
            .ok_or_else(|| EngineError::UnknownEngine(name.into()))
    }

    /// The canonical name (what [`Router::name`] answers).
    pub const fn name(&self) -> &'static str {
        self.name
    }
    /// Other names it is found by.
    pub const fn aliases(&self) -> &'static [&'static str] {
        self.aliases
    }
    /// Ring profile, engine or fleet profile.
    pub const fn kind(&self) -> EntryKind {
        self.kind
    }
    /// The names of the options it takes, in documentation order (none for some).
    pub const fn option_names(&self) -> &'static [&'static str] {
        self.options
    }

    fn doc(&self) -> &'static EntryDoc {
        let i = TABLE.iter().position(|e| e.name == self.name);
        &DOCS[i.unwrap_or(0)]
    }
    /// The peer it reproduces (or what it is), in a line.
    pub fn peer(&self) -> &'static str {
        self.doc().peer
    }
    /// The options it takes with their values and defaults, in documentation order.
    pub fn options(&self) -> &'static [OptionDoc] {
        self.doc().options
    }

    /// The router over `nodes` with `options` as `(name, value)` text.
    ///
    /// # Errors
    /// Node errors, [`EngineError::BadOption`] (an option the entry does not take, or a
    /// value it cannot use), the ring profiles' own codes (`BAD_VNODES`, `BAD_PORT`, ...).
    pub fn build(
        &'static self,
        nodes: &[NodeSpec],
        options: &[(&str, &str)],
    ) -> Result<Router, EngineError> {
        let mut o = Options::new(self.name, options);
        let kind = match self.build {
            Build::Ring(profile) => ring(profile, nodes, &mut o)?,
            Build::Nodes(build) => {
                check_nodes(nodes)?;
                build(self.name, nodes.to_vec(), &mut o)?
            }
        };
        o.finish()?;
        Ok(Router::from_entry(self.name, kind, options))
    }
}

/// A ring profile's build: `vnodes`, `points_per_digest` and `default_port` as wide
/// integers checked by [`Profile::from_options`] (so `vnodes=0` is `BAD_VNODES`, as
/// everywhere else), unknown options refused before the ring is built.
fn ring(profile: ProfileName, nodes: &[NodeSpec], o: &mut Options) -> Result<Kind, EngineError> {
    let options = ProfileOptions {
        vnodes: o.wide("vnodes")?,
        points_per_digest: o.wide("points_per_digest")?,
        default_port: o.wide("default_port")?,
    };
    o.finish()?;
    let profile = Profile::from_options(profile.as_str(), &options)?;
    let ring = Ring::with_nodes(profile, nodes.iter().map(|n| (n.name.as_str(), n.weight)))?;
    Ok(Kind::Ring(ring))
}

/// The registry's one list, made into [`TABLE`] (what builds) and [`DOCS`] (what people
/// read), row for row. A row:
///
/// `KIND NAME [ALIASES] "what it reproduces" { "option": "values (default)", ... } BUILD`
///
/// with KIND `engine` or `fleet` (NAME a string, BUILD a function) or `ring` (NAME a
/// [`ProfileName`] variant, no BUILD).
macro_rules! registry {
    ($( ($($row:tt)*) )*) => {
        const TABLE: &[EngineEntry] = &[$(registry!(@entry $($row)*)),*];
        static DOCS: &[EntryDoc] = &[$(registry!(@doc $($row)*)),*];
    };
    (@entry ring $p:ident [$($alias:literal),*] $peer:literal
        { $($opt:literal: $doc:literal),* $(,)? }) => {
        EngineEntry {
            name: ProfileName::$p.as_str(),
            aliases: &[$($alias),*],
            kind: EntryKind::RingProfile,
            options: &[$($opt),*],
            build: Build::Ring(ProfileName::$p),
        }
    };
    (@entry $kind:ident $name:literal [$($alias:literal),*] $peer:literal
        { $($opt:literal: $doc:literal),* $(,)? } $build:path) => {
        EngineEntry {
            name: $name,
            aliases: &[$($alias),*],
            kind: registry!(@kind $kind),
            options: &[$($opt),*],
            build: Build::Nodes($build),
        }
    };
    (@kind engine) => { EntryKind::Engine };
    (@kind fleet) => { EntryKind::FleetProfile };
    (@doc $kind:ident $name:tt [$($alias:literal),*] $peer:literal
        { $($opt:literal: $doc:literal),* $(,)? } $($build:path)?) => {
        EntryDoc {
            peer: $peer,
            options: &[$(OptionDoc { name: $opt, doc: $doc }),*],
        }
    };
}

// Every name `Router::build` knows, in documentation order: the engines, the fleet
// profiles, then the ketama family and `native` of `crate::ring`.
registry! {
    (engine "jump" [] "jump consistent hash (Lamping and Veach)" {
        "hash": "the key hash: xxh64 (seed 0), murmur3_128, murmur3_32, crc32 (xxh64)",
    } jump::build_paper)
    (engine "guava-jump" [] "Guava's Hashing.consistentHash (its own jump, which differs)" {
        "hash": "the key hash: murmur3_128, murmur3_32, xxh64, crc32 (murmur3_128)",
    } jump::build_guava)
    (engine "rendezvous" [] "weighted rendezvous (HRW) hashing, XXH64, with top-k" {
        "hash_tag": "hash only the `{tag}` of a key (false)",
    } rendezvous::build)
    (engine "maglev" [] "Maglev's lookup table (Envoy's), sized for little disruption" {
        "table_size": "a prime above the number of nodes (the smallest prime >= max(100 x nodes, 65537))",
    } maglev::build)
    (fleet "nginx" []
        "nginx `hash $key consistent` (1.7.11+; node names are `server` strings as written)"
        {} nginx::build_consistent)
    (fleet "nginx-hash" [] "nginx plain `hash $key`" {} nginx::build_plain)
    (fleet "haproxy" [] "HAProxy 2.6 `hash-type consistent`" {
        "hash": "sdbm, djb2, wt6, crc32, or source for `balance source` (the key is an IP address) (sdbm)",
        "avalanche": "HAProxy's `avalanche` (true without `hash`)",
    } haproxy::build_consistent)
    (fleet "haproxy-map" [] "HAProxy 2.6 `hash-type map-based`" {
        "hash": "sdbm, djb2, wt6, crc32, or source for `balance source` (the key is an IP address) (sdbm)",
        "avalanche": "HAProxy's `avalanche` (false)",
    } haproxy::build_map)
    (fleet "twemproxy" ["nutcracker"]
        "twemproxy (nutcracker 0.5.0): aliases hashed verbatim, 272-byte point strings" {
        "hash": "md5, one_at_a_time, crc16, crc32, crc32a, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh, murmur, jenkins (md5)",
        "distribution": "ketama, modula (ketama)",
        "hash_tag": "two characters, e.g. {} (none)",
    } twemproxy::build)
    (fleet "java-hashcode" [] "a Java skip-list ring of String.hashCode points" {
        "vnodes": "points per node, 1..65536 (150)",
        "node": "what a key's owner is called: name (the node's own name) or prefix (the part before the first '-', as the reference's `vnode.split(\"-\")[0]` gives: redis-1 is redis) (name)",
    } java::build_hashcode)
    (fleet "spymemcached" [] "spymemcached's KetamaNodeLocator" {
        "format": "how node names are hashed: spymemcached, libmemcached (spymemcached)",
        "hash": "ketama, native, crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32 (ketama)",
    } java::build_spymemcached)
    (fleet "spymemcached-weighted" [] "spymemcached's KetamaNodeLocator with weights" {
        "format": "how node names are hashed: spymemcached, libmemcached (spymemcached)",
        "hash": "ketama, native, crc, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32 (ketama)",
    } java::build_spymemcached_weighted)
    (fleet "jedis" [] "Jedis' Sharded (2.x, 3.x) and JedisSharding (4.x)" {
        "version": "2, 3, 4 (3)",
        "naming": "unnamed, named (unnamed)",
        "hash": "murmur, md5 (murmur)",
    } java::build_jedis)
    (fleet "envoy-ring" [] "Envoy's RING_HASH load balancer" {
        "hash": "xx_hash, murmur_hash_2 (xx_hash)",
        "min_ring_size": "1..8388608 (1024)",
        "max_ring_size": "1..8388608 (8388608)",
    } envoy::build_ring)
    (fleet "envoy-maglev" [] "Envoy's MAGLEV load balancer" {
        "table_size": "a prime above the number of nodes (65537)",
    } envoy::build_maglev)
    (fleet "go-redis" [] "go-redis' Ring (rendezvous over XXH64, `{tag}` keys)" {}
        clients::build_go_redis)
    (fleet "groupcache" [] "groupcache's consistenthash" {
        "replicas": "points per node (50)",
    } clients::build_groupcache)
    (fleet "dubbo" [] "Dubbo's ConsistentHashLoadBalance" {
        "replicas": "`hash.nodes`, 4..65536 (160)",
    } clients::build_dubbo)
    (fleet "redis-rb" [] "redis-rb's HashRing (Redis::Distributed)" {
        "replicas": "points per node (160)",
        "hash_tag": "hash only the `{tag}` of a key (true)",
    } clients::build_redis_rb)
    (fleet "predis" [] "Predis' HashRing" {
        "replicas": "points per node (128)",
        "hash_tag": "hash only the `{tag}` of a key (true)",
    } clients::build_predis)
    (fleet "predis-ketama" [] "Predis' KetamaRing" {
        "hash_tag": "hash only the `{tag}` of a key (true)",
    } clients::build_predis_ketama)
    (fleet "pymemcache" [] "pymemcache's RendezvousHash (HashClient's default)" {
        "seed": "RendezvousHash(seed=...), 0..4294967295 (0)",
        "bytes_keys": "keys given to pymemcache as bytes (false: str)",
    } pymemcache::build)
    (ring Native [] "keyroute's own ring: SipHash-1-3, 64-bit points" {
        "vnodes": "points per unit of weight, 1..65536 (160)",
    })
    (ring Libketama [] "RJ's libketama (PyPI ketama)" {
        "vnodes": "digests per server at equal weights, 1..65536 (40)",
        "points_per_digest": "points per MD5 digest, 1..4 (4)",
        "default_port": "port left out of hashed server strings (none; 0 for none)",
    })
    (ring Libmemcached []
        "libmemcached's weighted ketama; twemproxy's ring for servers without an alias" {
        "vnodes": "digests per server at equal weights, 1..65536 (40)",
        "points_per_digest": "points per MD5 digest, 1..4 (4)",
        "default_port": "port left out of hashed server strings (11211; 0 for none)",
    })
    (ring Uhashring [] "PyPI uhashring, hash_fn='ketama'" {
        "vnodes": "digests per server at equal weights, 1..65536 (40)",
        "points_per_digest": "points per MD5 digest, 1..4 (4)",
        "default_port": "port left out of hashed server strings (none; 0 for none)",
    })
    (ring NodeHashring []
        "npm hashring 3.x (points_per_digest 3: its compatibility: 'hash_ring')" {
        "vnodes": "digests per server at equal weights, 1..65536 (40)",
        "points_per_digest": "points per MD5 digest, 1..4 (4)",
        "default_port": "port left out of hashed server strings (none; 0 for none)",
    })
    (ring HashRing [] "PyPI hash_ring" {
        "vnodes": "digests per server at equal weights, 1..65536 (40)",
        "points_per_digest": "points per MD5 digest, 1..4 (3)",
        "default_port": "port left out of hashed server strings (none; 0 for none)",
    })
}

/// Every entry, in documentation order (the engines, the fleet profiles, then the ring
/// profiles).
///
/// ```
/// use keyroute::engine::{EntryKind, ENTRIES};
/// assert!(ENTRIES.iter().any(|e| e.name() == "jedis" && e.kind() == EntryKind::FleetProfile));
/// ```
pub static ENTRIES: &[EngineEntry] = TABLE;

const fn names<const N: usize>() -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = TABLE[i].name;
        i += 1;
    }
    out
}

const NAME_LIST: [&str; TABLE.len()] = names();

/// The names [`Router::build`] knows, in documentation order: the engines, then the
/// fleet profiles, then the ketama family of [`crate::ring`] (the names of [`ENTRIES`]).
pub const NAMES: &[&str] = &NAME_LIST;

const NAMES_JOINED: [u8; joined_len(&NAME_LIST)] = join(&NAME_LIST);

/// Every name, `", "` between them (for messages).
pub(crate) const NAMES_TEXT: &str = utf8(&NAMES_JOINED);

/// How many entries come before the ring profiles: the engines and fleet profiles.
const fn engines_and_fleet() -> usize {
    let mut i = 0;
    while i < TABLE.len() && !matches!(TABLE[i].kind, EntryKind::RingProfile) {
        i += 1;
    }
    i
}

/// The engines and fleet profiles: the names before the ring profiles.
pub(crate) const FLEET_NAMES: &[&str] = NAME_LIST.split_at(engines_and_fleet()).0;

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::{String, ToString};

    #[test]
    fn every_name_and_alias_finds_its_own_entry_only() {
        for e in ENTRIES {
            assert!(core::ptr::eq(EngineEntry::named(e.name).expect("name"), e));
            for a in e.aliases {
                assert!(
                    core::ptr::eq(EngineEntry::named(a).expect("alias"), e),
                    "{a}"
                );
                assert!(
                    ENTRIES.iter().all(|o| !same_name(o.name, a)),
                    "{a} is a name too"
                );
            }
        }
        for (i, a) in NAMES.iter().enumerate() {
            assert!(NAMES[i + 1..].iter().all(|b| !same_name(a, b)), "{a} twice");
        }
    }

    #[test]
    fn the_ring_entries_are_the_ring_profiles_and_come_last() {
        let rings: Vec<&str> = ENTRIES
            .iter()
            .filter(|e| e.kind == EntryKind::RingProfile)
            .map(|e| e.name)
            .collect();
        let want: Vec<&str> = ProfileName::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(rings, want);
        assert_eq!(FLEET_NAMES.len() + rings.len(), NAMES.len());
        assert_eq!(NAMES_TEXT, NAMES.join(", "));
        assert!(FLEET_NAMES.iter().all(|n| !rings.contains(n)));
    }

    /// Each entry's documented options are the ones its build reads: an entry built with
    /// every documented option at a value it refuses fails on that option, and an
    /// undocumented one is refused as unknown.
    #[test]
    fn each_entry_reads_exactly_its_documented_options() {
        let nodes = crate::ring::parse_nodes("10.0.0.1:11211,10.0.0.2:11211").expect("nodes");
        for e in ENTRIES {
            assert!(e.build(&nodes, &[]).is_ok(), "{}", e.name);
            let documented: Vec<&str> = e.options().iter().map(|o| o.name).collect();
            assert_eq!(documented, e.option_names(), "{}", e.name);
            assert!(!e.peer().is_empty(), "{}", e.name);
            for o in e.options() {
                assert!(!o.doc.is_empty(), "{}", e.name);
                let err = e
                    .build(&nodes, &[(o.name, "\u{1}")])
                    .expect_err(o.name)
                    .to_string();
                assert!(
                    !err.contains("does not take it"),
                    "{}: {}: {err}",
                    e.name,
                    o.name
                );
            }
            let err = e
                .build(&nodes, &[("colour", "red")])
                .expect_err("unknown")
                .to_string();
            assert!(err.contains("does not take it"), "{}: {err}", e.name);
            let mut asked = Options::new(e.name, &[] as &[(&str, &str)]);
            let _ = match e.build {
                Build::Ring(p) => ring(p, &nodes, &mut asked),
                Build::Nodes(b) => b(e.name, nodes.clone(), &mut asked),
            };
            let asked: Vec<String> = asked.asked().collect();
            match e.kind {
                // Every ring profile reads all three; Profile::from_options refuses the
                // ones it does not take with its own reason.
                EntryKind::RingProfile => {
                    let p = Profile::from_name(e.name.parse().expect("profile")).options();
                    let takes: Vec<&str> = [
                        ("vnodes", p.vnodes),
                        ("points_per_digest", p.points_per_digest),
                        ("default_port", p.default_port),
                    ]
                    .iter()
                    .filter(|(_, v)| v.is_some())
                    .map(|(n, _)| *n)
                    .collect();
                    assert_eq!(documented, takes, "{}", e.name);
                }
                _ => assert_eq!(documented, asked, "{}", e.name),
            }
        }
    }
}
