package org.keyroute;

/**
 * The loader failed, in this call or in another caller whose failure is cached for the
 * negative TTL: code {@code BACKEND_ERROR}. {@link #backendCode()} is the loader's code (the
 * code of a {@link KeyrouteException} it threw, else the exception's simple class name),
 * {@link #backendMessage()} its message, {@link #cached()} whether it came from the cache.
 * When this call's own loader threw, the exception is the {@link #getCause() cause}.
 */
public class BackendException extends KeyrouteException {
    private static final long serialVersionUID = 1L;
    private static final String PREFIX = "backend error ";
    private static final String CACHED = " (cached from a recent load";

    private final String backendCode;
    private final String backendMessage;
    private final boolean cached;

    BackendException(String message) {
        super(ErrorCode.BACKEND_ERROR, message);
        // The library's text: "backend error CODE: MESSAGE[ (cached from a recent load; ...)]"
        String m = message == null ? "" : message;
        int colon = m.indexOf(": ");
        if (m.startsWith(PREFIX) && colon > PREFIX.length()) {
            backendCode = m.substring(PREFIX.length(), colon);
            String rest = m.substring(colon + 2);
            int c = rest.lastIndexOf(CACHED);
            cached = c >= 0;
            backendMessage = cached ? rest.substring(0, c) : rest;
        } else {
            backendCode = ErrorCode.BACKEND_ERROR.name();
            backendMessage = m;
            cached = false;
        }
    }

    /** The loader's error code. */
    public String backendCode() {
        return backendCode;
    }

    /** The loader's message. */
    public String backendMessage() {
        return backendMessage;
    }

    /** Whether the failure was another caller's, cached for the negative TTL. */
    public boolean cached() {
        return cached;
    }
}
