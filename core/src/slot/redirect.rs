//! `MOVED` and `ASK` redirections: parsing the error text and what each does to a slot map.
use core::fmt;

use crate::error::ErrorCode;

use super::{split_host_port, AddressError, SLOT_COUNT};

/// Which redirection a node answered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RedirectKind {
    /// `MOVED`: the slot lives elsewhere for good. Update the map (one slot), send the
    /// command there, and refresh the whole map soon: one `MOVED` usually means many.
    Moved,
    /// `ASK`: the slot is being migrated. Send `ASKING` then the command to the target,
    /// once; the map does not change.
    Ask,
}

/// A parsed `MOVED <slot> <host>:<port>` or `ASK <slot> <host>:<port>` error. Borrows the
/// host from the message, so parsing needs no allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Redirect<'a> {
    /// `MOVED` or `ASK`.
    pub kind: RedirectKind,
    /// The slot, in `0..16384`.
    pub slot: u16,
    /// Target host without IPv6 brackets; empty means "the host you sent the command to".
    pub host: &'a str,
    /// Target port.
    pub port: u16,
}

impl<'a> Redirect<'a> {
    /// Parses a redirection error message. A leading `-` (raw RESP) and trailing
    /// whitespace / `\r\n` are accepted; fields are separated by spaces. The address
    /// splits on its **last** `:` (Redis writes IPv6 unbracketed); `[v6]:port` is
    /// accepted too.
    ///
    /// # Errors
    /// [`RedirectError`] says which part is wrong; [`RedirectError::NotARedirect`] for any
    /// other error text (so callers can pass every error through this).
    ///
    /// ```
    /// use keyroute::slot::{Redirect, RedirectKind};
    ///
    /// let r = Redirect::parse("MOVED 3999 127.0.0.1:6381")?;
    /// assert_eq!((r.kind, r.slot, r.host, r.port), (RedirectKind::Moved, 3999, "127.0.0.1", 6381));
    ///
    /// let r = Redirect::parse("ASK 3999 :6381")?; // empty host: reuse the current one
    /// assert_eq!(r.host_or("10.0.0.7"), "10.0.0.7");
    ///
    /// let r = Redirect::parse("MOVED 1 2001:db8::5:7000")?;
    /// assert_eq!((r.host, r.port), ("2001:db8::5", 7000));
    /// # Ok::<(), keyroute::slot::RedirectError>(())
    /// ```
    pub fn parse(message: &'a str) -> Result<Self, RedirectError> {
        let message = message.strip_prefix('-').unwrap_or(message).trim_end();
        let mut fields = message.split(' ').filter(|f| !f.is_empty());
        let kind = match fields.next() {
            Some("MOVED") => RedirectKind::Moved,
            Some("ASK") => RedirectKind::Ask,
            _ => return Err(RedirectError::NotARedirect),
        };
        let (Some(slot), Some(addr), None) = (fields.next(), fields.next(), fields.next()) else {
            return Err(RedirectError::WrongFieldCount);
        };
        let slot = parse_slot(slot)?;
        let (host, port) = split_host_port(addr).map_err(RedirectError::BadAddress)?;
        Ok(Self {
            kind,
            slot,
            host,
            port,
        })
    }

    /// Like [`parse`](Self::parse) for the raw bytes of an error reply.
    ///
    /// # Errors
    /// [`RedirectError::NotUtf8`] if the bytes are not UTF-8, else as [`parse`](Self::parse).
    ///
    /// ```
    /// use keyroute::slot::Redirect;
    ///
    /// let r = Redirect::parse_bytes(b"-ASK 12182 10.0.0.2:7002\r\n")?;
    /// assert_eq!(r.slot, 12182);
    /// # Ok::<(), keyroute::slot::RedirectError>(())
    /// ```
    pub fn parse_bytes(message: &'a [u8]) -> Result<Self, RedirectError> {
        let s = core::str::from_utf8(message).map_err(|_| RedirectError::NotUtf8)?;
        Self::parse(s)
    }

