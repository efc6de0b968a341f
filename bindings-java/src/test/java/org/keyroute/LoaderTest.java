package org.keyroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the library comes from: the jar by default, KEYROUTE_LIB or jna.library.path
 *  when set; a missing one is an UnsatisfiedLinkError, never a crash. Each in a new JVM. */
class LoaderTest {
    private static String run(List<String> props, String keyrouteLib) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(props);
        cmd.addAll(List.of("-cp", System.getProperty("keyroute.classpath",
                System.getProperty("java.class.path")), "org.keyroute.WhereMain"));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("KEYROUTE_LIB");
        if (keyrouteLib != null) {
            pb.environment().put("KEYROUTE_LIB", keyrouteLib);
        }
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return p.exitValue() + "\n" + out;
    }

    @Test
    void theJarsCopyThenTheOverrides(@TempDir Path dir) throws Exception {
        String jar = run(List.of(), null);
        assertTrue(jar.startsWith("0\n") && jar.contains("FROM the jar (org/keyroute/native/linux-x86-64/libkeyroute.so)"), jar);
        String get = jar.substring(jar.indexOf("GET "));
        // the library as a file: the jar's copy, extracted here
        Path lib = dir.resolve("libkeyroute.so");
        try (var in = NativeLibraryLoader.class.getClassLoader().getResourceAsStream(NativeLibraryLoader.resource())) {
            Files.copy(in, lib);
        }
        String env = run(List.of(), lib.toString());
        assertTrue(env.startsWith("0\n") && env.contains("(KEYROUTE_LIB)") && env.contains(get), env);
        String jna = run(List.of("-Djna.library.path=" + dir), null);
        assertTrue(jna.startsWith("0\n") && jna.contains("(jna.library.path)") && jna.contains(get), jna);
        String missing = run(List.of(), dir.resolve("nope.so").toString());
        assertNotEquals('0', missing.charAt(0), missing);
        assertTrue(missing.contains("UnsatisfiedLinkError"), missing);
        assertEquals(-1, missing.indexOf("SIGSEGV"), missing);
    }
}
