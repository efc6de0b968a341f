package org.keyroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * LeastUsed and SmartCache on a real redis-server: the one {@code make test-java} starts
 * (bindings-c/tests/with_redis.sh, URL in KEYROUTE_TEST_REDIS_URL). Without it (a bare
 * JUnit run) these tests are skipped; make sets {@code -Dkeyroute.requireRedis=true}, so
 * they cannot be skipped silently there.
 */
class RedisTest {
    static String url() {
        String url = System.getenv("KEYROUTE_TEST_REDIS_URL");
        if (Boolean.getBoolean("keyroute.requireRedis")) {
            assertTrue(url != null && !url.isEmpty(), "KEYROUTE_TEST_REDIS_URL is not set");
        }
        Assumptions.assumeTrue(url != null && !url.isEmpty(), "no redis-server");
        return url;
    }

    static String fresh(String what) {
        return "{java-test}:" + what + ":" + UUID.randomUUID();
    }

    @Test
    void leastUsedSeedsPicksAndRemoves() {
        try (LeastUsed lu = LeastUsed.open(url(), fresh("pool"))) {
            assertEquals(Optional.empty(), lu.pick());
            assertEquals(3, lu.seed(List.of("p1", "p2", "p3"), 0));
            assertEquals(0, lu.seed(List.of("p1"), 5));
            assertEquals(Optional.of("p1"), lu.pick());
            assertEquals(Optional.of("p2"), lu.pick());
            assertEquals(Optional.of("p3"), lu.pick());
            assertEquals(Optional.of("p1"), lu.pick());
            assertEquals(2, lu.count("p1"));
            assertEquals(2, lu.remove("p1"));
            assertEquals(ErrorCode.UNKNOWN_NODE,
                    assertThrows(NodeNotFoundException.class, () -> lu.remove("p1")).code());
            String longName = "m".repeat(1000);
            lu.seed(List.of(longName), 0);
            assertEquals(Optional.of(longName), lu.pick());
            assertEquals(ErrorCode.EMPTY_MEMBER, assertThrows(KeyrouteException.class,
                    () -> lu.seed(List.of(""), 0)).code());
        }
    }

    @Test
    void leastUsedErrorsAndClose() {
        RedisException e = assertThrows(RedisException.class,
                () -> LeastUsed.open("redis://127.0.0.1:1/", "k", 500));
        assertEquals(ErrorCode.REDIS_CONNECT, e.code());
        assertEquals(ErrorCode.REDIS_BAD_URL, assertThrows(KeyrouteException.class,
                () -> LeastUsed.open("http://x", "k")).code());
        LeastUsed lu = LeastUsed.open(url(), fresh("pool"));
        lu.close();
        assertEquals(ErrorCode.INVALID_HANDLE,
                assertThrows(KeyrouteException.class, lu::pick).code());
    }

