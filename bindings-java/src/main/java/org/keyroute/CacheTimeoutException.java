package org.keyroute;

/** The deadline of a smart-cache call passed before a value was served; another instance may still be loading it. Code {@code CACHE_TIMEOUT}. */
public class CacheTimeoutException extends KeyrouteException {
    private static final long serialVersionUID = 1L;

    CacheTimeoutException(String message) {
        super(ErrorCode.CACHE_TIMEOUT, message);
    }
}
