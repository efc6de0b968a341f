// Strings as UTF-8 hex ("-" = the empty string), as the Java drivers' line protocols
// carry them (FleetDriver, ReferenceRingDriver).
import java.nio.charset.StandardCharsets;

final class Hex {
    private Hex() {
    }

    static String unhex(String h) {
        if (h.equals("-")) return "";
        byte[] b = new byte[h.length() / 2];
        for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        return new String(b, StandardCharsets.UTF_8);
    }

    static String hex(String s) {
        StringBuilder sb = new StringBuilder();
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) sb.append(String.format("%02x", b & 0xff));
        return sb.length() == 0 ? "-" : sb.toString();
    }
}
