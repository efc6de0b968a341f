package org.keyroute;

/** The session does not exist or expired (idle, or past its maximum age): log in again. Code {@code SESSION_EXPIRED}. */
public class SessionExpiredException extends KeyrouteException {
    private static final long serialVersionUID = 1L;

    SessionExpiredException(String message) {
        super(ErrorCode.SESSION_EXPIRED, message);
    }
}
