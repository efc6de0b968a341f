//! The messages of [`EngineError`]: apart from the type, because one of them lists every
//! name of the registry (which builds every engine, and the engines make these errors).

use core::fmt;

use super::error::EngineError;
use crate::error::Quoted;

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Ring(e) => e.fmt(f),
            EngineError::UnknownEngine(name) => {
                write!(
                    f,
                    "unknown engine or profile {}; expected one of ",
                    Quoted(name)
                )?;
                f.write_str(super::registry::NAMES_TEXT)
            }
            EngineError::BadOption {
                engine,
                option,
                reason,
            } => write!(f, "{engine}: option {}: {reason}", Quoted(option)),
            EngineError::BadConfig(site) => write!(f, "cannot read the configuration: {site}"),
            EngineError::UnsupportedConfig(site) => {
                write!(f, "cannot reproduce this configuration exactly: {site}")
            }
        }
    }
}
