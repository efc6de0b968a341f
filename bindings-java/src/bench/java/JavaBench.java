// Java side by side with the Java peers (make bench-java): keyroute's Router through the
// jar against spymemcached's KetamaNodeLocator and Guava's Hashing.consistentHash, on the
// same nodes and keys, after checking that every answer is the same.
//
//   java -cp keyroute.jar:jna.jar:spymemcached.jar:guava.jar:. JavaBench OUT.json
import com.google.common.hash.Hashing;
import java.io.IOException;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntUnaryOperator;
import net.spy.memcached.DefaultHashAlgorithm;
import net.spy.memcached.KetamaNodeKeyFormatter;
import net.spy.memcached.KetamaNodeLocator;
import net.spy.memcached.MemcachedNode;
import org.keyroute.Router;

public final class JavaBench {
    static final int NODES = 10;
    static final int KEYS = 100_000;
    static final int ROUNDS = 7;

    /** A MemcachedNode that only knows its address (all the locator reads). */
    static MemcachedNode node(InetSocketAddress addr) {
        InvocationHandler h = (self, m, args) -> {
            switch (m.getName()) {
                case "getSocketAddress": return addr;
                case "hashCode": return System.identityHashCode(self);
                case "equals": return self == args[0];
                case "toString": return "node(" + addr + ")";
                default:
                    Class<?> r = m.getReturnType();
                    return r == boolean.class ? false : r == int.class ? 0 : r == long.class ? 0L : null;
            }
        };
        return (MemcachedNode) java.lang.reflect.Proxy.newProxyInstance(JavaBench.class.getClassLoader(),
                new Class<?>[] {MemcachedNode.class}, h);
    }

    static long sink;

    /** The best of ROUNDS runs of body over every key, in ns per key. */
    static double nsPerKey(IntUnaryOperator body) {
        double best = Double.MAX_VALUE;
        for (int r = 0; r < ROUNDS; r++) {
            long t0 = System.nanoTime();
            long s = 0;
            for (int i = 0; i < KEYS; i++) {
                s += body.applyAsInt(i);
            }
            long t = System.nanoTime() - t0;
            sink += s;
            best = Math.min(best, (double) t / KEYS);
        }
        return best;
    }

    /** The best of ROUNDS batch calls over every key, in ns per key. */
    static double nsPerKeyBatch(Runnable batch) {
        double best = Double.MAX_VALUE;
        for (int r = 0; r < ROUNDS; r++) {
            long t0 = System.nanoTime();
            batch.run();
            best = Math.min(best, (double) (System.nanoTime() - t0) / KEYS);
        }
        return best;
    }

    public static void main(String[] args) throws IOException {
        List<String> names = new ArrayList<>();
        List<MemcachedNode> nodes = new ArrayList<>();
        for (int i = 1; i <= NODES; i++) {
            String name = "10.0.0." + i + ":11211";
            names.add(name);
            nodes.add(node(new InetSocketAddress(InetAddress.getByAddress(new byte[] {10, 0, 0, (byte) i}), 11211)));
        }
        String[] keys = new String[KEYS];
        for (int i = 0; i < KEYS; i++) {
            keys[i] = "user:" + i;
        }
        List<String> rows = new ArrayList<>();
        try (Router spyRouter = Router.build("spymemcached", names, null,
                Map.of("format", "spymemcached", "hash", "KETAMA_HASH"));
             Router jump = Router.build("guava-jump", names)) {
            KetamaNodeLocator loc = new KetamaNodeLocator(nodes, DefaultHashAlgorithm.KETAMA_HASH,
                    KetamaNodeKeyFormatter.Format.SPYMEMCACHED, new HashMap<>());
            // same answers, every key
            int[] idx = spyRouter.getManyIndexes(keys);
            int[] jidx = jump.getManyIndexes(keys);
            for (int i = 0; i < KEYS; i++) {
                InetSocketAddress a = (InetSocketAddress) loc.getPrimary(keys[i]).getSocketAddress();
                String peer = a.getAddress().getHostAddress() + ":" + a.getPort();
                if (!peer.equals(spyRouter.get(keys[i])) || !peer.equals(names.get(idx[i]))) {
                    throw new AssertionError("spymemcached: " + keys[i] + " -> " + peer + ", keyroute " + spyRouter.get(keys[i]));
                }
                int b = Hashing.consistentHash(Hashing.murmur3_128().hashString(keys[i], StandardCharsets.UTF_8), NODES);
                if (b != jidx[i] || !names.get(b).equals(jump.get(keys[i]))) {
                    throw new AssertionError("guava: " + keys[i] + " -> " + b + ", keyroute " + jidx[i]);
                }
            }
            double spy = nsPerKey(i -> loc.getPrimary(keys[i]).hashCode() & 1);
            double krGet = nsPerKey(i -> spyRouter.get(keys[i]).length());
            double krMany = nsPerKeyBatch(() -> sink += spyRouter.getManyIndexes(keys)[KEYS - 1]);
            double guava = nsPerKey(i -> Hashing.consistentHash(
                    Hashing.murmur3_128().hashString(keys[i], StandardCharsets.UTF_8), NODES));
            double jGet = nsPerKey(i -> jump.get(keys[i]).length());
            double jMany = nsPerKeyBatch(() -> sink += jump.getManyIndexes(keys)[KEYS - 1]);
            rows.add(row("Router(spymemcached).get vs KetamaNodeLocator.getPrimary", krGet, spy));
            rows.add(row("Router(spymemcached).getManyIndexes vs KetamaNodeLocator.getPrimary", krMany, spy));
            rows.add(row("Router(guava-jump).get vs Hashing.consistentHash(murmur3_128)", jGet, guava));
            rows.add(row("Router(guava-jump).getManyIndexes vs Hashing.consistentHash(murmur3_128)", jMany, guava));
        }
        String json = "{\"keys\": " + KEYS + ", \"nodes\": " + NODES + ", \"same_answers\": true, \"rows\": [\n  "
                + String.join(",\n  ", rows) + "\n]}\n";
        Files.writeString(Path.of(args.length > 0 ? args[0] : "java-bench.json"), json);
        System.out.print(json);
        System.err.println("(sink " + (sink & 1) + ")");
    }

    static String row(String what, double keyroute, double peer) {
        System.out.printf("%-75s keyroute %7.1f ns/key, peer %7.1f ns/key: %.2fx%n", what, keyroute, peer, peer / keyroute);
        return String.format("{\"what\": \"%s\", \"keyroute_ns\": %.1f, \"peer_ns\": %.1f, \"speedup\": %.2f}",
                what, keyroute, peer, peer / keyroute);
    }
}
