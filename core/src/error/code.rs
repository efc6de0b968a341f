//! [`ErrorCode`]: the registry of error codes.

use core::fmt;

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $num:literal, $name:literal, $summary:literal; )*) => {
        /// The kind of a failure, stable across versions and languages (see the
        /// [module docs](super)).
        ///
        /// `0` and `1` are not codes: they are the C library's `KEYROUTE_OK` and
        /// `KEYROUTE_EMPTY` (an answer of "nothing", such as an empty ring or pool).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $( $(#[$doc])* $variant = $num, )*
        }

        impl ErrorCode {
            /// Every code, in number order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            /// The name every binding shows, e.g. `"ZERO_WEIGHT"`.
            ///
            /// ```
            /// assert_eq!(keyroute::error::ErrorCode::UnknownNode.as_str(), "UNKNOWN_NODE");
            /// ```
            pub const fn as_str(self) -> &'static str {
                match self { $( ErrorCode::$variant => $name, )* }
            }

            /// One line on when the code is given (the docs' table of codes).
            ///
            /// ```
            /// assert!(!keyroute::error::ErrorCode::TooLarge.summary().is_empty());
            /// ```
            pub const fn summary(self) -> &'static str {
                match self { $( ErrorCode::$variant => $summary, )* }
            }
        }
    };
}

