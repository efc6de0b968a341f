// test-dist: the jar from dist/ on a bare classpath (`javac -cp keyroute.jar:jna.jar`,
// `java -cp ...`), no KEYROUTE_LIB and no jna.library.path: the library comes out of the
// jar. Reads the case file of case.py and prints each key's node, one per line.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.keyroute.Ring;

public final class Lookup {
    public static void main(String[] args) throws Exception {
        List<String> lines = Files.readAllLines(Path.of(args[0]), StandardCharsets.UTF_8);
        try (Ring ring = Ring.fromSpec(lines.get(0), lines.get(1))) {
            StringBuilder out = new StringBuilder();
            for (String key : lines.subList(2, lines.size())) {
                out.append(ring.get(key)).append('\n');
            }
            System.out.print(out);
        }
    }
}
