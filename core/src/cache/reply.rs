//! Reply decoders: what each script answered, as types ([`GetReply`], [`FillReply`],
//! [`CreateReply`], [`Touch`], ...). Any other shape is a [`ReplyError`].

use alloc::vec::Vec;

use crate::script::ReplyError;
use crate::script::Value;

fn items(
    value: Value,
    script: &'static str,
    expected: &'static str,
) -> Result<Vec<Value>, ReplyError> {
    value.into_array().ok_or(ReplyError::new(script, expected))
}

fn num(value: &Value, script: &'static str, expected: &'static str) -> Result<u64, ReplyError> {
    value.as_u64().ok_or(ReplyError::new(script, expected))
}

fn bytes(
    value: Value,
    script: &'static str,
    expected: &'static str,
) -> Result<Vec<u8>, ReplyError> {
    value.into_bytes().ok_or(ReplyError::new(script, expected))
}

/// The answer of [`SC_GET`](super::SC_GET).
///
/// ```
/// use keyroute::cache::{GetReply, Value};
/// let reply = Value::Array(vec![Value::Int(4), Value::Int(1700000000000), Value::Int(0)]);
/// assert_eq!(GetReply::decode(reply)?, GetReply::Lease { fence: 1700000000000, takeover: false });
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum GetReply {
    /// A fresh value.
    Hit {
        /// The value.
        value: Vec<u8>,
        /// Its version (bumped by every fill).
        version: u64,
    },
    /// Serve `value`, and refresh it: the caller now holds the lease `fence` (soft TTL
    /// passed, or an XFetch early refresh).
    Refresh {
        /// The current value.
        value: Vec<u8>,
        /// Its version.
        version: u64,
        /// The fence of the lease granted.
        fence: u64,
        /// Whether an expired lease of someone else was taken over.
        takeover: bool,
    },
    /// A stale value: someone else is refreshing it, or a backend error is cached.
    Stale {
        /// The value.
        value: Vec<u8>,
        /// Its version.
        version: u64,
    },
    /// No value: the caller holds the lease `fence` and must load, then fill or abandon.
    Lease {
        /// The fence of the lease granted.
        fence: u64,
        /// Whether an expired lease of someone else was taken over.
        takeover: bool,
    },
    /// Someone else holds the lease: wait for the wake-up, at most `remaining_ms`.
    Wait {
        /// How long the lease is still in force.
        remaining_ms: u64,
        /// The fence of that lease.
        fence: u64,
    },
    /// The last load failed and its error is cached.
    Error {
        /// The loader's error code.
        code: Vec<u8>,
        /// The loader's message.
        message: Vec<u8>,
        /// How long the error stays cached.
        remaining_ms: u64,
    },
}

impl GetReply {
    /// Decodes the reply of [`SC_GET`](super::SC_GET).
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::cache::{GetReply, Value};
    /// let hit = Value::Array(vec![Value::Int(1), Value::Bytes(b"[1,2]".to_vec()), Value::Int(3)]);
    /// assert_eq!(GetReply::decode(hit)?, GetReply::Hit { value: b"[1,2]".to_vec(), version: 3 });
    /// assert!(GetReply::decode(Value::Array(vec![Value::Int(9)])).is_err());
    /// # Ok::<(), keyroute::cache::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<GetReply, ReplyError> {
        const S: &str = "sc-get";
        const E: &str = "an array [1..6, ...] of the documented shape";
        let bad = || ReplyError::new(S, E);
        let mut a = items(value, S, E)?;
        let n = |a: &[Value], i: usize| a.get(i).map_or(Err(bad()), |v| num(v, S, E));
        let flag = |a: &[Value], i: usize| match n(a, i)? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(bad()),
        };
        let b = |a: &mut [Value], i: usize| match a.get_mut(i) {
            Some(v) => bytes(core::mem::replace(v, Value::Nil), S, E),
            None => Err(bad()),
        };
        let reply = match (a.first().and_then(Value::as_int), a.len()) {
            (Some(1), 3) => GetReply::Hit {
                version: n(&a, 2)?,
                value: b(&mut a, 1)?,
            },
            (Some(2), 5) => GetReply::Refresh {
                version: n(&a, 2)?,
                fence: n(&a, 3)?,
                takeover: flag(&a, 4)?,
                value: b(&mut a, 1)?,
            },
            (Some(3), 3) => GetReply::Stale {
                version: n(&a, 2)?,
                value: b(&mut a, 1)?,
            },
            (Some(4), 3) => GetReply::Lease {
                fence: n(&a, 1)?,
                takeover: flag(&a, 2)?,
            },
            (Some(5), 3) => GetReply::Wait {
                remaining_ms: n(&a, 1)?,
                fence: n(&a, 2)?,
            },
            (Some(6), 4) => GetReply::Error {
                remaining_ms: n(&a, 3)?,
                code: b(&mut a, 1)?,
                message: b(&mut a, 2)?,
            },
            _ => return Err(bad()),
        };
        Ok(reply)
    }
}

