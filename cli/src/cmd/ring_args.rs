//! Ring options shared by `route` and `simulate`.

use keyroute::ring::{Profile, Ring};

use super::CliError;

/// `--profile`, `--vnodes`, `--default-port`, `--points-per-digest`.
#[derive(Debug, clap::Args)]
pub struct ProfileArgs {
    /// Ring profile: native, libketama, libmemcached, twemproxy, uhashring, node-hashring, hash_ring.
    #[arg(long, short = 'p', default_value = "native")]
    pub profile: String,
    /// Virtual nodes: native points per unit of weight (160), ketama digests per server (40).
    #[arg(long)]
    pub vnodes: Option<u32>,
    /// Port left out of hashed server strings (node-hashring's `default port`).
    #[arg(long)]
    pub default_port: Option<u16>,
    /// Points per MD5 digest, 1 to 4 (3 = node-hashring's hash_ring compatibility).
    #[arg(long)]
    pub points_per_digest: Option<u8>,
}

impl ProfileArgs {
    /// The profile these options describe.
    pub fn profile(&self) -> Result<Profile, CliError> {
        let mut p: Profile = self.profile.parse()?;
        if let Some(v) = self.vnodes {
            p = p.with_vnodes(v)?;
        }
        if self.default_port.is_some() {
            p = p.with_default_port(self.default_port);
        }
        if let Some(k) = self.points_per_digest {
            p = p.with_points_per_digest(k)?;
        }
        Ok(p)
    }

    /// A ring of these nodes under this profile.
    pub fn ring(&self, nodes: Vec<(String, u32)>) -> Result<Ring, CliError> {
        Ok(Ring::with_nodes(self.profile()?, nodes)?)
    }
}
