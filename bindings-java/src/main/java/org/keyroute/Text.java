package org.keyroute;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;

/**
 * Strings across the boundary. Java strings are encoded as UTF-8 strictly: a lone
 * surrogate is refused ({@code BAD_UTF8}), never replaced by {@code ?} as
 * {@code String.getBytes} would. Text read back is decoded strictly too ({@code BAD_UTF8}
 * for bytes that are not UTF-8: use the {@code byte[]} variant of the call).
 */
final class Text {
    private Text() {}

    /** The UTF-8 of {@code s} ({@code what} names it in the error). */
    static byte[] utf8(String s, String what) {
        int n = s.length();
        byte[] out = new byte[n];
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x80) {
                Packer p = new Packer(n + 8);
                p.append(s, what);
                return Arrays.copyOf(p.buf, p.len);
            }
            out[i] = (byte) c;
        }
        return out;
    }

    /** {@code s} as a NUL-terminated UTF-8 C string (a NUL inside cannot cross: BAD_UTF8). */
    static byte[] cstr(String s, String what) {
        if (s == null) {
            throw KeyrouteException.of(ErrorCode.NULL_ARGUMENT, "`" + what + "` is null");
        }
        Packer p = new Packer(s.length() + 1);
        p.append(s, what);
        for (int i = 0; i < p.len; i++) {
            if (p.buf[i] == 0) {
                throw KeyrouteException.of(ErrorCode.BAD_UTF8, "`" + what + "` holds a NUL "
                        + "character at byte " + i + ", which the C library cannot take");
            }
        }
        p.put((byte) 0);
        return Arrays.copyOf(p.buf, p.len);
    }

    /** {@code cstr} or null for null. */
    static byte[] cstrOrNull(String s, String what) {
        return s == null ? null : cstr(s, what);
    }

    static <T> T notNull(T value, String what) {
        if (value == null) {
            throw KeyrouteException.of(ErrorCode.NULL_ARGUMENT, "`" + what + "` is null");
        }
        return value;
    }

    /** Strict UTF-8 decoding ({@code BAD_UTF8} otherwise). */
    static String decode(byte[] b, int off, int len, String what) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b, off, len)).toString();
        } catch (CharacterCodingException e) {
            throw KeyrouteException.of(ErrorCode.BAD_UTF8, what + " is not UTF-8: use the "
                    + "byte[] variant of the call");
        }
    }

    static String decode(byte[] b, String what) {
        return decode(b, 0, b.length, what);
    }

    /** {@code len} bytes at native address {@code p}. */
    static byte[] bytes(long p, long len) {
        if (len == 0) {
            return new byte[0];
        }
        return new Pointer(p).getByteArray(0, Math.toIntExact(len));
    }

    /** UTF-8 text of {@code len} bytes at {@code p} (names keyroute checked already). */
    static String string(long p, long len) {
        return new String(bytes(p, len), StandardCharsets.UTF_8);
    }

    /** The NUL-terminated UTF-8 string at {@code p}, or null for 0. */
    static String cstring(long p) {
        return p == 0 ? null : new Pointer(p).getString(0, "UTF-8");
    }

    /** Keys (or any texts) appended back to back as UTF-8, with their end offsets: the
     *  {@code _packed} calls take them in one crossing. */
    static final class Packer {
        byte[] buf;
        int len;

        Packer(int capacity) {
            buf = new byte[Math.max(16, capacity)];
        }

        private void room(int more) {
            long need = (long) len + more;
            if (need > Limits.MAX_BATCH_BYTES) {
                throw KeyrouteException.of(ErrorCode.TOO_LARGE, "the keys of one call take more "
                        + "than " + Limits.MAX_BATCH_BYTES + " bytes; split the batch");
            }
            if (need > buf.length) {
                buf = Arrays.copyOf(buf, (int) Math.min(Math.max(need, 2L * buf.length),
                        Limits.MAX_BATCH_BYTES));
            }
        }

        void put(byte b) {
            room(1);
            buf[len++] = b;
        }

        void append(byte[] b) {
            room(b.length);
            System.arraycopy(b, 0, buf, len, b.length);
            len += b.length;
        }

        /** Appends the UTF-8 of {@code s}; a lone surrogate is BAD_UTF8. */
        void append(String s, String what) {
            int n = s.length();
            room(n);
            byte[] b = buf;
            int at = len;
            int i = 0;
            for (; i < n; i++) {
                char c = s.charAt(i);
                if (c >= 0x80) {
                    break;
                }
                b[at++] = (byte) c;
            }
            len = at;
            for (; i < n; i++) {
                char c = s.charAt(i);
                if (c < 0x80) {
                    put((byte) c);
                } else if (c < 0x800) {
                    room(2);
                    buf[len++] = (byte) (0xC0 | (c >> 6));
                    buf[len++] = (byte) (0x80 | (c & 0x3F));
                } else if (Character.isSurrogate(c)) {
                    char d = i + 1 < n ? s.charAt(i + 1) : 0;
                    if (!Character.isHighSurrogate(c) || !Character.isLowSurrogate(d)) {
                        throw KeyrouteException.of(ErrorCode.BAD_UTF8, what + " holds a lone "
                                + "surrogate at index " + i + " (not text; pass bytes)");
                    }
                    int cp = Character.toCodePoint(c, d);
                    i++;
                    room(4);
                    buf[len++] = (byte) (0xF0 | (cp >> 18));
                    buf[len++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    buf[len++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    buf[len++] = (byte) (0x80 | (cp & 0x3F));
                } else {
                    room(3);
                    buf[len++] = (byte) (0xE0 | (c >> 12));
                    buf[len++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                    buf[len++] = (byte) (0x80 | (c & 0x3F));
                }
            }
        }
    }

    /** Strings packed for a {@code _packed} call: the bytes and each key's end. */
    static Packer pack(String[] keys, int[] ends) {
        Packer p = new Packer(keys.length * 16);
        for (int i = 0; i < keys.length; i++) {
            p.append(notNull(keys[i], "keys[" + i + "]"), "keys[" + i + "]");
            ends[i] = p.len;
        }
        return p;
    }

    static Packer pack(byte[][] keys, int[] ends) {
        Packer p = new Packer(keys.length * 16);
        for (int i = 0; i < keys.length; i++) {
            p.append(notNull(keys[i], "keys[" + i + "]"));
            ends[i] = p.len;
        }
        return p;
    }

    static void checkCount(long count, String what) {
        if (count > Limits.MAX_KEYS_PER_CALL) {
            throw KeyrouteException.of(ErrorCode.TOO_LARGE, what + ": " + count + " entries, above "
                    + "the limit of " + Limits.MAX_KEYS_PER_CALL + " per call; split the batch");
        }
    }

    /**
     * A list of byte strings in native memory, as the C calls taking
     * {@code (const uint8_t *const *items, const size_t *lens, size_t count)} read it (with
     * {@code nul}, each followed by a NUL: a {@code const char *const *} array). Three bulk
     * writes, whatever the count. Close it after the call.
     */
    static final class NativeList implements AutoCloseable {
        final Memory memory;
        final int count;

        private NativeList(List<byte[]> items, boolean nul) {
            count = items.size();
            checkCount(count, "list");
            long data = 0;
            for (byte[] b : items) {
                data += b.length + (nul ? 1 : 0);
            }
            memory = new Memory(Math.max(1, 16L * count + data));
            long base = Pointer.nativeValue(memory);
            long[] ptrs = new long[count];
            long[] lens = new long[count];
            byte[] all = new byte[Math.toIntExact(data)];
            int at = 0;
            for (int i = 0; i < count; i++) {
                byte[] b = items.get(i);
                ptrs[i] = base + 16L * count + at;
                lens[i] = b.length;
                System.arraycopy(b, 0, all, at, b.length);
                at += b.length + (nul ? 1 : 0);
            }
            memory.write(0, ptrs, 0, count);
            memory.write(8L * count, lens, 0, count);
            memory.write(16L * count, all, 0, all.length);
        }

        /** Byte strings (members, candidates). */
        static NativeList of(List<byte[]> items) {
            return new NativeList(items, false);
        }

        /** Text (names, seeds, kinds) as C strings. */
        static NativeList cstrings(Collection<String> items, String what) {
            byte[][] all = new byte[items.size()][];
            int i = 0;
            for (String s : items) {
                byte[] c = cstr(s, what + "[" + i + "]");
                all[i++] = Arrays.copyOf(c, c.length - 1);
            }
            return new NativeList(Arrays.asList(all), true);
        }

        /** The array of pointers. */
        long ptrs() {
            return Pointer.nativeValue(memory);
        }

        /** The array of lengths. */
        long lens() {
            return Pointer.nativeValue(memory) + 8L * count;
        }

        @Override
        public void close() {
            memory.close();
        }
    }
}
