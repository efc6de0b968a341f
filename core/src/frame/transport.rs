//! [`TransportError`]: the header's transport error field.

use core::fmt;

macro_rules! errors {
    ($( $(#[$doc:meta])* $variant:ident = $num:literal, $name:literal, $summary:literal; )*) => {
        /// A transport error: the request was not run (or not to its end) for a reason of
        /// the service, not of the data. Carried in header bytes 4–5; 0 is none.
        ///
        /// ```
        /// use keyroute::frame::TransportError;
        /// assert_eq!(TransportError::from_number(1), Some(TransportError::QueueFull));
        /// assert_eq!(TransportError::QueueFull.name(), "QUEUE_FULL");
        /// assert_eq!(TransportError::from_number(0), None);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        #[non_exhaustive]
        pub enum TransportError {
            $( $(#[$doc])* $variant = $num, )*
        }

        impl TransportError {
            /// Every transport error, in number order.
            pub const ALL: &'static [TransportError] = &[ $( TransportError::$variant, )* ];

            /// Its name (`"QUEUE_FULL"`).
            ///
            /// ```
            /// assert_eq!(keyroute::frame::TransportError::Expired.name(), "EXPIRED");
            /// ```
            pub const fn name(self) -> &'static str {
                match self { $( TransportError::$variant => $name, )* }
            }

            /// What it means.
            ///
            /// ```
            /// assert!(keyroute::frame::TransportError::AtCap.summary().contains("--cap"));
            /// ```
            pub const fn summary(self) -> &'static str {
                match self { $( TransportError::$variant => $summary, )* }
            }

            /// The error of a number.
            ///
            /// ```
            /// assert_eq!(keyroute::frame::TransportError::from_number(13), None);
            /// ```
            pub const fn from_number(n: u16) -> Option<TransportError> {
                match n { $( $num => Some(TransportError::$variant), )* _ => None }
            }
        }
    };
}

errors! {
    /// The queue is full: refused at once, try later or elsewhere.
    QueueFull = 1, "QUEUE_FULL", "the queue is full (refused at once, after expired items were purged)";
    /// The deadline passed while the request waited in the queue; it never ran.
    Expired = 2, "EXPIRED", "the deadline passed while the request waited in the queue; it never ran";
    /// The service is stopping: not accepted, or not run before the grace deadline.
    ShuttingDown = 3, "SHUTTING_DOWN", "the service is stopping (not accepted, or not run before the grace deadline)";
    /// The header could not be read (short, long, wrong version or system).
    BadHeader = 4, "BAD_HEADER", "the header is malformed (short, long, wrong version or system, or the frames are not [header, body, payload?])";
    /// The message type is not one the service knows (or not one a client may send).
    UnknownType = 5, "UNKNOWN_TYPE", "the message type is unknown (or not one this side may send)";
    /// No loader worker serves the kind.
    NoLoader = 6, "NO_LOADER", "no loader worker has declared this kind";
    /// The store (Redis) cannot be reached.
    StoreUnavailable = 7, "STORE_UNAVAILABLE", "the store (Redis) cannot be reached or is failing over";
    /// The deadline passed while waiting for a load.
    LoadTimeout = 8, "LOAD_TIMEOUT", "the deadline passed while waiting for a load (workers busy, or the load slow)";
    /// The kind is at its `--cap` of busy workers (the request's deadline passed first).
    AtCap = 9, "AT_CAP", "the kind is at its --cap of busy workers and the deadline passed first";
    /// Too many requests already wait for the same load (or for loads in all): refused
    /// at once (`--max-waiters-per-key`, `--max-waiters`).
    TooManyWaiters = 10, "TOO_MANY_WAITERS", "too many requests already wait for this load (or for loads in all): refused at once";
    /// The service's in-memory store is at its `--memory-max` with what it may not evict
    /// (sessions): nothing was stored.
    StoreFull = 11, "STORE_FULL", "the in-memory store is full of what it never evicts (sessions, at --memory-max): nothing was stored";
    /// The header is well formed but names a system other than this service's (0): no
    /// broker of that system is reachable from here (the header's other faults are
    /// [`BadHeader`](TransportError::BadHeader)).
    UnknownSystem = 12, "UNKNOWN_SYSTEM", "the header names a system other than this service's (0): there is no route to it here";
}

impl TransportError {
    /// Its number (1–12).
    ///
    /// ```
    /// assert_eq!(keyroute::frame::TransportError::StoreUnavailable.number(), 7);
    /// ```
    pub const fn number(self) -> u16 {
        self as u16
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.number())
    }
}
