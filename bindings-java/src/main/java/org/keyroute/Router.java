package org.keyroute;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Any engine keyroute reproduces behind one interface ({@code keyroute::engine::Router}):
 * the ring profiles, rendezvous, jump ({@code guava-jump}), the fleet profiles, and a
 * proxy's own configuration ({@link #fromConfig}).
 *
 * <p><b>Thread safety:</b> safe to share. Lookups run at once from any number of threads;
 * {@code add}, {@code remove} and {@link #close()} wait for the lookups in flight and run
 * alone.
 */
public final class Router extends Handle {
    /** The index {@link #getManyIndexes} writes for a key when there is no node. */
    public static final int NO_NODE = -1;

    private volatile String[] names;

    private Router(long ptr) {
        super(ptr, Lib::keyroute_router_free, "Router", false);
        names = readNames(ptr);
    }

    /** A router of {@code engine} over {@code nodes}, each of weight 1. */
    public static Router build(String engine, List<String> nodes) {
        return build(engine, nodes, null, Map.of());
    }

    /**
     * A router of {@code engine} over {@code nodes} with their {@code weights} (null: all 1)
     * and the engine's {@code options} (e.g. {@code node=prefix} for {@code java-hashcode};
     * docs/engines.md).
     */
    public static Router build(String engine, List<String> nodes, long[] weights,
                               Map<String, String> options) {
        Objects.requireNonNull(nodes, "nodes");
        Objects.requireNonNull(options, "options");
        if (weights != null && weights.length != nodes.size()) {
            throw KeyrouteException.of(ErrorCode.OUT_OF_RANGE, "`weights` has " + weights.length
                    + " entries for " + nodes.size() + " nodes");
        }
        List<String> keys = new ArrayList<>(options.keySet());
        List<String> values = new ArrayList<>();
        for (String k : keys) {
            values.add(options.get(k));
        }
        long[] out = new long[1];
        try (Text.NativeList n = Text.NativeList.cstrings(nodes, "nodes");
             Text.NativeList on = Text.NativeList.cstrings(keys, "option names");
             Text.NativeList ov = Text.NativeList.cstrings(values, "option values")) {
            KeyrouteException.check(Lib.keyroute_router_new(Text.cstr(engine, "engine"), n.ptrs(),
                    weights, nodes.size(), on.ptrs(), ov.ptrs(), keys.size(), out));
        }
        return new Router(out[0]);
    }

    /**
     * The router of a proxy configuration file (twemproxy YAML, a mcrouter JSON, an nginx
     * upstream, ...), for its pool {@code pool} (null: the only one).
     */
    public static Router fromConfig(Path file, String pool) {
        byte[] text;
        try {
            text = Files.readAllBytes(Objects.requireNonNull(file, "file"));
        } catch (IOException e) {
            throw KeyrouteException.of(ErrorCode.BAD_CONFIG, file + ": " + e.getMessage());
        }
        return fromConfig(text, pool, new ConfigOptions().file(file.toString()));
    }

    /** What {@link #fromConfig(byte[], String, ConfigOptions)} needs beyond the text. */
    public static final class ConfigOptions {
        private String file;
        private boolean allowDown;
        private final Map<String, Long> resolved = new LinkedHashMap<>();

        /** The file's name for messages. */
        public ConfigOptions file(String name) {
            this.file = name;
            return this;
        }

        /** Accept nginx {@code down} servers ({@code hash ... consistent} keeps their points). */
        public ConfigOptions allowDown(boolean allow) {
            this.allowDown = allow;
            return this;
        }

        /** How many addresses {@code host} resolves to (nginx plain {@code hash}). */
        public ConfigOptions resolved(String host, long addresses) {
            resolved.put(Objects.requireNonNull(host, "host"), addresses);
            return this;
        }
    }

    /** The router of the configuration {@code text}, for its pool {@code pool} (null: the
     *  only one). */
    public static Router fromConfig(byte[] text, String pool, ConfigOptions options) {
        Text.notNull(text, "text");
        ConfigOptions o = options == null ? new ConfigOptions() : options;
        List<String> hosts = new ArrayList<>(o.resolved.keySet());
        if (hosts.size() > 64) {
            throw KeyrouteException.of(ErrorCode.TOO_LARGE, "more than 64 resolved hosts");
        }
        long[] out = new long[1];
        byte[] file = Text.cstrOrNull(o.file, "file");
        try (Text.NativeList h = Text.NativeList.cstrings(hosts, "resolved hosts");
             Memory struct = new Memory(64 + 4L * Math.max(1, hosts.size())
                     + (file == null ? 0 : file.length))) {
            struct.clear();
            long counts = Pointer.nativeValue(struct) + 64;
            for (int i = 0; i < hosts.size(); i++) {
                long c = o.resolved.get(hosts.get(i));
                if (c < 1 || c > 0xFFFF_FFFFL) {
                    throw KeyrouteException.of(ErrorCode.OUT_OF_RANGE, "host " + hosts.get(i)
                            + " resolves to " + c + " addresses (1 to 4294967295)");
                }
                struct.setInt(64 + 4L * i, (int) c);
            }
            if (file != null) {
                long at = 64 + 4L * Math.max(1, hosts.size());
                struct.write(at, file, 0, file.length);
                struct.setLong(0, Pointer.nativeValue(struct) + at);
            }
            struct.setInt(8, o.allowDown ? 1 : 0);
            struct.setLong(16, hosts.isEmpty() ? 0 : h.ptrs());
            struct.setLong(24, hosts.isEmpty() ? 0 : counts);
            struct.setLong(32, hosts.size());
            KeyrouteException.check(Lib.keyroute_router_from_config(text, text.length,
                    Text.cstrOrNull(pool, "pool"), Pointer.nativeValue(struct), out));
        }
        return new Router(out[0]);
    }

    private static String[] readNames(long ptr) {
        int n = Math.toIntExact(Lib.keyroute_router_len(ptr));
        String[] all = new String[n];
        long[] name = new long[1];
        long[] len = new long[1];
        int[] weight = new int[1];
        for (int i = 0; i < n; i++) {
            KeyrouteException.check(Lib.keyroute_router_node(ptr, i, name, len, weight));
            all[i] = Text.string(name[0], len[0]);
        }
        return all;
    }

    /** The node owning {@code key} (UTF-8), or null without nodes. */
    public String get(String key) {
        return get(Text.utf8(Text.notNull(key, "key"), "key"));
    }

    /** The node owning {@code key}, or null without nodes. */
    public String get(byte[] key) {
        Text.notNull(key, "key");
        return read(p -> {
            long[] idx = new long[1];
            if (!KeyrouteException.found(Lib.keyroute_router_get_index(p, key, key.length, idx))) {
                return null;
            }
            return names[(int) idx[0]];
        });
    }

    /** Up to {@code n} distinct candidates for {@code key}, the owner first. */
    public List<String> getN(String key, int n) {
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        if (n < 0) {
            throw KeyrouteException.of(ErrorCode.OUT_OF_RANGE, "`n` is " + n + ", below 0");
        }
        return read(p -> {
            String[] now = names;
            int cap = Math.min(n, now.length);
            long[] idx = new long[Math.max(cap, 1)];
            long[] count = new long[1];
            if (cap == 0 || !KeyrouteException.found(
                    Lib.keyroute_router_get_n(p, k, k.length, cap, idx, count))) {
                return List.of();
            }
            List<String> out = new ArrayList<>();
            for (int i = 0; i < count[0]; i++) {
                out.add(now[(int) idx[i]]);
            }
            return Collections.unmodifiableList(out);
        });
    }

    /** The node index of each key ({@link #NO_NODE} without nodes), in one crossing. */
    public int[] getManyIndexes(String[] keys) {
        Text.notNull(keys, "keys");
        Text.checkCount(keys.length, "keys");
        int[] ends = new int[keys.length];
        Text.Packer packed = Text.pack(keys, ends);
        int[] out = new int[keys.length];
        if (keys.length == 0) {
            return out;
        }
        return read(p -> {
            KeyrouteException.check(Lib.keyroute_router_get_many_packed(p, packed.buf, packed.len,
                    ends, ends.length, out));
            return out;
        });
    }

    /**
     * Adds {@code node} with {@code weight} at run time. For {@code java-hashcode} the
     * state depends on the history, exactly as the reference's skip list (docs/engines.md).
     */
    public void add(String node, long weight) {
        byte[] n = Text.cstr(node, "node");
        write(p -> {
            KeyrouteException.check(Lib.keyroute_router_add(p, n, weight));
            names = readNames(p);
            return null;
        });
    }

    /** Adds {@code node} with weight 1. */
    public void add(String node) {
        add(node, 1);
    }

    /** Removes {@code node} ({@link NodeNotFoundException} if it is not there). */
    public void remove(String node) {
        byte[] n = Text.cstr(node, "node");
        write(p -> {
            KeyrouteException.check(Lib.keyroute_router_remove(p, n));
            names = readNames(p);
            return null;
        });
    }

    /** The nodes, by index. */
    public List<String> nodes() {
        return read(p -> List.of(names));
    }

    /** The engine's name. */
    public String engine() {
        return read(p -> Text.cstring(Lib.keyroute_router_engine(p)));
    }
}
