"""Choose inputs that make two nodes share a point on the continuum.

This only *chooses inputs* (node names and keys); every expected result in the
tie vector files still comes from the peer.  A tie needs two server strings
whose MD5 words collide: we search node names "10.9.<x>.<y>:11212" in a fixed
order (port != 11211, so libmemcached/twemproxy also hash the full "host:port";
at most 21 bytes, for libketama) for the first pair whose points collide in
word 0, 1 or 2 of a digest with k < 40 (so the point exists in both 4- and
3-points-per-digest rings of two equal-weight nodes, which get 40 digests in
every profile).  Keys are then "tie-<i>" whose hash lies strictly between the
preceding point of the 2-node ring and the shared point, so both `>=` and `>`
lookups land on the shared point.
"""

import hashlib
import struct

N_TIE_KEYS = 8


def _words(s, count):
    d = hashlib.md5(s.encode("utf-8")).digest()
    return struct.unpack("<4I", d)[:count]


def _points(name, words_per_digest):
    for k in range(40):
        for w in _words("%s-%d" % (name, k), words_per_digest):
            yield w


def find_tie():
    seen = {}
    i = 0
    while True:
        name = "10.9.%d.%d:11212" % (i // 256, i % 256)
        for p in set(_points(name, 3)):
            other = seen.get(p)
            if other is not None and other != name:
                return other, name, p
        for p in _points(name, 3):
            seen.setdefault(p, name)
        i += 1


def tie_keys(a, b, point):
    pts = sorted(set(_points(a, 4)) | set(_points(b, 4)))
    idx = pts.index(point)
    prev = pts[idx - 1] if idx > 0 else None
    keys = []
    i = 0
    while len(keys) < N_TIE_KEYS:
        key = "tie-%d" % i
        h = _words(key, 1)[0]
        if (prev is None and h < point) or (prev is not None and prev < h < point):
            keys.append(key)
        i += 1
    return keys


_CACHE = None


def tie_case():
    """(node_a, node_b, shared_point, keys) -- deterministic."""
    global _CACHE
    if _CACHE is None:
        a, b, p = find_tie()
        _CACHE = (a, b, p, tie_keys(a, b, p))
    return _CACHE


if __name__ == "__main__":
    print(tie_case())
