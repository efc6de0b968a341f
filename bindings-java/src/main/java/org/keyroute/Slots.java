package org.keyroute;

import java.util.Arrays;

/**
 * Redis Cluster hash slots ({@code keyroute::slot}): CRC16 of the key's hash tag, modulo
 * {@link Limits#SLOT_COUNT}.
 *
 * <p><b>Thread safety:</b> static functions without state, safe from any thread.
 */
public final class Slots {
    private Slots() {}

    /** The slot of {@code key}. */
    public static int keySlot(byte[] key) {
        Text.notNull(key, "key");
        return Short.toUnsignedInt(Lib.keyroute_key_slot(key, key.length));
    }

    /** The slot of {@code key} (UTF-8). */
    public static int keySlot(String key) {
        return keySlot(Text.utf8(Text.notNull(key, "key"), "key"));
    }

    /** The slot of each key; the keys cross JNA once. */
    public static int[] keySlots(String[] keys) {
        Text.notNull(keys, "keys");
        Text.checkCount(keys.length, "keys");
        int[] ends = new int[keys.length];
        return slots(Text.pack(keys, ends), ends);
    }

    /** The slot of each key given as bytes; the keys cross JNA once. */
    public static int[] keySlots(byte[][] keys) {
        Text.notNull(keys, "keys");
        Text.checkCount(keys.length, "keys");
        int[] ends = new int[keys.length];
        return slots(Text.pack(keys, ends), ends);
    }

    private static int[] slots(Text.Packer packed, int[] ends) {
        short[] raw = new short[ends.length];
        if (ends.length > 0) {
            KeyrouteException.check(Lib.keyroute_key_slots_packed(packed.buf, packed.len, ends,
                    ends.length, raw));
        }
        int[] out = new int[raw.length];
        for (int i = 0; i < raw.length; i++) {
            out[i] = Short.toUnsignedInt(raw[i]);
        }
        return out;
    }

    /** The part of {@code key} that is hashed: its non-empty {@code {tag}}, else the whole key. */
    public static byte[] hashTag(byte[] key) {
        Text.notNull(key, "key");
        long[] off = new long[1];
        long[] len = new long[1];
        KeyrouteException.check(Lib.keyroute_hash_tag(key, key.length, off, len));
        return Arrays.copyOfRange(key, (int) off[0], (int) (off[0] + len[0]));
    }

    /** {@link #hashTag(byte[])} of a text key. */
    public static String hashTag(String key) {
        byte[] k = Text.utf8(Text.notNull(key, "key"), "key");
        byte[] tag = hashTag(k);
        return Text.decode(tag, "the hash tag");
    }
}
