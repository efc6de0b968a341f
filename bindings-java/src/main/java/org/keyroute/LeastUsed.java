package org.keyroute;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A least-used pool on Redis ({@code keyroute::select::LeastUsed}): {@link #pick()} gives the
 * member with the fewest assignments and counts it, in one atomic script, so any number of
 * processes share the pool.
 *
 * <p><b>Thread safety:</b> safe to share. The handle holds one Redis connection: calls from
 * several threads are serialized (each waits for the one in flight). For parallel picks,
 * open one {@code LeastUsed} per thread.
 */
public final class LeastUsed extends Handle {
    private byte[] buf = new byte[256];

    private LeastUsed(long ptr) {
        super(ptr, Lib::keyroute_least_used_free, "LeastUsed", false);
    }

    /** Opens the pool at {@code key} on the Redis server at {@code url}, connecting now. */
    public static LeastUsed open(String url, String key) {
        return open(url, key, 0);
    }

    /** As {@link #open(String, String)}, with a timeout for connecting and each reply
     *  (0: the default). */
    public static LeastUsed open(String url, String key, int timeoutMs) {
        if (timeoutMs < 0) {
            throw KeyrouteException.of(ErrorCode.OUT_OF_RANGE, "`timeoutMs` is " + timeoutMs);
        }
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_least_used_open(Text.cstr(url, "url"), k, k.length,
                timeoutMs, out));
        return new LeastUsed(out[0]);
    }

    /**
     * Opens the pool at {@code key} (hash-tag it, e.g. {@code {proxies}:pool}) on the Redis
     * Cluster reached through any of {@code seeds} ({@code host:port} or {@code redis://...}):
     * picks follow MOVED/ASK and find the new master after a failover.
     */
    public static LeastUsed openCluster(List<String> seeds, String key) {
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        long[] out = new long[1];
        try (Text.NativeList s = Text.NativeList.cstrings(Text.notNull(seeds, "seeds"), "seeds")) {
            KeyrouteException.check(Lib.keyroute_least_used_open_cluster(s.ptrs(), s.count, k,
                    k.length, 0, out));
        }
        return new LeastUsed(out[0]);
    }

    /** Adds {@code members} with count {@code initial}; members already there keep theirs.
     *  Returns how many were new. */
    public long seed(Collection<String> members, long initial) {
        return seed(members, initial, false);
    }

    /** As {@link #seed(Collection, long)}; with {@code overwrite}, existing members get
     *  {@code initial} too. */
    public long seed(Collection<String> members, long initial, boolean overwrite) {
        Objects.requireNonNull(members, "members");
        Text.checkCount(members.size(), "members");
        List<byte[]> all = new ArrayList<>(members.size());
        int i = 0;
        for (String m : members) {
            all.add(Text.utf8(Text.notNull(m, "members[" + i + "]"), "members[" + i + "]"));
            i++;
        }
        long[] added = new long[1];
        try (Text.NativeList l = Text.NativeList.of(all)) {
            write(p -> {
                KeyrouteException.check(Lib.keyroute_least_used_seed(p, l.ptrs(), l.lens(),
                        l.count, initial, overwrite ? 1 : 0, added));
                return null;
            });
        }
        return added[0];
    }

    /** Picks the least-used member and counts it; empty when the pool is empty or missing. */
    public Optional<String> pick() {
        return pickBytes().map(b -> new String(b, StandardCharsets.UTF_8));
    }

    /** {@link #pick()} as the member's bytes. */
    public Optional<byte[]> pickBytes() {
        return write(p -> {
            long[] len = new long[1];
            while (true) {
                int st = Lib.keyroute_least_used_pick(p, buf, buf.length, len);
                if (st == ErrorCode.BUFFER_TOO_SMALL.number()) {
                    // the member is held by the handle: the next call returns it
                    buf = new byte[Math.toIntExact(len[0])];
                    continue;
                }
                if (!KeyrouteException.found(st)) {
                    return Optional.empty();
                }
                return Optional.of(Arrays.copyOf(buf, (int) len[0]));
            }
        });
    }

    /** Removes {@code member}; returns its count ({@link NodeNotFoundException} if absent). */
    public long remove(String member) {
        byte[] m = Text.utf8(Text.notNull(member, "member"), "member");
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_least_used_remove(p, m, m.length, count));
            return count[0];
        });
    }

    /** Puts removed {@code member} back with the count {@code mode} chooses (returned). */
    public long restore(String member, Restore mode) {
        byte[] m = Text.utf8(Text.notNull(member, "member"), "member");
        Text.notNull(mode, "mode");
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_least_used_restore(p, m, m.length, mode.mode,
                    count));
            return count[0];
        });
    }

    /** The count of {@code member} ({@link NodeNotFoundException} if absent). */
    public long count(String member) {
        byte[] m = Text.utf8(Text.notNull(member, "member"), "member");
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_least_used_count(p, m, m.length, count));
            return count[0];
        });
    }
}
