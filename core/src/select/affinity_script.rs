//! Affinity with a cap: consistent hashing with bounded loads shared by every worker
//! through Redis. Each item (a job, a session, a tenant) is held by one node; a take walks
//! the item's candidate nodes in the caller's order (the engine's preference list, e.g.
//! `Router::get_n(item, n)`) and gives the item to the first one holding fewer items than
//! the cap, in one atomic script, so that no node ever holds more than the cap whichever
//! workers take at once. The in-memory overlay is [`Bounded`](crate::engine::Bounded).
//!
//! Two keys, in the affinity key's Redis Cluster slot (derived as the lease keys are:
//! the affinity key + suffix when it has a hash tag, else `{` + key + `}` + suffix):
//!
//! | `KEYS[i]` | key | type | content |
//! |---|---|---|---|
//! | 1 | affinity key | hash | item → the node holding it |
//! | 2 | + `:loads` | hash | node → items it holds (a node at 0 has no field) |
//!
//! | script | `ARGV` | reply |
//! |---|---|---|
//! | [`AFFINITY_TAKE`] | item, mode (`cap` or `c`), value, candidate₁, … | `[node, its load, cap, 1]` when taken now, `[node, its load, cap, 0]` when the item was held already (nothing changed), nil when every candidate is at the cap (nothing changed) |
//! | [`AFFINITY_RELEASE`] | item | the node that held it (its load goes down by one), or nil when the item was not held |
//!
//! The cap: mode `cap` takes it as given (an integer in `1..=2^53`); mode `c` is the
//! bounded-loads rule `⌈c · (m + 1) / n⌉` for a factor `c >= 1`, with `m` the items held
//! now and `n` the number of candidates given (pass every node, in the item's preference
//! order, for the paper's bound), computed in the script with IEEE doubles as
//! [`cap_for`] computes it. Given the same candidates and a sequence of takes, the script
//! picks exactly what `Bounded::assign` picks. Releases differ: `Bounded::release` moves
//! keys to keep every node under a cap that went down, the script frees one item and
//! moves nothing (an item stays where it is until released; a node may then hold more
//! than a later, lower cap — never more than the cap of the take that placed the item).
//!
//! Each script checks its arguments and both keys' types before its first write, so a
//! refused call changes nothing.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::fmt;

use crate::error::ErrorCode;
pub use crate::script::table::{AFFINITY_RELEASE, AFFINITY_TAKE};

#[cfg(feature = "alloc")]
use super::{KeyError, SideKey};

/// Suffix of `KEYS[2]` (see the module docs).
pub const AFFINITY_LOADS_SUFFIX: &str = ":loads";

/// Take: the item's holder, or the first candidate under the cap.
pub const AFFINITY_TAKE_SCRIPT: &str = AFFINITY_TAKE.text();
/// SHA1 of [`AFFINITY_TAKE_SCRIPT`].
pub const AFFINITY_TAKE_SHA1: &str = AFFINITY_TAKE.sha1();
/// Release: frees an item once.
pub const AFFINITY_RELEASE_SCRIPT: &str = AFFINITY_RELEASE.text();
/// SHA1 of [`AFFINITY_RELEASE_SCRIPT`].
pub const AFFINITY_RELEASE_SHA1: &str = AFFINITY_RELEASE.sha1();

/// The most candidates one take accepts, in every binding (a script's arguments live in
/// the server's memory at once).
pub const MAX_AFFINITY_CANDIDATES: usize = 1 << 16;

/// The largest cap (and factor) the scripts take: 2^53, the largest integer a Lua number
/// (a double) holds exactly.
pub const MAX_AFFINITY_CAP: u64 = 1 << 53;

/// How the cap of a take is set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Cap {
    /// This many items per node at most.
    Fixed(u64),
    /// The bounded-loads factor `c`: at most `⌈c · (m + 1) / n⌉` ([`cap_for`]).
    Factor(f64),
}

