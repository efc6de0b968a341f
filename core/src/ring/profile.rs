//! Ring profiles: the handful of parameters in which the ketama family differs, as data.

use core::str::FromStr;

use super::error::RingError;
pub use super::profile_name::ProfileName;
use crate::util::same_name;

impl FromStr for ProfileName {
    type Err = RingError;

    /// Parses a profile name or one of its [`ProfileName::ALIASES`]; `_` and `-` are
    /// interchangeable, case is ignored.
    fn from_str(s: &str) -> Result<Self, RingError> {
        for p in ProfileName::ALL {
            if same_name(p.as_str(), s) {
                return Ok(p);
            }
        }
        for &(alias, p) in ProfileName::ALIASES {
            if same_name(alias, s) {
                return Ok(p);
            }
        }
        Err(RingError::UnknownProfile(s.into()))
    }
}

/// How keys and server strings are hashed onto the circle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PointHash {
    /// MD5; a point is four digest bytes read little-endian (32-bit circle).
    Md5,
    /// SipHash-1-3 with [`NATIVE_SIP_KEY`] (64-bit circle).
    SipHash13,
}

impl PointHash {
    /// Bits of the circle: 32 for MD5 profiles, 64 for native.
    pub const fn bits(self) -> u32 {
        match self {
            PointHash::Md5 => 32,
            PointHash::SipHash13 => 64,
        }
    }
}

/// The 16-byte SipHash key of the native profile: the ASCII bytes `keyroute-native1`,
/// read as two little-endian `u64` halves. Fixed forever: changing it moves every key.
pub const NATIVE_SIP_KEY: [u8; 16] = *b"keyroute-native1";

/// How many digests (server strings `S-0`, `S-1`, …) a server gets from its weight.
/// `n` is the number of servers, `w` the server's weight, `Σw` the sum of all weights and
/// `v` the profile's `vnodes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WeightRule {
    /// libketama: `floorf((double)((float)w/(float)Σw) * (double)v * (double)(float)n)`.
    LibketamaMixed,
    /// libmemcached and twemproxy: `floor((float)(pct*(4v)/4*(float)n + 1e-10))`, with
    /// `pct = (float)w/(float)Σw` and the products in `f32`.
    MemcachedF32,
    /// uhashring and hash_ring: the integer `v*n*w / Σw`.
    Integer,
    /// npm hashring: JavaScript `Math.floor(w/Σw*v*n)` in doubles.
    JsDouble,
    /// native: `w × v` points, independent of the other servers.
    PerWeight,
}

/// Where a lookup lands when a key hashes exactly onto a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Lookup {
    /// The first point `>=` the key's hash (libketama, libmemcached, twemproxy, npm, native).
    AtLeast,
    /// The first point `>` the key's hash (Python `bisect_right`: uhashring, hash_ring).
    Above,
}

/// Which server owns a point that several servers hash to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ties {
    /// The server added first (libmemcached's index order, npm's stable sort; our choice
    /// for libketama and twemproxy, whose `qsort` leaves it unspecified).
    FirstNode,
    /// The server added last (a Python dict overwritten in insertion order).
    LastNode,
    /// The server whose name is byte-wise smallest (native).
    Name,
}

/// One ring's parameters. Build one with a constructor named after the peer, or parse a
/// profile name.
///
/// ```
/// use keyroute::ring::{Profile, ProfileName};
///
/// let p: Profile = "libmemcached".parse()?;
/// assert_eq!(p.name(), ProfileName::Libmemcached);
/// assert_eq!(Profile::native().vnodes(), 160);
/// let js = Profile::node_hashring().with_default_port(Some(11211))?;
/// assert_eq!(js.default_port(), Some(11211));
/// # Ok::<(), keyroute::ring::RingError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Profile {
    name: ProfileName,
    hash: PointHash,
    points_per_digest: u8,
    weights: WeightRule,
    default_port: Option<u16>,
    lookup: Lookup,
    ties: Ties,
    vnodes: u32,
}

