package org.keyroute;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * A resharding plan ({@code keyroute::slot::Plan}): the fewest slot moves that bring every
 * weighted master of a {@link SlotMap} within one slot of its weighted share.
 * Deterministic: the same map and weights give the same plan in every language.
 *
 * <p><b>Thread safety:</b> immutable once made: safe to share.
 */
public final class Plan extends Handle {
    /** Slots {@code first..=last} move from master {@code from} to master {@code to}. */
    public static final class Move {
        private final int first;
        private final int last;
        private final int from;
        private final int to;

        Move(int first, int last, int from, int to) {
            this.first = first;
            this.last = last;
            this.from = from;
            this.to = to;
        }

        /** The first slot. */
        public int first() {
            return first;
        }

        /** The last slot (inclusive). */
        public int last() {
            return last;
        }

        /** The master giving them (an index of the map). */
        public int from() {
            return from;
        }

        /** The master taking them. */
        public int to() {
            return to;
        }
    }

    /** A weighted master: its weight, ideal share and slot counts before and after. */
    public static final class Target {
        private final int node;
        private final long weight;
        private final double ideal;
        private final long before;
        private final long after;

        Target(int node, long weight, double ideal, long before, long after) {
            this.node = node;
            this.weight = weight;
            this.ideal = ideal;
            this.before = before;
            this.after = after;
        }

        /** The master (an index of the map). */
        public int node() {
            return node;
        }

        /** Its weight. */
        public long weight() {
            return weight;
        }

        /** Its ideal number of slots. */
        public double ideal() {
            return ideal;
        }

        /** Its slots before the plan. */
        public long before() {
            return before;
        }

        /** Its slots after the plan. */
        public long after() {
            return after;
        }
    }

    private Plan(long ptr) {
        super(ptr, Lib::keyroute_plan_free, "Plan", false);
    }

    /** The plan giving master {@code nodes[i]} of {@code map} weight {@code weights[i]}
     *  (0 drains it). */
    public static Plan of(SlotMap map, int[] nodes, long[] weights) {
        Objects.requireNonNull(map, "map");
        Text.notNull(nodes, "nodes");
        Text.notNull(weights, "weights");
        if (nodes.length != weights.length) {
            throw KeyrouteException.of(ErrorCode.OUT_OF_RANGE, nodes.length + " nodes and "
                    + weights.length + " weights");
        }
        long[] n = new long[nodes.length];
        for (int i = 0; i < nodes.length; i++) {
            n[i] = Integer.toUnsignedLong(nodes[i]);
        }
        long[] out = new long[1];
        map.read(m -> {
            KeyrouteException.check(Lib.keyroute_plan_new(m, n.length == 0 ? null : n,
                    weights.length == 0 ? null : weights, n.length, out));
            return null;
        });
        return new Plan(out[0]);
    }

    /** The plan of a weight list ({@code "10.0.0.1:7000=2, 10.0.0.2:7000=1"}: masters by
     *  address or id). */
    public static Plan fromSpec(SlotMap map, String weights) {
        Objects.requireNonNull(map, "map");
        byte[] w = Text.cstr(weights, "weights");
        long[] out = new long[1];
        map.read(m -> {
            KeyrouteException.check(Lib.keyroute_plan_from_spec(m, w, out));
            return null;
        });
        return new Plan(out[0]);
    }

    /** The moves, in order. */
    public List<Move> moves() {
        return read(p -> {
            int n = Math.toIntExact(Lib.keyroute_plan_len(p));
            List<Move> out = new ArrayList<>(n);
            short[] first = new short[1];
            short[] last = new short[1];
            long[] from = new long[1];
            long[] to = new long[1];
            for (int i = 0; i < n; i++) {
                KeyrouteException.check(Lib.keyroute_plan_move(p, i, first, last, from, to));
                out.add(new Move(Short.toUnsignedInt(first[0]), Short.toUnsignedInt(last[0]),
                        (int) from[0], (int) to[0]));
            }
            return Collections.unmodifiableList(out);
        });
    }

    /** The weighted masters, in the order given. */
    public List<Target> targets() {
        return read(p -> {
            int n = Math.toIntExact(Lib.keyroute_plan_target_count(p));
            List<Target> out = new ArrayList<>(n);
            long[] node = new long[1];
            long[] weight = new long[1];
            double[] ideal = new double[1];
            long[] before = new long[1];
            long[] after = new long[1];
            for (int i = 0; i < n; i++) {
                KeyrouteException.check(Lib.keyroute_plan_target(p, i, node, weight, ideal, before,
                        after));
                out.add(new Target((int) node[0], weight[0], ideal[0], before[0], after[0]));
            }
            return Collections.unmodifiableList(out);
        });
    }

    /** The number of slots that move. */
    public long slotsMoved() {
        return read(Lib::keyroute_plan_slots_moved);
    }

    /** Applies the plan to {@code map} (the map it was made from: else {@code STALE_PLAN}). */
    public void apply(SlotMap map) {
        Objects.requireNonNull(map, "map");
        map.write(m -> read(p -> {
            KeyrouteException.check(Lib.keyroute_plan_apply(p, m));
            return null;
        }));
    }
}
