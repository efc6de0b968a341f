package org.keyroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * LeastUsed, Leases, SmartCache and Sessions on a real 3-master Redis Cluster (the one
 * {@code make test-java} starts with bindings-c/tests/with_cluster.sh; seeds in
 * KEYROUTE_TEST_CLUSTER_SEEDS). Skipped without it, except under make
 * ({@code -Dkeyroute.requireCluster=true}).
 */
class ClusterTest {
    static List<String> seeds() {
        String s = System.getenv("KEYROUTE_TEST_CLUSTER_SEEDS");
        if (Boolean.getBoolean("keyroute.requireCluster")) {
            assertTrue(s != null && !s.isEmpty(), "KEYROUTE_TEST_CLUSTER_SEEDS is not set");
        }
        Assumptions.assumeTrue(s != null && !s.isEmpty(), "no Redis Cluster");
        return Arrays.asList(s.split(","));
    }

    @Test
    void poolsLeasesCacheAndSessionsOnACluster() {
        List<String> seeds = seeds();
        // keys of three hash tags, so that the masters differ
        for (String tag : List.of("a", "b", "c")) {
            String key = "{" + tag + "-" + UUID.randomUUID() + "}:pool";
            try (LeastUsed lu = LeastUsed.openCluster(seeds, key)) {
                lu.seed(List.of("p1", "p2"), 0);
                Map<String, Integer> got = new HashMap<>();
                for (int i = 0; i < 10; i++) {
                    got.merge(lu.pick().orElseThrow(), 1, Integer::sum);
                }
                assertEquals(Map.of("p1", 5, "p2", 5), got);
            }
            try (Leases leases = Leases.openCluster(seeds, "{" + tag + "}:leases:" + UUID.randomUUID())) {
                leases.seed(List.of("w"));
                Leases.Lease l = leases.acquire(10_000).orElseThrow();
                assertEquals(Leases.Released.RELEASED, leases.release(l.id()));
            }
        }
        try (SmartCache cache = SmartCache.openCluster(seeds)) {
            AtomicInteger loads = new AtomicInteger();
            for (int i = 0; i < 6; i++) {
                String client = "c-" + i + "-" + UUID.randomUUID();
                byte[] v = cache.getOrLoad(client, "k", () -> {
                    loads.incrementAndGet();
                    return new byte[] {7};
                });
                assertArrayEquals(new byte[] {7}, v);
                assertArrayEquals(v, cache.getOrLoad(client, "k", () -> new byte[] {8}));
            }
            assertEquals(6, loads.get());
        }
        try (Sessions sessions = Sessions.openCluster(seeds)) {
            Sessions.Created c = sessions.create("client-x", "v1", new byte[] {1});
            assertEquals("client-x", sessions.touch(c.sid(), "v1").client());
            assertTrue(sessions.destroy(c.sid()));
        }
    }
}
