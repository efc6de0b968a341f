package org.keyroute;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Leases on Redis ({@code keyroute::select} leases): {@link #acquire} gives the member with
 * the fewest leases in flight a lease with a deadline; {@link #release} ends it at most
 * once, and {@link #reclaim} ends the ones past their deadline (a crashed holder's).
 *
 * <p><b>Thread safety:</b> safe to share. The handle holds one Redis connection: calls from
 * several threads are serialized; open one per thread for parallel acquires.
 */
public final class Leases extends Handle {
    /** A lease in flight: the member, the lease id and its deadline (ms since the Unix
     *  epoch, server clock). */
    public static final class Lease {
        private final String member;
        private final long id;
        private final long deadlineMs;

        Lease(String member, long id, long deadlineMs) {
            this.member = member;
            this.id = id;
            this.deadlineMs = deadlineMs;
        }

        /** The member leased. */
        public String member() {
            return member;
        }

        /** The lease id, for {@link Leases#release}. */
        public long id() {
            return id;
        }

        /** When the lease ends unless released, in ms since the Unix epoch. */
        public long deadlineMs() {
            return deadlineMs;
        }
    }

    /** What {@link #release} did. */
    public enum Released {
        /** No such lease in flight (released already, reclaimed, or never given). */
        NOT_IN_FLIGHT,
        /** Released before its deadline. */
        RELEASED,
        /** Released after its deadline (it was still in flight). */
        EXPIRED
    }

    private byte[] buf = new byte[256];

    private Leases(long ptr) {
        super(ptr, Lib::keyroute_leases_free, "Leases", false);
    }

    /** Opens the lease pool at {@code key} on the Redis at {@code url}, connecting now. */
    public static Leases open(String url, String key) {
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_leases_open(Text.cstr(url, "url"), k, k.length, 0, out));
        return new Leases(out[0]);
    }

    /** Opens the lease pool at {@code key} (hash-tagged) on a Redis Cluster, from
     *  {@code seeds}. */
    public static Leases openCluster(List<String> seeds, String key) {
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        long[] out = new long[1];
        try (Text.NativeList s = Text.NativeList.cstrings(Text.notNull(seeds, "seeds"), "seeds")) {
            KeyrouteException.check(Lib.keyroute_leases_open_cluster(s.ptrs(), s.count, k,
                    k.length, 0, out));
        }
        return new Leases(out[0]);
    }

    /** Adds {@code members} with no lease in flight; returns how many were new. */
    public long seed(Collection<String> members) {
        List<byte[]> all = Pool.utf8(members);
        Text.checkCount(all.size(), "members");
        long[] added = new long[1];
        try (Text.NativeList l = Text.NativeList.of(all)) {
            write(p -> {
                KeyrouteException.check(Lib.keyroute_leases_seed(p, l.ptrs(), l.lens(), l.count, added));
                return null;
            });
        }
        return added[0];
    }

    /** Takes {@code member} out of the pool (its leases in flight stay valid). */
    public void remove(String member) {
        byte[] m = Text.utf8(Text.notNull(member, "member"), "member");
        write(p -> {
            KeyrouteException.check(Lib.keyroute_leases_remove(p, m, m.length));
            return null;
        });
    }

    /** A lease of {@code ttlMs} ms on the member with the fewest in flight; empty when the
     *  pool is empty or missing. */
    public Optional<Lease> acquire(long ttlMs) {
        return write(p -> {
            long[] len = new long[1];
            long[] id = new long[1];
            long[] deadline = new long[1];
            while (true) {
                int st = Lib.keyroute_leases_acquire(p, ttlMs, buf, buf.length, len, id, deadline);
                if (st == ErrorCode.BUFFER_TOO_SMALL.number()) {
                    buf = new byte[Math.toIntExact(len[0])];
                    continue;
                }
                if (!KeyrouteException.found(st)) {
                    return Optional.empty();
                }
                return Optional.of(new Lease(new String(Arrays.copyOf(buf, (int) len[0]),
                        StandardCharsets.UTF_8), id[0], deadline[0]));
            }
        });
    }

    /** Ends lease {@code leaseId}, at most once. */
    public Released release(long leaseId) {
        return write(p -> {
            int[] result = new int[1];
            KeyrouteException.check(Lib.keyroute_leases_release(p, leaseId, result));
            return Released.values()[result[0]];
        });
    }

    /** Ends every lease past its deadline; returns how many. */
    public long reclaim() {
        return write(p -> {
            long[] count = new long[1];
            KeyrouteException.check(Lib.keyroute_leases_reclaim(p, count));
            return count[0];
        });
    }
}
