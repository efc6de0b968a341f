package org.keyroute;

/** The session was created by another service version: code {@code VERSION_MISMATCH}.
 *  {@link #storedVersion()} is the version that created it. */
public class VersionMismatchException extends KeyrouteException {
    private static final long serialVersionUID = 1L;

    private final String storedVersion;

    VersionMismatchException(String message, String storedVersion) {
        super(ErrorCode.VERSION_MISMATCH, message);
        this.storedVersion = storedVersion;
    }

    /** The service version that created the session (null when not known). */
    public String storedVersion() {
        return storedVersion;
    }
}
