"""Input choosers: find server names that collide and keys that land on a collision.

These functions only CHOOSE inputs (which names to configure, which keys to send);
every answer in a vector comes from the real peer.  They follow the research notes
(/work/shared/research/rings-fleet.md); if one were wrong, the chosen inputs would
merely not hit the intended edge, and the generator reports it (each tie case records
whether the peer's answers show the tie as intended).
"""

import bisect
import random
import struct
import zlib


# ------------------------------------------------------------------ nginx chash

def nginx_points(server, weight=1):
    """nginx `hash ... consistent` points of one `server` string (host\\0port, CRC chain)."""
    if server.lower().startswith("unix:"):
        host, port = server[5:], ""
    else:
        i = len(server)
        while i > 0 and server[i - 1].isdigit():
            i -= 1
        if i > 0 and i < len(server) and server[i - 1] == ":":
            host, port = server[:i - 1], server[i:]
        else:
            host, port = server, ""
    base = zlib.crc32(host.encode() + b"\0" + port.encode())
    prev, out = 0, []
    for _ in range(160 * weight):
        prev = zlib.crc32(struct.pack("<I", prev), base)
        out.append(prev)
    return out


def nginx_tie(address, ports):
    """Two `address:port` servers (ports from PORTS) sharing a point: (a, b, point)."""
    seen = {}
    for p in ports:
        s = "%s:%d" % (address, p)
        for h in nginx_points(s):
            if h in seen and seen[h] != s:
                return seen[h], s, h
            seen[h] = s
    raise RuntimeError("no nginx tie found in the port range")


def keys_landing(points_sorted, target, n, seed, prefix="tie-"):
    """N keys whose CRC32 lands on TARGET (first point >= crc, wrapping)."""
    rng = random.Random(seed)
    i = bisect.bisect_left(points_sorted, target)
    lo = points_sorted[i - 1] if i > 0 else points_sorted[-1]
    out = []
    tries = 0
    while len(out) < n:
        tries += 1
        k = "%s%d-%d" % (prefix, seed, rng.getrandbits(40))
        h = zlib.crc32(k.encode())
        if (lo < h <= target) if lo < target else (h > lo or h <= target):
            out.append(k)
    return out


# ------------------------------------------------------------------ HAProxy

M32 = 0xFFFFFFFF


def full_hash(a):
    a &= M32
    a = ((a + 0x7ed55d16) + (a << 12)) & M32
    a = ((a ^ 0xc761c23c) ^ (a >> 19)) & M32
    a = ((a + 0x165667b1) + (a << 5)) & M32
    a = ((a + 0xd3a2646c) ^ (a << 9)) & M32
    a = ((a + 0xfd7046c5) + (a << 3)) & M32
    a = ((a ^ 0xb55a4f09) ^ (a >> 16)) & M32
    return (a * 3221225473) & M32


