//! Errors of engines, fleet profiles and proxy configurations.

use alloc::string::String;
use core::fmt;

use crate::error::ErrorCode;
use crate::ring::{NodeSpec, RingError};

/// Why an engine could not be built, or a proxy configuration read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum EngineError {
    /// A node list error (empty name, zero weight, duplicate, too many points, ...).
    Ring(RingError),
    /// The engine or profile name is not one keyroute knows.
    UnknownEngine(String),
    /// An option the engine does not take, or a value it cannot use.
    BadOption {
        /// The engine or profile.
        engine: &'static str,
        /// The option as given.
        option: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// A configuration file that is not valid text of its format (a syntax error, no
    /// pool/upstream/backend of that name).
    BadConfig(ConfigSite),
    /// A valid configuration that keyroute cannot reproduce exactly (an unsupported
    /// balance mode or hash, an include, a backup or down server, a name that resolves
    /// to several addresses): refused, never approximated.
    UnsupportedConfig(ConfigSite),
}

/// Where in a configuration file a refusal comes from, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSite {
    /// The file as the caller named it (empty when the text came without a name).
    pub file: String,
    /// The 1-based line (0 when the problem is the whole file).
    pub line: usize,
    /// What is wrong, and what to do about it.
    pub reason: String,
}

impl fmt::Display for ConfigSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = if self.file.is_empty() {
            "<config>"
        } else {
            &self.file
        };
        if self.line > 0 {
            write!(f, "{file}:{}: {}", self.line, self.reason)
        } else {
            write!(f, "{file}: {}", self.reason)
        }
    }
}

impl EngineError {
    /// The stable code of the error, the same in every binding.
    ///
    /// ```
    /// use keyroute::engine::EngineError;
    /// assert_eq!(EngineError::UnknownEngine("x".into()).code().as_str(), "UNKNOWN_PROFILE");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            EngineError::Ring(e) => e.code(),
            EngineError::UnknownEngine(_) => ErrorCode::UnknownProfile,
            EngineError::BadOption { .. } => ErrorCode::BadOption,
            EngineError::BadConfig(_) => ErrorCode::BadConfig,
            EngineError::UnsupportedConfig(_) => ErrorCode::UnsupportedConfig,
        }
    }

    /// The file, line and reason of a configuration refusal.
    ///
    /// ```
    /// use keyroute::engine::{ConfigSite, EngineError};
    /// let e = EngineError::BadConfig(ConfigSite { file: "n.conf".into(), line: 3, reason: "x".into() });
    /// assert_eq!(e.config_site().map(|s| s.line), Some(3));
    /// ```
    pub fn config_site(&self) -> Option<&ConfigSite> {
        match self {
            EngineError::BadConfig(s) | EngineError::UnsupportedConfig(s) => Some(s),
            _ => None,
        }
    }
}

impl From<RingError> for EngineError {
    fn from(e: RingError) -> Self {
        EngineError::Ring(e)
    }
}

impl core::error::Error for EngineError {}

/// Refuses weights other than 1 for a peer that has none.
pub(crate) fn unweighted(engine: &'static str, nodes: &[NodeSpec]) -> Result<(), EngineError> {
    match nodes.iter().find(|n| n.weight != 1) {
        Some(n) => Err(EngineError::BadOption {
            engine,
            option: alloc::format!("weight of {}", n.name),
            reason: "this peer has no weights: give every node weight 1".into(),
        }),
        None => Ok(()),
    }
}
