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
    #[arg(long)]
    pub vnodes: Option<i64>,
    /// Port left out of hashed server strings (node-hashring's `default port`).
    #[arg(long)]
    pub default_port: Option<i64>,
    /// Points per MD5 digest, 1 to 4 (3 = node-hashring's hash_ring compatibility).
    #[arg(long)]
    pub points_per_digest: Option<i64>,
}

impl ProfileArgs {
    /// The profile these options describe.
    pub fn profile(&self) -> Result<Profile, CliError> {
        let options = ProfileOptions {
            vnodes: self.vnodes.map(i128::from),
            points_per_digest: self.points_per_digest.map(i128::from),
            default_port: self.default_port.map(i128::from),
        };
        Ok(Profile::from_options(&self.profile, &options)?)
    }

    /// A ring of these nodes under this profile.
    pub fn ring(&self, nodes: Vec<(String, u32)>) -> Result<Ring, CliError> {
        Ok(Ring::with_nodes(self.profile()?, nodes)?)
    }
}