def _inv_xorshift_right(y, s):
    x = y
    for _ in range(32 // s + 1):
        x = y ^ (x >> s)
    return x & M32


def _inv_add_shift_left(y, s, c):
    # y = (x + c) + (x << s) = c + x*(1 + 2^s)  (mod 2^32)
    return ((y - c) * pow(1 + (1 << s), -1, 1 << 32)) & M32


def _inv_plus_c_xor_shl(y, s, c):
    # y = (x + c) ^ (x << s): solve bit by bit from the low end
    x = 0
    for bit in range(32):
        mask = (1 << (bit + 1)) - 1
        for b in (0, 1):
            cand = x | (b << bit)
            if ((((cand + c) ^ (cand << s)) ^ y) & mask) == 0:
                x = cand
                break
    return x


def full_hash_inverse(h):
    a = (h * pow(3221225473, -1, 1 << 32)) & M32
    a = _inv_xorshift_right(a ^ 0xb55a4f09, 16)
    a = _inv_add_shift_left(a, 3, 0xfd7046c5)
    a = _inv_plus_c_xor_shl(a, 9, 0xd3a2646c)
    a = _inv_add_shift_left(a, 5, 0x165667b1)
    a = _inv_xorshift_right(a ^ 0xc761c23c, 19)
    a = _inv_add_shift_left(a, 12, 0x7ed55d16)
    assert full_hash(a) == h & M32
    return a


def haproxy_points(puid, weight):
    """HAProxy 2.6 chash points (id mode) of one server: full_hash(puid*4096 + j)."""
    return [full_hash((puid * 4096 + j) & M32) for j in range(16 * weight)]


def sdbm(data):
    h = 0
    for c in data:
        h = (c + (h << 6) + (h << 16) - h) & M32
    return h


def sdbm_preimage(target, seed, alphabet=None):
    """A header-safe byte string whose sdbm hash is TARGET (meet in the middle)."""
    K = 65599
    alphabet = alphabet or [c for c in range(0x30, 0x7b) if chr(c).isalnum()]
    rng = random.Random(seed)
    left = {}
    for a in alphabet:
        for b in alphabet:
            left[(a * K ** 3 + b * K ** 2) & M32] = (a, b)
    while True:
        prefix = bytes(rng.choice(alphabet) for _ in range(6))
        base = (sdbm(prefix) * K ** 4) & M32
        for c in alphabet:
            for d in alphabet:
                need = (target - base - c * K - d) & M32
                if need in left:
                    a, b = left[need]
                    s = prefix + bytes([a, b, c, d])
                    assert sdbm(s) == target
                    return s


def haproxy_exact_ties(points_by_server):
    """Adjacent point pairs (prev, next) of different servers with an even gap: the
    midpoint is at equal distance from both (HAProxy gives it to prev)."""
    pts = sorted((h, s) for s, hs in points_by_server.items() for h in hs)
    out = []
    for i in range(len(pts)):
        (p, ps), (n, ns) = pts[i - 1], pts[i]
        gap = (n - p) & M32
        if ps != ns and gap % 2 == 0 and gap > 2:
            out.append(((p + gap // 2) & M32, ps, ns))
    return out


def crc32_forge(prefix, target):
    """4 bytes X with zlib.crc32(prefix + X) == target (CRC32 is affine in X)."""
    base = zlib.crc32(prefix + b"\0\0\0\0")
    cols = []
    for bit in range(32):
        x = (1 << bit).to_bytes(4, "little")
        cols.append(zlib.crc32(prefix + x) ^ base)
    # Solve sum(x_bit * cols[bit]) == target ^ base over GF(2).
    rows = [(cols[b], 1 << b) for b in range(32)]
    want = target ^ base
    basis = {}
    for v, comb in rows:
        for hb in sorted(basis, reverse=True):
            if v >> hb & 1:
                v ^= basis[hb][0]
                comb ^= basis[hb][1]
        if v:
            basis[v.bit_length() - 1] = (v, comb)
    sol = 0
    for hb in sorted(basis, reverse=True):
        if want >> hb & 1:
            want ^= basis[hb][0]
            sol ^= basis[hb][1]
    if want:
        return None
    x = sol.to_bytes(4, "little")
    assert zlib.crc32(prefix + x) == target
    return x


def crc32_preimage(target, seed):
    """A printable-ASCII string (no comma) whose CRC32 is TARGET."""
    rng = random.Random(seed)
    alphabet = [c for c in range(0x30, 0x7b) if chr(c).isalnum()]
    while True:
        prefix = bytes(rng.choice(alphabet) for _ in range(8))
        x = crc32_forge(prefix, target)
        if x is not None and all(0x21 <= c <= 0x7e and c != 0x2c for c in x):
            return prefix + x


# ------------------------------------------------------------------ Java / spymemcached / Guava

def java_hash(s):
    """String.hashCode() over UTF-16 units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & M32
    return h - (1 << 32) if h >= 1 << 31 else h


def java_string_with_hash(target, seed, prefix=""):
    """A printable-ASCII string starting with PREFIX whose hashCode() is TARGET
    (meet in the middle over a 6-character tail)."""
    rng = random.Random(seed)
    alphabet = [c for c in range(0x30, 0x7b) if chr(c).isalnum()]
    t = target & M32
    left = {}
    for a in alphabet:
        for b in alphabet:
            for c in alphabet:
                left.setdefault((a * 31 ** 5 + b * 31 ** 4 + c * 31 ** 3) & M32, (a, b, c))
    while True:
        p = prefix + "".join(chr(rng.choice(alphabet)) for _ in range(2))
        base = (java_hash(p) * 31 ** 6) & M32
        for d in alphabet:
            for e in alphabet:
                for f in alphabet:
                    need = (t - base - d * 31 ** 2 - e * 31 - f) & M32
                    if need in left:
                        s = p + "".join(map(chr, left[need] + (d, e, f)))
                        assert java_hash(s) & M32 == t
                        return s


def java_node_with_min_point(seed):
    """A node name N such that (N + "-N0").hashCode() == Integer.MIN_VALUE."""
    return java_node_with_point(0x80000000, seed)


def java_node_with_point(point, seed, prefix="node-", suffix="-N0"):
    """A node name N starting with PREFIX such that (N + SUFFIX).hashCode() == POINT."""
    hs = java_hash(suffix) & M32
    inv = pow(31 ** len(suffix), -1, 1 << 32)
    want = (((point & M32) - hs) * inv) & M32
    return java_string_with_hash(want, seed, prefix=prefix)


def md5_points(s, reps=40):
    import hashlib
    out = []
    for i in range(reps):
        d = hashlib.md5(("%s-%d" % (s, i)).encode()).digest()
        out += [struct.unpack_from("<I", d, 4 * j)[0] for j in range(4)]
    return out


def spy_tie(address, ports):
    """Two 'address:port' spymemcached node keys sharing an MD5 point: (port_a, port_b, point)."""
    seen = {}
    for p in ports:
        for h in md5_points("%s:%d" % (address, p)):
            if h in seen and seen[h] != p:
                return seen[h], p, h
            seen[h] = p
    raise RuntimeError("no spymemcached tie in the port range")


def md5_keys_landing(points_sorted, target, n, seed):
    import hashlib
    rng = random.Random(seed)
    i = bisect.bisect_left(points_sorted, target)
    lo = points_sorted[i - 1] if i > 0 else points_sorted[-1]
    out = []
    while len(out) < n:
        k = "tie-%d-%d" % (seed, rng.getrandbits(40))
        h = struct.unpack_from("<I", hashlib.md5(k.encode()).digest())[0]
        if (lo < h <= target) if lo < target else (h > lo or h <= target):
            out.append(k)
    return out


LCG = 2862933555777941757
M64 = (1 << 64) - 1


def guava_divergent_pairs(max_c=200):
    """(x, c): generator value x = state>>>33 and candidate c where Guava's single rounding
    and the paper's double rounding give different next candidates."""
    out = []
    for c in range(1, max_c):
        # x + 1 = d must divide 2^31 * (c + 1) for an exact integer quotient.
        num = (1 << 31) * (c + 1)
        divs = set()
        k = c + 1
        small = [q for q in range(1, k + 1) if k % q == 0]
        for q in small:
            for e in range(0, 32):
                dd = q << e
                if dd <= 1 << 31 and num % dd == 0:
                    divs.add(dd)
        for d in sorted(divs):
            x = d - 1
            if x >= (1 << 31) - 1:
                continue
            guava = int((c + 1) / ((x + 1) / 2.0 ** 31))
            paper = int((c + 1) * (2.0 ** 31 / (x + 1)))
            if guava != paper:
                out.append((x, c, guava, paper))
    return out


def guava_input_for(x, c, seed):
    """A long whose 2nd LCG step sees x = state>>>33 with candidate c (1st step gives c)."""
    rng = random.Random(seed)
    inv = pow(LCG, -1, 1 << 64)
    for _ in range(10 ** 6):
        s2 = (x << 33) | rng.getrandbits(33)
        s1 = ((s2 - 1) * inv) & M64
        x1 = s1 >> 33
        if x1 == (1 << 31) - 1:
            continue
        if int(1 / ((x1 + 1) / 2.0 ** 31)) == c:
            key = ((s1 - 1) * inv) & M64
            return key - (1 << 64) if key >= 1 << 63 else key
    return None


def guava_overflow_input(seed):
    """A long whose first LCG state has state>>>33 == 2^31 - 1 (Guava's int overflow)."""
    rng = random.Random(seed)
    inv = pow(LCG, -1, 1 << 64)
    s1 = (((1 << 31) - 1) << 33) | rng.getrandbits(33)
    key = ((s1 - 1) * inv) & M64
    return key - (1 << 64) if key >= 1 << 63 else key


def find_tie(names, points_fn):
    """Two names from NAMES whose points (points_fn(name) -> list) share a value."""
    seen = {}
    for n in names:
        for h in points_fn(n):
            if h in seen and seen[h] != n:
                return seen[h], n, h
            seen[h] = n
    raise RuntimeError("no tie found")


def crc_keys_floor(points_sorted, target, n, seed):
    """N keys whose CRC32 lands on TARGET under a floor lookup (last point <= crc)."""
    rng = random.Random(seed)
    i = bisect.bisect_right(points_sorted, target)
    hi = points_sorted[i] if i < len(points_sorted) else points_sorted[0]
    out = []
    while len(out) < n:
        k = "tie-%d-%d" % (seed, rng.getrandbits(40))
        h = zlib.crc32(k.encode())
        if (target <= h < hi) if target < hi else (h >= target or h < hi):
            out.append(k)
    return out


def random_names(prefix, seed, n=200000):
    """Seeded random names (CRC32 of structured names like node-1, node-2 collide rarely:
    CRC is linear, so short differences never cancel)."""
    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    for _ in range(n):
        yield prefix + "".join(rng.choice(alphabet) for _ in range(8))
