package org.keyroute;

/**
 * Every error keyroute throws: a {@link RuntimeException} with a stable {@link #code()}, the
 * same code Rust, Python, JavaScript, C and the command line report for the same failure
 * ({@code docs/errors.md}). The message names the argument, node or key at fault; Redis
 * passwords and session ids are never in it.
 *
 * <p>Subclasses for the codes a caller handles apart: {@link NodeNotFoundException}
 * ({@code UNKNOWN_NODE}), {@link RedisException} (talking to Redis failed),
 * {@link CacheTimeoutException}, {@link BackendException}, {@link SessionExpiredException},
 * {@link VersionMismatchException}.
 */
public class KeyrouteException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    protected KeyrouteException(ErrorCode code, String message) {
        super(message == null || message.isEmpty() ? code.summary() : message);
        this.code = code;
    }

    /** The error code. */
    public ErrorCode code() {
        return code;
    }

    /** The exception of the class that fits {@code code}. */
    public static KeyrouteException of(ErrorCode code, String message) {
        switch (code) {
            case UNKNOWN_NODE:
                return new NodeNotFoundException(message);
            case CACHE_TIMEOUT:
                return new CacheTimeoutException(message);
            case BACKEND_ERROR:
                return new BackendException(message);
            case SESSION_EXPIRED:
                return new SessionExpiredException(message);
            case VERSION_MISMATCH:
                return new VersionMismatchException(message, null);
            default:
                if (code.name().startsWith("REDIS_") || code.name().startsWith("CLUSTER_")
                        || code == ErrorCode.BUSY) {
                    return new RedisException(code, message);
                }
                return new KeyrouteException(code, message);
        }
    }

    /** The exception for a C status (not OK, not EMPTY), with this thread's last message. */
    static KeyrouteException fromStatus(int status) {
        String message = Text.cstring(Lib.keyroute_last_error_message());
        ErrorCode code = ErrorCode.fromNumber(status);
        if (code == null) {
            return new KeyrouteException(ErrorCode.INTERNAL, "libkeyroute answered status "
                    + status + ", which this jar does not know: " + message);
        }
        return of(code, message);
    }

    /** Throws for any status but OK (0). */
    static void check(int status) {
        if (status != 0) {
            throw fromStatus(status);
        }
    }

    /** True for OK, false for EMPTY (an answer of nothing); throws for an error. */
    static boolean found(int status) {
        if (status == 0) {
            return true;
        }
        if (status == 1) {
            return false;
        }
        throw fromStatus(status);
    }
}