/// Why a take or release was refused before anything was sent.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum AffinityError {
    /// The item is empty.
    EmptyItem,
    /// No candidates were given.
    NoCandidates,
    /// A candidate is empty (its position, from 0).
    EmptyCandidate(usize),
    /// More candidates than [`MAX_AFFINITY_CANDIDATES`].
    TooManyCandidates(usize),
    /// A fixed cap outside `1..=2^53`.
    BadCap(u64),
    /// A factor that is not a finite number in `1..=2^53`.
    BadFactor(f64),
}

impl fmt::Display for AffinityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::EmptyItem => f.write_str("the item must not be empty; name it, e.g. \"job-42\""),
            Self::NoCandidates => f.write_str(
                "no candidate nodes were given; pass the item's nodes in preference order \
                 (e.g. Router::get_n(item, n))",
            ),
            Self::EmptyCandidate(i) => write!(f, "candidate {i} is empty; name every node"),
            Self::TooManyCandidates(n) => write!(
                f,
                "{n} candidates given; one take accepts at most {MAX_AFFINITY_CANDIDATES}"
            ),
            Self::BadCap(c) => write!(
                f,
                "cap {c} is outside 1..=2^53; give each node room for at least one item"
            ),
            Self::BadFactor(_) => f.write_str(
                "the balance factor c must be a finite number from 1 to 2^53 (1.25: no node \
                 above 125% of the mean)",
            ),
        }
    }
}

impl AffinityError {
    /// The stable code of the error.
    ///
    /// ```
    /// use keyroute::select::affinity_script::AffinityError;
    /// assert_eq!(AffinityError::NoCandidates.code().as_str(), "OUT_OF_RANGE");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::EmptyItem | Self::EmptyCandidate(_) => ErrorCode::EmptyMember,
            Self::TooManyCandidates(_) => ErrorCode::TooLarge,
            Self::NoCandidates | Self::BadCap(_) | Self::BadFactor(_) => ErrorCode::OutOfRange,
        }
    }
}

impl core::error::Error for AffinityError {}

/// Checks a take's arguments as every binding must before sending anything (the count
/// first, before the candidates are read).
///
/// ```
/// use keyroute::select::affinity_script::{check_take, Cap};
/// assert!(check_take(b"job-1", 2, Cap::Factor(1.25), |i| [&b"a"[..], b"b"][i]).is_ok());
/// let err = check_take(b"job-1", 0, Cap::Fixed(3), |_| &b""[..]).unwrap_err();
/// assert_eq!(err.code().as_str(), "OUT_OF_RANGE");
/// ```
///
/// # Errors
/// [`AffinityError`].
pub fn check_take<'a>(
    item: &[u8],
    candidates: usize,
    cap: Cap,
    candidate: impl Fn(usize) -> &'a [u8],
) -> Result<(), AffinityError> {
    if candidates > MAX_AFFINITY_CANDIDATES {
        return Err(AffinityError::TooManyCandidates(candidates));
    }
    if candidates == 0 {
        return Err(AffinityError::NoCandidates);
    }
    if item.is_empty() {
        return Err(AffinityError::EmptyItem);
    }
    match cap {
        Cap::Fixed(c) if !(1..=MAX_AFFINITY_CAP).contains(&c) => {
            return Err(AffinityError::BadCap(c))
        }
        Cap::Factor(c) if !(c.is_finite() && (1.0..=MAX_AFFINITY_CAP as f64).contains(&c)) => {
            return Err(AffinityError::BadFactor(c))
        }
        _ => {}
    }
    if let Some(i) = (0..candidates).find(|&i| candidate(i).is_empty()) {
        return Err(AffinityError::EmptyCandidate(i));
    }
    Ok(())
}

/// The cap of a take with factor `c` when `held` items are held and `n` candidates were
/// given: `⌈c · (held + 1) / n⌉`, in doubles as the script computes it (and as
/// [`Bounded`](crate::engine::Bounded) does).
///
/// ```
/// use keyroute::select::affinity_script::cap_for;
/// assert_eq!(cap_for(1.25, 0, 4), 1);
/// assert_eq!(cap_for(1.25, 9, 4), 4); // 12.5 / 4 = 3.125
/// ```
pub fn cap_for(c: f64, held: u64, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    let x = c * (held + 1) as f64 / n as f64;
    let t = x as u64;
    if (t as f64) < x {
        t + 1
    } else {
        t
    }
}

