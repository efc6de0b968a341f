//! Node addresses: `host:port` as Redis Cluster writes them (IPv6 unbracketed, split on
//! the last `:`; an empty host means "the host you are already talking to").
use core::fmt;

use crate::error::ErrorCode;

/// Splits `host:port` on the **last** `:` so unbracketed IPv6 works (`::1:6379` → `::1`,
/// 6379), the way Redis writes addresses in `MOVED`/`ASK` and `CLUSTER NODES`. A bracketed
/// host (`[::1]:6379`) is accepted too and returned without brackets. The host may be empty
/// (`:6379`): Redis sends that when the client should reuse the host it is connected to.
///
/// # Errors
/// [`AddressError`] when there is no `:`, the port is not a decimal number in 1..=65535,
/// or brackets are unbalanced.
///
/// ```
/// use keyroute::slot::split_host_port;
///
/// assert_eq!(split_host_port("10.0.0.1:7000"), Ok(("10.0.0.1", 7000)));
/// assert_eq!(split_host_port("2001:db8::1:7000"), Ok(("2001:db8::1", 7000)));
/// assert_eq!(split_host_port("[2001:db8::1]:7000"), Ok(("2001:db8::1", 7000)));
/// assert_eq!(split_host_port(":7000"), Ok(("", 7000)));
/// assert!(split_host_port("10.0.0.1").is_err());
/// ```
pub fn split_host_port(s: &str) -> Result<(&str, u16), AddressError> {
    let (host, port) = s.rsplit_once(':').ok_or(AddressError::MissingPort)?;
    let port = parse_port(port)?;
    let host = match (host.strip_prefix('['), host.strip_suffix(']')) {
        // `[` ... `]`: the inside (no slicing by index: nothing here can panic).
        (Some(inside), Some(_)) => inside
            .strip_suffix(']')
            .ok_or(AddressError::UnbalancedBrackets)?,
        (None, None) => host,
        _ => return Err(AddressError::UnbalancedBrackets),
    };
    if host.contains(['[', ']']) {
        return Err(AddressError::UnbalancedBrackets);
    }
    Ok((host, port))
}

fn parse_port(s: &str) -> Result<u16, AddressError> {
    // u16::from_str accepts a leading '+'; Redis never writes one.
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AddressError::BadPort);
    }
    match s.parse::<u16>() {
        Ok(0) | Err(_) => Err(AddressError::BadPort),
        Ok(p) => Ok(p),
    }
}

/// Why a `host:port` string could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AddressError {
    /// There is no `:` separating host and port.
    MissingPort,
    /// The port is not a decimal number in 1..=65535.
    BadPort,
    /// A `[` without its `]` (or the reverse), or brackets inside the host.
    UnbalancedBrackets,
    /// The host is empty where a node's own address is needed.
    EmptyHost,
}

impl fmt::Display for AddressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MissingPort => {
                "address has no port; write it as host:port (IPv6 as [addr]:port or addr:port)"
            }
            Self::BadPort => "address port must be a decimal number in 1..=65535",
            Self::UnbalancedBrackets => {
                "address has unbalanced brackets; write IPv6 hosts as [addr]:port"
            }
            Self::EmptyHost => "address has an empty host; give the node's hostname or IP address",
        })
    }
}

impl AddressError {
    /// The stable code of the error: `BAD_PORT` for a bad port, else `BAD_ADDRESS`.
    ///
    /// ```
    /// use keyroute::slot::AddressError;
    /// assert_eq!(AddressError::MissingPort.code().as_str(), "BAD_ADDRESS");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::BadPort => ErrorCode::BadPort,
            Self::MissingPort | Self::UnbalancedBrackets | Self::EmptyHost => ErrorCode::BadAddress,
        }
    }
}

impl core::error::Error for AddressError {}

#[cfg(feature = "alloc")]
pub use owned::Address;

#[cfg(feature = "alloc")]
mod owned {
    use alloc::string::String;
    use core::{fmt, str::FromStr};

    use super::{split_host_port, AddressError};

