//! Errors of ring construction and changes.

use alloc::string::String;
use core::fmt;

/// Why a ring could not be built or changed. Every message says what to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RingError {
    /// A node name was empty.
    EmptyNodeName,
    /// A node was given a weight of zero.
    ZeroWeight(String),
    /// A node was given a negative weight (from a binding or a parsed spec).
    NegativeWeight(String, i64),
    /// A weight does not fit in 32 bits.
    WeightTooLarge(String, i64),
    /// The same node name was given twice.
    DuplicateNode(String),
    /// The node is not on the ring.
    UnknownNode(String),
    /// The profile name is not one keyroute knows.
    UnknownProfile(String),
    /// The ring would hold more points than [`MAX_POINTS`](super::MAX_POINTS).
    TooManyPoints(u64),
    /// `vnodes` outside 1..=65536.
    BadVnodes(u32),
    /// Points per digest outside 1..=4, or set on the native profile.
    BadPointsPerDigest(u8),
    /// Two rings whose keys hash differently cannot be compared.
    IncompatibleRings,
    /// A node list entry could not be parsed.
    BadNodeSpec(String),
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::EmptyNodeName => f.write_str("node names must not be empty"),
            RingError::ZeroWeight(n) => {
                write!(f, "node {n:?} has weight 0; weights must be at least 1 (remove the node instead)")
            }
            RingError::NegativeWeight(n, w) => {
                write!(f, "node {n:?} has negative weight {w}; weights must be at least 1")
            }
            RingError::WeightTooLarge(n, w) => {
                write!(f, "node {n:?} has weight {w}; weights must be at most {}", u32::MAX)
            }
            RingError::DuplicateNode(n) => {
                write!(f, "node {n:?} is already on the ring; use a reweight to change it")
            }
            RingError::UnknownNode(n) => write!(f, "node {n:?} is not on the ring"),
            RingError::UnknownProfile(p) => write!(
                f,
                "unknown profile {p:?}; expected one of native, libketama, libmemcached, \
                 twemproxy, uhashring, node-hashring, hash_ring"
            ),
            RingError::TooManyPoints(p) => write!(
                f,
                "the ring would hold {p} points, more than the limit of {}; lower the weights or vnodes",
                super::MAX_POINTS
            ),
            RingError::BadVnodes(v) => write!(f, "vnodes must be between 1 and 65536, got {v}"),
            RingError::BadPointsPerDigest(k) => write!(
                f,
                "points per digest must be between 1 and 4 on an MD5 profile, got {k}"
            ),
            RingError::IncompatibleRings => f.write_str(
                "these rings hash keys differently (native vs ketama family) and cannot be compared",
            ),
            RingError::BadNodeSpec(s) => write!(
                f,
                "cannot parse node entry {s:?}; write NAME, NAME=WEIGHT or NAME:WEIGHT \
                 (host:port nodes as host:port=WEIGHT or host:port:WEIGHT)"
            ),
        }
    }
}

impl RingError {
    /// A stable, machine-readable name for the error (`"ZERO_WEIGHT"`, …), the same in
    /// every binding.
    ///
    /// ```
    /// use keyroute::ring::RingError;
    /// assert_eq!(RingError::UnknownNode("a".into()).code(), "UNKNOWN_NODE");
    /// ```
    pub const fn code(&self) -> &'static str {
        match self {
            RingError::EmptyNodeName => "EMPTY_NODE_NAME",
            RingError::ZeroWeight(_) => "ZERO_WEIGHT",
            RingError::NegativeWeight(..) => "NEGATIVE_WEIGHT",
            RingError::WeightTooLarge(..) => "WEIGHT_TOO_LARGE",
            RingError::DuplicateNode(_) => "DUPLICATE_NODE",
            RingError::UnknownNode(_) => "UNKNOWN_NODE",
            RingError::UnknownProfile(_) => "UNKNOWN_PROFILE",
            RingError::TooManyPoints(_) => "TOO_MANY_POINTS",
            RingError::BadVnodes(_) => "BAD_VNODES",
            RingError::BadPointsPerDigest(_) => "BAD_POINTS_PER_DIGEST",
            RingError::IncompatibleRings => "INCOMPATIBLE_RINGS",
            RingError::BadNodeSpec(_) => "BAD_NODE_SPEC",
        }
    }
}

impl core::error::Error for RingError {}

/// Checks a weight given as a signed integer, as bindings receive it.
///
/// ```
/// use keyroute::ring::{checked_weight, RingError};
/// assert_eq!(checked_weight("a", 3), Ok(3));
/// assert_eq!(checked_weight("a", 0), Err(RingError::ZeroWeight("a".into())));
/// assert!(checked_weight("a", -1).is_err());
/// ```
///
/// # Errors
/// [`RingError::ZeroWeight`], [`RingError::NegativeWeight`], [`RingError::WeightTooLarge`].
pub fn checked_weight(node: &str, weight: i64) -> Result<u32, RingError> {
    match weight {
        0 => Err(RingError::ZeroWeight(node.into())),
        w if w < 0 => Err(RingError::NegativeWeight(node.into(), w)),
        w => u32::try_from(w).map_err(|_| RingError::WeightTooLarge(node.into(), w)),
    }
}
