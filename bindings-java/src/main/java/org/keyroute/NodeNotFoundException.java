package org.keyroute;

/** The node is not on the ring or router (or the member is not in the pool). Code {@code UNKNOWN_NODE}. */
public class NodeNotFoundException extends KeyrouteException {
    private static final long serialVersionUID = 1L;

    NodeNotFoundException(String message) {
        super(ErrorCode.UNKNOWN_NODE, message);
    }
}
