package org.keyroute;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The entrance contract (tests/contract/bad_inputs.json, as the C test reads it): the
 * cases the Java classes can express give the same code, by name and number, as in every
 * other language.
 */
class ContractTest {
    /** A cursor over one case's fields. */
    private static final class Cursor {
        final String[] f;
        int i;

        Cursor(String[] f, int i) {
            this.f = f;
            this.i = i;
        }

        String next() {
            return f[i++];
        }

        long i64() {
            return Long.parseLong(next());
        }

        String text() {
            return Lines.text(next());
        }
    }

    /** RING = PROFILE VNODES PPD PORT N (NAME WEIGHT)*N, built node by node. */
    private static Ring ring(Cursor c) {
        String profile = c.next();
        long v = c.i64();
        long ppd = c.i64();
        long port = c.i64();
        long n = c.i64();
        List<String> names = new ArrayList<>();
        List<Long> weights = new ArrayList<>();
        for (long i = 0; i < n; i++) {
            names.add(c.text());
            weights.add(c.i64());
        }
        Ring r = Ring.withOptions(profile, v, ppd, port);
        try {
            for (int i = 0; i < names.size(); i++) {
                r.add(names.get(i), weights.get(i));
            }
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
        return r;
    }

    private static void run(String op, Cursor c, boolean ok, String id) {
        switch (op) {
            case "parse_nodes": {
                try (Ring r = Ring.fromSpec("native", c.text())) {
                    if (ok) {
                        long n = c.i64();
                        assertEquals(n, r.size(), id);
                        for (int i = 0; i < n; i++) {
                            assertEquals(c.text(), r.nodes().get(i), id);
                            c.i64();
                        }
                    }
                }
                break;
            }
            case "ring": {
                try (Ring r = ring(c)) {
                    if (ok) {
                        long n = c.i64();
                        for (int i = 0; i < n; i++) {
                            assertEquals(c.text(), r.nodes().get(i), id);
                        }
                    }
                }
                break;
            }
            case "ring_change": {
                try (Ring r = ring(c)) {
                    String change = c.next();
                    String name = c.text();
                    long w = c.i64();
                    switch (change) {
                        case "add":
                            r.add(name, w);
                            break;
                        case "remove":
                            r.remove(name);
                            break;
                        case "set_weight":
                            r.setWeight(name, w);
                            break;
                        default:
                            fail(id + ": change " + change);
                    }
                }
                break;
            }
            case "ring_get_n": {
                try (Ring r = ring(c)) {
                    String key = c.text();
                    long n = c.i64();
                    List<String> got = r.getN(key, (int) Math.min(n, Integer.MAX_VALUE));
                    if (ok) {
                        assertEquals(c.i64(), got.size(), id);
                    }
                }
                break;
            }
            case "pool_seed": {
                try (Pool p = new Pool()) {
                    long initial = Long.parseUnsignedLong(c.next());
                    long n = c.i64();
                    List<byte[]> ms = new ArrayList<>();
                    for (long i = 0; i < n; i++) {
                        ms.add(Lines.unhex(c.next()));
                    }
                    try {
                        long added = p.seedBytes(ms, initial, false);
                        if (ok) {
                            assertEquals(c.i64(), added, id);
                        }
                    } finally {
                        if (!ok) {
                            assertEquals(0, p.size(), id + ": nothing changed");
                        }
                    }
                }
                break;
            }
            case "pool_restore": {
                byte[] m = Lines.unhex(c.next());
                long mode = c.i64();
                if (mode != 0 && mode != 1) {
                    // a mode outside the enum cannot be written in Java (Restore is an enum)
                    throw new UnsupportedOperationException(op + " mode " + mode);
                }
                try (Pool p = new Pool()) {
                    long got = p.restore(m, mode == 0 ? Restore.KEEP : Restore.AT_MINIMUM);
                    if (ok) {
                        assertEquals(c.i64(), got, id);
                    }
                }
                break;
            }
            case "slot_map_add_master": {
                try (SlotMap m = new SlotMap()) {
                    String host = c.text();
                    long port = c.i64();
                    try {
                        m.addMaster("", host, port);
                    } finally {
                        if (!ok) {
                            assertEquals(0, m.size(), id + ": nothing changed");
                        }
                    }
                }
                break;
            }
            case "slot_map_assign": {
                try (SlotMap m = new SlotMap()) {
                    int start = (int) c.i64();
                    int end = (int) c.i64();
                    m.addMaster("", "10.0.0.1", 7000);
                    m.assign(start, end, 0);
                }
                break;
            }
            case "parse_weights": {
                String text = c.text();
                try (SlotMap m = new SlotMap()) {
                    List<String> names = new ArrayList<>();
                    List<Long> weights = new ArrayList<>();
                    if (ok) {
                        long n = c.i64();
                        for (int i = 0; i < n; i++) {
                            names.add(c.text());
                            weights.add(c.i64());
                            m.addMaster(names.get(i), "192.0.2.1", 1 + i);
                        }
                        if (n > 0) {
                            m.assign(0, 16383, 0);
                        }
                    }
                    try (Plan plan = Plan.fromSpec(m, text)) {
                        List<Plan.Target> t = plan.targets();
                        assertEquals(names.size(), t.size(), id);
                        for (int i = 0; i < t.size(); i++) {
                            assertEquals(i, t.get(i).node(), id);
                            assertEquals((long) weights.get(i), t.get(i).weight(), id);
                        }
                    }
                }
                break;
            }
            case "plan": {
                try (SlotMap m = new SlotMap()) {
                    long masters = c.i64();
                    List<String> addrs = new ArrayList<>();
                    for (int i = 0; i < masters; i++) {
                        String addr = c.text();
                        addrs.add(addr);
                        int colon = addr.lastIndexOf(':');
                        m.addMaster("", addr.substring(0, colon), Long.parseLong(addr.substring(colon + 1)));
                        long ranges = c.i64();
                        for (int j = 0; j < ranges; j++) {
                            m.assign((int) c.i64(), (int) c.i64(), i);
                        }
                    }
                    int nw = (int) c.i64();
                    int[] nodes = new int[nw];
                    long[] weights = new long[nw];
                    for (int i = 0; i < nw; i++) {
                        nodes[i] = addrs.indexOf(c.text());
                        assertTrue(nodes[i] >= 0, id);
                        weights[i] = Long.parseUnsignedLong(c.next());
                    }
                    Plan.of(m, nodes, weights).close();
                }
                break;
            }
            default:
                throw new UnsupportedOperationException(op);
        }
    }

    @Test
    void badInputsGiveTheSameCodes() throws Exception {
        int run = 0;
        int skipped = 0;
        for (String line : Lines.read("keyroute.contract")) {
            String[] f = line.split(" ");
            String id = f[0];
            String op = f[1];
            String want = f[2];
            boolean ok = want.equals("OK");
            String got;
            try {
                run(op, new Cursor(f, 3), ok, id);
                got = "OK";
            } catch (UnsupportedOperationException e) {
                skipped++;
                continue;
            } catch (KeyrouteException e) {
                got = e.code().name() + ":" + e.code().number();
            }
            assertEquals(want, got, id);
            run++;
        }
        assertTrue(run >= 20, "contract cases run in Java: " + run);
        System.out.printf("contract: %d cases run in Java, %d of C's not expressible here%n",
                run, skipped);
    }
}
