package org.keyroute;

/** The library as a whole: its version, and where its native part was loaded from. */
public final class Keyroute {
    private Keyroute() {}

    // BEGIN GENERATED: the version from core (KEYROUTE_UPDATE_DOCS=1 cargo test -p keyroute --test names)
    /** This jar's version: libkeyroute must be the same. */
    public static final String VERSION = "0.1.0";
    // END GENERATED

    /** The native library's version ({@code keyroute_version()}): {@link #VERSION}. */
    public static String version() {
        return Text.cstring(Lib.keyroute_version());
    }

    /** Where libkeyroute was loaded from: the jar, {@code KEYROUTE_LIB} or
     *  {@code jna.library.path}. */
    public static String nativeLibrary() {
        version();
        return NativeLibraryLoader.origin;
    }
}