codes! {
    // --- At every entrance (bindings and the CLI) ---
    /// A required pointer argument was NULL (C).
    NullArgument = 2, "NULL_ARGUMENT", "a required pointer argument was NULL (C)";
    /// Text that must be UTF-8 (node names, profile names, JSON) is not, or a JavaScript
    /// string holds a lone surrogate.
    BadUtf8 = 3, "BAD_UTF8", "text that must be UTF-8 is not (or a JavaScript string holds a lone surrogate)";
    /// An argument has the wrong type, e.g. a string where a list of keys is meant.
    BadType = 4, "BAD_TYPE", "an argument has the wrong type (a string where a list is meant, a float where an integer is)";
    /// A number is outside the range the parameter accepts.
    OutOfRange = 5, "OUT_OF_RANGE", "a number is outside the range its parameter accepts";
    /// A count or size is above what keyroute delivers; the message states the limit.
    TooLarge = 6, "TOO_LARGE", "a count or size is above the stated limit; nothing was allocated";
    /// An output buffer is too small; nothing was written (C).
    BufferTooSmall = 7, "BUFFER_TOO_SMALL", "an output buffer is too small; nothing was written";
    /// A handle is not of the expected kind, or was already freed.
    InvalidHandle = 8, "INVALID_HANDLE", "a handle is of another kind or was already freed";
    /// A bug in keyroute (a caught panic); please report it.
    Internal = 9, "INTERNAL", "a bug in keyroute (a caught panic); please report it";

    // --- Rings ---
    /// A node name was empty.
    EmptyNodeName = 10, "EMPTY_NODE_NAME", "a node name is empty";
    /// A weight of zero.
    ZeroWeight = 11, "ZERO_WEIGHT", "a weight is 0 (remove the node instead)";
    /// A negative weight.
    NegativeWeight = 12, "NEGATIVE_WEIGHT", "a weight is negative";
    /// A weight above 2^32 - 1.
    WeightTooLarge = 13, "WEIGHT_TOO_LARGE", "a weight is above 4294967295";
    /// A weight that is not an integer.
    BadWeight = 14, "BAD_WEIGHT", "a weight is not an integer";
    /// The same node twice.
    DuplicateNode = 15, "DUPLICATE_NODE", "a node is already there";
    /// The node is not there.
    UnknownNode = 16, "UNKNOWN_NODE", "the node is not on the ring or in the slot map (or the member is not in the pool)";
    /// The profile name is unknown.
    UnknownProfile = 17, "UNKNOWN_PROFILE", "the profile name is not one keyroute knows";
    /// The ring would hold too many points.
    TooManyPoints = 18, "TOO_MANY_POINTS", "the ring would hold more points than the limit";
    /// `vnodes` out of range.
    BadVnodes = 19, "BAD_VNODES", "vnodes is outside 1..=65536";
    /// Points per digest out of range, or given to a profile without digests.
    BadPointsPerDigest = 20, "BAD_POINTS_PER_DIGEST", "points per digest is outside 1..=4, or the profile has no MD5 digests";
    /// An option the profile does not take.
    BadOption = 21, "BAD_OPTION", "an option the profile does not take (e.g. default_port on native)";
    /// Rings that hash keys differently cannot be compared.
    IncompatibleRings = 22, "INCOMPATIBLE_RINGS", "the rings hash keys differently and cannot be compared";
    /// A node list entry could not be parsed.
    BadNodeSpec = 23, "BAD_NODE_SPEC", "a node list entry cannot be parsed";
    /// A node list entry can be read two ways.
    AmbiguousNodeSpec = 24, "AMBIGUOUS_NODE_SPEC", "a node list entry can be read two ways; the message shows both";
    /// A port outside 1..=65535.
    BadPort = 25, "BAD_PORT", "a port is outside 1..=65535";

    // --- Slots ---
    /// A slot above 16383.
    BadSlot = 30, "BAD_SLOT", "a slot is above 16383";
    /// A reversed slot range, or one past 16383.
    BadRange = 31, "BAD_RANGE", "a slot range is reversed or reaches past 16383";
    /// An address is not `host:port`.
    BadAddress = 32, "BAD_ADDRESS", "an address is not host:port ([v6]:port)";
    /// A replica was used where a master is needed.
    NotAMaster = 33, "NOT_A_MASTER", "a replica was used where a master is needed";
    /// A cluster reply is inconsistent (mid-failover?): fetch it again.
    InconsistentTopology = 34, "INCONSISTENT_TOPOLOGY", "a cluster reply is inconsistent (two owners, no master, conflicting ids); fetch it again";
    /// Too many nodes in a slot map.
    TooManyNodes = 35, "TOO_MANY_NODES", "a slot map holds at most 65535 nodes";
    /// The text is not a `MOVED`/`ASK` error.
    NotARedirect = 36, "NOT_A_REDIRECT", "the text is not a MOVED or ASK error";
    /// A `MOVED`/`ASK` error that cannot be parsed.
    BadRedirect = 37, "BAD_REDIRECT", "a MOVED/ASK error cannot be parsed";
    /// A resharding plan cannot be made from these weights.
    BadPlan = 38, "BAD_PLAN", "a resharding plan cannot be made from these weights";
    /// The slot map changed since the plan was made.
    StalePlan = 39, "STALE_PLAN", "the slot map changed since the plan was made; plan again";

    // --- Least-used pools and leases ---
    /// A pool key is empty, or needs a hash tag for its companion keys.
    BadPoolKey = 50, "BAD_POOL_KEY", "a pool key is empty or cannot share a slot with its companion keys";
    /// A count above 2^53 (Redis scores are doubles).
    BadCount = 51, "BAD_COUNT", "a count is above 2^53";
    /// A restore mode other than `keep` / `at_minimum`.
    BadRestoreMode = 52, "BAD_RESTORE_MODE", "the restore mode is not keep or at_minimum";
    /// An empty pool member.
    EmptyMember = 53, "EMPTY_MEMBER", "a pool member is empty";
    /// A lease TTL of zero.
    BadTtl = 54, "BAD_TTL", "a TTL or timeout is 0 or too large";

    // --- Redis ---
    /// A Redis URL or address cannot be used.
    RedisBadUrl = 60, "REDIS_BAD_URL", "a Redis URL or address cannot be used";
    /// The server refused the connection or cannot be reached.
    RedisConnect = 61, "REDIS_CONNECT", "the Redis server refused the connection or cannot be reached";
    /// Authentication failed.
    RedisAuth = 62, "REDIS_AUTH", "Redis refused the credentials";
    /// A connect, read or write timed out.
    RedisTimeout = 63, "REDIS_TIMEOUT", "connecting to Redis or waiting for its reply timed out";
    /// An open connection broke mid-call; the command may or may not have run.
    RedisConnectionLost = 64, "REDIS_CONNECTION_LOST", "the connection broke mid-call; the command may or may not have run";
    /// A key holds the wrong type (WRONGTYPE); nothing was changed.
    RedisWrongType = 65, "REDIS_WRONGTYPE", "a key holds another type (WRONGTYPE); the script changed nothing";
    /// Redis answered another error.
    RedisServer = 66, "REDIS_SERVER", "Redis answered an error";
    /// The reply was not what the command gives (or the peer does not speak Redis).
    RedisProtocol = 67, "REDIS_PROTOCOL", "the reply is not what the command gives, or the peer does not speak Redis";
    /// No cluster node serves the slot.
    ClusterNoOwner = 68, "CLUSTER_NO_OWNER", "no cluster node serves the slot";
    /// A command was retried as often as allowed (redirects, TRYAGAIN, failover).
    ClusterRetriesExhausted = 69, "CLUSTER_RETRIES_EXHAUSTED", "a command was retried as often as allowed (redirects, TRYAGAIN, failover)";
    /// No cluster node answered with a topology.
    ClusterUnreachable = 70, "CLUSTER_UNREACHABLE", "no cluster node answered with a topology";
    /// Another operation must finish first.
    Busy = 71, "BUSY", "another operation must finish first";
    /// A write reached a replica (`READONLY`): the URL names a replica, or a failover
    /// demoted the master.
    RedisReadonly = 72, "REDIS_READONLY", "a write reached a replica (READONLY): point the URL at the master, or use redis+sentinel:// to follow failovers";
    /// The TLS handshake failed: an untrusted server certificate, a client certificate
    /// missing or refused, or TLS against a plain port.
    RedisTls = 73, "REDIS_TLS", "the TLS handshake failed (server certificate not trusted, client certificate missing or refused, or a plain port)";

    // --- Smart cache, sessions and devices ---
    /// A cache call reached its deadline before a value was loaded or served.
    CacheTimeout = 80, "CACHE_TIMEOUT", "the deadline passed before a value was served (another instance may still be loading it)";
    /// The loader (the backend) failed; the message carries its code and text.
    BackendError = 81, "BACKEND_ERROR", "the loader failed (or its failure is still cached for the negative TTL); the message carries the loader's code and text";
    /// The session does not exist or expired (idle past its TTL, or past its maximum age).
    SessionExpired = 82, "SESSION_EXPIRED", "the session does not exist or expired (idle, or past its maximum age): log in again";
    /// The session was created by another service version than the one asking.
    VersionMismatch = 83, "VERSION_MISMATCH", "the session was created by another service version";
    /// Nothing is stored under the name (an unknown device, an absent entry).
    NotFound = 84, "NOT_FOUND", "nothing is stored under that name (an unknown device, an absent entry)";
    /// A value or session data is larger than the configured maximum.
    ValueTooLarge = 85, "VALUE_TOO_LARGE", "a value or session data is larger than the configured maximum; nothing was stored";
    /// A client id is empty or too long.
    BadClientId = 86, "BAD_CLIENT_ID", "a client id is empty or longer than the limit";
    /// A cache kind is empty, too long, or contains `{`, `}` or a control byte.
    BadKind = 87, "BAD_KIND", "a cache kind is empty, too long, or contains '{', '}' or a control byte";
    /// A device id is empty, too long, or contains `{`, `}` or a control byte.
    BadDeviceId = 88, "BAD_DEVICE_ID", "a device id is empty, too long, or contains '{', '}' or a control byte";
    /// A session id is not one keyroute made (`<token>.<random>`, base32).
    BadSessionId = 89, "BAD_SESSION_ID", "a session id is not of the form keyroute gives (<token>.<random>, lowercase base32)";
    /// A service version string is too long.
    BadVersion = 90, "BAD_VERSION", "a service version is longer than the limit";
    /// A request under a session names another client than the session's.
    SessionClientMismatch = 91, "SESSION_CLIENT_MISMATCH", "a request under a session names another client than the session's: a session guards only its own client's data; nothing was run";

    // --- Engines and proxy configurations ---
    /// A configuration file is not valid text of its format; the message gives file,
    /// line and reason.
    BadConfig = 100, "BAD_CONFIG", "a configuration cannot be read (file, line, reason)";
    /// A valid configuration that keyroute cannot reproduce exactly (refused, never
    /// approximated); the message gives file, line and reason.
    UnsupportedConfig = 101, "UNSUPPORTED_CONFIG", "a configuration cannot be reproduced exactly (file, line, reason)";
}

