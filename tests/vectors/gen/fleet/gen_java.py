#!/usr/bin/env python3
"""Java peers: spymemcached KetamaNodeLocator (Debian libspymemcached-java), Guava
Hashing.consistentHash (Debian libguava-java), and keyroute's own java-hashcode ring
(a ConcurrentSkipListMap program, as issue 16 describes it), all run by java/FleetDriver.java
(compiled here with the JDK's javac).

Also writes, clearly labelled, the paper's jump (Lamping & Veach) for the same Guava
inputs from a reference written from the paper (references.py): it is not a peer.
"""

import os
import random
import subprocess

import choose
import references
from common import (BUILD_DIR, HERE, deb_version, hx, java_version, make_keys, unhx,
                    write_vector)

SPY_JAR = "/usr/share/java/spymemcached.jar"
GUAVA_JAR = "/usr/share/java/guava.jar"
KEYS = make_keys(n_seq=300, n_ascii=60, n_unicode=60)


def compile_driver():
    out = os.path.join(BUILD_DIR, "java")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-d", out, "-cp", SPY_JAR + ":" + GUAVA_JAR,
                    os.path.join(HERE, "java", "FleetDriver.java"),
                    os.path.join(HERE, "java", "Hex.java")], check=True)
    return out


def run_driver(classes, lines):
    p = subprocess.run(["java", "-cp", ":".join([classes, SPY_JAR, GUAVA_JAR]), "FleetDriver"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("FleetDriver failed:\n" + p.stderr)
    return p.stdout.splitlines()


# ------------------------------------------------------------------ spymemcached

def ipn(lit, port, w=1):
    return {"kind": "ip", "address": lit, "hostname": None, "port": port, "weight": w}


def named(name, lit, port, w=1):
    return {"kind": "named", "address": lit, "hostname": name, "port": port, "weight": w}


def spy_cases():
    cases = []

    def add(name, fmt, alg, weighted, nodes, notes, keys=None):
        cases.append({"name": name, "format": fmt, "hash": alg, "weighted": weighted,
                      "nodes": nodes, "notes": notes, "keys": keys or KEYS})

    ip5 = [ipn("10.0.0.%d" % i, 11211) for i in range(1, 6)]
    add("ketama_spymemcached_ip", "SPYMEMCACHED", "KETAMA_HASH", False, ip5,
        "IP-literal InetSocketAddresses, SPYMEMCACHED format ('10.0.0.1:11211-i')")
    add("ketama_spymemcached_ports", "SPYMEMCACHED", "KETAMA_HASH", False,
        [ipn("10.0.0.1", 11211), ipn("10.0.0.1", 11212), ipn("192.168.1.20", 7000),
         ipn("127.0.0.1", 11211), ipn("10.0.0.5", 1)], "the port always stays in this format")
    add("ketama_spymemcached_ipv6", "SPYMEMCACHED", "KETAMA_HASH", False,
        [ipn("::1", 11211), ipn("2001:db8::1", 11211), ipn("10.0.0.1", 11211)],
        "IPv6 literals: JDK 17 prints them in full and in brackets ('[0:0:0:0:0:0:0:1]:11211'; "
        "JDK 13 and older printed no brackets, JDK-8225499)")
    add("ketama_spymemcached_hostnames", "SPYMEMCACHED", "KETAMA_HASH", False,
        [named("cache-%d" % i, "10.0.0.%d" % i, 11211) for i in range(1, 5)],
        "resolved hostnames (InetAddress.getByAddress(name, ip), no DNS): the format "
        "gives 'cache-1/10.0.0.1:11211'")
    add("ketama_libmemcached_hostnames", "LIBMEMCACHED", "KETAMA_HASH", False,
        [named("cache-1", "10.0.0.1", 11211), named("cache-2", "10.0.0.2", 11212),
         named("cache-3.example", "10.0.0.3", 11211), named("cache-4", "10.0.0.4", 22122)],
        "LIBMEMCACHED format: getHostName() plus ':port' only when the port is not 11211")
    add("ketama_libmemcached_literal", "LIBMEMCACHED", "KETAMA_HASH", False,
        [named("10.0.0.%d" % i, "10.0.0.%d" % i, 11211 if i % 2 else 11300 + i)
         for i in range(1, 6)],
        "LIBMEMCACHED format with the host name equal to the IP text (what an IP literal "
        "gives when reverse DNS finds no name; a real IP literal would ask reverse DNS, "
        "which is machine-dependent, e.g. 127.0.0.1 -> localhost)")
    add("weighted_spymemcached", "SPYMEMCACHED", "KETAMA_HASH", True,
        [ipn("10.0.0.1", 11211, 1), ipn("10.0.0.2", 11211, 2), ipn("10.0.0.3", 11211, 3),
         ipn("10.0.0.4", 11211, 10)], "2.12 weighted constructor: libmemcached's float formula")
    add("weighted_libmemcached", "LIBMEMCACHED", "KETAMA_HASH", True,
        [named("cache-1", "10.0.0.1", 11211, 8), named("cache-2", "10.0.0.2", 11211, 8),
         named("cache-3", "10.0.0.3", 11212, 5)], "weighted, LIBMEMCACHED format")
    add("weighted_equal_25", "SPYMEMCACHED", "KETAMA_HASH", True,
        [ipn("10.0.1.%d" % i, 11211, 1) for i in range(1, 26)],
        "25 equal weights: where the float32 formula's rounding shows", keys=KEYS[:200])
    add("weighted_fnv1a_32", "SPYMEMCACHED", "FNV1A_32_HASH", True,
        [ipn("10.0.0.1", 11211, 1), ipn("10.0.0.2", 11211, 2), ipn("10.0.0.3", 11211, 3)],
        "weighted: positions are MD5 whatever the algorithm; keys hashed with FNV1A_32 "
        "(over UTF-16 chars)", keys=KEYS[:240])
    for alg in ("NATIVE_HASH", "CRC_HASH", "FNV1_64_HASH", "FNV1A_64_HASH", "FNV1_32_HASH",
                "FNV1A_32_HASH"):
        add("unweighted_" + alg.lower(), "SPYMEMCACHED", alg, False, ip5,
            "unweighted with %s: 160 points alg('node-i') and keys hashed with it" % alg,
            keys=KEYS[:240])
    a, b, point = choose.spy_tie("10.0.0.1", range(20000, 30000))
    tie = [ipn("10.0.0.1", a), ipn("10.0.0.1", b), ipn("10.0.0.2", 11211)]
    pts = sorted(set(h for n in tie for h in choose.md5_points("%s:%d" % (n["address"], n["port"]))))
    tk = choose.md5_keys_landing(pts, point, 24, seed=3)
    add("tie_last_wins", "SPYMEMCACHED", "KETAMA_HASH", False, tie,
        "10.0.0.1:%d and 10.0.0.1:%d share the point %d (chosen by choose.py); the first "
        "24 keys land on it: TreeMap.put makes the later node win" % (a, b, point),
        keys=tk + KEYS[:100])
    add("tie_last_wins_swapped", "SPYMEMCACHED", "KETAMA_HASH", False, [tie[1], tie[0], tie[2]],
        "the same nodes with the tied pair swapped", keys=tk + KEYS[:100])
    return cases


def addr_fields(n):
    if n["kind"] == "ip":
        return ["ip", hx(n["address"]), str(n["port"])]
    return ["named", hx(n["hostname"]), hx(n["address"]), str(n["port"])]


def run_spy(classes):
    cases = spy_cases()
    lines = []
    for c in cases:
        f = ["spy", c["format"], c["hash"], "1" if c["weighted"] else "0", str(len(c["nodes"]))]
        for n in c["nodes"]:
            f += addr_fields(n) + [str(n["weight"])]
        f += [hx(k) for k in c["keys"]]
        lines.append(" ".join(f))
    out = run_driver(classes, lines)
    pos, res = 0, []
    for c in cases:
        key0 = [unhx(h) for h in out[pos].split()]
        npoints = int(out[pos + 1])
        idx = [int(x) for x in out[pos + 2: pos + 2 + len(c["keys"])]]
        pos += 2 + len(c["keys"])
        nodes = []
        for n, k0 in zip(c["nodes"], key0):
            assert k0.endswith("-0")
            nodes.append({"name": k0[:-2], "address": n["address"], "hostname": n["hostname"],
                          "port": n["port"], "weight": n["weight"]})
        res.append({"name": c["name"], "notes": c["notes"], "format": c["format"],
                    "hash": c["hash"], "weighted": c["weighted"], "nodes": nodes,
                    "point_count": npoints, "keys": c["keys"],
                    "expect": [nodes[i]["name"] for i in idx]})
    return res


# ------------------------------------------------------------------ Guava

BUCKETS = [1, 2, 3, 7, 10, 100, 1000, 65536, 2147483647]


def guava_inputs():
    rng = random.Random(4242)
    longs = [0, 1, -1, 2, 42, 2 ** 63 - 1, -2 ** 63, 2 ** 32, -2 ** 32, 12345678901234]
    longs += [rng.getrandbits(64) - 2 ** 63 for _ in range(190)]
    div = []
    pairs = [p for p in choose.guava_divergent_pairs(200) if p[2] <= 1 << 20]
    for i, (x, c, g, pp) in enumerate(pairs[:40]):
        key = choose.guava_input_for(x, c, seed=i)
        if key is not None:
            div.append({"input": key, "x": x, "candidate": c, "guava_next": g, "paper_next": pp})
    over = [choose.guava_overflow_input(seed=s) for s in range(5)]
    return longs, div, over


def run_guava(classes):
    longs, div, over = guava_inputs()
    lines = []
    for v in longs + over:
        lines.append("guava-long %d %s" % (v, " ".join(map(str, BUCKETS))))
    for d in div:
        bks = [d["paper_next"] + 1, d["guava_next"] + 1, 1000, 1 << 20, 2147483647]
        d["buckets"] = bks
        lines.append("guava-long %d %s" % (d["input"], " ".join(map(str, bks))))
    skeys = KEYS[:200]
    for fn in ("murmur3_128", "murmur3_32_fixed"):
        for k in skeys:
            lines.append("guava-str %s %s 1 10 1000 65536" % (fn, hx(k)))
    out = run_driver(classes, lines)
    pos = 0
    rows = []
    for v in longs + over:
        rows.append([int(x) for x in out[pos].split()])
        pos += 1
    cases = [{
        "name": "random_longs",
        "notes": "consistentHash(long, buckets) for seeded random longs and edge values",
        "buckets": BUCKETS, "inputs": [str(v) for v in longs],
        "expect": rows[:len(longs)],
        "reference_paper_jump": [[references.jump_paper(v, b) for b in BUCKETS] for v in longs],
    }, {
        "name": "overflow_inputs",
        "notes": "inputs whose first generator value state>>>33 is 2^31-1: Guava's "
                 "(int)(x)+1 overflows, nextDouble() is -1.0 and Guava stops at 0, the "
                 "paper continues",
        "buckets": BUCKETS, "inputs": [str(v) for v in over],
        "expect": rows[len(longs):],
        "reference_paper_jump": [[references.jump_paper(v, b) for b in BUCKETS] for v in over],
    }]
    exp, ref = [], []
    for d in div:
        exp.append([int(x) for x in out[pos].split()])
        ref.append([references.jump_paper(d["input"], b) for b in d["buckets"]])
        pos += 1
    cases.append({
        "name": "rounding_divergence",
        "notes": "inputs whose second generator step has x = state>>>33 and candidate c "
                 "where (c+1)*2^31/(x+1) is an exact integer: Guava (one rounding) and the "
                 "paper (two roundings) pick different next candidates; chosen by "
                 "choose.py (inputs only). Per input its own bucket counts.",
        "inputs": [str(d["input"]) for d in div],
        "chosen": [{"x": d["x"], "candidate": d["candidate"], "guava_next": d["guava_next"],
                    "paper_next": d["paper_next"]} for d in div],
        "buckets_per_input": [d["buckets"] for d in div],
        "expect": exp, "reference_paper_jump": ref,
    })
    for fn in ("murmur3_128", "murmur3_32_fixed"):
        pad, exp = [], []
        for _ in skeys:
            vals = [int(x) for x in out[pos].split()]
            pad.append(str(vals[0]))
            exp.append(vals[1:])
            pos += 1
        cases.append({
            "name": "strings_" + fn,
            "notes": "consistentHash(Hashing.%s().hashString(key, UTF_8), buckets); "
                     "`inputs` is HashCode.padToLong() (32-bit codes: zero-extended asInt)" % fn,
            "hash": fn, "buckets": [1, 10, 1000, 65536], "keys": skeys, "inputs": pad,
            "expect": exp,
        })
    return cases


# ------------------------------------------------------------------ java-hashcode ring

def hashcode_cases():
    minnode = choose.java_node_with_min_point(1)
    min_keys = ["polygenelubricants", choose.java_string_with_hash(0x80000000, 2),
                choose.java_string_with_hash(0x80000000, 3)]
    # key pairs with h and -h (Math.abs makes them equal)
    pair_keys = []
    for i in range(4):
        k = "abs-%d" % i
        h = choose.java_hash(k)
        pair_keys += [k, choose.java_string_with_hash((-h) & choose.M32, 10 + i)]
    extra = min_keys + pair_keys
    sets = [
        ("five_names", ["redis-%d" % i for i in range(1, 6)], "five plain node names"),
        ("ip_port", ["10.0.0.%d:6379" % i for i in range(1, 5)], "host:port node names"),
        ("collision_later_wins", ["Aa", "BB", "cache-3"],
         "'Aa' and 'BB' have the same hashCode, so every point of 'Aa' is overwritten by "
         "'BB' (a later put wins): 'Aa' is never chosen"),
        ("collision_later_wins_swapped", ["BB", "Aa", "cache-3"], "the same, 'Aa' put last"),
        ("min_value_point", [minnode, "redis-2", "redis-3"],
         "(%s + '-N0').hashCode() == Integer.MIN_VALUE: Math.abs leaves it negative, so it "
         "is the smallest point (the wrap-around target)" % minnode),
        ("unicode_nodes", ["nœud-1", "узел-2", "ノード-3", "🎉-4"],
         "non-ASCII node names: hashCode over UTF-16 units (the emoji is two units)"),
    ]
    return sets, extra


def run_hashcode(classes):
    sets, extra = hashcode_cases()
    keys = extra + KEYS
    lines = ["hashcode %d %s %s" % (len(nodes), " ".join(hx(n) for n in nodes),
                                    " ".join(hx(k) for k in keys)) for _, nodes, _ in sets]
    out = run_driver(classes, lines)
    pos, cases = 0, []
    for name, nodes, notes in sets:
        npts = int(out[pos])
        exp = [unhx(h) for h in out[pos + 1: pos + 1 + len(keys)]]
        pos += 1 + len(keys)
        cases.append({"name": name, "notes": notes, "nodes": nodes, "point_count": npts,
                      "keys": keys, "expect": exp})
    return cases, extra


def main():
    classes = compile_driver()
    jv = java_version()
    spy_v = deb_version("libspymemcached-java")
    write_vector("spymemcached", __file__,
                 {"name": "spymemcached (Debian libspymemcached-java)", "version": spy_v,
                  "jvm": jv},
                 "java/FleetDriver.java builds net.spy.memcached.KetamaNodeLocator (the 2.12 "
                 "constructors) over MemcachedNode proxies that only carry an "
                 "InetSocketAddress, and records getPrimary(key) for every key",
                 ["`nodes[].name` is the node key the peer's KetamaNodeKeyFormatter produced "
                  "(getKeyForNode(node, 0) without its '-0'): the string a spymemcached "
                  "profile hashes; `expect[i]` is the name of getPrimary(keys[i]).",
                  "`weighted: false` uses KetamaNodeLocator(nodes, alg, format, empty map); "
                  "`weighted: true` passes the weights map (2.12.0+). Debian ships 2.12.3.",
                  "`point_count` is the size of the locator's TreeMap (distinct points).",
                  "Nodes are never resolved: 'ip' nodes are IP literals, 'hostname' nodes "
                  "are InetAddress.getByAddress(hostname, ip)."],
                 run_spy(classes))
    write_vector("guava_jump", __file__,
                 {"name": "Guava Hashing.consistentHash (Debian libguava-java)",
                  "version": deb_version("libguava-java"), "jvm": jv},
                 "java/FleetDriver.java calls com.google.common.hash.Hashing.consistentHash",
                 ["`expect` rows are Guava's answers, one per bucket count.",
                  "`reference_paper_jump` is NOT a peer: the paper's jump (Lamping & Veach, "
                  "arXiv:1406.2294, the C++ in the paper) computed by references.py for the "
                  "same input read as uint64; it shows where the two engines differ.",
                  "Inputs are decimal strings (signed 64-bit) so every language reads them "
                  "exactly."],
                 run_guava(classes))
    hc_cases, extra = run_hashcode(classes)
    write_vector("java_hashcode", __file__,
                 {"name": "OpenJDK java.util.concurrent.ConcurrentSkipListMap "
                          "(keyroute's own driver program)", "version": jv},
                 "java/FleetDriver.java `hashcode`: keyroute's own program written from "
                 "issue 16's description of the java-hashcode ring (there is no published "
                 "client to run): points Math.abs((node + \"-N\" + i).hashCode()), i < 150, "
                 "put in node order into a ConcurrentSkipListMap<Integer,String>; a key goes "
                 "to tailMap(Math.abs(key.hashCode())).firstKey(), else the first entry",
                 ["The first %d keys are chosen edges (choose.py, inputs only): keys whose "
                  "hashCode() is Integer.MIN_VALUE ('polygenelubricants' and two more), then "
                  "pairs of keys with hash h and -h." % len(extra),
                  "`point_count` is the map's size after the puts (distinct points)."],
                 hc_cases)


if __name__ == "__main__":
    main()
