package org.keyroute;

import com.sun.jna.Pointer;
import java.lang.ref.Reference;
import java.util.function.Supplier;

/**
 * The smart cache on Redis ({@code keyroute::cache}): {@link #getOrLoad} serves a value
 * from Redis, or runs the loader in exactly one caller across every process sharing the
 * store while the others wait (single flight), with soft and hard TTLs, a lease extended
 * while the loader runs, and failures cached for the negative TTL.
 *
 * <p><b>Thread safety:</b> safe to share, and meant to be: concurrent callers of one key in
 * this process share one Redis round trip. A loader runs in the calling thread; it may
 * call this cache for other keys, but must not close it.
 */
public final class SmartCache extends Handle {
    /** The default deadline of {@link #getOrLoad(String, String, Supplier)}, in ms. */
    public static final long DEFAULT_TIMEOUT_MS = 5_000;

    private SmartCache(long ptr) {
        super(ptr, Lib::keyroute_cache_free, "SmartCache", true);
    }

    /** Opens the cache on the Redis server at {@code url} with the default options. */
    public static SmartCache open(String url) {
        long[] options = new long[7];
        KeyrouteException.check(Lib.keyroute_cache_options_default(options));
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_cache_open(Text.cstr(url, "url"), options, out));
        return new SmartCache(out[0]);
    }

    /** Opens the cache on the Redis Cluster reached through any of {@code seeds}. */
    public static SmartCache openCluster(java.util.List<String> seeds) {
        long[] options = new long[7];
        KeyrouteException.check(Lib.keyroute_cache_options_default(options));
        long[] out = new long[1];
        try (Text.NativeList s = Text.NativeList.cstrings(Text.notNull(seeds, "seeds"), "seeds")) {
            KeyrouteException.check(Lib.keyroute_cache_open_cluster(s.ptrs(), s.count, options, out));
        }
        return new SmartCache(out[0]);
    }

    /** The value of {@code kind} for {@code client}, loaded by {@code loader} if needed,
     *  waiting at most {@link #DEFAULT_TIMEOUT_MS}. */
    public byte[] getOrLoad(String client, String kind, Supplier<byte[]> loader) {
        return getOrLoad(client, kind, DEFAULT_TIMEOUT_MS, loader);
    }

    /**
     * The value of {@code kind} for {@code client}: from Redis, else from {@code loader}
     * (run by one caller across every process; the others wait), at most
     * {@code timeoutMs} ms ({@link CacheTimeoutException} after).
     *
     * <p>A loader that throws, or returns null, fails the load: every waiting caller gets
     * a {@link BackendException} with the loader's code (a {@link KeyrouteException}'s
     * code, else the exception's simple class name) and message; this caller's has the
     * thrown exception as its cause.
     */
    public byte[] getOrLoad(String client, String kind, long timeoutMs, Supplier<byte[]> loader) {
        byte[] c = Text.cstr(client, "client");
        byte[] k = Text.cstr(kind, "kind");
        Text.notNull(loader, "loader");
        Throwable[] thrown = new Throwable[1];
        Lib.Loader callback = (ctx, cl, kd, load) -> {
            try {
                byte[] v = loader.get();
                if (v == null) {
                    throw new NullPointerException("the loader returned null");
                }
                return Lib.keyroute_load_write(load, v, v.length) == 0 ? 0 : 1;
            } catch (Throwable t) {
                thrown[0] = t;
                String code = t instanceof KeyrouteException
                        ? ((KeyrouteException) t).code().name() : t.getClass().getSimpleName();
                String msg = String.valueOf(t.getMessage());
                try {
                    Lib.keyroute_load_fail(load, Text.cstr(code, "code"), Text.cstr(msg, "message"));
                } catch (RuntimeException e) {
                    Lib.keyroute_load_fail(load, null, Text.cstr("the loader threw "
                            + t.getClass().getName(), "message"));
                }
                return 1;
            }
        };
        try {
            return read(p -> {
                long[] value = new long[1];
                long[] len = new long[1];
                int st = Lib.keyroute_cache_get_or_load(p, c, k, timeoutMs, callback, 0, value, len);
                if (st != 0) {
                    KeyrouteException e = KeyrouteException.fromStatus(st);
                    if (thrown[0] != null) {
                        e.initCause(thrown[0]);
                    }
                    throw e;
                }
                try {
                    return len[0] == 0 ? new byte[0] : new Pointer(value[0]).getByteArray(0,
                            Math.toIntExact(len[0]));
                } finally {
                    Lib.keyroute_value_free(value[0]);
                }
            });
        } finally {
            Reference.reachabilityFence(callback);
        }
    }

    /** Drops the value of {@code kind} for {@code client}; true if there was one. */
    public boolean invalidate(String client, String kind) {
        byte[] c = Text.cstr(client, "client");
        byte[] k = Text.cstr(kind, "kind");
        return read(p -> {
            int[] existed = new int[1];
            KeyrouteException.check(Lib.keyroute_cache_invalidate(p, c, k, existed));
            return existed[0] != 0;
        });
    }
}
