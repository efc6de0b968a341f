package org.keyroute;

/**
 * The error codes every keyroute language reports, with their numbers ({@code docs/errors.md}):
 * {@link KeyrouteException#code()}. Codes are never renamed or renumbered, only added. The
 * constants are generated from core's table ({@code keyroute::error::ErrorCode}) by
 * {@code core/tests/names.rs}, which fails when this file differs from it.
 */
public enum ErrorCode {
    // BEGIN GENERATED: error codes from core's ErrorCode (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
    /** a required pointer argument was NULL (C) */
    NULL_ARGUMENT(2, "a required pointer argument was NULL (C)"),
    /** text that must be UTF-8 is not (or a JavaScript string holds a lone surrogate) */
    BAD_UTF8(3, "text that must be UTF-8 is not (or a JavaScript string holds a lone surrogate)"),
    /** an argument has the wrong type (a string where a list is meant, a float where an integer is) */
    BAD_TYPE(4, "an argument has the wrong type (a string where a list is meant, a float where an integer is)"),
    /** a number is outside the range its parameter accepts */
    OUT_OF_RANGE(5, "a number is outside the range its parameter accepts"),
    /** a count or size is above the stated limit; nothing was allocated */
    TOO_LARGE(6, "a count or size is above the stated limit; nothing was allocated"),
    /** an output buffer is too small; nothing was written */
    BUFFER_TOO_SMALL(7, "an output buffer is too small; nothing was written"),
    /** a handle is of another kind or was already freed */
    INVALID_HANDLE(8, "a handle is of another kind or was already freed"),
    /** a bug in keyroute (a caught panic); please report it */
    INTERNAL(9, "a bug in keyroute (a caught panic); please report it"),
    /** a node name is empty */
    EMPTY_NODE_NAME(10, "a node name is empty"),
    /** a weight is 0 (remove the node instead) */
    ZERO_WEIGHT(11, "a weight is 0 (remove the node instead)"),
    /** a weight is negative */
    NEGATIVE_WEIGHT(12, "a weight is negative"),
    /** a weight is above 4294967295 */
    WEIGHT_TOO_LARGE(13, "a weight is above 4294967295"),
    /** a weight is not an integer */
    BAD_WEIGHT(14, "a weight is not an integer"),
    /** a node is already there */
    DUPLICATE_NODE(15, "a node is already there"),
    /** the node is not on the ring or in the slot map (or the member is not in the pool) */
    UNKNOWN_NODE(16, "the node is not on the ring or in the slot map (or the member is not in the pool)"),
    /** the profile name is not one keyroute knows */
    UNKNOWN_PROFILE(17, "the profile name is not one keyroute knows"),
    /** the ring would hold more points than the limit */
    TOO_MANY_POINTS(18, "the ring would hold more points than the limit"),
    /** vnodes is outside 1..=65536 */
    BAD_VNODES(19, "vnodes is outside 1..=65536"),
    /** points per digest is outside 1..=4, or the profile has no MD5 digests */
    BAD_POINTS_PER_DIGEST(20, "points per digest is outside 1..=4, or the profile has no MD5 digests"),
    /** an option the profile does not take (e.g. default_port on native) */
    BAD_OPTION(21, "an option the profile does not take (e.g. default_port on native)"),
    /** the rings hash keys differently and cannot be compared */
    INCOMPATIBLE_RINGS(22, "the rings hash keys differently and cannot be compared"),
    /** a node list entry cannot be parsed */
    BAD_NODE_SPEC(23, "a node list entry cannot be parsed"),
    /** a node list entry can be read two ways; the message shows both */
    AMBIGUOUS_NODE_SPEC(24, "a node list entry can be read two ways; the message shows both"),
    /** a port is outside 1..=65535 */
    BAD_PORT(25, "a port is outside 1..=65535"),
    /** a slot is above 16383 */
    BAD_SLOT(30, "a slot is above 16383"),
    /** a slot range is reversed or reaches past 16383 */
    BAD_RANGE(31, "a slot range is reversed or reaches past 16383"),
    /** an address is not host:port ([v6]:port) */
    BAD_ADDRESS(32, "an address is not host:port ([v6]:port)"),
    /** a replica was used where a master is needed */
    NOT_A_MASTER(33, "a replica was used where a master is needed"),
    /** a cluster reply is inconsistent (two owners, no master, conflicting ids); fetch it again */
    INCONSISTENT_TOPOLOGY(34, "a cluster reply is inconsistent (two owners, no master, conflicting ids); fetch it again"),
    /** a slot map holds at most 65535 nodes */
    TOO_MANY_NODES(35, "a slot map holds at most 65535 nodes"),
    /** the text is not a MOVED or ASK error */
    NOT_A_REDIRECT(36, "the text is not a MOVED or ASK error"),
    /** a MOVED/ASK error cannot be parsed */
    BAD_REDIRECT(37, "a MOVED/ASK error cannot be parsed"),
    /** a resharding plan cannot be made from these weights */
    BAD_PLAN(38, "a resharding plan cannot be made from these weights"),
    /** the slot map changed since the plan was made; plan again */
    STALE_PLAN(39, "the slot map changed since the plan was made; plan again"),
    /** a pool key is empty or cannot share a slot with its companion keys */
    BAD_POOL_KEY(50, "a pool key is empty or cannot share a slot with its companion keys"),
    /** a count is above 2^53 */
    BAD_COUNT(51, "a count is above 2^53"),
    /** the restore mode is not keep or at_minimum */
    BAD_RESTORE_MODE(52, "the restore mode is not keep or at_minimum"),
    /** a pool member is empty */
    EMPTY_MEMBER(53, "a pool member is empty"),
    /** a TTL or timeout is 0 or too large */
    BAD_TTL(54, "a TTL or timeout is 0 or too large"),
    /** a Redis URL or address cannot be used */
    REDIS_BAD_URL(60, "a Redis URL or address cannot be used"),
    /** the Redis server refused the connection or cannot be reached */
    REDIS_CONNECT(61, "the Redis server refused the connection or cannot be reached"),
    /** Redis refused the credentials */
    REDIS_AUTH(62, "Redis refused the credentials"),
    /** connecting to Redis or waiting for its reply timed out */
    REDIS_TIMEOUT(63, "connecting to Redis or waiting for its reply timed out"),
    /** the connection broke mid-call; the command may or may not have run */
    REDIS_CONNECTION_LOST(64, "the connection broke mid-call; the command may or may not have run"),
    /** a key holds another type (WRONGTYPE); the script changed nothing */
    REDIS_WRONGTYPE(65, "a key holds another type (WRONGTYPE); the script changed nothing"),
    /** Redis answered an error */
    REDIS_SERVER(66, "Redis answered an error"),
    /** the reply is not what the command gives, or the peer does not speak Redis */
    REDIS_PROTOCOL(67, "the reply is not what the command gives, or the peer does not speak Redis"),
    /** no cluster node serves the slot */
    CLUSTER_NO_OWNER(68, "no cluster node serves the slot"),
    /** a command was retried as often as allowed (redirects, TRYAGAIN, failover) */
    CLUSTER_RETRIES_EXHAUSTED(69, "a command was retried as often as allowed (redirects, TRYAGAIN, failover)"),
    /** no cluster node answered with a topology */
    CLUSTER_UNREACHABLE(70, "no cluster node answered with a topology"),
    /** another operation must finish first */
    BUSY(71, "another operation must finish first"),
    /** a write reached a replica (READONLY): point the URL at the master, or use redis+sentinel:// to follow failovers */
    REDIS_READONLY(72, "a write reached a replica (READONLY): point the URL at the master, or use redis+sentinel:// to follow failovers"),
    /** the TLS handshake failed (server certificate not trusted, client certificate missing or refused, or a plain port) */
    REDIS_TLS(73, "the TLS handshake failed (server certificate not trusted, client certificate missing or refused, or a plain port)"),
    /** the deadline passed before a value was served (another instance may still be loading it) */
    CACHE_TIMEOUT(80, "the deadline passed before a value was served (another instance may still be loading it)"),
    /** the loader failed (or its failure is still cached for the negative TTL); the message carries the loader's code and text */
    BACKEND_ERROR(81, "the loader failed (or its failure is still cached for the negative TTL); the message carries the loader's code and text"),
    /** the session does not exist or expired (idle, or past its maximum age): log in again */
    SESSION_EXPIRED(82, "the session does not exist or expired (idle, or past its maximum age): log in again"),
    /** the session was created by another service version */
    VERSION_MISMATCH(83, "the session was created by another service version"),
    /** nothing is stored under that name (an unknown device, an absent entry) */
    NOT_FOUND(84, "nothing is stored under that name (an unknown device, an absent entry)"),
    /** a value or session data is larger than the configured maximum; nothing was stored */
    VALUE_TOO_LARGE(85, "a value or session data is larger than the configured maximum; nothing was stored"),
    /** a client id is empty or longer than the limit */
    BAD_CLIENT_ID(86, "a client id is empty or longer than the limit"),
    /** a cache kind is empty, too long, or contains '{', '}' or a control byte */
    BAD_KIND(87, "a cache kind is empty, too long, or contains '{', '}' or a control byte"),
    /** a device id is empty, too long, or contains '{', '}' or a control byte */
    BAD_DEVICE_ID(88, "a device id is empty, too long, or contains '{', '}' or a control byte"),
    /** a session id is not of the form keyroute gives (<token>.<random>, lowercase base32) */
    BAD_SESSION_ID(89, "a session id is not of the form keyroute gives (<token>.<random>, lowercase base32)"),
    /** a service version is longer than the limit */
    BAD_VERSION(90, "a service version is longer than the limit"),
    /** a request under a session names another client than the session's: a session guards only its own client's data; nothing was run */
    SESSION_CLIENT_MISMATCH(91, "a request under a session names another client than the session's: a session guards only its own client's data; nothing was run"),
    /** a configuration cannot be read (file, line, reason) */
    BAD_CONFIG(100, "a configuration cannot be read (file, line, reason)"),
    /** a configuration cannot be reproduced exactly (file, line, reason) */
    UNSUPPORTED_CONFIG(101, "a configuration cannot be reproduced exactly (file, line, reason)");
    // END GENERATED

    private final int number;
    private final String summary;

    ErrorCode(int number, String summary) {
        this.number = number;
        this.summary = summary;
    }

    /** The code's number: the C status {@code KEYROUTE_<NAME>}. */
    public int number() {
        return number;
    }

    /** When it happens, in one line (the "when" column of {@code docs/errors.md}). */
    public String summary() {
        return summary;
    }

    /** The code numbered {@code number}, or null. */
    public static ErrorCode fromNumber(int number) {
        for (ErrorCode c : values()) {
            if (c.number == number) {
                return c;
            }
        }
        return null;
    }
}