/// The answer of [`SC_FILL`](super::SC_FILL).
///
/// ```
/// use keyroute::cache::{FillReply, Value};
/// let stored = Value::Array(vec![Value::Int(1), Value::Int(7)]);
/// assert_eq!(FillReply::decode(stored)?, FillReply::Stored { version: 7 });
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FillReply {
    /// Stored as `version`; waiters were woken.
    Stored {
        /// The new version.
        version: u64,
    },
    /// Rejected: the fence is not current (taken over, or invalidated); nothing changed.
    Fenced {
        /// The entry's current fence (0: the entry is gone).
        current: u64,
    },
    /// Already filled with this fence (a retried fill); nothing changed.
    Duplicate {
        /// The entry's version.
        version: u64,
    },
}

impl FillReply {
    /// Decodes the reply of [`SC_FILL`](super::SC_FILL).
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::cache::{FillReply, Value};
    /// let fenced = Value::Array(vec![Value::Int(0), Value::Int(12)]);
    /// assert_eq!(FillReply::decode(fenced)?, FillReply::Fenced { current: 12 });
    /// # Ok::<(), keyroute::cache::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<FillReply, ReplyError> {
        const S: &str = "sc-fill";
        const E: &str = "an array [0|1|2, integer]";
        let a = items(value, S, E)?;
        let (Some(tag), Some(x), 2) = (
            a.first().and_then(Value::as_int),
            a.get(1).and_then(Value::as_u64),
            a.len(),
        ) else {
            return Err(ReplyError::new(S, E));
        };
        match tag {
            0 => Ok(FillReply::Fenced { current: x }),
            1 => Ok(FillReply::Stored { version: x }),
            2 => Ok(FillReply::Duplicate { version: x }),
            _ => Err(ReplyError::new(S, E)),
        }
    }
}

/// Decodes a `0`/`1` reply ([`SC_EXTEND`](super::SC_EXTEND),
/// [`SC_ABANDON`](super::SC_ABANDON), [`SC_INVALIDATE`](super::SC_INVALIDATE),
/// [`SESS_DESTROY`](super::SESS_DESTROY), [`DEVICE_BIND`](super::DEVICE_BIND)) of the
/// script named `script`.
///
/// # Errors
/// [`ReplyError`] for anything but the integers 0 and 1.
///
/// ```
/// use keyroute::cache::{decode_flag, Value};
/// assert_eq!(decode_flag(&Value::Int(1), "sc-extend")?, true);
/// assert!(decode_flag(&Value::Int(2), "sc-extend").is_err());
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
pub fn decode_flag(value: &Value, script: &'static str) -> Result<bool, ReplyError> {
    match value.as_int() {
        Some(0) => Ok(false),
        Some(1) => Ok(true),
        _ => Err(ReplyError::new(script, "the integer 0 or 1")),
    }
}

/// Decodes the reply of [`WARM_BEGIN`](super::WARM_BEGIN): per key, `Some(fence)` to load
/// with, or `None` (skipped: fresh, leased by someone, or a cached error).
///
/// # Errors
/// [`ReplyError`] for any other shape.
///
/// ```
/// use keyroute::cache::{decode_warm, Value};
/// let reply = Value::Array(vec![Value::Int(0), Value::Int(1700000000000)]);
/// assert_eq!(decode_warm(reply)?, vec![None, Some(1700000000000)]);
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
pub fn decode_warm(value: Value) -> Result<Vec<Option<u64>>, ReplyError> {
    const S: &str = "warm-begin";
    const E: &str = "an array of integers";
    items(value, S, E)?
        .iter()
        .map(|v| num(v, S, E).map(|f| (f > 0).then_some(f)))
        .collect()
}

