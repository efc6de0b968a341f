//! How much text one configuration read may take in: the file and every `include` it
//! pulls in, counted each time it is included (an include fan-out repeats its files).

use alloc::format;

use super::bad;
use crate::engine::EngineError;

/// The most text one read takes in, in bytes: the file and its includes, each include
/// counted every time it is included (64 MiB; nginx with 200,000 servers is about 5 MiB).
///
/// ```
/// use keyroute::config::{read_config, MAX_CONFIG_BYTES};
/// let big = "#".repeat(MAX_CONFIG_BYTES + 1);
/// let err = read_config(&big, "big.conf", None, &mut |_| None).unwrap_err();
/// assert_eq!(err.code().as_str(), "BAD_CONFIG");
/// ```
pub const MAX_CONFIG_BYTES: usize = 64 << 20;

/// The most `include` directives one read follows, in all (each include of each
/// included file counts).
///
/// ```
/// assert_eq!(keyroute::config::MAX_INCLUDES, 4096);
/// ```
pub const MAX_INCLUDES: usize = 4096;

/// What is left of a read's allowance.
#[derive(Debug)]
pub(crate) struct Budget {
    bytes: usize,
    includes: usize,
}

impl Budget {
    /// The allowance of one read, `text` (of `file`) taken from it already.
    pub(crate) fn new(file: &str, text: &str) -> Result<Budget, EngineError> {
        let mut b = Budget {
            bytes: MAX_CONFIG_BYTES,
            includes: MAX_INCLUDES,
        };
        b.take(file, 0, text.len())?;
        Ok(b)
    }

    /// Takes `len` bytes of `file`, refused past the allowance.
    fn take(&mut self, file: &str, line: usize, len: usize) -> Result<(), EngineError> {
        match self.bytes.checked_sub(len) {
            Some(left) => {
                self.bytes = left;
                Ok(())
            }
            None => Err(bad(
                file,
                line,
                format!(
                    "the configuration and its includes are over {} MiB of text in all (the most one read takes in; an include counts each time it is included)",
                    MAX_CONFIG_BYTES >> 20
                ),
            )),
        }
    }

    /// Counts one include of `target`, written in `file` at `line`, before its file is
    /// read: refused past [`MAX_INCLUDES`].
    pub(crate) fn include(
        &mut self,
        file: &str,
        line: usize,
        target: &str,
    ) -> Result<(), EngineError> {
        if self.includes == 0 {
            return Err(bad(
                file,
                line,
                format!("include {target}: more than {MAX_INCLUDES} includes in all (the most one read follows; an include counts each time its file is included)"),
            ));
        }
        self.includes -= 1;
        Ok(())
    }

    /// Takes the text of an included file, `target`, refused past the allowance.
    pub(crate) fn included(&mut self, target: &str, text: &str) -> Result<(), EngineError> {
        self.take(target, 0, text.len())
    }
}
