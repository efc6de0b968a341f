//! Errors of ring construction and changes.

use alloc::string::String;
use core::fmt;

use crate::error::{write_all, ErrorCode, Int, Quoted};

/// Why a ring could not be built or changed. Every message says what to fix; the ring is
/// unchanged when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RingError {
    /// A node name was empty.
    EmptyNodeName,
    /// A node was given a weight of zero.
    ZeroWeight(String),
    /// A node was given a negative weight (from a binding or a parsed spec).
    NegativeWeight(String, i128),
    /// A weight does not fit in 32 bits.
    WeightTooLarge(String, i128),
    /// A weight that is not an integer (`1.5`, `"3"` from JavaScript, `x`).
    BadWeight {
        /// The node.
        node: String,
        /// The weight as given.
        given: String,
        /// The whole entry (empty when the weight did not come from a node list).
        entry: String,
    },
    /// The same node name was given twice.
    DuplicateNode(String),
    /// The node is not on the ring.
    UnknownNode(String),
    /// The profile name is not one keyroute knows.
    UnknownProfile(String),
    /// The ring would hold more points than [`MAX_POINTS`](super::MAX_POINTS).
    TooManyPoints(u64),
    /// `vnodes` outside 1..=65536.
    BadVnodes(i128),
    /// Points per digest outside 1..=4.
    BadPointsPerDigest(i128),
    /// A port outside 1..=65535.
    BadPort(i128),
    /// An option that this profile does not take.
    BadOption {
        /// The option (`default_port`, `points_per_digest`, ...).
        option: &'static str,
        /// The profile.
        profile: &'static str,
        /// Why it does not apply.
        reason: &'static str,
    },
    /// Two rings whose keys hash differently cannot be compared.
    IncompatibleRings,
    /// A node list entry could not be parsed.
    BadNodeSpec {
        /// The entry as given.
        entry: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A node list entry `X:N` that reads as `host:port` or as `NAME:WEIGHT`.
    AmbiguousNodeSpec {
        /// The entry as given.
        entry: String,
        /// The part before the last `:`.
        host: String,
        /// The digits after it.
        number: String,
    },
}

impl fmt::Display for RingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RingError::EmptyNodeName => f.write_str("node names must not be empty"),
            RingError::ZeroWeight(n) => {
                write!(f, "node {} has weight 0; weights must be at least 1 (remove the node instead)", Quoted(n))
            }
            RingError::NegativeWeight(n, w) => {
                write!(f, "node {} has negative weight {}; weights must be at least 1", Quoted(n), Int(*w))
            }
            RingError::WeightTooLarge(n, w) => {
                write!(f, "node {} has weight {}; weights must be at most {}", Quoted(n), Int(*w), u32::MAX)
            }
            RingError::BadWeight { node, given, entry } => {
                write!(f, "node {} has weight {}, which is not an integer; weights are whole numbers from 1 to {}", Quoted(node), Quoted(given), u32::MAX)?;
                if !entry.is_empty() {
                    write!(f, " (in entry {})", Quoted(entry))?;
                }
                Ok(())
            }
            RingError::DuplicateNode(n) => {
                write!(f, "node {} is already on the ring; use set_weight to change its weight", Quoted(n))
            }
            RingError::UnknownNode(n) => write!(f, "node {} is not on the ring", Quoted(n)),
            RingError::UnknownProfile(p) => {
                write!(f, "unknown profile {}; expected one of ", Quoted(p))?;
                f.write_str(super::profile_name::PROFILE_NAMES_TEXT)
            }
            RingError::TooManyPoints(p) => write!(
                f,
                "the ring would hold {p} points, more than the limit of {}; lower the weights or vnodes",
                super::MAX_POINTS
            ),
            RingError::BadVnodes(v) => write!(f, "vnodes must be between 1 and 65536, got {}", Int(*v)),
            RingError::BadPointsPerDigest(k) => {
                write!(f, "points per digest must be between 1 and 4, got {}", Int(*k))
            }
            RingError::BadPort(p) => write!(f, "a port must be between 1 and 65535, got {}", Int(*p)),
            RingError::BadOption {
                option,
                profile,
                reason,
            } => write_all(
                f,
                &["the ", profile, " profile does not take ", option, ": ", reason],
            ),
            RingError::IncompatibleRings => f.write_str(
                "these rings hash keys differently (native vs ketama family) and cannot be compared",
            ),
            RingError::BadNodeSpec { entry, reason } => {
                if !entry.is_empty() {
                    write!(f, "cannot read node entry {}: ", Quoted(entry))?;
                }
                f.write_str(reason)?;
                f.write_str(
                    "; write NAME, host:port, NAME=WEIGHT, or host:port:WEIGHT [ALIAS] (twemproxy)",
                )
            }
            RingError::AmbiguousNodeSpec {
                entry,
                host,
                number,
            } => {
                write!(
                    f,
                    "node entry {q} can be read two ways: node {q} (host:port) with weight \
                     1, or node {} with weight ",
                    Quoted(host),
                    q = Quoted(entry),
                )?;
                write_all(
                    f,
                    &[
                        number,
                        "; write \"",
                        entry,
                        "=1\" for the first or \"",
                        host,
                        "=",
                        number,
                        "\" for the second",
                    ],
                )
            }
        }
    }
}

