// keyroute from Java 17 through JNA (Debian libjna-java): the same C functions as
// examples/c/route.c, loaded from libkeyroute.
//
//   javac -cp /usr/share/java/jna.jar Route.java
//   java -cp /usr/share/java/jna.jar:. -Djna.library.path=$PREFIX/lib Route [REDIS_URL]
//
// With a Redis URL (the argument, or KEYROUTE_TEST_REDIS_URL) it also seeds a least-used
// pool on that server and picks from it (keyroute_least_used_*); with cluster seeds in
// KEYROUTE_TEST_CLUSTER_SEEDS ("host:port,host:port"), the same on that Redis Cluster
// (keyroute_least_used_open_cluster). Every failure is shown as the status's name (the
// error code every language reports) and the library's message.
import com.sun.jna.IntegerType;
import com.sun.jna.Library;
import com.sun.jna.Memory;
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

    /** The subset of keyroute.h this example uses (status values from keyroute_status:
     *  the numbers of docs/errors.md). */
    public interface KeyRoute extends Library {
        int KEYROUTE_OK = 0;
        int KEYROUTE_EMPTY = 1;
        int KEYROUTE_BUFFER_TOO_SMALL = 7;
        int KEYROUTE_ZERO_WEIGHT = 11;

        KeyRoute LIB = Native.load("keyroute", KeyRoute.class,
                Map.of(Library.OPTION_STRING_ENCODING, "UTF-8"));

        String keyroute_version();
        String keyroute_status_name(int status);
        String keyroute_last_error_message();
        short keyroute_key_slot(byte[] key, SizeT len);
        int keyroute_ring_new(String profile, Pointer options, PointerByReference out);
        int keyroute_ring_add(Pointer ring, String name, long weight);
        int keyroute_ring_get(Pointer ring, byte[] key, SizeT len, PointerByReference node,
                              Pointer nodeLenOut);
        int keyroute_ring_free(Pointer ring);
        int keyroute_least_used_open(String url, byte[] poolKey, SizeT keyLen, int timeoutMs,
                                     PointerByReference out);
        int keyroute_least_used_open_cluster(String[] seeds, SizeT count, byte[] poolKey,
                                             SizeT keyLen, int timeoutMs,
                                             PointerByReference out);
        int keyroute_least_used_seed(Pointer lu, String[] members, Pointer lens, SizeT count,
                                     long initial, int overwrite, Pointer addedOut);
        int keyroute_least_used_pick(Pointer lu, byte[] buf, SizeT cap, Pointer lenOut);
        int keyroute_least_used_free(Pointer lu);
    }

    static final KeyRoute K = KeyRoute.LIB;
    static final String[] KEYS = {"test", "apple", "foo", "bar", "key-0", "key-1", "key-2"};

    /** Throws with the status's name (e.g. ZERO_WEIGHT) and the library's message. */
    static void check(int status, String what) {
        if (status != KeyRoute.KEYROUTE_OK) {
            throw new IllegalStateException(what + ": " + K.keyroute_status_name(status) + ": "
                    + K.keyroute_last_error_message());
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
            // A refused call: its own status and a message naming what is wrong.
            int refused = K.keyroute_ring_add(ring, "cache-z", 0);
            if (refused != KeyRoute.KEYROUTE_ZERO_WEIGHT
                    || !K.keyroute_status_name(refused).equals("ZERO_WEIGHT")
                    || !K.keyroute_last_error_message().contains("cache-z")) {
                throw new IllegalStateException(
                        "a zero weight gave " + K.keyroute_status_name(refused));
            }
            System.out.println("# refused: " + K.keyroute_status_name(refused) + ": "
                    + K.keyroute_last_error_message());
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
            check(K.keyroute_ring_free(ring), "keyroute_ring_free");
        }
    }

    static long readSizeT(Pointer p) {
        return Native.SIZE_T_SIZE == 8 ? p.getLong(0) : p.getInt(0) & 0xFFFFFFFFL;
    }

    /** One pick, or null for an empty pool (then make no request). */
    static String pick(Pointer lu) {
        byte[] buf = new byte[4];  // deliberately small: shows the resize protocol
        Memory len = new Memory(Native.SIZE_T_SIZE);
        int st = K.keyroute_least_used_pick(lu, buf, new SizeT(buf.length), len);
        if (st == KeyRoute.KEYROUTE_BUFFER_TOO_SMALL) {
            // The member was picked and counted; the handle keeps it for the next call.
            buf = new byte[(int) readSizeT(len)];
            st = K.keyroute_least_used_pick(lu, buf, new SizeT(buf.length), len);
        }
        if (st == KeyRoute.KEYROUTE_EMPTY) {
            return null;
        }
        check(st, "keyroute_least_used_pick");
        return new String(buf, 0, (int) readSizeT(len), StandardCharsets.UTF_8);
    }

    /** A pool handle on the server at url, or (url null) on the cluster of seeds. */
    static Pointer openPool(String url, String[] seeds, String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        PointerByReference out = new PointerByReference();
        if (url != null) {
            check(K.keyroute_least_used_open(url, k, new SizeT(k.length), 2000, out),
                    "keyroute_least_used_open " + url);
        } else {
            check(K.keyroute_least_used_open_cluster(seeds, new SizeT(seeds.length), k,
                    new SizeT(k.length), 2000, out),
                    "keyroute_least_used_open_cluster " + String.join(",", seeds));
        }
        return out.getValue();
    }

    /** Least-used picks from a pool on the Redis server at url, or on a cluster. */
    static void leastUsed(String url, String[] seeds) {
        String[] proxies = {"proxy-b.example:3128", "proxy-a.example:3128", "proxy-c.example:3128"};
        Pointer lu = openPool(url, seeds, "{keyroute-example}:java");
        try {
            Memory lens = new Memory((long) Native.SIZE_T_SIZE * proxies.length);
            for (int i = 0; i < proxies.length; i++) {
                long n = proxies[i].getBytes(StandardCharsets.UTF_8).length;
                if (Native.SIZE_T_SIZE == 8) {
                    lens.setLong(8L * i, n);
                } else {
                    lens.setInt(4L * i, (int) n);
                }
            }
            // overwrite = 1: every proxy starts at count 0, even on a reused server.
            check(K.keyroute_least_used_seed(lu, proxies, lens, new SizeT(proxies.length), 0, 1,
                    null), "keyroute_least_used_seed");
            System.out.println("lupool 0 " + String.join(" ", proxies));
            for (int i = 0; i < 7; i++) {
                System.out.println("pick " + pick(lu));
            }
        } finally {
            check(K.keyroute_least_used_free(lu), "keyroute_least_used_free");
        }
        Pointer empty = openPool(url, seeds, "{keyroute-example}:java-never-seeded");
        try {
            System.out.println("lupool 0");
            String p = pick(empty);
            System.out.println(p == null ? "pick NIL" : "pick " + p);
            System.out.println("# an empty pool gives no proxy: make no request");
        } finally {
            check(K.keyroute_least_used_free(empty), "keyroute_least_used_free");
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
        String url = args.length > 0 ? args[0] : System.getenv("KEYROUTE_TEST_REDIS_URL");
        if (url != null && !url.isEmpty()) {
            leastUsed(url, null);
        } else {
            System.out.println("# no Redis URL (argument or KEYROUTE_TEST_REDIS_URL): no pool picks");
        }
        String seeds = System.getenv("KEYROUTE_TEST_CLUSTER_SEEDS");
        if (seeds != null && !seeds.isEmpty()) {
            System.out.println("# the same pool on a Redis Cluster (seeds " + seeds + ")");
            leastUsed(null, seeds.split(","));
        }
    }
}