/// A profile's options as a caller gives them, each `None` for the profile's default:
/// the input of [`Profile::from_options`]. Numbers are wide so that a binding can pass on
/// exactly what it was given, and the check (with its error code) happens once, here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ProfileOptions {
    /// See [`Profile::with_vnodes`]: 1..=65536.
    pub vnodes: Option<i128>,
    /// See [`Profile::with_points_per_digest`]: 1..=4, MD5 profiles only.
    pub points_per_digest: Option<i128>,
    /// See [`Profile::with_default_port`]: a port (1..=65535), or 0 to hash every
    /// `host:port` whole. MD5 profiles only.
    pub default_port: Option<i128>,
}

/// The default number of native points per unit of weight.
pub const DEFAULT_NATIVE_VNODES: u32 = 160;

impl Profile {
    const fn ketama(name: ProfileName, weights: WeightRule, lookup: Lookup, ties: Ties) -> Self {
        Profile {
            name,
            hash: PointHash::Md5,
            points_per_digest: 4,
            weights,
            default_port: None,
            lookup,
            ties,
            vnodes: 40,
        }
    }

    /// keyroute's own ring: SipHash-1-3, 64-bit points, 160 points per unit of weight.
    pub const fn native() -> Self {
        Profile {
            name: ProfileName::Native,
            hash: PointHash::SipHash13,
            points_per_digest: 1,
            weights: WeightRule::PerWeight,
            default_port: None,
            lookup: Lookup::AtLeast,
            ties: Ties::Name,
            vnodes: DEFAULT_NATIVE_VNODES,
        }
    }

    /// RJ's libketama. Ties (unspecified there) go to the server listed first.
    pub const fn libketama() -> Self {
        Self::ketama(
            ProfileName::Libketama,
            WeightRule::LibketamaMixed,
            Lookup::AtLeast,
            Ties::FirstNode,
        )
    }

    /// libmemcached's weighted ketama: servers on port 11211 hash as `host`, others as
    /// `host:port`.
    pub const fn libmemcached() -> Self {
        let mut p = Self::ketama(
            ProfileName::Libmemcached,
            WeightRule::MemcachedF32,
            Lookup::AtLeast,
            Ties::FirstNode,
        );
        p.default_port = Some(11211);
        p
    }