impl RingError {
    /// The stable code of the error, the same in every binding.
    ///
    /// ```
    /// use keyroute::ring::RingError;
    /// assert_eq!(RingError::UnknownNode("a".into()).code().as_str(), "UNKNOWN_NODE");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            RingError::EmptyNodeName => ErrorCode::EmptyNodeName,
            RingError::ZeroWeight(_) => ErrorCode::ZeroWeight,
            RingError::NegativeWeight(..) => ErrorCode::NegativeWeight,
            RingError::WeightTooLarge(..) => ErrorCode::WeightTooLarge,
            RingError::BadWeight { .. } => ErrorCode::BadWeight,
            RingError::DuplicateNode(_) => ErrorCode::DuplicateNode,
            RingError::UnknownNode(_) => ErrorCode::UnknownNode,
            RingError::UnknownProfile(_) => ErrorCode::UnknownProfile,
            RingError::TooManyPoints(_) => ErrorCode::TooManyPoints,
            RingError::BadVnodes(_) => ErrorCode::BadVnodes,
            RingError::BadPointsPerDigest(_) => ErrorCode::BadPointsPerDigest,
            RingError::BadPort(_) => ErrorCode::BadPort,
            RingError::BadOption { .. } => ErrorCode::BadOption,
            RingError::IncompatibleRings => ErrorCode::IncompatibleRings,
            RingError::BadNodeSpec { .. } => ErrorCode::BadNodeSpec,
            RingError::AmbiguousNodeSpec { .. } => ErrorCode::AmbiguousNodeSpec,
        }
    }
}

impl core::error::Error for RingError {}

/// Checks a weight given as a (wide) signed integer, as bindings and node lists receive
/// it.
///
/// ```
/// use keyroute::ring::{checked_weight, RingError};
/// assert_eq!(checked_weight("a", 3), Ok(3));
/// assert_eq!(checked_weight("a", 0), Err(RingError::ZeroWeight("a".into())));
/// assert!(checked_weight("a", -1).is_err());
/// assert!(checked_weight("a", 1 << 40).is_err());
/// ```
///
/// # Errors
/// [`RingError::ZeroWeight`], [`RingError::NegativeWeight`], [`RingError::WeightTooLarge`].
pub fn checked_weight(node: &str, weight: i128) -> Result<u32, RingError> {
    match weight {
        0 => Err(RingError::ZeroWeight(node.into())),
        w if w < 0 => Err(RingError::NegativeWeight(node.into(), w)),
        w => u32::try_from(w).map_err(|_| RingError::WeightTooLarge(node.into(), w)),
    }
}
