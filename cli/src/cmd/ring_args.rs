//! Ring options shared by `route` and `simulate`.

use keyroute::ring::{Profile, ProfileOptions, Ring};

use super::CliError;

/// `--profile`, `--vnodes`, `--default-port`, `--points-per-digest`.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// Ring profile: native, libketama, libmemcached, twemproxy, uhashring, node-hashring, hash_ring.
    #[arg(long, short = 'p', default_value = "native")]
    pub profile: String,
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
}
