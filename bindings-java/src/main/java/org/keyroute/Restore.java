package org.keyroute;

/** How a removed member comes back to a pool ({@code keyroute_restore}). */
public enum Restore {
    /** With the count it had when it was removed. */
    KEEP(0),
    /** With the pool's lowest count now. */
    AT_MINIMUM(1);

    final int mode;

    Restore(int mode) {
        this.mode = mode;
    }
}
