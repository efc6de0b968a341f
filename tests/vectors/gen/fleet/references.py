"""References written from a peer's source or paper. NOT peers.

Each function is labelled with what it was written from.  Vector files carry their
outputs only in fields whose name says `reference`, beside (never instead of) a peer's
own answers or its unit-test data.
"""

M64 = (1 << 64) - 1


def jump_paper(key, buckets):
    """Jump consistent hash as printed in Lamping & Veach, arXiv:1406.2294 (Figure 1):
        int64 b = -1, j = 0;
        while (j < num_buckets) { b = j; key = key * 2862933555777941757ULL + 1;
            j = (b + 1) * (double(1LL << 31) / double((key >> 33) + 1)); }
        return b;
    KEY is read as uint64 (a negative Java long is its two's complement)."""
    key &= M64
    b, j = -1, 0
    while j < buckets:
        b = j
        key = (key * 2862933555777941757 + 1) & M64
        j = int(float(b + 1) * (float(1 << 31) / float((key >> 33) + 1)))
    return b


# ------------------------------------------------------------------ hashes

import bisect
import hashlib
import math
import struct

import xxhash  # PyPI xxhash (the xxHash C library), pinned in requirements.txt


def xxh64(data, seed=0):
    return xxhash.xxh64_intdigest(data, seed)


def murmur2_64_libstdcxx(data, seed=0xc70f6907):
    """libstdc++ std::_Hash_bytes, 64-bit (hash_bytes.cc), as Envoy's MurmurHash::murmurHash2
    with STD_HASH_SEED: shift_mix(v) = v ^ (v >> 47); 8-byte little-endian loads."""
    mul = (0xc6a4a793 << 32) + 0x5bd1e995
    n = len(data)
    h = (seed ^ (n * mul)) & M64
    aligned = n & ~7
    for p in range(0, aligned, 8):
        k = struct.unpack_from("<Q", data, p)[0]
        k = (k * mul) & M64
        k ^= k >> 47
        k = (k * mul) & M64
        h ^= k
        h = (h * mul) & M64
    if n & 7:
        tail = int.from_bytes(data[aligned:], "little")
        h ^= tail
        h = (h * mul) & M64
    h ^= h >> 47
    h = (h * mul) & M64
    h ^= h >> 47
    return h


def murmur64a_jedis(data, seed=0x1234ABCD):
    """Jedis MurmurHash.hash64A(ByteBuffer, seed) (redis/jedis v3.10.0
    src/main/java/redis/clients/jedis/util/MurmurHash.java), returned as a signed long."""
    m = 0xc6a4a7935bd1e995
    r = 47
    n = len(data)
    h = ((seed & M64) ^ ((n * m) & M64)) & M64
    aligned = n & ~7
    for p in range(0, aligned, 8):
        k = struct.unpack_from("<Q", data, p)[0]
        k = (k * m) & M64
        k ^= k >> r
        k = (k * m) & M64
        h ^= k
        h = (h * m) & M64
    if n & 7:
        h ^= int.from_bytes(data[aligned:] + b"\0" * (8 - (n & 7)), "little")
        h = (h * m) & M64
    h ^= h >> r
    h = (h * m) & M64
    h ^= h >> r
    return h - (1 << 64) if h >= 1 << 63 else h


def md5_le32(data):
    return struct.unpack_from("<I", hashlib.md5(data).digest())[0]


# ------------------------------------------------------------------ Envoy

def _normalize(weights):
    total = float(sum(weights))
    return [w / total for w in weights]


def envoy_ring(keys, weights, min_ring=1024, max_ring=8 * 1024 * 1024, fn="xx_hash"):
    """Envoy RingHashLoadBalancer::Ring::Ring (source/extensions/load_balancing_policies/
    ring_hash/ring_hash_lb.cc): scale = min(ceil(min_nw * min_ring) / min_nw, max_ring);
    running double sums over hosts in order; point hash of key + "_" + i; sorted by hash.
    Returns [(hash, host_index)] sorted (stable for equal hashes, as far as a reference can)."""
    nws = _normalize(weights)
    min_nw = min(nws)
    scale = min(math.ceil(min_nw * min_ring) / min_nw, float(max_ring))
    ring, current, target = [], 0.0, 0.0
    for idx, (key, nw) in enumerate(zip(keys, nws)):
        target += scale * nw
        i = 0
        while current < target:
            data = ("%s_%d" % (key, i)).encode()
            h = murmur2_64_libstdcxx(data) if fn == "murmur_hash_2" else xxh64(data)
            ring.append((h, idx))
            i += 1
            current += 1
    ring.sort(key=lambda e: e[0])
    return ring


