//! [`Header`]: the binary header of every frame set, encoded and decoded without
//! allocating.

use super::header_error::HeaderError;
use super::msg_type::{MsgType, REPLY_BIT};

/// The protocol version this crate reads and writes.
pub const VERSION: u8 = 1;
/// The system byte of `keyroute serve`.
pub const SYSTEM: u8 = 0;
/// Flag bit 0: the reply is a data error; its body is `{"code": "...", "message": "..."}`.
pub const FLAG_DATA_ERROR: u8 = 1;
/// The header's length with an empty session id.
pub const HEADER_FIXED_LEN: usize = 29;
/// The longest header a reader accepts (the fixed part, a 255-byte session id and room
/// for fields later versions add at the end).
pub const MAX_HEADER_LEN: usize = 512;

/// The header of one message: every field of the wire table (see the
/// [module docs](super)). The session id borrows from the frame it was read from.
///
/// ```
/// use keyroute::frame::{Header, HeaderError, MsgType};
/// let mut h = Header::request(MsgType::SessionTouch, *b"0123456789abcdef");
/// h.session_id = b"abc.def";
/// h.deadline_ms = 250;
/// let mut buf = [0u8; 64];
/// let n = h.encode_into(&mut buf)?;
/// assert_eq!(n, 29 + 7);
/// assert_eq!(&buf[..4], &[1, 0, 0, 11]);
/// let back = Header::decode(&buf[..n])?;
/// assert_eq!(back.session_id, b"abc.def");
/// assert_eq!(back.kind(), Some(MsgType::SessionTouch));
/// assert_eq!(Header::decode(&buf[..10]), Err(HeaderError::TooShort(10)));
/// # Ok::<(), HeaderError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header<'a> {
    /// Protocol version ([`VERSION`]).
    pub version: u8,
    /// System ([`SYSTEM`]).
    pub system: u8,
    /// Message type: a [`MsgType`] number, `| 0x8000` in a reply (kept as a number so an
    /// unknown type can still be answered).
    pub msg_type: u16,
    /// Transport error (a [`TransportError`] number), 0 = none.
    pub transport_error: u16,
    /// Flags ([`FLAG_DATA_ERROR`]).
    pub flags: u8,
    /// Priority: higher is served first.
    pub priority: u8,
    /// Deadline in ms from receipt; 0 = the service default.
    pub deadline_ms: u32,
    /// Request id, opaque, echoed in the reply.
    pub request_id: [u8; 16],
    /// Session id (at most 255 bytes).
    pub session_id: &'a [u8],
}

