//! [`ServeError`]: why the service could not start (or stopped abnormally).

use std::fmt;

/// A start-up or fatal error of the service (requests never produce one: they are
/// answered).
///
/// ```
/// use keyroute_serve::ServeError;
/// let e = ServeError::Config("--queue 0 is outside 1..=1048576".into());
/// assert_eq!(e.to_string(), "bad configuration: --queue 0 is outside 1..=1048576");
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// A flag or setting out of range.
    Config(String),
    /// A CURVE key file or allow-list cannot be read (the file and why; never its text).
    KeyFile(String),
    /// A ZeroMQ socket could not be made or bound (endpoint, error).
    Zmq(String, zmq::Error),
    /// The store could not be opened (Redis unreachable, bad URL); passwords redacted.
    Store(String),
    /// An I/O error (the metrics listener, signals).
    Io(String, std::io::Error),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::Config(m) => write!(f, "bad configuration: {m}"),
            ServeError::KeyFile(m) => write!(f, "CURVE key file {m}"),
            ServeError::Zmq(what, e) => write!(f, "ZeroMQ: {what}: {e}"),
            ServeError::Store(m) => write!(f, "store: {m}"),
            ServeError::Io(what, e) => write!(f, "{what}: {e}"),
        }
    }
}

impl std::error::Error for ServeError {}
