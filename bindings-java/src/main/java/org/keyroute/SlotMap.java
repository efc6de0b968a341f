package org.keyroute;

import java.util.OptionalInt;

/**
 * A Redis Cluster slot map ({@code keyroute::slot::SlotMap}): masters and replicas by
 * index, and the owner of each of the 16384 slots. Build it from your cluster client's
 * {@code CLUSTER SHARDS} or {@code CLUSTER SLOTS} reply with {@link #addMaster},
 * {@link #addReplica} and {@link #assign}.
 *
 * <p><b>Thread safety:</b> safe to share: lookups run at once, changes and {@code close}
 * alone.
 */
public final class SlotMap extends Handle {
    /** A node of the map. */
    public static final class Node {
        private final String id;
        private final String host;
        private final int port;
        private final int master;

        Node(String id, String host, int port, int master) {
            this.id = id;
            this.host = host;
            this.port = port;
            this.master = master;
        }

        /** The cluster node id ({@code ""} if unknown). */
        public String id() {
            return id;
        }

        /** The host. */
        public String host() {
            return host;
        }

        /** The port. */
        public int port() {
            return port;
        }

        /** Whether it is a master. */
        public boolean isMaster() {
            return master < 0;
        }

        /** The index of its master (a replica), or -1 (a master). */
        public int masterIndex() {
            return master;
        }
    }

    /** A new, empty map. */
    public SlotMap() {
        super(create(), Lib::keyroute_slot_map_free, "SlotMap", false);
    }

    private static long create() {
        long[] out = new long[1];
        KeyrouteException.check(Lib.keyroute_slot_map_new(out));
        return out[0];
    }

    private static short slot(int s, ErrorCode code, String what) {
        if (s < 0 || s > 0xFFFF) {
            throw KeyrouteException.of(code, "`" + what + "` is " + s + ": slots are 0 to "
                    + (Limits.SLOT_COUNT - 1));
        }
        return (short) s;
    }

    /** Adds a master {@code id} ({@code ""} if unknown) at {@code host:port}; its index. */
    public int addMaster(String id, String host, long port) {
        byte[] i = Text.cstr(id, "id");
        byte[] h = Text.cstr(host, "host");
        return write(p -> {
            long[] idx = new long[1];
            KeyrouteException.check(Lib.keyroute_slot_map_add_master(p, i, h, port, idx));
            return (int) idx[0];
        });
    }

    /** Adds a replica of master {@code master}; its index. */
    public int addReplica(int master, String id, String host, long port) {
        byte[] i = Text.cstr(id, "id");
        byte[] h = Text.cstr(host, "host");
        return write(p -> {
            long[] idx = new long[1];
            KeyrouteException.check(Lib.keyroute_slot_map_add_replica(p, master, i, h, port, idx));
            return (int) idx[0];
        });
    }

    /** Gives slots {@code first..=last} to master {@code node}. */
    public void assign(int first, int last, int node) {
        short f = slot(first, ErrorCode.BAD_RANGE, "first");
        short l = slot(last, ErrorCode.BAD_RANGE, "last");
        write(p -> {
            KeyrouteException.check(Lib.keyroute_slot_map_assign(p, f, l, node));
            return null;
        });
    }

    /** Makes slots {@code first..=last} unowned. */
    public void unassign(int first, int last) {
        short f = slot(first, ErrorCode.BAD_RANGE, "first");
        short l = slot(last, ErrorCode.BAD_RANGE, "last");
        write(p -> {
            KeyrouteException.check(Lib.keyroute_slot_map_unassign(p, f, l));
            return null;
        });
    }

    /** The index of the master owning {@code slot}, or empty when it is unowned. */
    public OptionalInt owner(int slot) {
        short s = slot(slot, ErrorCode.BAD_SLOT, "slot");
        return read(p -> {
            long[] idx = new long[1];
            return KeyrouteException.found(Lib.keyroute_slot_map_owner(p, s, idx))
                    ? OptionalInt.of((int) idx[0]) : OptionalInt.empty();
        });
    }

    /** The index of the master owning {@code key}'s slot, or empty when it is unowned. */
    public OptionalInt ownerOfKey(byte[] key) {
        Text.notNull(key, "key");
        return read(p -> {
            long[] idx = new long[1];
            return KeyrouteException.found(Lib.keyroute_slot_map_owner_of_key(p, key, key.length,
                    idx, null)) ? OptionalInt.of((int) idx[0]) : OptionalInt.empty();
        });
    }

    /** {@link #ownerOfKey(byte[])} of a text key. */
    public OptionalInt ownerOfKey(String key) {
        return ownerOfKey(Text.utf8(Text.notNull(key, "key"), "key"));
    }

    /** Node {@code index}. */
    public Node node(int index) {
        return read(p -> {
            long[] id = new long[1];
            long[] host = new long[1];
            short[] port = new short[1];
            int[] isMaster = new int[1];
            long[] master = new long[1];
            KeyrouteException.check(Lib.keyroute_slot_map_node(p, index, id, host, port, isMaster,
                    master));
            return new Node(Text.cstring(id[0]), Text.cstring(host[0]),
                    Short.toUnsignedInt(port[0]), isMaster[0] != 0 ? -1 : (int) master[0]);
        });
    }

    /** The number of nodes. */
    public int size() {
        return read(p -> Math.toIntExact(Lib.keyroute_slot_map_len(p)));
    }

    /** Whether every slot has an owner. */
    public boolean isComplete() {
        return read(p -> Lib.keyroute_slot_map_is_complete(p) != 0);
    }
}
