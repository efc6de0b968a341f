package org.keyroute;

/**
 * Sessions on Redis ({@code keyroute::cache} sessions): an id given to a client at login,
 * holding the client, its data and the service version that made it; sliding expiry on
 * every {@link #touch}, and an optional maximum age.
 *
 * <p><b>Thread safety:</b> safe to share; calls run at once.
 *
 * <p>A session id is the session's only secret: messages never show it; do not log it.
 */
public final class Sessions extends Handle {
    /** A new session: its id and expiry (ms since the Unix epoch, server time). */
    public static final class Created {
        private final String sid;
        private final long expiresAtMs;

        Created(String sid, long expiresAtMs) {
            this.sid = sid;
            this.expiresAtMs = expiresAtMs;
        }

        /** The session id (give it to the client; never log it). */
        public String sid() {
            return sid;
        }

        /** When it expires unless touched, in ms since the Unix epoch. */
        public long expiresAtMs() {
            return expiresAtMs;
        }

        @Override
        public String toString() {
            return "Created[sid=(hidden), expiresAtMs=" + expiresAtMs + "]";
        }
    }

    /** A live session, as {@link #touch} read it. */
    public static final class Session {
        private final String client;
        private final byte[] data;
        private final String version;
        private final long expiresAtMs;

        Session(String client, byte[] data, String version, long expiresAtMs) {
            this.client = client;
            this.data = data;
            this.version = version;
            this.expiresAtMs = expiresAtMs;
        }

        /** The session's client. */
        public String client() {
            return client;
        }

        /** The data given at creation (a copy). */
        public byte[] data() {
            return data.clone();
        }

        /** The service version that created it. */
        public String version() {
            return version;
        }

        /** The new expiry, in ms since the Unix epoch. */
        public long expiresAtMs() {
            return expiresAtMs;
        }
    }

    private Sessions(long ptr) {
        super(ptr, Lib::keyroute_sessions_free, "Sessions", false);
    }

    /** Opens sessions on the Redis at {@code url} with the defaults (TTL 30 minutes, no
     *  maximum age, data up to 1 MiB). */
    public static Sessions open(String url) {
        return open(url, 0, 0);
    }

    /** As {@link #open(String)} with the idle TTL and the maximum age in ms (0: the
     *  default, no maximum age). */
    public static Sessions open(String url, long ttlMs, long maxAgeMs) {
        long[] options = new long[4];
        KeyrouteException.check(Lib.keyroute_session_options_default(options));
        if (ttlMs != 0) {
            options[0] = ttlMs;
        }
        if (maxAgeMs != 0) {
            options[1] = maxAgeMs;
        }
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_sessions_open(Text.cstr(url, "url"), options, out));
        return new Sessions(out[0]);
    }

    /** Opens sessions on the Redis Cluster reached through any of {@code seeds}, with the
     *  defaults. */
    public static Sessions openCluster(java.util.List<String> seeds) {
        long[] options = new long[4];
        KeyrouteException.check(Lib.keyroute_session_options_default(options));
        long[] out = new long[1];
        try (Text.NativeList s = Text.NativeList.cstrings(Text.notNull(seeds, "seeds"), "seeds")) {
            KeyrouteException.check(Lib.keyroute_sessions_open_cluster(s.ptrs(), s.count, options, out));
        }
        return new Sessions(out[0]);
    }

    /** Creates a session for {@code client}, made by service {@code version}, holding
     *  {@code data}. */
    public Created create(String client, String version, byte[] data) {
        byte[] c = Text.cstr(client, "client");
        byte[] v = Text.cstr(version, "version");
        byte[] d = data == null ? new byte[0] : data;
        return read(p -> {
            byte[] sid = new byte[64];
            long[] expires = new long[1];
            KeyrouteException.check(Lib.keyroute_sessions_create(p, c, v, d.length == 0 ? null : d,
                    d.length, sid, sid.length, expires));
            int n = 0;
            while (n < sid.length && sid[n] != 0) {
                n++;
            }
            return new Created(Text.decode(sid, 0, n, "the session id"), expires[0]);
        });
    }

    /**
     * Checks session {@code sid} and slides its expiry: its client, data and version.
     * {@link SessionExpiredException} when it does not exist or expired;
     * {@link VersionMismatchException} (with {@code storedVersion()}) when another service
     * version made it.
     */
    public Session touch(String sid, String version) {
        byte[] s = Text.cstr(sid, "sid");
        byte[] v = Text.cstr(version, "version");
        return read(p -> {
            long[] info = new long[7];
            int st = Lib.keyroute_sessions_touch(p, s, v, info);
            try {
                if (st == ErrorCode.VERSION_MISMATCH.number()) {
                    String message = Text.cstring(Lib.keyroute_last_error_message());
                    throw new VersionMismatchException(message,
                            info[4] == 0 ? null : Text.string(info[4], info[5]));
                }
                KeyrouteException.check(st);
                return new Session(Text.string(info[0], info[1]), Text.bytes(info[2], info[3]),
                        Text.string(info[4], info[5]), info[6]);
            } finally {
                Lib.keyroute_session_info_clear(info);
            }
        });
    }

    /** Removes session {@code sid}; true if it was live. */
    public boolean destroy(String sid) {
        byte[] s = Text.cstr(sid, "sid");
        return read(p -> {
            int[] wasLive = new int[1];
            KeyrouteException.check(Lib.keyroute_sessions_destroy(p, s, wasLive));
            return wasLive[0] != 0;
        });
    }
}
