package org.keyroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RingTest {
    static final List<String> NODES = List.of("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211");

    @Test
    void ringLooksUpOneAndMany() {
        try (Ring r = new Ring("libketama", NODES)) {
            assertEquals(3, r.size());
            assertEquals("libketama", r.profile());
            String owner = r.get("user:42");
            assertTrue(NODES.contains(owner));
            assertEquals(owner, r.get("user:42".getBytes(StandardCharsets.UTF_8)));
            List<String> three = r.getN("user:42", 5);
            assertEquals(3, three.size());
            assertEquals(owner, three.get(0));
            String[] keys = {"a", "b", "", "ключ", "user:42"};
            int[] idx = r.getManyIndexes(keys);
            for (int i = 0; i < keys.length; i++) {
                assertEquals(r.get(keys[i]), r.nodes().get(idx[i]));
            }
            assertEquals(0, r.getManyIndexes(new String[0]).length);
        }
    }

    @Test
    void fromSpecAndChanges() {
        try (Ring r = Ring.fromSpec("libmemcached", "a:1=1,b:2=3")) {
            assertEquals(List.of("a:1", "b:2"), r.nodes());
            r.add("c:3");
            assertEquals(3, r.size());
            r.remove("a:1");
            assertEquals(List.of("b:2", "c:3"), r.nodes());
            NodeNotFoundException e = assertThrows(NodeNotFoundException.class, () -> r.remove("zz"));
            assertEquals(ErrorCode.UNKNOWN_NODE, e.code());
            r.remove("b:2");
            r.remove("c:3");
            assertNull(r.get("x"));
            assertArrayEquals(new int[] {Ring.NO_NODE}, r.getManyIndexes(new String[] {"x"}));
            assertEquals(List.of(), r.getN("x", 2));
        }
    }

    @Test
    void errorsCarryTheirCodes() {
        KeyrouteException e = assertThrows(KeyrouteException.class, () -> new Ring("nope", NODES));
        assertEquals(ErrorCode.UNKNOWN_PROFILE, e.code());
        assertEquals(17, e.code().number());
        assertTrue(e.getMessage().contains("nope"), e.getMessage());
        e = assertThrows(KeyrouteException.class, () -> new Ring("libketama", List.of("a", "a")));
        assertEquals(ErrorCode.DUPLICATE_NODE, e.code());
        try (Ring r = new Ring("native", NODES)) {
            assertEquals(ErrorCode.ZERO_WEIGHT,
                    assertThrows(KeyrouteException.class, () -> r.add("d", 0)).code());
            assertEquals(ErrorCode.BAD_UTF8,
                    assertThrows(KeyrouteException.class, () -> r.get("\ud800")).code());
            assertEquals(ErrorCode.NULL_ARGUMENT,
                    assertThrows(KeyrouteException.class, () -> r.get((String) null)).code());
            assertEquals(ErrorCode.OUT_OF_RANGE,
                    assertThrows(KeyrouteException.class, () -> r.getN("k", -1)).code());
        }
        assertEquals(ErrorCode.INVALID_HANDLE, ErrorCode.fromNumber(8));
    }

    @Test
    void useAfterCloseThrowsAndNeverCrashes() {
        Ring r = new Ring("native", NODES);
        r.close();
        r.close();
        assertTrue(r.isClosed());
        KeyrouteException e = assertThrows(KeyrouteException.class, () -> r.get("k"));
        assertEquals(ErrorCode.INVALID_HANDLE, e.code());
        assertEquals(ErrorCode.INVALID_HANDLE,
                assertThrows(KeyrouteException.class, () -> r.getManyIndexes(new String[] {"k"})).code());
        assertEquals(ErrorCode.INVALID_HANDLE,
                assertThrows(KeyrouteException.class, () -> r.add("x")).code());
        Router router = Router.build("guava-jump", NODES);
        router.close();
        assertEquals(ErrorCode.INVALID_HANDLE,
                assertThrows(KeyrouteException.class, () -> router.get("k")).code());
    }

    @Test
    void sixteenThreadsShareOneRing() throws Exception {
        List<String> nodes = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            nodes.add("node-" + i);
        }
        try (Ring r = new Ring("libketama", nodes)) {
            String[] keys = new String[2000];
            for (int i = 0; i < keys.length; i++) {
                keys[i] = "key-" + i;
            }
            int[] want = r.getManyIndexes(keys);
            ExecutorService pool = Executors.newFixedThreadPool(16);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> done = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                final int me = t;
                done.add(pool.submit(() -> {
                    start.await();
                    int n = 0;
                    for (int round = 0; round < 20; round++) {
                        for (int i = me; i < keys.length; i += 7) {
                            if (!nodes.get(want[i]).equals(r.get(keys[i]))) {
                                throw new AssertionError("thread " + me + ": " + keys[i]);
                            }
                            n++;
                        }
                        assertArrayEquals(want, r.getManyIndexes(keys));
                    }
                    return n;
                }));
            }
            start.countDown();
            int total = 0;
            for (Future<Integer> f : done) {
                total += f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertTrue(total > 16 * 20 * 280, "lookups: " + total);
        }
    }

    @Test
    void closeWhileOtherThreadsLookUpNeverCrashes() throws Exception {
        for (int round = 0; round < 20; round++) {
            Ring r = new Ring("native", NODES);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                fs.add(pool.submit(() -> {
                    try {
                        for (int i = 0; i < 10_000; i++) {
                            r.get("k" + i);
                        }
                    } catch (KeyrouteException e) {
                        assertEquals(ErrorCode.INVALID_HANDLE, e.code());
                    }
                }));
            }
            r.close();
            for (Future<?> f : fs) {
                f.get(30, TimeUnit.SECONDS);
            }
            pool.shutdown();
        }
    }

    @Test
    void routerBuildsAndChanges(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        try (Router r = Router.build("guava-jump", NODES)) {
            assertEquals("guava-jump", r.engine());
            String owner = r.get("user:42");
            assertTrue(NODES.contains(owner));
            r.add("10.0.0.4:11211");
            assertEquals(4, r.nodes().size());
            r.remove("10.0.0.4:11211");
            assertEquals(owner, r.get("user:42"));
            assertEquals(owner, r.getN("user:42", 2).get(0));
        }
        try (Router r = Router.build("java-hashcode", List.of("redis-1", "redis-2"), null,
                Map.of("node", "prefix"))) {
            assertEquals("redis", r.get("k"));
        }
        Path conf = dir.resolve("nutcracker.yml");
        Files.writeString(conf, "alpha:\n  listen: 127.0.0.1:22121\n  hash: fnv1a_64\n"
                + "  distribution: ketama\n  servers:\n   - 127.0.0.1:11211:1 a\n"
                + "   - 127.0.0.1:11212:1 b\n");
        try (Router r = Router.fromConfig(conf, null)) {
            assertEquals(2, r.nodes().size());
            assertTrue(r.nodes().contains(r.get("user:42")));
        }
        Files.writeString(conf, "alpha: [\n");
        KeyrouteException e = assertThrows(KeyrouteException.class, () -> Router.fromConfig(conf, null));
        assertEquals(ErrorCode.BAD_CONFIG, e.code());
    }

    @Test
    void slots() {
        assertEquals(12182, Slots.keySlot("foo".getBytes(StandardCharsets.UTF_8)));
        assertEquals(Slots.keySlot("{user1000}.following"), Slots.keySlot("{user1000}.followers"));
        assertArrayEquals(new int[] {12182, Slots.keySlot("bar")}, Slots.keySlots(new String[] {"foo", "bar"}));
        assertEquals("user1000", Slots.hashTag("{user1000}.following"));
        assertEquals("foo{}", Slots.hashTag("foo{}"));
        assertEquals(0, Slots.keySlots(new byte[0][]).length);
    }

    @Test
    void shardedPicksTheOwnersClient() {
        Map<String, StringBuilder> clients = Map.of("a:1", new StringBuilder("a"),
                "b:2", new StringBuilder("b"), "c:3", new StringBuilder("c"));
        try (Sharded<StringBuilder> s = Sharded.of("java-hashcode", clients)) {
            for (String k : List.of("x", "y", "user:42")) {
                assertEquals(clients.get(s.nodeFor(k)), s.forKey(k));
            }
        }
        try (Ring ring = new Ring("native", List.of("a:1", "zz"))) {
            assertEquals(ErrorCode.UNKNOWN_NODE, assertThrows(KeyrouteException.class,
                    () -> new Sharded<>(ring, clients)).code());
        }
    }

    @Test
    void versionAndLibrary() {
        assertEquals(Keyroute.VERSION, Keyroute.version());
        assertTrue(Keyroute.nativeLibrary().length() > 0);
        System.out.println("libkeyroute " + Keyroute.version() + " from " + Keyroute.nativeLibrary());
    }

    @Test
    void scriptsAreValuesWithTheirSha1() throws Exception {
        java.util.List<Scripts.Script> all = Scripts.all();
        assertTrue(all.size() >= 20, "scripts: " + all.size());
        java.security.MessageDigest sha1 = java.security.MessageDigest.getInstance("SHA-1");
        for (Scripts.Script s : all) {
            String hex = java.util.HexFormat.of().formatHex(
                    sha1.digest(s.text().getBytes(StandardCharsets.UTF_8)));
            assertEquals(hex, s.sha1(), s.name());
            assertTrue(s.numKeys() >= 0 && !s.summary().isEmpty(), s.name());
        }
        assertEquals("least-used", Scripts.byName("least_used").orElseThrow().name());
        assertTrue(Scripts.byName("nope").isEmpty());
    }

    @Test
    void slotMapOwnsSlots() {
        try (SlotMap m = new SlotMap()) {
            int a = m.addMaster("id-a", "10.0.0.1", 7000);
            int b = m.addMaster("", "[::1]", 7001);
            int r = m.addReplica(a, "", "10.0.0.3", 7002);
            m.assign(0, 8191, a);
            assertFalse(m.isComplete());
            m.assign(8192, 16383, b);
            assertTrue(m.isComplete());
            assertEquals(a, m.owner(0).getAsInt());
            assertEquals(b, m.owner(16383).getAsInt());
            int slot = Slots.keySlot("foo");
            assertEquals(slot < 8192 ? a : b, m.ownerOfKey("foo").getAsInt());
            assertEquals("::1", m.node(b).host());
            assertEquals(a, m.node(r).masterIndex());
            assertTrue(m.node(a).isMaster());
            assertEquals("id-a", m.node(a).id());
            m.unassign(0, 0);
            assertTrue(m.owner(0).isEmpty());
            assertEquals(ErrorCode.BAD_SLOT, assertThrows(KeyrouteException.class, () -> m.owner(16384)).code());
            assertEquals(ErrorCode.NOT_A_MASTER, assertThrows(KeyrouteException.class, () -> m.assign(0, 1, r)).code());
            assertEquals(ErrorCode.OUT_OF_RANGE, assertThrows(KeyrouteException.class, () -> m.node(9)).code());
        }
    }

    @Test
    void planMovesSlotsToTheWeights() {
        try (SlotMap m = new SlotMap()) {
            int a = m.addMaster("", "10.0.0.1", 7000);
            int b = m.addMaster("", "10.0.0.2", 7000);
            m.assign(0, 16383, a);
            try (Plan p = Plan.of(m, new int[] {a, b}, new long[] {1, 1})) {
                assertEquals(8192, p.slotsMoved());
                assertEquals(8192, p.targets().get(1).after());
                Plan.Move first = p.moves().get(0);
                assertEquals(a, first.from());
                assertEquals(b, first.to());
                p.apply(m);
                assertEquals(b, m.owner(first.first()).getAsInt());
                assertEquals(ErrorCode.STALE_PLAN, assertThrows(KeyrouteException.class, () -> p.apply(m)).code());
            }
            try (Plan p = Plan.fromSpec(m, "10.0.0.1:7000=1,10.0.0.2:7000=0")) {
                assertEquals(8192, p.slotsMoved());
            }
        }
    }
}