/// The answer of [`SESS_CREATE`](super::SESS_CREATE).
///
/// ```
/// use keyroute::cache::{CreateReply, Value};
/// let reply = Value::Array(vec![Value::Int(1), Value::Int(1700000060000)]);
/// assert_eq!(CreateReply::decode(reply)?, CreateReply::Created { expires_at: 1700000060000 });
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CreateReply {
    /// Created; expires at `expires_at` (ms since the Unix epoch, server time) unless
    /// touched.
    Created {
        /// The expiry.
        expires_at: u64,
    },
    /// A live session already has this id: draw new random bytes.
    Taken,
}

impl CreateReply {
    /// Decodes the reply of [`SESS_CREATE`](super::SESS_CREATE).
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::cache::{CreateReply, Value};
    /// assert_eq!(CreateReply::decode(Value::Array(vec![Value::Int(0)]))?, CreateReply::Taken);
    /// # Ok::<(), keyroute::cache::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<CreateReply, ReplyError> {
        const S: &str = "sess-create";
        const E: &str = "[1, expires_at] or [0]";
        let a = items(value, S, E)?;
        match (a.first().and_then(Value::as_int), a.len()) {
            (Some(0), 1) => Ok(CreateReply::Taken),
            (Some(1), 2) => Ok(CreateReply::Created {
                expires_at: num(&a[1], S, E)?,
            }),
            _ => Err(ReplyError::new(S, E)),
        }
    }
}

/// The answer of [`SESS_TOUCH`](super::SESS_TOUCH).
///
/// ```
/// use keyroute::cache::{Touch, Value};
/// assert_eq!(Touch::decode(Value::Array(vec![Value::Int(0)]))?, Touch::Expired);
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Touch {
    /// The session is live; its expiry slid to `expires_at`.
    Live {
        /// The client id it was created for.
        client: Vec<u8>,
        /// Its data.
        data: Vec<u8>,
        /// Its new expiry (ms since the Unix epoch, server time).
        expires_at: u64,
        /// The service version that created it.
        version: Vec<u8>,
    },
    /// Expired or unknown: log in again.
    Expired,
    /// Created by another service version (shown); nothing changed.
    VersionMismatch {
        /// The version stored in the session.
        stored: Vec<u8>,
    },
}

impl Touch {
    /// Decodes the reply of [`SESS_TOUCH`](super::SESS_TOUCH).
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::cache::{Touch, Value};
    /// let v = |b: &[u8]| Value::Bytes(b.to_vec());
    /// let live = Value::Array(vec![Value::Int(1), v(b"c1"), v(b"{}"), Value::Int(99), v(b"v2")]);
    /// assert_eq!(
    ///     Touch::decode(live)?,
    ///     Touch::Live { client: b"c1".to_vec(), data: b"{}".to_vec(), expires_at: 99, version: b"v2".to_vec() }
    /// );
    /// assert_eq!(
    ///     Touch::decode(Value::Array(vec![Value::Int(2), v(b"v1")]))?,
    ///     Touch::VersionMismatch { stored: b"v1".to_vec() }
    /// );
    /// # Ok::<(), keyroute::cache::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<Touch, ReplyError> {
        const S: &str = "sess-touch";
        const E: &str = "[1, client, data, expires_at, version], [0] or [2, version]";
        let a = items(value, S, E)?;
        let tag = a.first().and_then(Value::as_int);
        let len = a.len();
        let mut it = a.into_iter().skip(1);
        let mut b = || {
            it.next()
                .map_or(Err(ReplyError::new(S, E)), |v| bytes(v, S, E))
        };
        match (tag, len) {
            (Some(0), 1) => Ok(Touch::Expired),
            (Some(2), 2) => Ok(Touch::VersionMismatch { stored: b()? }),
            (Some(1), 5) => {
                let client = b()?;
                let data = b()?;
                let expires_at = it_num(&mut it, S, E)?;
                let version = it
                    .next()
                    .map_or(Err(ReplyError::new(S, E)), |v| bytes(v, S, E))?;
                Ok(Touch::Live {
                    client,
                    data,
                    expires_at,
                    version,
                })
            }
            _ => Err(ReplyError::new(S, E)),
        }
    }
}

