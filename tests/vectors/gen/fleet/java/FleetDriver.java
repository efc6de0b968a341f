// Calls the real peers for tests/vectors/gen/fleet/gen_java.py:
//   spymemcached's KetamaNodeLocator (Debian libspymemcached-java),
//   Guava's Hashing.consistentHash (Debian libguava-java),
//   and keyroute's own java-hashcode ring (ConcurrentSkipListMap, as issue 16 describes it).
// Protocol: stdin lines of space-separated fields, strings as UTF-8 hex ("-" = empty);
// stdout one answer line per query line. See gen_java.py for the exact commands.
import java.io.*;
import java.lang.reflect.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.ConcurrentSkipListMap;

import com.google.common.hash.HashCode;
import com.google.common.hash.Hashing;
import net.spy.memcached.*;

public class FleetDriver {
    /** A MemcachedNode that only knows its address (the locator reads nothing else). */
    static MemcachedNode node(final InetSocketAddress addr) {
        return (MemcachedNode) java.lang.reflect.Proxy.newProxyInstance(FleetDriver.class.getClassLoader(),
            new Class<?>[] {MemcachedNode.class}, new InvocationHandler() {
                public Object invoke(Object self, Method m, Object[] args) {
                    switch (m.getName()) {
                        case "getSocketAddress": return addr;
                        case "toString": return "node(" + addr + ")";
                        case "hashCode": return System.identityHashCode(self);
                        case "equals": return self == args[0];
                        case "isActive": return true;
                        default:
                            Class<?> r = m.getReturnType();
                            if (r == boolean.class) return false;
                            if (r == int.class) return 0;
                            if (r == long.class) return 0L;
                            return null;
                    }
                }
            });
    }

    /**
     * Address forms:  ip <literal> <port>            new InetSocketAddress(literal, port)
     *                 named <name> <literal> <port>  InetAddress.getByAddress(name, bytes of literal):
     *                                                a resolved hostname, no DNS asked
     */
    static InetSocketAddress address(String[] f, int[] pos) throws Exception {
        String kind = f[pos[0]++];
        if (kind.equals("ip")) {
            String lit = Hex.unhex(f[pos[0]++]);
            int port = Integer.parseInt(f[pos[0]++]);
            return new InetSocketAddress(lit, port);
        }
        String name = Hex.unhex(f[pos[0]++]);
        String lit = Hex.unhex(f[pos[0]++]);
        int port = Integer.parseInt(f[pos[0]++]);
        InetAddress a = InetAddress.getByAddress(name, InetAddress.getByName(lit).getAddress());
        return new InetSocketAddress(a, port);
    }

    // spy <format> <hashAlg> <weighted 0|1> <n> then n x (address weight) then keys...
    static void spy(String[] f, PrintStream out) throws Exception {
        int[] pos = {1};
        KetamaNodeKeyFormatter.Format format = KetamaNodeKeyFormatter.Format.valueOf(f[pos[0]++]);
        DefaultHashAlgorithm alg = DefaultHashAlgorithm.valueOf(f[pos[0]++]);
        boolean weighted = f[pos[0]++].equals("1");
        int n = Integer.parseInt(f[pos[0]++]);
        List<MemcachedNode> nodes = new ArrayList<>();
        Map<InetSocketAddress, Integer> weights = new HashMap<>();
        List<String> labels = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            InetSocketAddress a = address(f, pos);
            int w = Integer.parseInt(f[pos[0]++]);
            nodes.add(node(a));
            weights.put(a, w);
        }
        KetamaNodeKeyFormatter fmt = new KetamaNodeKeyFormatter(format);
        KetamaNodeLocator loc = weighted
            ? new KetamaNodeLocator(nodes, alg, format, weights)
            : new KetamaNodeLocator(nodes, alg, format, new HashMap<InetSocketAddress, Integer>());
        // First answer line: each node's key string for repetition 0 (what the format hashes).
        StringBuilder sb = new StringBuilder();
        for (MemcachedNode nd : nodes) sb.append(Hex.hex(fmt.getKeyForNode(nd, 0))).append(' ');
        out.println(sb.toString().trim());
        // Second: the number of points on the continuum (distinct positions).
        Method gm = KetamaNodeLocator.class.getDeclaredMethod("getKetamaNodes");
        gm.setAccessible(true);
        out.println(((TreeMap<?, ?>) gm.invoke(loc)).size());
        for (int i = pos[0]; i < f.length; i++) {
            MemcachedNode p = loc.getPrimary(Hex.unhex(f[i]));
            out.println(nodes.indexOf(p));
        }
    }

    // guava-long <input> <buckets>...  ->  consistentHash(input, buckets) per bucket count
    // guava-str <hashfn> <key-hex> <buckets>... -> "<padToLong> r1 r2 ..."
    static void guava(String[] f, PrintStream out) {
        StringBuilder sb = new StringBuilder();
        int from;
        HashCode hc = null;
        long input;
        if (f[0].equals("guava-long")) {
            input = Long.parseLong(f[1]);
            from = 2;
        } else {
            String key = Hex.unhex(f[2]);
            hc = f[1].equals("murmur3_128") ? Hashing.murmur3_128().hashString(key, StandardCharsets.UTF_8)
                                            : Hashing.murmur3_32_fixed().hashString(key, StandardCharsets.UTF_8);
            input = hc.padToLong();
            sb.append(input).append(' ');
            from = 3;
        }
        for (int i = from; i < f.length; i++) {
            int b = Integer.parseInt(f[i]);
            int r = hc != null ? Hashing.consistentHash(hc, b) : Hashing.consistentHash(input, b);
            sb.append(r).append(' ');
        }
        out.println(sb.toString().trim());
    }

    // hashcode <n> <node-hex>... then keys...: keyroute's java-hashcode ring.
    // Points: Math.abs((node + "-N" + i).hashCode()) for i in 0..149, put in node order (a
    // later put wins); lookup: tailMap(Math.abs(key.hashCode())), else the first entry.
    static void hashcode(String[] f, PrintStream out) {
        int n = Integer.parseInt(f[1]);
        ConcurrentSkipListMap<Integer, String> ring = new ConcurrentSkipListMap<>();
        for (int j = 0; j < n; j++) {
            String node = Hex.unhex(f[2 + j]);
            for (int i = 0; i < 150; i++) ring.put(Math.abs((node + "-N" + i).hashCode()), node);
        }
        out.println(ring.size());
        for (int i = 2 + n; i < f.length; i++) {
            int h = Math.abs(Hex.unhex(f[i]).hashCode());
            SortedMap<Integer, String> tail = ring.tailMap(h);
            String node = tail.isEmpty() ? ring.firstEntry().getValue() : tail.get(tail.firstKey());
            out.println(Hex.hex(node));
        }
    }

    public static void main(String[] argv) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) continue;
            String[] f = line.split(" ");
            switch (f[0]) {
                case "spy": spy(f, out); break;
                case "guava-long": case "guava-str": guava(f, out); break;
                case "hashcode": hashcode(f, out); break;
                default: throw new IllegalArgumentException(f[0]);
            }
        }
        out.flush();
    }
}