impl ErrorCode {
    /// The number of the code: the C library's status value.
    ///
    /// ```
    /// assert_eq!(keyroute::error::ErrorCode::NullArgument.number(), 2);
    /// ```
    pub const fn number(self) -> u16 {
        self as u16
    }

    /// The code of a name (as [`as_str`](Self::as_str) spells it).
    ///
    /// ```
    /// use keyroute::error::ErrorCode;
    /// assert_eq!(ErrorCode::from_name("BAD_SLOT"), Some(ErrorCode::BadSlot));
    /// assert_eq!(ErrorCode::from_name("bad_slot"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// The code of a number (as [`number`](Self::number) gives it).
    ///
    /// ```
    /// use keyroute::error::ErrorCode;
    /// assert_eq!(ErrorCode::from_number(11), Some(ErrorCode::ZeroWeight));
    /// assert_eq!(ErrorCode::from_number(1), None);
    /// ```
    pub fn from_number(number: u16) -> Option<ErrorCode> {
        ErrorCode::ALL
            .iter()
            .copied()
            .find(|c| c.number() == number)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_are_unique_and_sorted() {
        for pair in ErrorCode::ALL.windows(2) {
            assert!(pair[0].number() < pair[1].number(), "{:?}", pair);
        }
        for (i, a) in ErrorCode::ALL.iter().enumerate() {
            assert!(a.number() >= 2);
            for b in &ErrorCode::ALL[i + 1..] {
                assert_ne!(a.as_str(), b.as_str());
            }
            assert_eq!(ErrorCode::from_name(a.as_str()), Some(*a));
            assert_eq!(ErrorCode::from_number(a.number()), Some(*a));
            assert!(a
                .as_str()
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'_' || b.is_ascii_digit()));
        }
    }
}
