package org.keyroute;

/**
 * Talking to Redis failed: {@code REDIS_*} (a bad URL, a refused connection, a wrong
 * password, a timeout, a lost connection, {@code WRONGTYPE}, a server error, TLS),
 * {@code CLUSTER_*} and {@code BUSY}. {@link #code()} says how, the message what was being
 * done, on which server (its URL shown without its password).
 */
public class RedisException extends KeyrouteException {
    private static final long serialVersionUID = 1L;

    RedisException(ErrorCode code, String message) {
        super(code, message);
    }
}