    /// The target host, with an empty host replaced by `current_host` (the host the
    /// command was sent to).
    ///
    /// ```
    /// use keyroute::slot::Redirect;
    ///
    /// let r = Redirect::parse("MOVED 5 :7001")?;
    /// assert_eq!(r.host_or("10.1.1.1"), "10.1.1.1");
    /// # Ok::<(), keyroute::slot::RedirectError>(())
    /// ```
    #[must_use]
    pub fn host_or(&self, current_host: &'a str) -> &'a str {
        if self.host.is_empty() {
            current_host
        } else {
            self.host
        }
    }

    /// `true` for `MOVED`: the map is stale and a full refresh (`CLUSTER SHARDS`) is due.
    #[must_use]
    pub fn wants_refresh(&self) -> bool {
        self.kind == RedirectKind::Moved
    }
}

fn parse_slot(s: &str) -> Result<u16, RedirectError> {
    if s.is_empty() || s.len() > 5 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(RedirectError::BadSlot);
    }
    match s.parse::<u16>() {
        Ok(slot) if slot < SLOT_COUNT => Ok(slot),
        _ => Err(RedirectError::BadSlot),
    }
}

/// Why an error message is not a usable redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RedirectError {
    /// The message does not start with `MOVED` or `ASK`: it is some other error.
    NotARedirect,
    /// Not exactly three fields (`MOVED <slot> <host>:<port>`).
    WrongFieldCount,
    /// The slot is not a decimal number in 0..=16383.
    BadSlot,
    /// The address field is not `host:port`.
    BadAddress(AddressError),
    /// The message bytes are not UTF-8.
    NotUtf8,
}

impl fmt::Display for RedirectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotARedirect => f.write_str(
                "error message is not a redirection (expected `MOVED <slot> <host>:<port>` \
                 or `ASK <slot> <host>:<port>`)",
            ),
            Self::WrongFieldCount => f.write_str(
                "redirection must have exactly three space-separated fields: \
                 `MOVED|ASK <slot> <host>:<port>`",
            ),
            Self::BadSlot => f.write_str("redirection slot must be a decimal number in 0..=16383"),
            Self::BadAddress(e) => write!(f, "redirection target: {e}"),
            Self::NotUtf8 => f.write_str("redirection message is not valid UTF-8"),
        }
    }
}

impl RedirectError {
    /// The stable code of the error: `NOT_A_REDIRECT` for another error message,
    /// `BAD_UTF8` for bytes that are not UTF-8, else `BAD_REDIRECT`.
    ///
    /// ```
    /// use keyroute::slot::Redirect;
    /// assert_eq!(Redirect::parse("ERR x").unwrap_err().code().as_str(), "NOT_A_REDIRECT");
    /// assert_eq!(Redirect::parse("MOVED 99999 h:1").unwrap_err().code().as_str(), "BAD_REDIRECT");
    /// ```
    pub const fn code(&self) -> ErrorCode {
        match self {
            Self::NotARedirect => ErrorCode::NotARedirect,
            Self::NotUtf8 => ErrorCode::BadUtf8,
            _ => ErrorCode::BadRedirect,
        }
    }
}

impl core::error::Error for RedirectError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            Self::BadAddress(e) => Some(e),
            _ => None,
        }
    }
}

#[cfg(feature = "alloc")]
pub use apply::RedirectAction;

#[cfg(feature = "alloc")]
mod apply {
    use super::{Redirect, RedirectKind};
    use crate::slot::{Address, MapError, NodeIndex, SlotMap};

    /// What a client should do after [`SlotMap::apply_redirect`].
    #[derive(Debug, Clone, PartialEq, Eq)]
    #[non_exhaustive]
    pub enum RedirectAction {
        /// The map now routes the slot to `node`: resend there, and refresh the whole map
        /// soon (one `MOVED` usually means a failover or resharding moved many slots).
        Moved {
            /// The node that owns the slot now.
            node: NodeIndex,
            /// `true` if the map did not know that address and added a master for it.
            added: bool,
        },
        /// Send `ASKING` then the command to `addr`, once. The map is unchanged.
        Ask {
            /// Where to send `ASKING` + the command (empty host already filled in).
            addr: Address,
            /// That address's node, if the map knows it.
            node: Option<NodeIndex>,
        },
    }

    impl RedirectAction {
        /// `true` after `MOVED`: fetch `CLUSTER SHARDS` and rebuild the map soon.
        #[must_use]
        pub fn wants_refresh(&self) -> bool {
            matches!(self, Self::Moved { .. })
        }
    }

