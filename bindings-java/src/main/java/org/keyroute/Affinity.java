package org.keyroute;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Affinity with a cap on Redis ({@code keyroute::select} affinity): each item held by one
 * node; {@link #take} gives an item to its holder, else to the first of its candidate
 * nodes holding fewer items than the cap, in one atomic script, so no node ever holds more
 * than the cap whichever workers take at once (bounded-load consistent hashing shared
 * through Redis).
 *
 * <p><b>Thread safety:</b> as {@link LeastUsed}: one connection, calls serialized.
 */
public final class Affinity extends Handle {
    /** Where {@link #take} put (or found) an item. */
    public static final class Taken {
        private final int index;
        private final long load;
        private final long cap;
        private final boolean placed;

        Taken(int index, long load, long cap, boolean placed) {
            this.index = index;
            this.load = load;
            this.cap = cap;
            this.placed = placed;
        }

        /** The node's position among the candidates, or -1 when the item is held by a
         *  node not among them. */
        public int index() {
            return index;
        }

        /** The node's load after the call. */
        public long load() {
            return load;
        }

        /** The cap of this call. */
        public long cap() {
            return cap;
        }

        /** True when this call placed the item (false: it was held already). */
        public boolean placed() {
            return placed;
        }
    }

    private Affinity(long ptr) {
        super(ptr, Lib::keyroute_affinity_free, "Affinity", false);
    }

    /** Opens the affinity map at {@code key} on the Redis at {@code url}, connecting now. */
    public static Affinity open(String url, String key) {
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_affinity_open(Text.cstr(url, "url"), k, k.length, 0, out));
        return new Affinity(out[0]);
    }

    /**
     * Gives {@code item} to its holder, else to the first of {@code candidates} (in
     * preference order, e.g. {@link Router#getN}) below the cap: {@code cap} items per
     * node when not 0, else {@code ceil(c * (items held + 1) / candidates)}. Empty when
     * every candidate is at the cap.
     */
    public Optional<Taken> take(String item, List<String> candidates, long cap, double c) {
        byte[] it = Text.utf8(Text.notNull(item, "item"), "item");
        Objects.requireNonNull(candidates, "candidates");
        List<byte[]> cs = Pool.utf8(candidates);
        try (Text.NativeList l = Text.NativeList.of(cs)) {
            return write(p -> {
                long[] index = new long[1];
                long[] load = new long[1];
                long[] capOut = new long[1];
                byte[] placed = new byte[1];
                if (!KeyrouteException.found(Lib.keyroute_affinity_take(p, it, it.length, l.ptrs(),
                        l.lens(), l.count, cap, c, index, load, capOut, placed))) {
                    return Optional.empty();
                }
                return Optional.of(new Taken(index[0] == -1L ? -1 : (int) index[0], load[0],
                        capOut[0], placed[0] != 0));
            });
        }
    }

    /** Frees {@code item} once; true when it was held. */
    public boolean release(String item) {
        byte[] it = Text.utf8(Text.notNull(item, "item"), "item");
        return write(p -> {
            byte[] released = new byte[1];
            KeyrouteException.check(Lib.keyroute_affinity_release(p, it, it.length, released));
            return released[0] != 0;
        });
    }
}