    /// A node address. `host` is a hostname, IPv4 or IPv6 address (without brackets), or
    /// empty for "the host the client is already connected to".
    #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub struct Address {
        /// Hostname or IP address, without IPv6 brackets; may be empty.
        pub host: String,
        /// TCP port.
        pub port: u16,
    }

    impl Address {
        /// An address from its parts.
        ///
        /// ```
        /// use keyroute::slot::Address;
        ///
        /// let a = Address::new("::1", 7000);
        /// assert_eq!(a.to_string(), "[::1]:7000");
        /// ```
        pub fn new(host: impl Into<String>, port: u16) -> Self {
            Self {
                host: host.into(),
                port,
            }
        }

        /// A node's own address from parts as a caller gives them: a non-empty host
        /// (IPv6 brackets removed) and a port in 1..=65535.
        ///
        /// ```
        /// use keyroute::slot::Address;
        /// assert_eq!(Address::checked("[::1]", 7000)?, Address::new("::1", 7000));
        /// assert_eq!(Address::checked("", 7000).unwrap_err().code().as_str(), "BAD_ADDRESS");
        /// assert_eq!(Address::checked("h", 0).unwrap_err().code().as_str(), "BAD_PORT");
        /// assert_eq!(Address::checked("h", 1 << 32).unwrap_err().code().as_str(), "BAD_PORT");
        /// # Ok::<(), keyroute::slot::AddressError>(())
        /// ```
        ///
        /// # Errors
        /// [`AddressError::EmptyHost`], [`AddressError::BadPort`],
        /// [`AddressError::UnbalancedBrackets`].
        pub fn checked(host: &str, port: i128) -> Result<Self, AddressError> {
            let bare = match host.strip_prefix('[') {
                Some(inner) => inner
                    .strip_suffix(']')
                    .ok_or(AddressError::UnbalancedBrackets)?,
                None => host,
            };
            if bare.contains(['[', ']']) {
                return Err(AddressError::UnbalancedBrackets);
            }
            if bare.is_empty() {
                return Err(AddressError::EmptyHost);
            }
            match u16::try_from(port) {
                Ok(p) if p > 0 => Ok(Self::new(bare, p)),
                _ => Err(AddressError::BadPort),
            }
        }

        /// Parses `host:port` with [`split_host_port`] rules.
        ///
        /// # Errors
        /// See [`split_host_port`].
        ///
        /// ```
        /// use keyroute::slot::Address;
        ///
        /// let a = Address::parse("fe80::1:6379")?;
        /// assert_eq!((a.host.as_str(), a.port), ("fe80::1", 6379));
        /// # Ok::<(), keyroute::slot::AddressError>(())
        /// ```
        pub fn parse(s: &str) -> Result<Self, AddressError> {
            let (host, port) = split_host_port(s)?;
            Ok(Self::new(host, port))
        }

        /// This address with an empty host replaced by `current_host` (Redis sends an
        /// empty host to mean "the host you are talking to").
        ///
        /// ```
        /// use keyroute::slot::Address;
        ///
        /// assert_eq!(Address::new("", 7001).or_host("10.0.0.5"), Address::new("10.0.0.5", 7001));
        /// assert_eq!(Address::new("a", 7001).or_host("b"), Address::new("a", 7001));
        /// ```
        #[must_use]
        pub fn or_host(mut self, current_host: &str) -> Self {
            if self.host.is_empty() {
                self.host.push_str(current_host);
            }
            self
        }
    }

    impl FromStr for Address {
        type Err = AddressError;
        fn from_str(s: &str) -> Result<Self, AddressError> {
            Self::parse(s)
        }
    }

    /// `host:port`, with IPv6 hosts in brackets (`[::1]:7000`) so it parses back.
    impl fmt::Display for Address {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            // The host written as it is (not as a `{}` argument: see `write_all`).
            if self.host.contains(':') {
                crate::error::write_all(f, &["[", &self.host, "]"])?;
            } else {
                f.write_str(&self.host)?;
            }
            write!(f, ":{}", self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits() {
        assert_eq!(split_host_port("127.0.0.1:6379"), Ok(("127.0.0.1", 6379)));
        assert_eq!(split_host_port("::1:6379"), Ok(("::1", 6379)));
        assert_eq!(split_host_port("[::1]:6379"), Ok(("::1", 6379)));
        assert_eq!(split_host_port(":6379"), Ok(("", 6379)));
        assert_eq!(split_host_port("[]:6379"), Ok(("", 6379)));
        assert_eq!(split_host_port("host.example:1"), Ok(("host.example", 1)));
        assert_eq!(split_host_port("h:65535"), Ok(("h", 65535)));
    }

    #[test]
    fn rejects() {
        assert_eq!(split_host_port("h"), Err(AddressError::MissingPort));
        assert_eq!(split_host_port("h:"), Err(AddressError::BadPort));
        assert_eq!(split_host_port("h:0"), Err(AddressError::BadPort));
        assert_eq!(split_host_port("h:65536"), Err(AddressError::BadPort));
        assert_eq!(split_host_port("h:+1"), Err(AddressError::BadPort));
        assert_eq!(split_host_port("h:6379 "), Err(AddressError::BadPort));
        assert_eq!(
            split_host_port("[::1:6379"),
            Err(AddressError::UnbalancedBrackets)
        );
        assert_eq!(
            split_host_port("::1]:6379"),
            Err(AddressError::UnbalancedBrackets)
        );
        assert_eq!(
            split_host_port("[:]:1]:6379"),
            Err(AddressError::UnbalancedBrackets)
        );
    }

    #[cfg(feature = "alloc")]
    #[test]
    fn display_round_trips() {
        use alloc::string::ToString;
        for s in ["[::1]:7000", "10.0.0.1:7000", "redis-0.svc:6379", ":7000"] {
            let a = Address::parse(s).expect("valid");
            assert_eq!(a.to_string(), s);
            assert_eq!(Address::parse(&a.to_string()), Ok(a));
        }
    }
}
