package org.keyroute;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Every Lua script keyroute runs, as a value ({@code keyroute::script}): its name, summary,
 * text, SHA1 and number of keys, for running them with your own Redis client.
 *
 * <p><b>Thread safety:</b> static and immutable: safe from any thread.
 */
public final class Scripts {
    private Scripts() {}

    /** One script. */
    public static final class Script {
        private final String name;
        private final String summary;
        private final String text;
        private final String sha1;
        private final int numKeys;

        Script(long[] info) {
            name = Text.cstring(info[0]);
            summary = Text.cstring(info[1]);
            text = Text.string(info[2], info[3]);
            sha1 = Text.cstring(info[4]);
            numKeys = (int) info[5];
        }

        /** Its name (e.g. {@code least-used}). */
        public String name() {
            return name;
        }

        /** What it does, in one line. */
        public String summary() {
            return summary;
        }

        /** The Lua text. */
        public String text() {
            return text;
        }

        /** The SHA1 of the text, for EVALSHA. */
        public String sha1() {
            return sha1;
        }

        /** How many of its arguments are keys. */
        public int numKeys() {
            return numKeys;
        }
    }

    /** Every script, in the library's order. */
    public static List<Script> all() {
        int n = Math.toIntExact(Lib.keyroute_script_count());
        List<Script> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long[] info = new long[6];
            KeyrouteException.check(Lib.keyroute_script_at(i, info));
            out.add(new Script(info));
        }
        return Collections.unmodifiableList(out);
    }

    /** The script named {@code name} ({@code -} and {@code _} alike), or empty. */
    public static Optional<Script> byName(String name) {
        long[] info = new long[6];
        if (!KeyrouteException.found(Lib.keyroute_script(Text.cstr(name, "name"), info))) {
            return Optional.empty();
        }
        return Optional.of(new Script(info));
    }
}
