package org.keyroute;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;

/**
 * Finds libkeyroute on first use, in this order:
 * <ol>
 *   <li>{@code KEYROUTE_LIB} in the environment (or the system property {@code keyroute.lib}):
 *       the path of the library file itself;</li>
 *   <li>{@code -Djna.library.path=DIR}: the library found there by JNA (and, failing that,
 *       on the system's search path);</li>
 *   <li>the copy inside the jar, {@code org/keyroute/native/<platform>/<library>} where
 *       {@code <platform>} is JNA's {@code Platform.RESOURCE_PREFIX} (linux-x86-64,
 *       darwin-aarch64, win32-x86-64, ...) and {@code <library>} its file name
 *       (libkeyroute.so, libkeyroute.dylib, keyroute.dll): extracted to a private
 *       temporary directory, loaded from there, deleted when the JVM exits.</li>
 * </ol>
 * The library's version must be this jar's ({@link Keyroute#VERSION}): another version is
 * refused with an {@link UnsatisfiedLinkError} naming both, never half-used.
 */
final class NativeLibraryLoader {
    private NativeLibraryLoader() {}

    /** The library in use and where it came from (for messages). */
    static volatile String origin = "(not loaded)";

    static void register(Class<?> cls) {
        if (Native.POINTER_SIZE != 8 || Native.SIZE_T_SIZE != 8) {
            throw new UnsatisfiedLinkError("keyroute's Java binding needs a 64-bit JVM (pointers "
                    + "of " + Native.POINTER_SIZE + " bytes here)");
        }
        Map<String, Object> options = Map.of();
        NativeLibrary lib;
        String explicit = System.getProperty("keyroute.lib", System.getenv("KEYROUTE_LIB"));
        if (explicit != null && !explicit.isEmpty()) {
            lib = NativeLibrary.getInstance(new File(explicit).getAbsolutePath(), options);
            origin = explicit + " (KEYROUTE_LIB)";
        } else if (System.getProperty("jna.library.path") != null) {
            lib = NativeLibrary.getInstance("keyroute", options);
            origin = lib.getFile() + " (jna.library.path)";
        } else {
            Path file = extract();
            lib = NativeLibrary.getInstance(file.toString(), options);
            origin = "the jar (" + resource() + ")";
        }
        Native.register(cls, lib);
    }

    /** Refuses a library of another version than this jar's. */
    static void checkVersion(String found) {
        if (!Keyroute.VERSION.equals(found)) {
            throw new UnsatisfiedLinkError("libkeyroute " + found + " from " + origin
                    + " is not this jar's version, " + Keyroute.VERSION);
        }
    }

    /** The library's resource name in the jar for this platform. */
    static String resource() {
        return "org/keyroute/native/" + Platform.RESOURCE_PREFIX + "/"
                + System.mapLibraryName("keyroute");
    }

    private static Path extract() {
        String name = resource();
        ClassLoader loader = NativeLibraryLoader.class.getClassLoader();
        try (InputStream in = loader == null ? ClassLoader.getSystemResourceAsStream(name)
                : loader.getResourceAsStream(name)) {
            if (in == null) {
                throw new UnsatisfiedLinkError("this keyroute jar has no native library for "
                        + Platform.RESOURCE_PREFIX + " (" + name + "); build libkeyroute for this "
                        + "platform and set KEYROUTE_LIB to it, or -Djna.library.path to its "
                        + "directory (bindings-java/README.md: other platforms)");
            }
            Path dir = Files.createTempDirectory("keyroute-");
            Path file = dir.resolve(System.mapLibraryName("keyroute"));
            dir.toFile().deleteOnExit();
            file.toFile().deleteOnExit();
            try {
                Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException e) {
                // a full disk: leave no partial copy behind
                Files.deleteIfExists(file);
                Files.deleteIfExists(dir);
                throw e;
            }
            return file;
        } catch (IOException e) {
            UnsatisfiedLinkError err = new UnsatisfiedLinkError(
                    "cannot extract " + name + " from the keyroute jar: " + e);
            err.initCause(e);
            throw err;
        }
    }
}
