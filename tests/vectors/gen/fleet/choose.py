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