fn it_num(
    it: &mut impl Iterator<Item = Value>,
    s: &'static str,
    e: &'static str,
) -> Result<u64, ReplyError> {
    it.next()
        .map_or(Err(ReplyError::new(s, e)), |v| num(&v, s, e))
}

/// Decodes the reply of [`SESS_LIST`](super::SESS_LIST): `(session id, expires_at)` pairs.
///
/// # Errors
/// [`ReplyError`] for any other shape.
///
/// ```
/// use keyroute::cache::{decode_sessions, Value};
/// let reply = Value::Array(vec![Value::Bytes(b"t.r".to_vec()), Value::Int(5)]);
/// assert_eq!(decode_sessions(reply)?, vec![(b"t.r".to_vec(), 5)]);
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
pub fn decode_sessions(value: Value) -> Result<Vec<(Vec<u8>, u64)>, ReplyError> {
    const S: &str = "sess-list";
    const E: &str = "a flat array [sid, expires_at, ...]";
    let a = items(value, S, E)?;
    if a.len() % 2 != 0 {
        return Err(ReplyError::new(S, E));
    }
    let mut out = Vec::with_capacity(a.len() / 2);
    let mut it = a.into_iter();
    while let Some(sid) = it.next() {
        let sid = bytes(sid, S, E)?;
        let at = it_num(&mut it, S, E)?;
        out.push((sid, at));
    }
    Ok(out)
}

/// Decodes the reply of [`SC_READ`](super::SC_READ): the value, or `None` when the entry
/// has none.
///
/// # Errors
/// [`ReplyError`] for anything but a string or nil.
///
/// ```
/// use keyroute::cache::{decode_read, Value};
/// assert_eq!(decode_read(Value::Bytes(b"v".to_vec()))?, Some(b"v".to_vec()));
/// assert_eq!(decode_read(Value::Nil)?, None);
/// assert!(decode_read(Value::Int(1)).is_err());
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
pub fn decode_read(value: Value) -> Result<Option<Vec<u8>>, ReplyError> {
    match value {
        Value::Nil => Ok(None),
        Value::Bytes(b) => Ok(Some(b)),
        _ => Err(ReplyError::new("sc-read", "a string or nil")),
    }
}

/// The answer of [`SC_PUT`](super::SC_PUT): the entry's new version and fence (a load in
/// flight under an older fence has its fill refused).
///
/// ```
/// use keyroute::cache::{PutReply, Value};
/// let reply = Value::Array(vec![Value::Int(3), Value::Int(1700000000000)]);
/// assert_eq!(PutReply::decode(reply)?, PutReply { version: 3, fence: 1700000000000 });
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PutReply {
    /// The value's version (bumped by every fill and put).
    pub version: u64,
    /// The entry's fence after the put.
    pub fence: u64,
}

impl PutReply {
    /// Decodes the reply of [`SC_PUT`](super::SC_PUT).
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::cache::{PutReply, Value};
    /// assert!(PutReply::decode(Value::Int(1)).is_err());
    /// ```
    pub fn decode(value: Value) -> Result<PutReply, ReplyError> {
        const S: &str = "sc-put";
        const E: &str = "[version, fence]";
        let a = items(value, S, E)?;
        match &a[..] {
            [version, fence] => Ok(PutReply {
                version: num(version, S, E)?,
                fence: num(fence, S, E)?,
            }),
            _ => Err(ReplyError::new(S, E)),
        }
    }
}

