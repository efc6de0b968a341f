//! Ring options shared by `route` and `simulate`.

use keyroute::engine::{EngineError, Router};
use keyroute::error::ErrorCode;
use keyroute::ring::{NodeSpec, Profile, ProfileName, ProfileOptions, Ring};

use super::CliError;

/// `--profile`/`--engine`, `--option`, `--vnodes`, `--default-port`, `--points-per-digest`.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// Ring profile or engine: native, libketama, libmemcached, twemproxy, uhashring,
    /// node-hashring, hash_ring; nginx, nginx-hash, haproxy, haproxy-map, java-hashcode,
    /// spymemcached, spymemcached-weighted, jedis, envoy-ring, envoy-maglev, go-redis,
    /// groupcache, dubbo, redis-rb, predis, predis-ketama, pymemcache; jump, guava-jump,
    /// rendezvous, maglev.
    #[arg(long, short = 'p', visible_alias = "engine", default_value = "native")]
    pub profile: String,
    /// An engine or profile option NAME=VALUE (repeatable), e.g. --option hash=fnv1a_64,
    /// --option table_size=65537, --option version=2.
    #[arg(long = "option", short = 'o', value_name = "NAME=VALUE")]
    pub options: Vec<String>,
    /// Virtual nodes: native points per unit of weight (160), ketama digests per server (40).
    #[arg(long, value_parser = integer, allow_negative_numbers = true)]
    pub vnodes: Option<i128>,
    /// Port left out of hashed server strings (node-hashring's `default port`; 0 for none).
    #[arg(long, value_parser = integer, allow_negative_numbers = true)]
    pub default_port: Option<i128>,
    /// Points per MD5 digest, 1 to 4 (3 = node-hashring's hash_ring compatibility).
    #[arg(long, value_parser = integer, allow_negative_numbers = true)]
    pub points_per_digest: Option<i128>,
}

/// Any integer: the range check (and its error code) is the core's.
fn integer(text: &str) -> Result<i128, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not an integer (or is beyond 128 bits)"))
}

impl ProfileArgs {
    /// The profile these options describe.
    pub fn profile(&self) -> Result<Profile, CliError> {
        let options = ProfileOptions {
            vnodes: self.vnodes,
            points_per_digest: self.points_per_digest,
            default_port: self.default_port,
        };
        Ok(Profile::from_options(&self.profile, &options)?)
    }

    /// A ring of these nodes under this profile.
    pub fn ring(&self, nodes: Vec<(String, u32)>) -> Result<Ring, CliError> {
        Ok(Ring::with_nodes(self.profile()?, nodes)?)
    }

    /// Whether the profile is one of the ketama family or native (a [`Ring`]), which
    /// `simulate`'s ring diff needs. `twemproxy` is the exact nutcracker profile of
    /// `keyroute::engine`.
    pub fn is_ring(&self) -> bool {
        self.profile
            .parse::<ProfileName>()
            .is_ok_and(|p| p != ProfileName::Twemproxy)
    }

    /// `--option` values as (name, value).
    pub fn option_pairs(&self) -> Result<Vec<(&str, &str)>, CliError> {
        let mut out = Vec::new();
        for o in &self.options {
            let Some((k, v)) = o.split_once('=') else {
                return Err(CliError::new(
                    ErrorCode::BadOption,
                    format!("--option {o:?}: write NAME=VALUE, e.g. --option hash=md5"),
                ));
            };
            out.push((k.trim(), v.trim()));
        }
        Ok(out)
    }

    /// The engine `name` (or `--profile`) over `nodes`: a ring profile with its ring
    /// options, any other engine with `--option`s (and `--vnodes` as the option `vnodes`).
    pub fn router_named(&self, name: &str, nodes: &[NodeSpec]) -> Result<Router, CliError> {
        let is_ring = name
            .parse::<ProfileName>()
            .is_ok_and(|p| p != ProfileName::Twemproxy);
        if is_ring {
            if let Some(o) = self.options.first() {
                return Err(CliError::new(
                    ErrorCode::BadOption,
                    format!("--option {o:?}: the {name} profile takes --vnodes, --default-port and --points-per-digest"),
                ));
            }
            let options = ProfileOptions {
                vnodes: self.vnodes,
                points_per_digest: self.points_per_digest,
                default_port: self.default_port,
            };
            let profile = Profile::from_options(name, &options)?;
            let ring = Ring::with_nodes(profile, nodes.iter().map(|n| (n.name.clone(), n.weight)))?;
            return Ok(Router::from_ring(ring));
        }
        for (flag, given) in [
            ("--default-port", self.default_port.is_some()),
            ("--points-per-digest", self.points_per_digest.is_some()),
        ] {
            if given {
                return Err(CliError::new(
                    ErrorCode::BadOption,
                    format!("{flag} is for the ketama profiles; {name} takes --option NAME=VALUE"),
                ));
            }
        }
        let mut pairs = self.option_pairs()?;
        let vnodes = self.vnodes.map(|v| v.to_string());
        if let Some(v) = &vnodes {
            pairs.push(("vnodes", v.as_str()));
        }
        Router::build(name, nodes, &pairs).map_err(|e: EngineError| e.into())
    }

    /// [`router_named`](Self::router_named) for `--profile`.
    pub fn router(&self, nodes: &[NodeSpec]) -> Result<Router, CliError> {
        self.router_named(&self.profile, nodes)
    }
}
