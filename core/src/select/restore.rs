//! How a removed member comes back into the pool.

use core::fmt;

use crate::error::ErrorCode;
use core::str::FromStr;

/// Which count a member gets when it is restored to the pool.
///
/// Restarting at zero is deliberately not offered: a member at zero would take every
/// assignment until it caught up with the others.
///
/// ```
/// use keyroute::select::Restore;
/// assert_eq!(Restore::Keep.as_arg(), "keep");
/// assert_eq!("at_minimum".parse::<Restore>(), Ok(Restore::AtMinimum));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Restore {
    /// The count it had when it was removed; when none is remembered, as
    /// [`AtMinimum`](Restore::AtMinimum).
    Keep,
    /// The lowest count in the pool now (0 when the pool is empty), so it joins the
    /// rotation without being herded onto.
    AtMinimum,
}

impl Restore {
    /// The `ARGV[2]` that [`RESTORE_SCRIPT`](super::RESTORE_SCRIPT) takes: `keep` or
    /// `at_minimum`.
    ///
    /// ```
    /// assert_eq!(keyroute::select::Restore::AtMinimum.as_arg(), "at_minimum");
    /// ```
    pub const fn as_arg(self) -> &'static str {
        match self {
            Restore::Keep => "keep",
            Restore::AtMinimum => "at_minimum",
        }
    }
}

impl fmt::Display for Restore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_arg())
    }
}

/// A restore mode name that is neither `keep` nor `at_minimum`.
///
/// ```
/// use keyroute::select::{Restore, UnknownRestoreMode};
/// assert_eq!("zero".parse::<Restore>(), Err(UnknownRestoreMode));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnknownRestoreMode;

impl fmt::Display for UnknownRestoreMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown restore mode; use \"keep\" or \"at_minimum\"")
    }
}

impl UnknownRestoreMode {
    /// The stable code of the error: `BAD_RESTORE_MODE`.
    ///
    /// ```
    /// assert_eq!(keyroute::select::UnknownRestoreMode.code().as_str(), "BAD_RESTORE_MODE");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        ErrorCode::BadRestoreMode
    }
}

impl core::error::Error for UnknownRestoreMode {}

impl FromStr for Restore {
    type Err = UnknownRestoreMode;

    /// Parses `keep` or `at_minimum` (also `at-minimum`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "keep" => Ok(Restore::Keep),
            "at_minimum" | "at-minimum" => Ok(Restore::AtMinimum),
            _ => Err(UnknownRestoreMode),
        }
    }
}
