//! [`Value`]: a script reply as Redis sends it, the input of the reply decoders (the
//! smart cache's and the pools'). Each binding turns its client's reply type into this one.

use alloc::vec::Vec;

/// A Redis reply (RESP2 subset that scripts give): nil, integer, bulk string, array.
///
/// ```
/// use keyroute::cache::Value;
/// let reply = Value::Array(vec![Value::Int(1), Value::Bytes(b"v".to_vec()), Value::Int(3)]);
/// assert_eq!(reply.as_array().map(<[Value]>::len), Some(3));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Value {
    /// Nil (a missing value).
    Nil,
    /// An integer.
    Int(i64),
    /// A bulk or status string.
    Bytes(Vec<u8>),
    /// An array.
    Array(Vec<Value>),
}

impl Value {
    /// The items, if it is an array.
    ///
    /// ```
    /// assert!(keyroute::cache::Value::Nil.as_array().is_none());
    /// ```
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The integer, if it is one (bulk strings of decimal digits count too, as some
    /// clients hand integers over as text).
    ///
    /// ```
    /// use keyroute::cache::Value;
    /// assert_eq!(Value::Int(-4).as_int(), Some(-4));
    /// assert_eq!(Value::Bytes(b"42".to_vec()).as_int(), Some(42));
    /// assert_eq!(Value::Bytes(b"4x".to_vec()).as_int(), None);
    /// ```
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::Bytes(b) => core::str::from_utf8(b).ok()?.parse().ok(),
            _ => None,
        }
    }

    /// A non-negative integer as `u64`.
    pub(crate) fn as_u64(&self) -> Option<u64> {
        u64::try_from(self.as_int()?).ok()
    }

    /// The bytes, if it is a string.
    ///
    /// ```
    /// use keyroute::cache::Value;
    /// assert_eq!(Value::Bytes(b"x".to_vec()).into_bytes(), Some(b"x".to_vec()));
    /// assert_eq!(Value::Int(1).into_bytes(), None);
    /// ```
    pub fn into_bytes(self) -> Option<Vec<u8>> {
        match self {
            Value::Bytes(b) => Some(b),
            _ => None,
        }
    }

    /// The items, if it is an array.
    ///
    /// ```
    /// use keyroute::cache::Value;
    /// assert_eq!(Value::Array(vec![Value::Nil]).into_array(), Some(vec![Value::Nil]));
    /// ```
    pub fn into_array(self) -> Option<Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }
}