/// `ARGV[2..=3]` of a take: the mode and its value, as the script reads them.
///
/// ```
/// use keyroute::select::affinity_script::{cap_args, Cap};
/// assert_eq!(cap_args(Cap::Fixed(3)), ("cap", "3".to_string()));
/// assert_eq!(cap_args(Cap::Factor(1.25)), ("c", "1.25".to_string()));
/// ```
#[cfg(feature = "alloc")]
pub fn cap_args(cap: Cap) -> (&'static str, alloc::string::String) {
    match cap {
        Cap::Fixed(c) => ("cap", alloc::format!("{c}")),
        // Rust prints the shortest decimal that reads back as the same double; Lua's
        // tonumber reads it back exactly. No exponent for 1..=2^53.
        Cap::Factor(c) => ("c", alloc::format!("{c:?}")),
    }
}

/// The two keys of an affinity map, `KEYS[1..=2]` of both scripts.
///
/// # Errors
/// As [`SideKey::new`]: an empty key, or one that needs a hash tag.
///
/// ```
/// use keyroute::select::affinity_script::affinity_keys;
/// assert_eq!(affinity_keys(b"{jobs}:owners")?[1], b"{jobs}:owners:loads");
/// assert_eq!(affinity_keys(b"owners")?[1], b"{owners}:loads");
/// # Ok::<(), keyroute::select::KeyError>(())
/// ```
#[cfg(feature = "alloc")]
pub fn affinity_keys(key: &[u8]) -> Result<[Vec<u8>; 2], KeyError> {
    let wrapped = SideKey::new(key)?.is_wrapped();
    let mut loads = Vec::with_capacity(key.len() + AFFINITY_LOADS_SUFFIX.len() + 2);
    if wrapped {
        loads.push(b'{');
        loads.extend_from_slice(key);
        loads.push(b'}');
    } else {
        loads.extend_from_slice(key);
    }
    loads.extend_from_slice(AFFINITY_LOADS_SUFFIX.as_bytes());
    Ok([key.to_vec(), loads])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "alloc")]
    #[test]
    fn keys_share_the_slot() {
        for key in [&b"{a}:x"[..], b"plain", b"{{a}}"] {
            let keys = affinity_keys(key).expect("keys");
            assert_eq!(
                crate::slot::key_slot(&keys[0]),
                crate::slot::key_slot(&keys[1])
            );
        }
        assert!(affinity_keys(b"").is_err());
    }

    #[test]
    fn checks_in_order() {
        let c = |i: usize| [&b"a"[..], b"", b"c"][i];
        assert_eq!(
            check_take(b"x", MAX_AFFINITY_CANDIDATES + 1, Cap::Fixed(1), c),
            Err(AffinityError::TooManyCandidates(
                MAX_AFFINITY_CANDIDATES + 1
            ))
        );
        assert_eq!(
            check_take(b"", 1, Cap::Fixed(1), c),
            Err(AffinityError::EmptyItem)
        );
        assert_eq!(
            check_take(b"x", 3, Cap::Fixed(0), c),
            Err(AffinityError::BadCap(0))
        );
        assert!(matches!(
            check_take(b"x", 3, Cap::Factor(f64::NAN), c),
            Err(AffinityError::BadFactor(_))
        ));
        assert!(matches!(
            check_take(b"x", 3, Cap::Factor(0.99), c),
            Err(AffinityError::BadFactor(_))
        ));
        assert_eq!(
            check_take(b"x", 3, Cap::Fixed(2), c),
            Err(AffinityError::EmptyCandidate(1))
        );
        assert_eq!(check_take(b"x", 1, Cap::Factor(1.0), c), Ok(()));
    }

    #[test]
    fn cap_rounds_up_as_bounded_does() {
        assert_eq!(cap_for(1.0, 3, 4), 1);
        assert_eq!(cap_for(1.0, 4, 4), 2);
        assert_eq!(cap_for(1.25, 99, 10), 13);
        assert_eq!(cap_for(2.0, 0, 0), 0);
    }
}