    /// The old name of [`Profile::libmemcached`], whose ring it always was: twemproxy's
    /// `hash: md5` ketama for servers without an alias. For nutcracker's own rules use the
    /// `twemproxy` engine (`keyroute::engine::Router`, feature `fleet`).
    #[deprecated(
        note = "use Profile::libmemcached() (the same ring), or the `twemproxy` engine for nutcracker's exact rules"
    )]
    pub const fn twemproxy() -> Self {
        Self::libmemcached()
    }

    /// PyPI `uhashring`, `hash_fn='ketama'` (40 vnodes, 4 points per digest).
    pub const fn uhashring() -> Self {
        Self::ketama(
            ProfileName::Uhashring,
            WeightRule::Integer,
            Lookup::Above,
            Ties::LastNode,
        )
    }

    /// npm `hashring` 3.x. See [`Profile::with_default_port`] for its `default port`
    /// option and [`Profile::with_points_per_digest`]`(3)` for `compatibility: 'hash_ring'`.
    pub const fn node_hashring() -> Self {
        Self::ketama(
            ProfileName::NodeHashring,
            WeightRule::JsDouble,
            Lookup::AtLeast,
            Ties::FirstNode,
        )
    }

    /// PyPI `hash_ring`: 3 points per digest, integer weights, `bisect_right` lookup.
    pub const fn hash_ring() -> Self {
        let mut p = Self::ketama(
            ProfileName::HashRing,
            WeightRule::Integer,
            Lookup::Above,
            Ties::LastNode,
        );
        p.points_per_digest = 3;
        p
    }

    /// The default profile of a name.
    pub const fn from_name(name: ProfileName) -> Self {
        match name {
            ProfileName::Native => Self::native(),
            ProfileName::Libketama => Self::libketama(),
            ProfileName::Libmemcached => Self::libmemcached(),
            ProfileName::Uhashring => Self::uhashring(),
            ProfileName::NodeHashring => Self::node_hashring(),
            ProfileName::HashRing => Self::hash_ring(),
        }
    }

    /// Sets the number of virtual nodes: points per unit of weight for native (default
    /// 160), digests per server at equal weights for the ketama family (default 40).
    ///
    /// # Errors
    /// [`RingError::BadVnodes`] when `vnodes` is 0 or above 65536.
    pub fn with_vnodes(mut self, vnodes: u32) -> Result<Self, RingError> {
        if vnodes == 0 || vnodes > 65536 {
            return Err(RingError::BadVnodes(vnodes.into()));
        }
        self.vnodes = vnodes;
        Ok(self)
    }

    /// Sets how many points each MD5 digest yields (1 to 4): uhashring's `replicas`, or 3
    /// for npm hashring's `compatibility: 'hash_ring'`.
    ///
    /// # Errors
    /// [`RingError::BadOption`] on the native profile, [`RingError::BadPointsPerDigest`]
    /// outside 1..=4.
    pub fn with_points_per_digest(mut self, k: u8) -> Result<Self, RingError> {
        if self.hash != PointHash::Md5 {
            return Err(self.not_taken(
                "points_per_digest",
                "it hashes each point with SipHash, not four to an MD5 digest",
            ));
        }
        if !(1..=4).contains(&k) {
            return Err(RingError::BadPointsPerDigest(k.into()));
        }
        self.points_per_digest = k;
        Ok(self)
    }

    /// Sets the port whose `:port` suffix is left out of the hashed server string
    /// (npm hashring's `default port`; 11211 for libmemcached and twemproxy), or `None`
    /// to hash every `host:port` whole.
    ///
    /// # Errors
    /// [`RingError::BadOption`] on the native profile (it hashes names as given).
    pub fn with_default_port(mut self, port: Option<u16>) -> Result<Self, RingError> {
        if self.hash != PointHash::Md5 {
            return Err(self.not_taken("default_port", "it hashes node names as given"));
        }
        self.default_port = port;
        Ok(self)
    }

    fn not_taken(&self, option: &'static str, reason: &'static str) -> RingError {
        RingError::BadOption {
            option,
            profile: self.name.as_str(),
            reason,
        }
    }

    /// The profile `name` with `options`, each checked: the one way the CLI, every
    /// binding and the tests build a profile from what a caller gave.
    ///
    /// ```
    /// use keyroute::ring::{Profile, ProfileOptions};
    /// let p = Profile::from_options("node-hashring", &ProfileOptions {
    ///     default_port: Some(11211),
    ///     points_per_digest: Some(3),
    ///     ..ProfileOptions::default()
    /// })?;
    /// assert_eq!((p.default_port(), p.points_per_digest()), (Some(11211), 3));
    /// let err = Profile::from_options("native", &ProfileOptions { vnodes: Some(1 << 32), ..Default::default() });
    /// assert_eq!(err.unwrap_err().code().as_str(), "BAD_VNODES");
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    ///
    /// # Errors
    /// [`RingError::UnknownProfile`], [`RingError::BadVnodes`],
    /// [`RingError::BadPointsPerDigest`], [`RingError::BadPort`], [`RingError::BadOption`].
    pub fn from_options(name: &str, options: &ProfileOptions) -> Result<Self, RingError> {
        let mut p = Profile::from_name(name.parse()?);
        if let Some(v) = options.vnodes {
            let v = u32::try_from(v).map_err(|_| RingError::BadVnodes(v))?;
            p = p.with_vnodes(v)?;
        }
        if let Some(k) = options.points_per_digest {
            if p.hash != PointHash::Md5 {
                // The option itself is the problem, whatever its value.
                return p.with_points_per_digest(4);
            }
            let k = u8::try_from(k).map_err(|_| RingError::BadPointsPerDigest(k))?;
            p = p.with_points_per_digest(k)?;
        }
        if let Some(port) = options.default_port {
            let port = match port {
                0 => None,
                _ => Some(u16::try_from(port).map_err(|_| RingError::BadPort(port))?),
            };
            p = p.with_default_port(port)?;
        }
        Ok(p)
    }

    /// The options that rebuild this profile with [`Profile::from_options`]: `vnodes`
    /// always; `points_per_digest` and `default_port` (0 for none) on MD5 profiles.
    ///
    /// ```
    /// use keyroute::ring::Profile;
    /// let p = Profile::node_hashring().with_default_port(Some(11211))?.with_vnodes(100)?;
    /// let options = p.options();
    /// assert_eq!(options.default_port, Some(11211));
    /// assert_eq!(Profile::from_options(p.name().as_str(), &options)?, p);
    /// assert_eq!(Profile::native().options().default_port, None);
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub fn options(&self) -> ProfileOptions {
        let md5 = self.hash == PointHash::Md5;
        ProfileOptions {
            vnodes: Some(self.vnodes.into()),
            points_per_digest: md5.then_some(self.points_per_digest.into()),
            default_port: md5.then_some(self.default_port.map_or(0, i128::from)),
        }
    }

    /// The profile's name.
    pub const fn name(&self) -> ProfileName {
        self.name
    }
    /// The hash family of keys and points.
    pub const fn hash(&self) -> PointHash {
        self.hash
    }
    /// Points per MD5 digest (1 for native).
    pub const fn points_per_digest(&self) -> u8 {
        self.points_per_digest
    }
    /// How weights turn into digests.
    pub const fn weight_rule(&self) -> WeightRule {
        self.weights
    }
    /// The port left out of hashed server strings, if any.
    pub const fn default_port(&self) -> Option<u16> {
        self.default_port
    }
    /// `>=` or `>` lookup.
    pub const fn lookup(&self) -> Lookup {
        self.lookup
    }
    /// The tie rule on equal points.
    pub const fn ties(&self) -> Ties {
        self.ties
    }
    /// Virtual nodes (see [`Profile::with_vnodes`]).
    pub const fn vnodes(&self) -> u32 {
        self.vnodes
    }
}