impl<'a> Header<'a> {
    /// A request header of version 1, system 0, priority 0, the default deadline and no
    /// session id.
    ///
    /// ```
    /// use keyroute::frame::{Header, MsgType};
    /// let h = Header::request(MsgType::CacheGet, [0; 16]);
    /// assert_eq!((h.version, h.msg_type, h.deadline_ms), (1, 20, 0));
    /// ```
    pub const fn request(msg_type: MsgType, request_id: [u8; 16]) -> Header<'static> {
        Header {
            version: VERSION,
            system: SYSTEM,
            msg_type: msg_type.number(),
            transport_error: 0,
            flags: 0,
            priority: 0,
            deadline_ms: 0,
            request_id,
            session_id: &[],
        }
    }

    /// The reply to this header: type | 0x8000, the given transport error, no flags, the
    /// same request id, priority and session id, deadline 0.
    ///
    /// ```
    /// use keyroute::frame::{Header, MsgType, TransportError};
    /// let h = Header::request(MsgType::ProductGet, [1; 16]);
    /// let r = h.reply(TransportError::QueueFull.number());
    /// assert_eq!((r.msg_type, r.transport_error, r.request_id), (0x801e, 1, [1; 16]));
    /// assert!(r.is_reply());
    /// ```
    pub const fn reply(&self, transport_error: u16) -> Header<'a> {
        Header {
            version: VERSION,
            system: SYSTEM,
            msg_type: self.msg_type | REPLY_BIT,
            transport_error,
            flags: 0,
            priority: self.priority,
            deadline_ms: 0,
            request_id: self.request_id,
            session_id: self.session_id,
        }
    }

    /// The message type, if it is one this version knows (replies map to their request's
    /// type).
    ///
    /// ```
    /// use keyroute::frame::{Header, MsgType};
    /// let mut h = Header::request(MsgType::Ping, [0; 16]);
    /// h.msg_type = 999;
    /// assert_eq!(h.kind(), None);
    /// ```
    pub const fn kind(&self) -> Option<MsgType> {
        MsgType::from_number(self.msg_type & !REPLY_BIT)
    }

    /// Whether the type has the reply bit.
    ///
    /// ```
    /// use keyroute::frame::{Header, MsgType};
    /// assert!(!Header::request(MsgType::Ping, [0; 16]).is_reply());
    /// ```
    pub const fn is_reply(&self) -> bool {
        self.msg_type & REPLY_BIT != 0
    }

    /// Whether flag bit 0 (data error) is set.
    ///
    /// ```
    /// use keyroute::frame::{Header, MsgType, FLAG_DATA_ERROR};
    /// let mut h = Header::request(MsgType::Ping, [0; 16]);
    /// h.flags = FLAG_DATA_ERROR;
    /// assert!(h.is_data_error());
    /// ```
    pub const fn is_data_error(&self) -> bool {
        self.flags & FLAG_DATA_ERROR != 0
    }

    /// The encoded length: [`HEADER_FIXED_LEN`] + the session id's length.
    ///
    /// ```
    /// use keyroute::frame::{Header, MsgType};
    /// let mut h = Header::request(MsgType::Ping, [0; 16]);
    /// h.session_id = b"s";
    /// assert_eq!(h.encoded_len(), 30);
    /// ```
    pub const fn encoded_len(&self) -> usize {
        HEADER_FIXED_LEN + self.session_id.len()
    }

    /// Writes the header at the start of `buf`; the number of bytes written.
    ///
    /// # Errors
    /// [`HeaderError::SessionIdTooLong`] for a session id over 255 bytes,
    /// [`HeaderError::BufferTooSmall`] when `buf` is shorter than
    /// [`encoded_len`](Self::encoded_len); nothing is written then.
    ///
    /// ```
    /// use keyroute::frame::{Header, HeaderError, MsgType};
    /// let h = Header::request(MsgType::Ping, [0; 16]);
    /// assert_eq!(h.encode_into(&mut [0u8; 28]), Err(HeaderError::BufferTooSmall(28)));
    /// ```
    pub fn encode_into(&self, buf: &mut [u8]) -> Result<usize, HeaderError> {
        let sid = self.session_id.len();
        let sid_len = u8::try_from(sid).map_err(|_| HeaderError::SessionIdTooLong(sid))?;
        let n = self.encoded_len();
        if buf.len() < n {
            return Err(HeaderError::BufferTooSmall(buf.len()));
        }
        buf[0] = self.version;
        buf[1] = self.system;
        buf[2..4].copy_from_slice(&self.msg_type.to_be_bytes());
        buf[4..6].copy_from_slice(&self.transport_error.to_be_bytes());
        buf[6] = self.flags;
        buf[7] = self.priority;
        buf[8..12].copy_from_slice(&self.deadline_ms.to_be_bytes());
        buf[12..28].copy_from_slice(&self.request_id);
        buf[28] = sid_len;
        buf[29..n].copy_from_slice(self.session_id);
        Ok(n)
    }

    /// Reads a header: the whole first frame of a message.
    ///
    /// # Errors
    /// * [`HeaderError::TooShort`]: fewer than [`HEADER_FIXED_LEN`] bytes, or fewer than
    ///   the session id length says;
    /// * [`HeaderError::TooLong`]: more than [`MAX_HEADER_LEN`] bytes;
    /// * [`HeaderError::BadVersion`], [`HeaderError::BadSystem`].
    ///
    /// The message type is not checked here (see [`kind`](Self::kind)), so that an
    /// unknown type can be answered with its own number.
    ///
    /// ```
    /// use keyroute::frame::{Header, HeaderError};
    /// let mut frame = [0u8; 29];
    /// frame[0] = 2;
    /// assert_eq!(Header::decode(&frame), Err(HeaderError::BadVersion(2)));
    /// frame[0] = 1;
    /// frame[28] = 5; // says 5 session id bytes follow; none do
    /// assert_eq!(Header::decode(&frame), Err(HeaderError::TooShort(29)));
    /// ```
    pub fn decode(frame: &'a [u8]) -> Result<Header<'a>, HeaderError> {
        if frame.len() < HEADER_FIXED_LEN {
            return Err(HeaderError::TooShort(frame.len()));
        }
        if frame.len() > MAX_HEADER_LEN {
            return Err(HeaderError::TooLong(frame.len()));
        }
        if frame[0] != VERSION {
            return Err(HeaderError::BadVersion(frame[0]));
        }
        if frame[1] != SYSTEM {
            return Err(HeaderError::BadSystem(frame[1]));
        }
        let sid_len = usize::from(frame[28]);
        let Some(session_id) = frame.get(HEADER_FIXED_LEN..HEADER_FIXED_LEN + sid_len) else {
            return Err(HeaderError::TooShort(frame.len()));
        };
        let mut request_id = [0u8; 16];
        request_id.copy_from_slice(&frame[12..28]);
        Ok(Header {
            version: frame[0],
            system: frame[1],
            msg_type: u16::from_be_bytes([frame[2], frame[3]]),
            transport_error: u16::from_be_bytes([frame[4], frame[5]]),
            flags: frame[6],
            priority: frame[7],
            deadline_ms: u32::from_be_bytes([frame[8], frame[9], frame[10], frame[11]]),
            request_id,
            session_id,
        })
    }

    /// The request id of a frame that may not be a valid header (zeros where missing),
    /// so that even a refused header can be answered with whatever id it carried.
    ///
    /// ```
    /// use keyroute::frame::Header;
    /// assert_eq!(Header::salvage_request_id(&[1, 0, 0, 1]), [0; 16]);
    /// ```
    pub fn salvage_request_id(frame: &[u8]) -> [u8; 16] {
        let mut id = [0u8; 16];
        if let Some(src) = frame.get(12..28) {
            id.copy_from_slice(src);
        }
        id
    }
}
