package org.keyroute;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The shared vectors (tests/vectors/ring, slot, fleet and fleet_routes.json, made by the
 * real peers) through the Java classes: every key's owner, one at a time and in one batch.
 */
class VectorsTest {
    @Test
    void ringsAndSlotsMatchThePeers() throws Exception {
        Ring ring = null;
        String file = null;
        int replicasN = 0;
        long points = -1;
        List<String> keys = new ArrayList<>();
        List<String> want = new ArrayList<>();
        int rings = 0;
        int checked = 0;
        List<byte[]> slotKeys = new ArrayList<>();
        List<Integer> slotWant = new ArrayList<>();
        for (String line : Lines.read("keyroute.vectors")) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "ring":
                    file = f[1];
                    ring = Ring.withOptions(f[2], Long.parseLong(f[3]), Long.parseLong(f[4]),
                            Long.parseLong(f[5]));
                    points = Long.parseLong(f[6]);
                    replicasN = Integer.parseInt(f[7]);
                    keys.clear();
                    want.clear();
                    rings++;
                    break;
                case "node":
                    ring.add(Lines.text(f[1]), Long.parseLong(f[2]));
                    break;
                case "key": {
                    String k = Lines.text(f[1]);
                    String e = Lines.text(f[2]);
                    assertEquals(e, ring.get(Lines.unhex(f[1])), file + ": key " + k);
                    if (replicasN > 0 && f.length > 3) {
                        List<String> reps = new ArrayList<>();
                        for (String r : f[3].split(",")) {
                            reps.add(Lines.text(r));
                        }
                        assertEquals(reps, ring.getN(k, replicasN), file + ": replicas of " + k);
                    }
                    keys.add(k);
                    want.add(e);
                    checked++;
                    break;
                }
                case "end": {
                    String[] ks = keys.toArray(new String[0]);
                    int[] idx = ring.getManyIndexes(ks);
                    List<String> nodes = ring.nodes();
                    for (int i = 0; i < ks.length; i++) {
                        assertEquals(want.get(i), nodes.get(idx[i]), file + ": batch key " + ks[i]);
                    }
                    assertEquals(want, Arrays.asList(ring.getMany(ks)), file);
                    ring.close();
                    ring = null;
                    break;
                }
                case "slot":
                    slotKeys.add(Lines.unhex(f[1]));
                    slotWant.add(Integer.parseInt(f[2]));
                    break;
                default:
                    break;
            }
        }
        assertTrue(rings >= 40, "ring vector files: " + rings);
        assertTrue(checked > 40_000, "ring keys: " + checked);
        int[] batch = Slots.keySlots(slotKeys.toArray(new byte[0][]));
        for (int i = 0; i < slotKeys.size(); i++) {
            assertEquals((int) slotWant.get(i), Slots.keySlot(slotKeys.get(i)));
            assertEquals((int) slotWant.get(i), batch[i]);
        }
        assertTrue(slotKeys.size() > 5000, "slot cases: " + slotKeys.size());
        System.out.printf("vectors: %d ring files, %d keys, %d slots%n", rings, checked,
                slotKeys.size());
    }

    private static long u64(String s) {
        return s.startsWith("-") ? Long.parseLong(s) : Long.parseUnsignedLong(s);
    }

    private static String codeOf(KeyrouteException e) {
        return e.code().name();
    }

    /** tests/vectors/pool: the model pool's sequences, as the Redis scripts answered them. */
    @Test
    void poolSequencesMatchTheScripts() throws Exception {
        Pool pool = null;
        String where = null;
        int seqs = 0;
        int ops = 0;
        for (String line : Lines.read("keyroute.vectors")) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "pool":
                    pool = new Pool();
                    where = "pool " + f[1];
                    seqs++;
                    break;
                case "seed": {
                    List<byte[]> ms = new ArrayList<>();
                    for (int i = 4; i < f.length; i++) {
                        ms.add(Lines.unhex(f[i]));
                    }
                    String got;
                    try {
                        got = Long.toString(pool.seedBytes(ms, u64(f[1]), !f[2].equals("0")));
                    } catch (KeyrouteException e) {
                        got = codeOf(e);
                    }
                    assertEquals(f[3], got, where + ": " + line);
                    ops++;
                    break;
                }
                case "pick": {
                    java.util.Optional<byte[]> got = pool.pickBytes();
                    if (f[1].equals("NIL")) {
                        assertTrue(got.isEmpty(), where + ": " + line);
                    } else {
                        assertArrayEquals(Lines.unhex(f[1]), got.orElseThrow(), where + ": " + line);
                    }
                    ops++;
                    break;
                }
                case "remove": {
                    String got;
                    try {
                        got = Long.toString(pool.remove(Lines.unhex(f[1])));
                    } catch (NodeNotFoundException e) {
                        got = "NIL";
                    }
                    assertEquals(f[2], got, where + ": " + line);
                    ops++;
                    break;
                }
                case "restore": {
                    String got;
                    try {
                        got = Long.toString(pool.restore(Lines.unhex(f[1]),
                                f[2].equals("keep") ? Restore.KEEP : Restore.AT_MINIMUM));
                    } catch (KeyrouteException e) {
                        got = codeOf(e);
                    }
                    assertEquals(f[3], got, where + ": " + line);
                    ops++;
                    break;
                }
                case "state":
                    assertEquals(Integer.parseInt(f[1]), pool.size(), where + ": " + line);
                    break;
                case "count":
                    assertEquals(u64(f[2]), pool.count(Lines.unhex(f[1])), where + ": " + line);
                    break;
                case "removed":
                    assertEquals(u64(f[2]), pool.removedCount(Lines.unhex(f[1])), where + ": " + line);
                    break;
                case "endpool":
                    pool.close();
                    pool = null;
                    break;
                default:
                    break;
            }
        }
        assertTrue(seqs >= 10 && ops > 2000, seqs + " sequences, " + ops + " ops");
        System.out.printf("pool: %d sequences, %d ops%n", seqs, ops);
    }

    /** One route of fleet_routes.json. */
    private static final class Route {
        String where;
        String engine;
        byte[] config;
        String pool;
        Router.ConfigOptions options = new Router.ConfigOptions();
        List<String> nodes = new ArrayList<>();
        List<Long> weights = new ArrayList<>();
        java.util.Map<String, String> opts = new java.util.LinkedHashMap<>();
        List<String[]> ops = new ArrayList<>();
        Router router;

        Router router() {
            if (router == null) {
                if (config != null) {
                    router = Router.fromConfig(config, pool, options.file(where));
                } else {
                    long[] w = weights.stream().mapToLong(Long::longValue).toArray();
                    router = Router.build(engine, nodes, w, opts);
                }
                for (String[] op : ops) {
                    if (op[0].equals("add")) {
                        router.add(op[1], Long.parseLong(op[2]));
                    } else {
                        router.remove(op[1]);
                    }
                }
            }
            return router;
        }
    }

    @Test
    void fleetRoutesMatchThePeers() throws Exception {
        Route r = null;
        int routes = 0;
        int keys = 0;
        List<String> ks = new ArrayList<>();
        List<String> want = new ArrayList<>();
        for (String line : Lines.read("keyroute.fleet")) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "router":
                    r = new Route();
                    r.where = f[2] + "#" + f[3];
                    r.engine = f[1];
                    ks.clear();
                    want.clear();
                    break;
                case "config":
                    r.config = Lines.unhex(f[1]);
                    r.pool = f[2].equals("-") ? null : Lines.text(f[2]);
                    r.options.allowDown(!f[3].equals("0"));
                    break;
                case "resolved":
                    r.options.resolved(Lines.text(f[1]), Long.parseLong(f[2]));
                    break;
                case "node":
                    r.nodes.add(Lines.text(f[1]));
                    r.weights.add(Long.parseLong(f[2]));
                    break;
                case "option":
                    r.opts.put(Lines.text(f[1]), Lines.text(f[2]));
                    break;
                case "add":
                    r.ops.add(new String[] {"add", Lines.text(f[1]), f[2]});
                    break;
                case "remove":
                    r.ops.add(new String[] {"remove", Lines.text(f[1])});
                    break;
                case "key": {
                    String k = Lines.text(f[1]);
                    String e = Lines.text(f[2]);
                    assertEquals(e, r.router().get(k), r.where + ": key " + k);
                    ks.add(k);
                    want.add(e);
                    keys++;
                    break;
                }
                case "end": {
                    Router router = r.router();
                    int[] idx = router.getManyIndexes(ks.toArray(new String[0]));
                    List<String> nodes = router.nodes();
                    String[] got = new String[idx.length];
                    for (int i = 0; i < idx.length; i++) {
                        got[i] = nodes.get(idx[i]);
                    }
                    assertArrayEquals(want.toArray(new String[0]), got, r.where + ": batch");
                    router.close();
                    routes++;
                    break;
                }
                default:
                    throw new AssertionError("fleet line " + f[0]);
            }
        }
        assertTrue(routes > 100 && keys > 40_000, routes + " routes, " + keys + " keys");
        System.out.printf("fleet: %d routes, %d keys%n", routes, keys);
    }
}
