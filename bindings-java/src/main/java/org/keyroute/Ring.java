package org.keyroute;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A consistent-hash ring ({@code keyroute::ring::Ring}): {@code native} (SipHash) or one of
 * the bit-exact profiles of the peers ({@code libketama}, {@code libmemcached}, {@code node-hashring}, ...; the other engines, {@code java-hashcode} among them, are {@link Router}s).
 *
 * <pre>{@code
 * try (Ring ring = new Ring("libketama", List.of("a:11211", "b:11211"))) {
 *     String node = ring.get("user:42");
 * }
 * }</pre>
 *
 * <p><b>Thread safety:</b> safe to share. Lookups ({@code get}, {@code getN},
 * {@code getManyIndexes}, {@code nodes}) run at once from any number of threads; changes
 * ({@code add}, {@code remove}, {@code setWeight}) and {@link #close()} wait for the lookups
 * in flight and run alone.
 */
public final class Ring extends Handle {
    /** The index {@link #getManyIndexes} writes for a key when the ring is empty. */
    public static final int NO_NODE = -1;

    /** The node names by index, read again after every change (under the write lock). */
    private volatile String[] names;

    private Ring(long ptr) {
        super(ptr, Lib::keyroute_ring_free, "Ring", false);
        names = readNames(ptr);
    }

    /** A ring of {@code profile} over {@code nodes}, each of weight 1. */
    public Ring(String profile, List<String> nodes) {
        this(create(profile, nodes));
    }

    private static long create(String profile, List<String> nodes) {
        Objects.requireNonNull(nodes, "nodes");
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_ring_new(Text.cstr(profile, "profile"), null, out));
        try {
            int i = 0;
            for (String n : nodes) {
                KeyrouteException.check(Lib.keyroute_ring_add(out[0], Text.cstr(n, "nodes[" + i++ + "]"), 1));
            }
        } catch (RuntimeException e) {
            Lib.keyroute_ring_free(out[0]);
            throw e;
        }
        return out[0];
    }

    /**
     * An empty ring of {@code profile} with its options (0: the profile's default):
     * {@code vnodes}, {@code pointsPerDigest} (ketama family) and {@code defaultPort} (the
     * port left out of the hashed server string; -1: none). Add nodes with {@link #add}.
     */
    public static Ring withOptions(String profile, long vnodes, long pointsPerDigest,
                                   long defaultPort) {
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_ring_new(Text.cstr(profile, "profile"),
                new long[] {vnodes, pointsPerDigest, defaultPort}, out));
        return new Ring(out[0]);
    }

    /**
     * A ring of {@code profile} from a node list as the peers write it
     * ({@code "host:port[:weight] ..."} or the profile's own format; see docs/profiles.md).
     */
    public static Ring fromSpec(String profile, String nodeList) {
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_ring_from_spec(Text.cstr(profile, "profile"), null,
                Text.cstr(nodeList, "nodeList"), out));
        return new Ring(out[0]);
    }

    private static String[] readNames(long ptr) {
        int n = Math.toIntExact(Lib.keyroute_ring_len(ptr));
        String[] all = new String[n];
        long[] name = new long[1];
        long[] len = new long[1];
        int[] weight = new int[1];
        for (int i = 0; i < n; i++) {
            KeyrouteException.check(Lib.keyroute_ring_node(ptr, i, name, len, weight));
            all[i] = Text.string(name[0], len[0]);
        }
        return all;
    }

    /** The node owning {@code key} (UTF-8), or null when the ring is empty. */
    public String get(String key) {
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        return get(k);
    }

    /** The node owning {@code key}, or null when the ring is empty. */
    public String get(byte[] key) {
        Text.notNull(key, "key");
        return read(p -> {
            long[] idx = new long[1];
            if (!KeyrouteException.found(Lib.keyroute_ring_get_index(p, key, key.length, idx))) {
                return null;
            }
            return names[(int) idx[0]];
        });
    }

    /**
     * Up to {@code n} distinct nodes for {@code key}, walking clockwise: the owner first,
     * then the replicas (fewer when the ring has fewer nodes; empty when it has none).
     */
    public List<String> getN(String key, int n) {
        return getN(Text.utf8(Text.notNull(key, "key"), "key"), n);
    }

    /** {@link #getN(String, int)} for a key given as bytes. */
    public List<String> getN(byte[] key, int n) {
        Text.notNull(key, "key");
        if (n < 0) {
            throw KeyrouteException.of(ErrorCode.OUT_OF_RANGE, "`n` is " + n + ", below 0");
        }
        return read(p -> {
            int cap = (int) Math.min(n, Lib.keyroute_ring_len(p));
            long[] nodes = new long[Math.max(cap, 1)];
            long[] lens = new long[Math.max(cap, 1)];
            long[] count = new long[1];
            if (cap == 0 || !KeyrouteException.found(
                    Lib.keyroute_ring_get_n(p, key, key.length, cap, nodes, lens, count))) {
                return List.of();
            }
            List<String> out = new ArrayList<>((int) count[0]);
            for (int i = 0; i < count[0]; i++) {
                out.add(Text.string(nodes[i], lens[i]));
            }
            return Collections.unmodifiableList(out);
        });
    }

    /**
     * The node index ({@link #nodes()}) of each key, or {@link #NO_NODE} when the ring is
     * empty: the keys are packed into one buffer and cross JNA once.
     */
    public int[] getManyIndexes(String[] keys) {
        Text.notNull(keys, "keys");
        Text.checkCount(keys.length, "keys");
        int[] ends = new int[keys.length];
        Text.Packer packed = Text.pack(keys, ends);
        return many(packed, ends);
    }

    /** {@link #getManyIndexes(String[])} for keys given as bytes. */
    public int[] getManyIndexes(byte[][] keys) {
        Text.notNull(keys, "keys");
        Text.checkCount(keys.length, "keys");
        int[] ends = new int[keys.length];
        Text.Packer packed = Text.pack(keys, ends);
        return many(packed, ends);
    }

    private int[] many(Text.Packer packed, int[] ends) {
        int[] out = new int[ends.length];
        if (ends.length == 0) {
            return out;
        }
        read(p -> {
            KeyrouteException.check(Lib.keyroute_ring_get_many_packed(p, packed.buf, packed.len,
                    ends, ends.length, out));
            return null;
        });
        return out;
    }

    /** The node owning each key (null entries when the ring is empty), in one crossing. */
    public String[] getMany(String[] keys) {
        Text.notNull(keys, "keys");
        Text.checkCount(keys.length, "keys");
        int[] ends = new int[keys.length];
        Text.Packer packed = Text.pack(keys, ends);
        int[] idx = new int[keys.length];
        return read(p -> {
            String[] out = new String[idx.length];
            if (idx.length == 0) {
                return out;
            }
            KeyrouteException.check(Lib.keyroute_ring_get_many_packed(p, packed.buf, packed.len,
                    ends, ends.length, idx));
            String[] now = names;
            for (int i = 0; i < idx.length; i++) {
                out[i] = idx[i] == NO_NODE ? null : now[idx[i]];
            }
            return out;
        });
    }

    /** The nodes, by index (the indexes {@link #getManyIndexes} gives). */
    public List<String> nodes() {
        return read(p -> List.of(names));
    }

    /** The number of nodes. */
    public int size() {
        return read(p -> names.length);
    }

    /** Adds {@code node} with {@code weight} (1 to 2^32 - 1). */
    public void add(String node, long weight) {
        byte[] n = Text.cstr(node, "node");
        write(p -> {
            KeyrouteException.check(Lib.keyroute_ring_add(p, n, weight));
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
            KeyrouteException.check(Lib.keyroute_ring_remove(p, n));
            names = readNames(p);
            return null;
        });
    }

    /** Sets the weight of {@code node}. */
    public void setWeight(String node, long weight) {
        byte[] n = Text.cstr(node, "node");
        write(p -> {
            KeyrouteException.check(Lib.keyroute_ring_set_weight(p, n, weight));
            names = readNames(p);
            return null;
        });
    }

    /** The ring's profile name. */
    public String profile() {
        return read(p -> Text.cstring(Lib.keyroute_ring_profile(p)));
    }
}
