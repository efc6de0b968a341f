//! One module per subcommand. Each has `Args` (clap) and `run(Args) -> Result<(), CliError>`.
//!
//! Every failure is a [`CliError`], printed as `keyroute: error: <message> [CODE]` with
//! the core [`ErrorCode`] of what went wrong, and exit status 2. Status 1 is not an
//! error: an empty pool had nothing to pick (the C library's `KEYROUTE_EMPTY`).
use std::fmt;
use std::io::{self, IsTerminal, Write};

use keyroute::error::ErrorCode;

pub mod affinity;
pub mod cluster;
pub mod keys;
pub mod lease;
pub mod pick;
pub mod plan;
pub mod pool;
pub mod ring_args;
pub mod route;
pub mod script;
pub mod serve;
pub mod simulate;
pub mod slot;
pub mod text_file;

/// What to print on stdout: text for people, or JSON (`--format json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Text for people.
    Text,
    /// JSON: one object per line for `route` and `slot`, one document otherwise.
    Json,
}

/// An error for the user: a message (never holding a password) and, when the failure is
/// one the library names, its code.
#[derive(Debug)]
pub struct CliError {
    message: String,
    code: Option<ErrorCode>,
    status: u8,
    broken_pipe: bool,
}

impl CliError {
    /// An error with a code.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: Some(code),
            status: 2,
            broken_pipe: false,
        }
    }

    /// An empty pool had nothing to give: exit status 1, not an error.
    pub fn empty(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: None,
            status: 1,
            broken_pipe: false,
        }
    }

    /// The same error with `what: ` in front of its message.
    #[must_use]
    pub fn context(mut self, what: impl fmt::Display) -> Self {
        self.message = format!("{what}: {}", self.message);
        self
    }

    /// The error's code, if it has one.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn code(&self) -> Option<ErrorCode> {
        self.code
    }

    /// The exit status: 2 for errors, 1 for an empty pool.
    pub fn status(&self) -> u8 {
        self.status
    }

    /// The reader of our output went away (`keyroute route ... | head`): not an error.
    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }

    /// The line printed on stderr.
    pub fn line(&self) -> String {
        match (self.status, self.code) {
            (1, _) => format!("keyroute: {}", self.message),
            (_, Some(code)) => format!("keyroute: error: {} [{code}]", self.message),
            (_, None) => format!("keyroute: error: {}", self.message),
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line())
    }
}

macro_rules! coded {
    ($($ty:ty),* $(,)?) => {$(
        impl From<$ty> for CliError {
            fn from(err: $ty) -> Self {
                CliError::new(err.code(), err.to_string())
            }
        }
    )*};
}

coded!(
    keyroute::ring::RingError,
    keyroute::engine::EngineError,
    keyroute::slot::MapError,
    keyroute::slot::PlanError,
    keyroute::slot::AddressError,
    keyroute::select::PoolError,
    keyroute::select::KeyError,
    keyroute_redis::Error,
);

/// An operating-system error (a file that cannot be read, stdout closed): no code.
impl From<io::Error> for CliError {
    fn from(err: io::Error) -> Self {
        CliError {
            broken_pipe: err.kind() == io::ErrorKind::BrokenPipe,
            message: err.to_string(),
            code: None,
            status: 2,
        }
    }
}

/// Says on stderr that keys are read from stdin, when stdin is a terminal (a person who
/// typed `keyroute route --nodes a,b` alone would otherwise see a silent prompt).
pub fn note_reading_stdin(what: &str) {
    if io::stdin().is_terminal() {
        eprintln!(
            "keyroute: reading {what} from stdin, one per line (end with Ctrl-D; empty lines are skipped)"
        );
    }
}

/// A JSON value as one line on `out`.
pub fn json_line(out: &mut impl Write, value: &impl serde::Serialize) -> Result<(), CliError> {
    serde_json::to_writer(&mut *out, value).map_err(|e| CliError::from(io::Error::from(e)))?;
    out.write_all(b"\n")?;
    Ok(())
}
