package org.keyroute;

import com.sun.jna.Pointer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * Device bindings on Redis: which client a device is logged in as, for a TTL
 * ({@code keyroute::cache} devices; the smart cache's warm-up by device reads them).
 *
 * <p><b>Thread safety:</b> safe to share; calls run at once.
 */
public final class Devices extends Handle {
    private Devices(long ptr) {
        super(ptr, Lib::keyroute_devices_free, "Devices", false);
    }

    /** Opens device bindings on the Redis at {@code url}, connecting now. */
    public static Devices open(String url) {
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_devices_open(Text.cstr(url, "url"), 0, out));
        return new Devices(out[0]);
    }

    /** Binds {@code device} to {@code client} for {@code ttlMs} ms, replacing any binding. */
    public void bind(String device, String client, long ttlMs) {
        byte[] d = Text.cstr(device, "device");
        byte[] c = Text.cstr(client, "client");
        read(p -> {
            KeyrouteException.check(Lib.keyroute_devices_bind(p, d, c, ttlMs));
            return null;
        });
    }

    /** The client {@code device} is bound to, or empty (unknown device, or expired). */
    public Optional<String> clientOf(String device) {
        byte[] d = Text.cstr(device, "device");
        return read(p -> {
            long[] value = new long[1];
            long[] len = new long[1];
            int st = Lib.keyroute_devices_client_of(p, d, value, len);
            if (st == ErrorCode.NOT_FOUND.number()) {
                return Optional.empty();
            }
            KeyrouteException.check(st);
            try {
                return Optional.of(new String(len[0] == 0 ? new byte[0]
                        : new Pointer(value[0]).getByteArray(0, Math.toIntExact(len[0])),
                        StandardCharsets.UTF_8));
            } finally {
                Lib.keyroute_value_free(value[0]);
            }
        });
    }
}