impl Default for Profile {
    fn default() -> Self {
        Profile::native()
    }
}

impl FromStr for Profile {
    type Err = RingError;
    fn from_str(s: &str) -> Result<Self, RingError> {
        s.parse::<ProfileName>().map(Profile::from_name)
    }
}

/// The number of digests a server gets under `rule` (see [`WeightRule`]).
///
/// `n` is the number of servers, `weight` this server's weight, `total` the sum of all.
/// For [`WeightRule::PerWeight`] the result is the number of points.
pub(crate) fn digests_for(rule: WeightRule, vnodes: u32, n: usize, weight: u32, total: u64) -> u64 {
    let n = n as u64;
    match rule {
        WeightRule::LibketamaMixed => {
            let pct = weight as f32 / total as f32;
            let prod = (pct as f64) * (vnodes as f64) * (n as f32 as f64);
            // floorf() of a non-negative float: truncation is floor.
            (prod as f32) as u64
        }
        WeightRule::MemcachedF32 => {
            let pct = weight as f32 / total as f32;
            let x = pct * ((vnodes * 4) as f32) / 4.0f32 * (n as f32);
            ((x as f64 + 0.0000000001f64) as f32) as u64
        }
        WeightRule::Integer => (vnodes as u64 * n * weight as u64) / total,
        WeightRule::JsDouble => {
            let pct = weight as f64 / total as f64;
            (pct * vnodes as f64 * n as f64) as u64
        }
        WeightRule::PerWeight => weight as u64 * vnodes as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in ProfileName::ALL {
            assert_eq!(p.as_str().parse::<ProfileName>().ok(), Some(p));
        }
        assert_eq!(
            "HASH-RING".parse::<ProfileName>().ok(),
            Some(ProfileName::HashRing)
        );
        assert!("ketama2".parse::<ProfileName>().is_err());
        assert_eq!(
            "Twemproxy".parse::<ProfileName>().ok(),
            Some(ProfileName::Libmemcached)
        );
        let names: alloc::vec::Vec<&str> = ProfileName::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(
            super::super::profile_name::PROFILE_NAMES_TEXT,
            names.join(", ")
        );
    }

    #[test]
    fn float_edges_from_design() {
        // Equal weights: libketama gives 156 points (39 digests) at n=61, the f32 formula
        // at n=25 and n=100, npm at n=7 (docs/design.md).
        let d = |rule, n: usize| digests_for(rule, 40, n, 1, n as u64);
        assert_eq!(d(WeightRule::LibketamaMixed, 61), 39);
        assert_eq!(d(WeightRule::LibketamaMixed, 60), 40);
        assert_eq!(d(WeightRule::MemcachedF32, 25), 39);
        assert_eq!(d(WeightRule::MemcachedF32, 100), 39);
        assert_eq!(d(WeightRule::MemcachedF32, 10), 40);
        assert_eq!(d(WeightRule::JsDouble, 7), 39);
        assert_eq!(d(WeightRule::Integer, 7), 40);
    }
}
