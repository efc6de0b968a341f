//! [`Heartbeat`]: the lease extensions a loader's executor sends while the loader runs.

use alloc::vec::Vec;

use super::step::Fault;
use crate::cache::reply::decode_flag;
use crate::script::Call;
use crate::script::Value;

/// Extends a lease every [`every_ms`](Self::every_ms) while its loader runs, so that no
/// one takes it over: run [`call`](Self::call) at that interval, and stop when
/// [`keep_beating`](Self::keep_beating) says so or the loader returns.
///
/// ```
/// use keyroute::cache::{CacheSettings, Fault, Heartbeat, Value};
/// let beat = Heartbeat::new(b"kr:{c:t}:e:k".to_vec(), 7, &CacheSettings::DEFAULT);
/// assert_eq!(beat.every_ms(), 666);
/// assert_eq!(beat.call().script.name(), "sc-extend");
/// assert!(beat.keep_beating(Ok(&Value::Int(1))));
/// assert!(!beat.keep_beating(Ok(&Value::Int(0)))); // lost: the fill will be fenced
/// assert!(beat.keep_beating(Err(Fault::Connection))); // try again at the next beat
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heartbeat {
    entry: Vec<u8>,
    fence: u64,
    lease_ms: u64,
    every_ms: u64,
}

impl Heartbeat {
    /// The heartbeat of the lease `fence` on `entry`.
    ///
    /// ```
    /// let beat = keyroute::cache::Heartbeat::new(b"e".to_vec(), 1, &Default::default());
    /// assert_eq!(beat.fence(), 1);
    /// ```
    pub fn new(entry: Vec<u8>, fence: u64, settings: &super::CacheSettings) -> Self {
        Heartbeat {
            entry,
            fence,
            lease_ms: settings.lease_ms,
            every_ms: settings.heartbeat_ms(),
        }
    }

    /// The interval, in ms: a third of the lease.
    ///
    /// ```
    /// let s = keyroute::cache::CacheSettings { lease_ms: 300, ..Default::default() };
    /// assert_eq!(keyroute::cache::Heartbeat::new(b"e".to_vec(), 1, &s).every_ms(), 100);
    /// ```
    pub fn every_ms(&self) -> u64 {
        self.every_ms
    }

    /// The lease's fence.
    ///
    /// ```
    /// assert_eq!(keyroute::cache::Heartbeat::new(b"e".to_vec(), 9, &Default::default()).fence(), 9);
    /// ```
    pub fn fence(&self) -> u64 {
        self.fence
    }

    /// The extension to send at each beat ([`SC_EXTEND`](crate::cache::SC_EXTEND)).
    ///
    /// ```
    /// let beat = keyroute::cache::Heartbeat::new(b"e".to_vec(), 9, &Default::default());
    /// assert_eq!(beat.call().args[0], &b"9"[..]);
    /// ```
    pub fn call(&self) -> Call<'_> {
        Call::extend(&self.entry, self.fence, self.lease_ms, None)
    }

    /// Whether to go on beating after a beat's reply: yes when the lease was extended or
    /// Redis could not be reached (the next beat tries again); no when the lease is lost
    /// (invalidated or taken over: the fill will be fenced) or the reply is malformed.
    ///
    /// ```
    /// use keyroute::cache::{Heartbeat, Value};
    /// let beat = Heartbeat::new(b"e".to_vec(), 9, &Default::default());
    /// assert!(!beat.keep_beating(Ok(&Value::Nil)));
    /// ```
    pub fn keep_beating(&self, reply: Result<&Value, Fault>) -> bool {
        match reply {
            Ok(value) => matches!(decode_flag(value, "sc-extend"), Ok(true)),
            Err(_) => true,
        }
    }
}