/// The answer of [`SESS_UPDATE`](super::SESS_UPDATE).
///
/// ```
/// use keyroute::cache::{UpdateReply, Value};
/// let reply = Value::Array(vec![Value::Int(1), Value::Int(1700000060000)]);
/// assert_eq!(UpdateReply::decode(reply)?, UpdateReply::Updated { expires_at: 1700000060000 });
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum UpdateReply {
    /// The data was replaced; the session slid to `expires_at`.
    Updated {
        /// Its new expiry (ms since the Unix epoch, server time).
        expires_at: u64,
    },
    /// Expired or unknown: log in again.
    Expired,
    /// Created by another service version (shown); nothing changed.
    VersionMismatch {
        /// The version stored in the session.
        stored: Vec<u8>,
    },
}

impl UpdateReply {
    /// Decodes the reply of [`SESS_UPDATE`](super::SESS_UPDATE).
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::cache::{UpdateReply, Value};
    /// assert_eq!(UpdateReply::decode(Value::Array(vec![Value::Int(0)]))?, UpdateReply::Expired);
    /// let other = Value::Array(vec![Value::Int(2), Value::Bytes(b"v1".to_vec())]);
    /// assert_eq!(UpdateReply::decode(other)?, UpdateReply::VersionMismatch { stored: b"v1".to_vec() });
    /// # Ok::<(), keyroute::cache::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<UpdateReply, ReplyError> {
        const S: &str = "sess-update";
        const E: &str = "[1, expires_at], [0] or [2, version]";
        let a = items(value, S, E)?;
        match (a.first().and_then(Value::as_int), a.len()) {
            (Some(0), 1) => Ok(UpdateReply::Expired),
            (Some(1), 2) => Ok(UpdateReply::Updated {
                expires_at: num(&a[1], S, E)?,
            }),
            (Some(2), 2) => Ok(UpdateReply::VersionMismatch {
                stored: bytes(a[1].clone(), S, E)?,
            }),
            _ => Err(ReplyError::new(S, E)),
        }
    }
}

/// The answer of [`SESS_GUARD`](super::SESS_GUARD): the guarded script's own reply (decode
/// it with that script's decoder), or the session was not live and the script did not
/// run.
///
/// ```
/// use keyroute::cache::{decode_read, Guarded, Value};
/// let reply = Value::Array(vec![Value::Int(1), Value::Int(99), Value::Bytes(b"v".to_vec())]);
/// let Guarded::Live { expires_at, reply } = Guarded::decode(reply)? else { panic!() };
/// assert_eq!((expires_at, decode_read(reply)?), (99, Some(b"v".to_vec())));
/// assert_eq!(Guarded::decode(Value::Array(vec![Value::Int(0)]))?, Guarded::Expired);
/// # Ok::<(), keyroute::cache::ReplyError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Guarded {
    /// The session is live (slid to `expires_at`) and the script ran.
    Live {
        /// The session's new expiry (ms since the Unix epoch, server time).
        expires_at: u64,
        /// The script's reply.
        reply: Value,
    },
    /// The session is expired or unknown: the script did not run. Log in again.
    Expired,
}

impl Guarded {
    /// Decodes the reply of [`SESS_GUARD`](super::SESS_GUARD). A nil reply of the guarded
    /// script may arrive as a missing third item: it is [`Value::Nil`].
    ///
    /// # Errors
    /// [`ReplyError`] for any other shape.
    ///
    /// ```
    /// use keyroute::cache::{Guarded, Value};
    /// let nil = Value::Array(vec![Value::Int(1), Value::Int(99)]);
    /// assert_eq!(Guarded::decode(nil)?, Guarded::Live { expires_at: 99, reply: Value::Nil });
    /// assert!(Guarded::decode(Value::Int(0)).is_err());
    /// # Ok::<(), keyroute::cache::ReplyError>(())
    /// ```
    pub fn decode(value: Value) -> Result<Guarded, ReplyError> {
        const S: &str = "sess-guard";
        const E: &str = "[1, expires_at, reply] or [0]";
        let a = items(value, S, E)?;
        let tag = a.first().and_then(Value::as_int);
        let len = a.len();
        let mut it = a.into_iter().skip(1);
        match (tag, len) {
            (Some(0), 1) => Ok(Guarded::Expired),
            (Some(1), 2 | 3) => Ok(Guarded::Live {
                expires_at: it_num(&mut it, S, E)?,
                reply: it.next().unwrap_or(Value::Nil),
            }),
            _ => Err(ReplyError::new(S, E)),
        }
    }
}