    impl SlotMap {
        /// Follows a redirection. `current_host` is the host the command was sent to; it
        /// replaces an empty host in the redirection.
        ///
        /// * `MOVED` assigns that one slot to the node at the target address (adding a
        ///   master with an unknown (empty) id if the address is new; promoting it if it
        ///   was a replica) and reports that a full refresh is wanted.
        /// * `ASK` never changes the map.
        ///
        /// # Errors
        /// [`MapError::TooManyNodes`] if a new node does not fit.
        ///
        /// ```
        /// use keyroute::slot::{Address, Redirect, RedirectAction, SlotMap};
        ///
        /// let mut map = SlotMap::new();
        /// let a = map.add_master("a", Address::new("10.0.0.1", 7000))?;
        /// map.assign(0..=16383, a)?;
        ///
        /// let moved = Redirect::parse("MOVED 42 :7001").expect("valid");
        /// let action = map.apply_redirect(&moved, "10.0.0.1")?;
        /// assert!(action.wants_refresh());
        /// let RedirectAction::Moved { node, added } = action else { unreachable!() };
        /// assert!(added);
        /// assert_eq!(map.owner(42), Some(node));
        /// assert_eq!(map.owner(43), Some(a));
        /// assert_eq!(map[node].addr(), &Address::new("10.0.0.1", 7001));
        /// # Ok::<(), keyroute::slot::MapError>(())
        /// ```
        pub fn apply_redirect(
            &mut self,
            redirect: &Redirect<'_>,
            current_host: &str,
        ) -> Result<RedirectAction, MapError> {
            let host = redirect.host_or(current_host);
            let found = self.find_addr(host, redirect.port);
            match redirect.kind {
                RedirectKind::Ask => Ok(RedirectAction::Ask {
                    addr: Address::new(host, redirect.port),
                    node: found,
                }),
                RedirectKind::Moved => {
                    let (node, added) = match found {
                        Some(n) => {
                            self.promote(n);
                            (n, false)
                        }
                        None => (
                            self.add_master("", Address::new(host, redirect.port))?,
                            true,
                        ),
                    };
                    self.set_owner(redirect.slot, Some(node));
                    Ok(RedirectAction::Moved { node, added })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        let r = Redirect::parse("MOVED 3999 127.0.0.1:6381").expect("valid");
        assert_eq!(
            r,
            Redirect {
                kind: RedirectKind::Moved,
                slot: 3999,
                host: "127.0.0.1",
                port: 6381
            }
        );
        let r = Redirect::parse("-ASK 0 ::1:7000\r\n").expect("valid");
        assert_eq!(
            (r.kind, r.slot, r.host, r.port),
            (RedirectKind::Ask, 0, "::1", 7000)
        );
        let r = Redirect::parse("MOVED 16383 :7000").expect("valid");
        assert_eq!((r.slot, r.host, r.host_or("h")), (16383, "", "h"));
        assert!(r.wants_refresh());
        assert!(!Redirect::parse("ASK 1 h:1").expect("valid").wants_refresh());
    }

    #[test]
    fn rejects() {
        use RedirectError as E;
        let cases = [
            ("ERR unknown command", E::NotARedirect),
            ("moved 1 h:1", E::NotARedirect),
            ("", E::NotARedirect),
            ("MOVED", E::WrongFieldCount),
            ("MOVED 1", E::WrongFieldCount),
            ("MOVED 1 h:1 x", E::WrongFieldCount),
            ("MOVED 16384 h:1", E::BadSlot),
            ("MOVED -1 h:1", E::BadSlot),
            ("MOVED +1 h:1", E::BadSlot),
            ("MOVED 000001 h:1", E::BadSlot),
            ("MOVED x h:1", E::BadSlot),
            ("ASK 1 h", E::BadAddress(AddressError::MissingPort)),
            ("ASK 1 h:99999", E::BadAddress(AddressError::BadPort)),
        ];
        for (msg, err) in cases {
            assert_eq!(Redirect::parse(msg), Err(err), "{msg:?}");
        }
        assert_eq!(Redirect::parse_bytes(b"MOVED 1 \xff:1"), Err(E::NotUtf8));
    }
}
