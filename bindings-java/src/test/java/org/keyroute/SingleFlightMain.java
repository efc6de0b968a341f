package org.keyroute;

import java.nio.charset.StandardCharsets;

/**
 * One process of the two-JVM single-flight test ({@link RedisTest}): at the agreed start
 * time, asks the cache for (client, kind) with a loader that takes a second; prints
 * {@code LOADED} if its loader ran, then {@code VALUE <value>}.
 */
public final class SingleFlightMain {
    private SingleFlightMain() {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String client = args[1];
        long startAt = Long.parseLong(args[2]);
        try (SmartCache cache = SmartCache.open(url)) {
            Thread.sleep(Math.max(0, startAt - System.currentTimeMillis()));
            byte[] v = cache.getOrLoad(client, "flight", 10_000, () -> {
                System.out.println("LOADED");
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return ("from-" + ProcessHandle.current().pid()).getBytes(StandardCharsets.UTF_8);
            });
            System.out.println("VALUE " + new String(v, StandardCharsets.UTF_8));
        }
    }
}