def envoy_ring_lookup(ring, h):
    """The first point >= h, wrapping to the first (RingHashLoadBalancer::Ring::chooseHost)."""
    i = bisect.bisect_left([e[0] for e in ring], h)
    return ring[i % len(ring)][1]


def envoy_maglev(keys, weights, table_size=65537):
    """Envoy MaglevTable (source/extensions/load_balancing_policies/maglev/maglev_lb.cc,
    constructMaglevTableInternal + OriginalMaglevTable::constructImplementationInternals):
    hosts sorted by hash key; offset = XXH64(key, 0) % M, skip = XXH64(key, 1) % (M-1) + 1;
    weighted fill with target weights. Returns the table as a list of host indices."""
    nws = _normalize(weights)
    max_nw = max(nws)
    order = sorted(range(len(keys)), key=lambda i: keys[i].encode())
    entries = []
    for i in order:
        k = keys[i].encode()
        entries.append({"host": i, "offset": xxh64(k, 0) % table_size,
                        "skip": xxh64(k, 1) % (table_size - 1) + 1, "weight": nws[i],
                        "target": 0.0, "next": 0})
    table = [None] * table_size
    filled, iteration = 0, 1
    while filled < table_size:
        for e in entries:
            if filled >= table_size:
                break
            if iteration * e["weight"] < e["target"]:
                continue
            e["target"] += max_nw
            c = (e["offset"] + e["skip"] * e["next"]) % table_size
            while table[c] is not None:
                e["next"] += 1
                c = (e["offset"] + e["skip"] * e["next"]) % table_size
            table[c] = e["host"]
            e["next"] += 1
            filled += 1
        iteration += 1
    return table


# ------------------------------------------------------------------ Jedis

def jedis_sharded(shards, version, algo="murmur"):
    """Jedis Sharded.initialize (jedis-2.9.3 redis/clients/util/Sharded.java, v3.10.0
    redis/clients/jedis/util/Sharded.java) and 4.x ShardedConnectionProvider: a TreeMap of
    signed longs, a later put wins.  SHARDS: [(name or None, weight)]."""
    h = (lambda b: murmur64a_jedis(b)) if algo == "murmur" else (lambda b: md5_le32(b))
    nodes = {}
    for i, (name, weight) in enumerate(shards):
        if version == "4":
            n_pts, weight = 160, 1
        else:
            n_pts = 160 * weight
        for n in range(n_pts):
            if name is None or version == "4":
                s = "SHARD-%d-NODE-%d" % (i, n)
            elif version == "2.9":
                s = "%s*%d%d" % (name, weight, n)
            else:
                s = "%s*%d" % (name, n)
            nodes[h(s.encode())] = i
    return sorted(nodes.items())


def jedis_lookup(points, key_bytes, algo="murmur"):
    hv = murmur64a_jedis(key_bytes) if algo == "murmur" else md5_le32(key_bytes)
    i = bisect.bisect_left([p for p, _ in points], hv)
    return points[i % len(points)][1]


# ------------------------------------------------------------------ go-redis, Dubbo

def go_redis_key(key):
    """go-redis internal/hashtag.Key: the text inside the first {...} when non-empty."""
    s = key.find(b"{")
    if s > -1:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            return key[s + 1:e]
    return key


def go_redis_rendezvous(names, key):
    """go-redis internal/hashtag/rendezvous.go (216593cc): XXH64 of name and key,
    score = mix64(kh ^ nh), highest wins, first on a tie (strict >)."""
    def mix64(x):
        x ^= x >> 12
        x ^= (x << 25) & M64
        x ^= x >> 27
        return (x * 2685821657736338717) & M64
    kh = xxh64(go_redis_key(key))
    best, best_score = 0, None
    for i, n in enumerate(names):
        s = mix64(kh ^ xxh64(n.encode()))
        if best_score is None or s > best_score:
            best, best_score = i, s
    return best


def dubbo_ring(addresses, replicas=160):
    """Dubbo ConsistentHashSelector (apache/dubbo 3.3, ConsistentHashLoadBalance.java):
    md5(address + i) for i < replicas/4, 4 LE32 points per digest; TreeMap, last wins."""
    ring = {}
    for idx, a in enumerate(addresses):
        for i in range(replicas // 4):
            d = hashlib.md5(("%s%d" % (a, i)).encode()).digest()
            for h in range(4):
                ring[struct.unpack_from("<I", d, 4 * h)[0]] = idx
    return sorted(ring.items())


def dubbo_lookup(points, key):
    hv = md5_le32(key.encode())
    i = bisect.bisect_left([p for p, _ in points], hv)
    return points[i % len(points)][1]
