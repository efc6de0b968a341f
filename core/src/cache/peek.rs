//! The warm-hit fast path: one plain `HMGET` of the entry's four read fields instead of
//! an `EVALSHA` of [`SC_GET`](super::SC_GET), decided on the caller's clock.
//!
//! Redis runs a script call at roughly half the rate of a plain read, whatever the script
//! does (an empty `return 1` already costs that: the closing note of issue 14 has the
//! figures). A fresh value needs no lease, no write and no atomicity, so a client reads it
//! with [`PEEK_FIELDS`] and asks [`Peek::decode`] whether it may serve it. Anything but a
//! plain fresh hit (no value, soft or hard expiry reached, an XFetch early refresh drawn,
//! a field that is not a number) is [`Peek::Ask`]: the client then sends `SC_GET`, which
//! decides with the server's `TIME` as before.
//!
//! The difference to `SC_GET`'s own hit test is the clock. A caller whose clock runs `δ`
//! behind the server's serves a value up to `δ` past its *soft* expiry (never past its
//! hard expiry: Redis drops the key itself at `PEXPIREAT`); one whose clock runs ahead
//! asks `SC_GET` up to `δ` early. Clients that want the server's clock only turn the fast
//! path off.

use alloc::vec::Vec;

use super::xfetch::should_refresh;
use crate::script::ReplyError;
use crate::script::Value;

/// The fields a fast hit reads, in order: value, soft expiry, last load time, hard expiry
/// (`HMGET entry v sx d hx`). The version is left out: a hit serves the value alone, and
/// a smaller reply is a faster one (redis-benchmark, 50 clients: 85-100 % of a plain
/// `GET`'s rate with these four fields, 58-80 % with `ver` as a fifth).
///
/// ```
/// assert_eq!(keyroute::cache::PEEK_FIELDS, ["v", "sx", "d", "hx"]);
/// ```
pub const PEEK_FIELDS: [&str; 4] = ["v", "sx", "d", "hx"];

const WHAT: &str = "HMGET (fast hit)";
const SHAPE: &str = "an array of 4 fields";

/// What a fast-path read says.
///
/// ```
/// use keyroute::cache::{Peek, Value};
/// let b = |s: &str| Value::Bytes(s.as_bytes().to_vec());
/// // v, sx (soft expiry), d (last load took 200 ms), hx (hard expiry)
/// let reply = Value::Array(vec![b("hello"), b("2000"), b("200"), b("9000")]);
/// assert_eq!(Peek::decode(reply.clone(), 1_000, 0.0)?, Peek::Hit { value: b"hello".to_vec() });
/// assert_eq!(Peek::decode(reply.clone(), 2_000, 0.0)?, Peek::Ask);   // soft expiry reached
/// assert_eq!(Peek::decode(reply, 1_900, 1.0)?, Peek::Ask);           // XFetch: 1900 + 200 >= 2000
/// assert_eq!(Peek::decode(Value::Array(vec![Value::Nil; 4]), 1_000, 0.0)?, Peek::Ask);
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Peek {
    /// A fresh value: serve it.
    Hit {
        /// The value.
        value: Vec<u8>,
    },
    /// Not a plain fresh hit: send [`SC_GET`](super::SC_GET).
    Ask,
}

impl Peek {
    /// Decides on the reply to `HMGET entry v sx d hx` at `now_ms` (the caller's
    /// clock, Unix milliseconds), with the caller's XFetch draw `xfetch_e` (0 = off) as
    /// [`Call::get`](super::Call::get) takes it. A reply that is not an array of four
    /// nils or strings is a [`ReplyError`].
    ///
    /// ```
    /// use keyroute::cache::{Peek, Value};
    /// assert!(Peek::decode(Value::Int(1), 0, 0.0).is_err());
    /// let b = |s: &str| Value::Bytes(s.as_bytes().to_vec());
    /// // The hard expiry passed (Redis has not dropped the key yet): SC_GET deletes it.
    /// let reply = Value::Array(vec![b("v"), b("5000"), b("0"), b("900")]);
    /// assert_eq!(Peek::decode(reply, 1_000, 0.0)?, Peek::Ask);
    /// # Ok::<(), keyroute::cache::ReplyError>(())
    /// ```
    pub fn decode(reply: Value, now_ms: u64, xfetch_e: f64) -> Result<Peek, ReplyError> {
        let Value::Array(items) = reply else {
            return Err(ReplyError::new(WHAT, SHAPE));
        };
        if items.len() != PEEK_FIELDS.len()
            || items
                .iter()
                .any(|f| !matches!(f, Value::Nil | Value::Bytes(_)))
        {
            return Err(ReplyError::new(WHAT, SHAPE));
        }
        let mut it = items.into_iter();
        let (Some(v), Some(sx), Some(d), Some(hx)) = (it.next(), it.next(), it.next(), it.next())
        else {
            return Err(ReplyError::new(WHAT, SHAPE));
        };
        let Value::Bytes(value) = v else {
            return Ok(Peek::Ask);
        };
        // A missing number reads as 0, as `tonumber(x or 0)` in the script.
        let num = |f: &Value| match f {
            Value::Nil => Some(0),
            other => other.as_u64(),
        };
        let (Some(sx), Some(d)) = (num(&sx), num(&d)) else {
            return Ok(Peek::Ask);
        };
        let hard_passed = match hx {
            Value::Nil => false,
            other => other.as_u64().is_none_or(|hx| hx <= now_ms),
        };
        if hard_passed || now_ms >= sx || should_refresh(now_ms, sx, d, xfetch_e) {
            return Ok(Peek::Ask);
        }
        Ok(Peek::Hit { value })
    }
}
