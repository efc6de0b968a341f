//! The frames of `keyroute serve`, pure parts: the binary header every message starts
//! with ([`Header`]), the message types ([`MsgType`]) and the transport errors
//! ([`TransportError`]). The service (crate `keyroute-serve`) and its workers in any
//! language speak this; `docs/protocol.md` is the full protocol.
//!
//! A message is `[header, body, payload?]` (ZeroMQ frames): the header below, a UTF-8 JSON
//! object (possibly empty), and optionally raw value bytes. Every integer is big-endian.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | protocol version = [`VERSION`] (1) |
//! | 1 | 1 | system ([`SYSTEM`]: 0 = this service) |
//! | 2 | 2 | message type ([`MsgType`]; a reply is the request's type \| 0x8000) |
//! | 4 | 2 | transport error ([`TransportError`], 0 = none) |
//! | 6 | 1 | flags: bit 0 = data error ([`FLAG_DATA_ERROR`]: the body is `{"code","message"}`) |
//! | 7 | 1 | priority (higher first) |
//! | 8 | 4 | deadline in ms from receipt (0 = the service default) |
//! | 12 | 16 | request id (opaque, echoed) |
//! | 28 | 1 | session id length L |
//! | 29 | L | session id |
//!
//! Bytes after the session id are reserved for later versions (the header grows only at
//! its end): a reader ignores them, up to [`MAX_HEADER_LEN`] in all.
//!
//! ```
//! use keyroute::frame::{Header, MsgType, HEADER_FIXED_LEN};
//! let mut h = Header::request(MsgType::Ping, [7; 16]);
//! h.priority = 5;
//! let mut buf = [0u8; HEADER_FIXED_LEN];
//! let n = h.encode_into(&mut buf)?;
//! let back = Header::decode(&buf[..n])?;
//! assert_eq!(back, h);
//! assert_eq!(back.reply(0).msg_type, 0x8001);
//! # Ok::<(), keyroute::frame::HeaderError>(())
//! ```

mod header;
mod header_error;
mod msg_type;
mod transport;

pub use header::{Header, FLAG_DATA_ERROR, HEADER_FIXED_LEN, MAX_HEADER_LEN, SYSTEM, VERSION};
pub use header_error::HeaderError;
pub use msg_type::{MsgType, REPLY_BIT};
pub use transport::TransportError;
