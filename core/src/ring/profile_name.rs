//! [`ProfileName`]: the names of the ring profiles, and their list for messages.

use core::fmt;

use crate::util::{join, joined_len, utf8};

/// The named profiles keyroute knows.
///
/// Every ketama-family profile is bit-exact with the peer it is named after (see
/// `docs/design.md` and the vectors under `tests/vectors/ring/`); [`ProfileName::Native`] is
/// keyroute's own fast ring for new fleets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProfileName {
    /// SipHash-1-3, 64-bit points, `weight × vnodes` points per node.
    Native,
    /// RJ's libketama (`ketama_create_continuum`, PyPI `ketama`).
    Libketama,
    /// libmemcached with `MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED` (and PHP's
    /// `OPT_LIBKETAMA_COMPATIBLE`). Also the ring of twemproxy (`hash: md5`,
    /// `distribution: ketama`) for servers without an alias: the old `twemproxy` ring
    /// profile (see [`ProfileName::ALIASES`]).
    Libmemcached,
    /// PyPI `uhashring` with `hash_fn='ketama'`.
    Uhashring,
    /// npm `hashring` (3.x).
    NodeHashring,
    /// PyPI `hash_ring` (Amir Salihefendic's).
    HashRing,
}

impl ProfileName {
    /// Every profile, in the order they are listed in documentation.
    pub const ALL: [ProfileName; 6] = [
        ProfileName::Native,
        ProfileName::Libketama,
        ProfileName::Libmemcached,
        ProfileName::Uhashring,
        ProfileName::NodeHashring,
        ProfileName::HashRing,
    ];

    /// Other spellings a profile is parsed from: `twemproxy`, the old name of the ring
    /// that libmemcached and twemproxy build alike. It always built the libmemcached ring
    /// (the same points, the same answers); `twemproxy` now names nutcracker's own rules
    /// (aliases, 272-byte point strings, every `hash:`): the `twemproxy` engine of
    /// `keyroute::engine::Router` (feature `fleet`).
    ///
    /// ```
    /// use keyroute::ring::ProfileName;
    /// assert_eq!("twemproxy".parse::<ProfileName>()?, ProfileName::Libmemcached);
    /// # Ok::<(), keyroute::ring::RingError>(())
    /// ```
    pub const ALIASES: &'static [(&'static str, ProfileName)] =
        &[("twemproxy", ProfileName::Libmemcached)];

    /// The old name of [`ProfileName::Libmemcached`]'s ring: see [`ProfileName::ALIASES`].
    #[deprecated(
        note = "the twemproxy ring profile was libmemcached's ring under another name: use ProfileName::Libmemcached (or the `twemproxy` engine for nutcracker's exact rules)"
    )]
    #[allow(non_upper_case_globals)]
    pub const Twemproxy: ProfileName = ProfileName::Libmemcached;

    /// The name used by every binding and the CLI (`"native"`, `"node-hashring"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            ProfileName::Native => "native",
            ProfileName::Libketama => "libketama",
            ProfileName::Libmemcached => "libmemcached",
            ProfileName::Uhashring => "uhashring",
            ProfileName::NodeHashring => "node-hashring",
            ProfileName::HashRing => "hash_ring",
        }
    }
}

impl fmt::Display for ProfileName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

const PROFILE_NAMES: [&str; ProfileName::ALL.len()] = {
    let mut out = [""; ProfileName::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = ProfileName::ALL[i].as_str();
        i += 1;
    }
    out
};
const PROFILE_NAMES_JOINED: [u8; joined_len(&PROFILE_NAMES)] = join(&PROFILE_NAMES);

/// Every profile name, `", "` between them (for messages).
pub(crate) const PROFILE_NAMES_TEXT: &str = utf8(&PROFILE_NAMES_JOINED);
