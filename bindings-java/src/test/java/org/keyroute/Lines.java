package org.keyroute;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;

/** The line files the C tests read (bindings-c/tests/*_to_lines.py writes them from the
 *  shared JSON vectors): Java reads the same ones, so no JSON parser is needed. */
final class Lines {
    private Lines() {}

    /** The file named by system property {@code prop} (the make target sets it). */
    static List<String> read(String prop) throws IOException {
        String p = System.getProperty(prop);
        if (p == null) {
            throw new IllegalStateException("-D" + prop + " is not set (make test-java sets it)");
        }
        return Files.readAllLines(Path.of(p), StandardCharsets.UTF_8);
    }

    static byte[] unhex(String s) {
        return s.equals("-") ? new byte[0] : HexFormat.of().parseHex(s);
    }

    static String text(String s) {
        return new String(unhex(s), StandardCharsets.UTF_8);
    }
}
