package org.keyroute;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A least-used pool in memory ({@code keyroute::select::Pool}): the model of the Redis
 * scripts {@link LeastUsed} runs, with the same answers (tests/vectors/pool).
 *
 * <p><b>Thread safety:</b> safe to share; every call takes the pool alone (a pick changes
 * it).
 */
public final class Pool extends Handle {
    /** A new, empty pool. */
    public Pool() {
        super(create(), Lib::keyroute_pool_free, "Pool", false);
    }

    private static long create() {
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_pool_new(out));
        return out[0];
    }

    static List<byte[]> utf8(Collection<String> members) {
        Objects.requireNonNull(members, "members");
        List<byte[]> all = new ArrayList<>(members.size());
        int i = 0;
        for (String m : members) {
            all.add(Text.utf8(Text.notNull(m, "members[" + i + "]"), "members[" + i + "]"));
            i++;
        }
        return all;
    }

    /** Adds {@code members} with count {@code initial}; returns how many were new. */
    public long seed(Collection<String> members, long initial) {
        return seedBytes(utf8(members), initial, false);
    }

    /** Adds members given as bytes; with {@code overwrite}, existing members get
     *  {@code initial} too. Returns how many were new. */
    public long seedBytes(List<byte[]> members, long initial, boolean overwrite) {
        Objects.requireNonNull(members, "members");
        Text.checkCount(members.size(), "members");
        long[] added = new long[1];
        try (Text.NativeList l = Text.NativeList.of(members)) {
            write(p -> {
                KeyrouteException.check(Lib.keyroute_pool_seed(p, l.ptrs(), l.lens(), l.count,
                        initial, overwrite ? 1 : 0, added));
                return null;
            });
        }
        return added[0];
    }

    /** Picks the least-used member (ties: byte-wise smallest) and counts it; empty when
     *  the pool is empty. */
    public Optional<String> pick() {
        return pickBytes().map(b -> new String(b, StandardCharsets.UTF_8));
    }

    /** {@link #pick()} as bytes. */
    public Optional<byte[]> pickBytes() {
        return write(p -> {
            long[] member = new long[1];
            long[] len = new long[1];
            if (!KeyrouteException.found(Lib.keyroute_pool_pick(p, member, len))) {
                return Optional.empty();
            }
            return Optional.of(Text.bytes(member[0], len[0]));
        });
    }

    /** Removes {@code member}, remembering its count (returned);
     *  {@link NodeNotFoundException} if it is not in the pool. */
    public long remove(byte[] member) {
        Text.notNull(member, "member");
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_pool_remove(p, member, member.length, count));
            return count[0];
        });
    }

    /** {@link #remove(byte[])} of a text member. */
    public long remove(String member) {
        return remove(Text.utf8(Text.notNull(member, "member"), "member"));
    }

    /** Puts {@code member} back with the count {@code mode} chooses (returned). */
    public long restore(byte[] member, Restore mode) {
        Text.notNull(member, "member");
        Text.notNull(mode, "mode");
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_pool_restore(p, member, member.length, mode.mode,
                    count));
            return count[0];
        });
    }

    /** {@link #restore(byte[], Restore)} of a text member. */
    public long restore(String member, Restore mode) {
        return restore(Text.utf8(Text.notNull(member, "member"), "member"), mode);
    }

    /** The count of {@code member} ({@link NodeNotFoundException} if absent). */
    public long count(byte[] member) {
        Text.notNull(member, "member");
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_pool_count(p, member, member.length, count));
            return count[0];
        });
    }

    /** The remembered count of removed {@code member} ({@link NodeNotFoundException} if it
     *  was not removed). */
    public long removedCount(byte[] member) {
        Text.notNull(member, "member");
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_pool_removed_count(p, member, member.length,
                    count));
            return count[0];
        });
    }

    /** The number of members. */
    public int size() {
        return write(p -> Math.toIntExact(Lib.keyroute_pool_len(p)));
    }
}
