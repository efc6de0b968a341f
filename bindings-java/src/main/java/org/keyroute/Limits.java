package org.keyroute;

/** The limits of one call, the same in every language (core's {@code keyroute::keys},
 *  {@code select}, {@code slot}, {@code cache}); generated from core by
 *  {@code core/tests/names.rs}. */
public final class Limits {
    private Limits() {}

    // BEGIN GENERATED: limits and constants from core (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
    public static final int DEFAULT_NATIVE_VNODES = 160;
    public static final int SLOT_COUNT = 16384;
    public static final int MAX_KEYS_PER_CALL = 16777216;
    public static final int MAX_PICKS_PER_CALL = 16777216;
    public static final long MAX_EXACT_COUNT = 9007199254740992L;
    public static final int MAX_WARM_KINDS = 64;
    public static final int MAX_BATCH_BYTES = 1073741824;
    public static final int MAX_KEY_BYTES = 536870912;
    public static final int SESSION_ID_LENGTH = 53;
    public static final int MAX_CLIENT_ID_BYTES = 512;
    public static final int MAX_KIND_BYTES = 128;
    // END GENERATED
}
