package org.keyroute;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/parity.md holds the Java column to the jar: every cell is {@code yes: } or
 * {@code no: } with a reason, and every name in backticks of a {@code yes} cell is a public
 * class of org.keyroute ({@code Ring}), or a public method, field or nested class of one
 * ({@code Ring.getManyIndexes}, {@code Limits.MAX_BATCH_BYTES}, {@code Router.ConfigOptions}).
 */
class ParityTest {
    private static Class<?> publicClass(String name) {
        try {
            Class<?> c = Class.forName("org.keyroute." + name);
            return Modifier.isPublic(c.getModifiers()) ? c : null;
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    private static boolean exists(String name) {
        int dot = name.indexOf('.');
        if (dot < 0) {
            return publicClass(name) != null;
        }
        Class<?> c = publicClass(name.substring(0, dot));
        String member = name.substring(dot + 1);
        if (c == null || member.isEmpty()) {
            return false;
        }
        return Arrays.stream(c.getMethods()).anyMatch(m -> m.getName().equals(member))
                || Arrays.stream(c.getFields()).anyMatch(f -> f.getName().equals(member))
                || publicClass(c.getSimpleName() + "$" + member) != null;
    }

    @Test
    void everyJavaYesNameExists() throws Exception {
        List<String> lines = new ArrayList<>();
        for (String l : Files.readAllLines(Path.of(System.getProperty("keyroute.parity")),
                StandardCharsets.UTF_8)) {
            if (l.startsWith("|")) {
                lines.add(l);
            }
        }
        String[] head = lines.get(0).split("\\|");
        int col = -1;
        for (int i = 0; i < head.length; i++) {
            if (head[i].trim().equals("Java")) {
                col = i;
            }
        }
        assertTrue(col > 0, "docs/parity.md has a Java column");
        Pattern ticks = Pattern.compile("`([^`]*)`");
        List<String> problems = new ArrayList<>();
        int yes = 0;
        int names = 0;
        for (String line : lines.subList(2, lines.size())) {
            String[] cells = line.split("\\|");
            if (cells.length != head.length) {
                problems.add("row with " + cells.length + " cells, the header " + head.length + ": " + line);
                continue;
            }
            String row = cells[1].trim();
            String cell = cells[col].trim();
            if (cell.startsWith("no: ")) {
                if (cell.length() < "no: ".length() + 10) {
                    problems.add(row + ": a no needs a reason");
                }
                continue;
            }
            if (!cell.startsWith("yes: ")) {
                problems.add(row + ": a cell must start with `yes: ` or `no: `");
                continue;
            }
            yes++;
            Matcher m = ticks.matcher(cell);
            int here = 0;
            while (m.find()) {
                here++;
                if (!exists(m.group(1))) {
                    problems.add(row + ": `" + m.group(1) + "` is not public in org.keyroute");
                }
            }
            if (here == 0) {
                problems.add(row + ": a yes names what provides it");
            }
            names += here;
        }
        assertTrue(problems.isEmpty(), String.join("\n", problems));
        assertTrue(yes >= 20, "Java yes rows: " + yes);
        System.out.printf("parity: %d Java yes rows, %d names found%n", yes, names);
    }
}
