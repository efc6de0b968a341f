// keyroute from Java 17 through JNA (Debian libjna-java): the same C functions as
// examples/c/route.c, loaded from libkeyroute.
//
//   javac -cp /usr/share/java/jna.jar Route.java
//   java -cp /usr/share/java/jna.jar:. -Djna.library.path=$PREFIX/lib Route
import com.sun.jna.IntegerType;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import java.nio.charset.StandardCharsets;
import java.util.Map;

public final class Route {
    /** C size_t. */
    public static final class SizeT extends IntegerType {
        public SizeT() { this(0); }
        public SizeT(long v) { super(Native.SIZE_T_SIZE, v, true); }
    }

    /** The subset of keyroute.h this example uses (status values from keyroute_status). */
    public interface KeyRoute extends Library {
        int KEYROUTE_OK = 0;
        int KEYROUTE_EMPTY = 1;

        KeyRoute LIB = Native.load("keyroute", KeyRoute.class,
                Map.of(Library.OPTION_STRING_ENCODING, "UTF-8"));

        String keyroute_version();
        String keyroute_status_str(int status);
        short keyroute_key_slot(byte[] key, SizeT len);
        int keyroute_ring_new(String profile, Pointer options, PointerByReference out);
        int keyroute_ring_add(Pointer ring, String name, long weight);
        int keyroute_ring_get(Pointer ring, byte[] key, SizeT len, PointerByReference node,
                              Pointer nodeLenOut);
        void keyroute_ring_free(Pointer ring);
    }

    static final KeyRoute K = KeyRoute.LIB;
    static final String[] KEYS = {"test", "apple", "foo", "bar", "key-0", "key-1", "key-2"};

    static void check(int status, String what) {
        if (status != KeyRoute.KEYROUTE_OK) {
            throw new IllegalStateException(what + ": " + K.keyroute_status_str(status));
        }
    }

    static void route(String profile, String[] names, long[] weights) {
        PointerByReference out = new PointerByReference();
        check(K.keyroute_ring_new(profile, null, out), "keyroute_ring_new");
        Pointer ring = out.getValue();
        try {
            StringBuilder line = new StringBuilder("ring " + profile);
            for (int i = 0; i < names.length; i++) {
                check(K.keyroute_ring_add(ring, names[i], weights[i]), "add " + names[i]);
                line.append(' ').append(names[i]).append('=').append(weights[i]);
            }
            System.out.println(line);
            for (String key : KEYS) {
                byte[] k = key.getBytes(StandardCharsets.UTF_8);
                PointerByReference node = new PointerByReference();
                int st = K.keyroute_ring_get(ring, k, new SizeT(k.length), node, null);
                if (st == KeyRoute.KEYROUTE_EMPTY) {
                    System.out.println("# " + key + ": no node (empty ring), make no request");
                    continue;
                }
                check(st, "get");
                // Borrowed from the ring (valid until it changes): copy it into a String now.
                String owner = node.getValue().getString(0, "UTF-8");
                System.out.println("route " + profile + " " + key + " " + owner);
            }
        } finally {
            K.keyroute_ring_free(ring);
        }
    }

    public static void main(String[] args) {
        System.out.println("# keyroute " + K.keyroute_version() + " via JNA");
        route("libketama", new String[] {"127.0.0.1:11211", "127.0.0.1:11212"},
                new long[] {600, 400});
        route("libmemcached", new String[] {"10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"},
                new long[] {1, 1, 1});
        for (String key : new String[] {"foo", "bar", "123456789", "{a}{b}", "x{y}z", "foo{bar}{zap}"}) {
            byte[] k = key.getBytes(StandardCharsets.UTF_8);
            int slot = K.keyroute_key_slot(k, new SizeT(k.length)) & 0xFFFF;
            System.out.println("slot " + key + " " + slot);
        }
    }
}