    @Test
    void sixteenThreadsPickThroughOneLeastUsed() throws Exception {
        String key = fresh("pool16");
        List<String> members = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            members.add("proxy-" + i);
        }
        try (LeastUsed lu = LeastUsed.open(url(), key)) {
            lu.seed(members, 0);
            ExecutorService pool = Executors.newFixedThreadPool(16);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Map<String, Integer>>> fs = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                fs.add(pool.submit(() -> {
                    start.await();
                    Map<String, Integer> got = new HashMap<>();
                    for (int i = 0; i < 50; i++) {
                        got.merge(lu.pick().orElseThrow(), 1, Integer::sum);
                    }
                    return got;
                }));
            }
            start.countDown();
            Map<String, Integer> all = new HashMap<>();
            for (Future<Map<String, Integer>> f : fs) {
                f.get(60, TimeUnit.SECONDS).forEach((k, v) -> all.merge(k, v, Integer::sum));
            }
            pool.shutdown();
            // 800 picks over 8 members, least-used first: exactly 100 each.
            for (String m : members) {
                assertEquals(100, all.get(m), m + " in " + all);
                assertEquals(100, lu.count(m));
            }
        }
    }

    @Test
    void smartCacheLoadsOnceAndServes() {
        try (SmartCache cache = SmartCache.open(url())) {
            String client = "c-" + UUID.randomUUID();
            AtomicInteger loads = new AtomicInteger();
            byte[] v = cache.getOrLoad(client, "profile", () -> {
                loads.incrementAndGet();
                return "hello".getBytes(StandardCharsets.UTF_8);
            });
            assertArrayEquals("hello".getBytes(StandardCharsets.UTF_8), v);
            byte[] again = cache.getOrLoad(client, "profile", () -> {
                loads.incrementAndGet();
                return new byte[] {1};
            });
            assertArrayEquals(v, again);
            assertEquals(1, loads.get());
            assertTrue(cache.invalidate(client, "profile"));
            assertArrayEquals(new byte[0], cache.getOrLoad(client, "empty", () -> new byte[0]));
        }
    }

    @Test
    void aThrowingLoaderIsABackendError() {
        try (SmartCache cache = SmartCache.open(url())) {
            String client = "c-" + UUID.randomUUID();
            IllegalStateException boom = new IllegalStateException("db down");
            BackendException e = assertThrows(BackendException.class,
                    () -> cache.getOrLoad(client, "profile", () -> {
                        throw boom;
                    }));
            assertEquals(ErrorCode.BACKEND_ERROR, e.code());
            assertEquals("IllegalStateException", e.backendCode());
            assertTrue(e.backendMessage().contains("db down"), e.getMessage());
            assertEquals(boom, e.getCause());
            // cached for the negative TTL: the next caller gets it without loading
            BackendException cached = assertThrows(BackendException.class,
                    () -> cache.getOrLoad(client, "profile", () -> new byte[] {1}));
            assertTrue(cached.cached(), cached.getMessage());
            assertEquals("IllegalStateException", cached.backendCode());
            KeyrouteException coded = assertThrows(BackendException.class,
                    () -> cache.getOrLoad(client, "other", () -> {
                        throw KeyrouteException.of(ErrorCode.TOO_LARGE, "x");
                    }));
            assertEquals("TOO_LARGE", ((BackendException) coded).backendCode());
            assertInstanceOf(BackendException.class, assertThrows(KeyrouteException.class,
                    () -> cache.getOrLoad(client, "null", () -> null)));
            assertEquals(ErrorCode.BAD_KIND, assertThrows(KeyrouteException.class,
                    () -> cache.getOrLoad(client, "a{b}", () -> new byte[0])).code());
        }
    }

    @Test
    void concurrentCallersShareOneLoad() throws Exception {
        SmartCache cache = SmartCache.open(url());
        {
            String client = "c-" + UUID.randomUUID();
            AtomicInteger loads = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(16);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<byte[]>> fs = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                fs.add(pool.submit(() -> {
                    start.await();
                    return cache.getOrLoad(client, "slow", () -> {
                        loads.incrementAndGet();
                        try {
                            Thread.sleep(200);
                        } catch (InterruptedException e) {
                            throw new IllegalStateException(e);
                        }
                        return new byte[] {42};
                    });
                }));
            }
            start.countDown();
            for (Future<byte[]> f : fs) {
                assertArrayEquals(new byte[] {42}, f.get(30, TimeUnit.SECONDS));
            }
            pool.shutdown();
            assertEquals(1, loads.get());
            cache.close();
            assertEquals(ErrorCode.INVALID_HANDLE, assertThrows(KeyrouteException.class,
                    () -> cache.getOrLoad(client, "slow", () -> new byte[0])).code());
        }
    }

    /** Two JVMs ask for one cold key at once: one loader runs, both get its value. */
    @Test
    void singleFlightAcrossTwoJvms() throws Exception {
        String client = "c-" + UUID.randomUUID();
        long startAt = System.currentTimeMillis() + 2500;
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> procs = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            procs.add(new ProcessBuilder(java, "-cp", System.getProperty("keyroute.classpath", System.getProperty("java.class.path")),
                    "org.keyroute.SingleFlightMain", url(), client, Long.toString(startAt))
                    .redirectErrorStream(true).start());
        }
        int loaded = 0;
        List<String> values = new ArrayList<>();
        for (Process p : procs) {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), out);
            for (String line : out.split("\n")) {
                if (line.equals("LOADED")) {
                    loaded++;
                } else if (line.startsWith("VALUE ")) {
                    values.add(line.substring(6));
                }
            }
        }
        assertEquals(1, loaded, "loaders run across the two JVMs");
        assertEquals(2, values.size());
        assertEquals(values.get(0), values.get(1));
    }

    @Test
    void sessionsCreateTouchDestroy() {
        try (Sessions sessions = Sessions.open(url())) {
            String client = "c-" + UUID.randomUUID();
            Sessions.Created c = sessions.create(client, "v1", new byte[] {1, 2, 3});
            assertEquals(Limits.SESSION_ID_LENGTH, c.sid().length());
            assertTrue(c.expiresAtMs() > System.currentTimeMillis() - 60_000);
            assertFalse(c.toString().contains(c.sid()));
            Sessions.Session s = sessions.touch(c.sid(), "v1");
            assertEquals(client, s.client());
            assertArrayEquals(new byte[] {1, 2, 3}, s.data());
            assertEquals("v1", s.version());
            VersionMismatchException vm = assertThrows(VersionMismatchException.class,
                    () -> sessions.touch(c.sid(), "v2"));
            assertEquals("v1", vm.storedVersion());
            assertEquals(ErrorCode.VERSION_MISMATCH, vm.code());
            assertTrue(sessions.destroy(c.sid()));
            assertFalse(sessions.destroy(c.sid()));
            SessionExpiredException gone = assertThrows(SessionExpiredException.class,
                    () -> sessions.touch(c.sid(), "v1"));
            assertEquals(ErrorCode.SESSION_EXPIRED, gone.code());
            assertFalse(gone.getMessage().contains(c.sid()), "the message never shows the id");
            assertEquals(ErrorCode.BAD_SESSION_ID, assertThrows(KeyrouteException.class,
                    () -> sessions.touch("nope", "v1")).code());
        }
    }

    @Test
    void leasesAcquireReleaseReclaim() throws Exception {
        try (Leases leases = Leases.open(url(), fresh("leases"))) {
            assertTrue(leases.acquire(10_000).isEmpty());
            assertEquals(2, leases.seed(List.of("w1", "w2")));
            Leases.Lease a = leases.acquire(10_000).orElseThrow();
            Leases.Lease b = leases.acquire(50).orElseThrow();
            assertEquals("w1", a.member());
            assertEquals("w2", b.member());
            assertTrue(a.deadlineMs() > b.deadlineMs());
            assertEquals(Leases.Released.RELEASED, leases.release(a.id()));
            assertEquals(Leases.Released.NOT_IN_FLIGHT, leases.release(a.id()));
            Thread.sleep(120);
            assertEquals(1, leases.reclaim());
            assertEquals(Leases.Released.NOT_IN_FLIGHT, leases.release(b.id()));
            assertEquals(ErrorCode.BAD_TTL, assertThrows(KeyrouteException.class,
                    () -> leases.acquire(0)).code());
            leases.remove("w1");
            assertEquals("w2", leases.acquire(1000).orElseThrow().member());
        }
    }

    @Test
    void devicesBindAndAffinityCaps() {
        try (Devices devices = Devices.open(url())) {
            String device = "d-" + UUID.randomUUID();
            assertTrue(devices.clientOf(device).isEmpty());
            devices.bind(device, "client-1", 60_000);
            assertEquals(Optional.of("client-1"), devices.clientOf(device));
            assertEquals(ErrorCode.BAD_DEVICE_ID, assertThrows(KeyrouteException.class,
                    () -> devices.bind("a{b}", "c", 1000)).code());
        }
        try (Affinity aff = Affinity.open(url(), fresh("aff"))) {
            List<String> nodes = List.of("n1", "n2");
            Affinity.Taken t = aff.take("item-1", nodes, 1, 0).orElseThrow();
            assertEquals(0, t.index());
            assertTrue(t.placed());
            assertEquals(0, aff.take("item-1", nodes, 1, 0).orElseThrow().index());
            assertFalse(aff.take("item-1", nodes, 1, 0).orElseThrow().placed());
            assertEquals(1, aff.take("item-2", nodes, 1, 0).orElseThrow().index());
            assertTrue(aff.take("item-3", nodes, 1, 0).isEmpty(), "every candidate at the cap");
            assertTrue(aff.release("item-1"));
            assertFalse(aff.release("item-1"));
            assertEquals(0, aff.take("item-3", nodes, 1, 0).orElseThrow().index());
        }
    }
}
