#!/usr/bin/env python3
"""Peers that do not run here (Envoy ring_hash and Maglev, Jedis, go-redis Ring, Dubbo):
their own unit-test data, cited, plus outputs of references written from their sources
(references.py), clearly labelled.

UNIT_TESTS below holds only values copied from the peers' unit tests (host lists, table
sizes, ring positions, expected hosts, expected counts), each with the repository,
commit, file and test name.  Generation fails unless references.py reproduces every one
of them, so a transcription slip or a reference bug cannot pass silently.  The
`reference` cases are NOT peer answers: they are what the reference computes for more
inputs, for engines to compare against until a peer can run here.
"""

import collections

import references as R
from common import make_keys, write_vector

KEYS = make_keys(n_seq=200, n_ascii=50, n_unicode=50)

ENVOY_RING_TEST = {"repo": "envoyproxy/envoy", "commit": "13e9fdb2d4db3480ff278565a596324951e8dccd",
                   "file": "test/extensions/load_balancing_policies/ring_hash/ring_hash_lb_test.cc"}
ENVOY_MAGLEV_TEST = {"repo": "envoyproxy/envoy", "commit": "08417eb62f1ecfa6ac015caa0146d25565a142ed",
                     "file": "test/extensions/load_balancing_policies/maglev/maglev_lb_test.cc"}
U64 = 18446744073709551615

UNIT_TESTS = {
    "envoy_ring": [
        {"test": "RingHashLoadBalancerTest.Basic", "hash_function": "xx_hash",
         "min_ring_size": 12, "host_keys": ["127.0.0.1:%d" % p for p in range(90, 96)],
         "ring": [[833437586790550860, 4], [928266305478181108, 2], [1033482794131418490, 0],
                  [3551244743356806947, 5], [3851675632748031481, 3], [5583722120771150861, 1],
                  [6311230543546372928, 1], [7700377290971790572, 3], [13144177310400110813, 5],
                  [13444792449719432967, 2], [15516499411664133160, 4], [16117243373044804889, 0]],
         "lookups": [[0, 4], [U64, 4], [3551244743356806947, 5], [3551244743356806948, 3],
                     [16117243373044804880, 0]]},
        {"test": "RingHashLoadBalancerTest.BasicWithMurmur2", "hash_function": "murmur_hash_2",
         "min_ring_size": 12, "host_keys": ["127.0.0.1:%d" % p for p in range(80, 86)],
         "ring": [[1358027074129602068, 5], [4361834613929391114, 3], [7224494972555149682, 4],
                  [7701421856454313576, 1], [8649315368077433379, 2], [8739448859063030639, 4],
                  [9887544217113020895, 1], [10150910876324007731, 2], [15168472011420622455, 3],
                  [15427156902705414897, 0], [16375050414328759093, 5], [17613279263364193813, 0]],
         "lookups": [[0, 5], [U64, 5], [1358027074129602068, 5], [1358027074129602069, 3],
                     [10150910876324007730, 2]]},
        {"test": "RingHashLoadBalancerTest.BasicWithDoundedLoad (use_hostname_for_hashing; "
                 "the bounded-load factor does not change the ring)",
         "hash_function": "xx_hash", "min_ring_size": 12,
         "host_keys": [str(p) for p in range(90, 96)],
         "ring": [[1975508444536362413, 5], [2376063919839173711, 5], [2386806903309390596, 3],
                  [6749904478991551885, 4], [6803900775736438537, 3], [7225015537174310577, 2],
                  [8787465352164086522, 0], [11282020843382717940, 2], [13723418369486627818, 1],
                  [13776502110861797421, 0], [14338313586354474791, 1], [15364271037087512980, 4]],
         "lookups": [[0, 5], [U64, 5], [7225015537174310577, 2], [6803900775736438537, 3]]},
    ],
    "envoy_maglev": [
        {"test": "MaglevLoadBalancerTest.Basic", "table_size": 7,
         "host_keys": ["127.0.0.1:%d" % p for p in range(90, 96)], "weights": [1] * 6,
         "table": [2, 4, 0, 1, 5, 0, 3]},
        {"test": "MaglevLoadBalancerTest.BasicWithHostName", "table_size": 7,
         "host_keys": [str(p) for p in range(90, 96)], "weights": [1] * 6,
         "table": [2, 5, 0, 3, 4, 1, 0]},
        {"test": "MaglevLoadBalancerTest.Weighted", "table_size": 17,
         "host_keys": ["127.0.0.1:90", "127.0.0.1:91"], "weights": [1, 2],
         "table": [1, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 0, 1]},
    ],
    "go_redis": {
        "repo": "redis/go-redis", "commit": "216593cc01faa029006266a5f1fc3d5004312ecf",
        "file": "ring_test.go (options from main_test.go redisRingOptions)",
        "shards": ["ringShardOne", "ringShardTwo"],
        "checks": [
            {"test": "Redis Ring / distributes keys", "keys": "key%d for 0..99",
             "counts": {"ringShardOne": 56, "ringShardTwo": 44}},
            {"test": "Redis Ring / supports hash tags", "keys": "key%d{tag} for 0..99",
             "counts": {"ringShardTwo": 100}},
        ],
    },
    "jedis": {
        "repo": "redis/jedis", "tag": "v3.10.0",
        "file": "src/test/java/redis/clients/jedis/tests/ShardedJedisTest.java",
        "checks": [
            {"test": "testMurmurSharding", "algo": "murmur", "keys": "Integer.toString(i) for 0..999",
             "shards": "3 unnamed JedisShardInfo (localhost:6379..6381), weight 1",
             "bounds": "each shard gets more than 300 and fewer than 400 keys"},
            {"test": "testMD5Sharding", "algo": "md5", "keys": "Integer.toString(i) for 0..999",
             "shards": "3 unnamed JedisShardInfo (localhost:6379..6381), weight 1",
             "bounds": "each shard gets more than 300 and fewer than 400 keys"},
        ],
    },
}


def fail(msg):
    raise SystemExit("gen_unit_refs: the reference does not reproduce the unit test: " + msg)


def envoy():
    cases = []
    for t in UNIT_TESTS["envoy_ring"]:
        ring = R.envoy_ring(t["host_keys"], [1] * len(t["host_keys"]), min_ring=t["min_ring_size"],
                            fn=t["hash_function"])
        if [list(e) for e in ring] != t["ring"]:
            fail(t["test"])
        for h, want in t["lookups"]:
            if R.envoy_ring_lookup(ring, h) != want:
                fail("%s lookup %d" % (t["test"], h))
        cases.append({"name": "unit_test_ring_" + t["hash_function"] + ("_hostname" if "Dounded" in t["test"] else ""),
                      "kind": "ring_hash", "source": "unit_test",
                      "unit_test": dict(ENVOY_RING_TEST, test=t["test"]),
                      "hash_function": t["hash_function"], "min_ring_size": t["min_ring_size"],
                      "max_ring_size": 8388608, "host_keys": t["host_keys"],
                      "weights": [1] * len(t["host_keys"]),
                      "ring": [[str(h), i] for h, i in t["ring"]],
                      "hashes": [str(h) for h, _ in t["lookups"]],
                      "expect": [i for _, i in t["lookups"]],
                      "reference_check": "references.envoy_ring reproduces every position and lookup"})
    for t in UNIT_TESTS["envoy_maglev"]:
        table = R.envoy_maglev(t["host_keys"], t["weights"], t["table_size"])
        if table != t["table"]:
            fail(t["test"])
        cases.append({"name": "unit_test_maglev_" + t["test"].split(".")[1].lower(),
                      "kind": "maglev", "source": "unit_test",
                      "unit_test": dict(ENVOY_MAGLEV_TEST, test=t["test"]),
                      "table_size": t["table_size"], "host_keys": t["host_keys"],
                      "weights": t["weights"], "table": t["table"],
                      "hashes": [str(i) for i in range(3 * t["table_size"])],
                      "expect": [t["table"][i % t["table_size"]] for i in range(3 * t["table_size"])],
                      "reference_check": "references.envoy_maglev reproduces the table"})
    # Reference-only cases: keys hashed as Envoy's header hash policy does (XXH64(value, 0)).
    hk = ["10.0.0.%d:8080" % i for i in range(1, 6)] + ["[2001:db8::1]:8080", "cache-a.example"]
    ws = [1, 1, 2, 3, 1, 5, 1]
    for fn in ("xx_hash", "murmur_hash_2"):
        ring = R.envoy_ring(hk, ws, fn=fn)
        hs = [R.xxh64(k.encode()) for k in KEYS]
        cases.append({"name": "reference_ring_" + fn, "kind": "ring_hash", "source": "reference",
                      "hash_function": fn, "min_ring_size": 1024, "max_ring_size": 8388608,
                      "host_keys": hk, "weights": ws, "ring_size": len(ring),
                      "keys": KEYS, "hashes": [str(h) for h in hs],
                      "expect": [R.envoy_ring_lookup(ring, h) for h in hs]})
    for size, ws2 in ((65537, ws), (251, [1] * 7)):
        table = R.envoy_maglev(hk, ws2, size)
        hs = [R.xxh64(k.encode()) for k in KEYS]
        cases.append({"name": "reference_maglev_%d" % size, "kind": "maglev", "source": "reference",
                      "table_size": size, "host_keys": hk, "weights": ws2,
                      "counts": [table.count(i) for i in range(len(hk))],
                      "keys": KEYS, "hashes": [str(h) for h in hs],
                      "expect": [table[h % size] for h in hs]})
    write_vector("envoy", __file__,
                 {"name": "Envoy ring_hash and Maglev (no peer runs here)", "version": None},
                 "unit_test cases: the data of Envoy's own tests (cited per case), checked "
                 "against references.py; reference cases: references.py only",
                 ["No Envoy binary is installable here (not in Debian/PyPI/npm). "
                  "`source: unit_test` values are Envoy's; `source: reference` values are "
                  "NOT a peer's: references.py written from Envoy's ring_hash_lb.cc and "
                  "maglev_lb.cc (the Maglev reference sorts hosts by key, Envoy >= 1.27).",
                  "`hashes` are the 64-bit request hashes (decimal strings); `expect[i]` is the "
                  "host index (into host_keys) chosen for hashes[i] on the first attempt. "
                  "reference cases also give `keys`, with hashes[i] = XXH64(keys[i], 0) as "
                  "Envoy's header hash policy computes it.",
                  "`ring`: [hash as decimal string, host index] in ring order."], cases)


def go_redis():
    u = UNIT_TESTS["go_redis"]
    names = u["shards"]
    got1 = collections.Counter(names[R.go_redis_rendezvous(names, ("key%d" % i).encode())] for i in range(100))
    got2 = collections.Counter(names[R.go_redis_rendezvous(names, ("key%d{tag}" % i).encode())] for i in range(100))
    if dict(got1) != u["checks"][0]["counts"] or dict(got2) != u["checks"][1]["counts"]:
        fail("go-redis ring_test.go counts")
    cases = [{"name": "unit_test_counts", "source": "unit_test",
              "unit_test": {k: u[k] for k in ("repo", "commit", "file")}, "shards": names,
              "checks": u["checks"],
              "keys": ["key%d" % i for i in range(100)] + ["key%d{tag}" % i for i in range(100)],
              "expect": [names[R.go_redis_rendezvous(names, ("key%d" % i).encode())] for i in range(100)]
              + [names[R.go_redis_rendezvous(names, ("key%d{tag}" % i).encode())] for i in range(100)],
              "reference_check": "references.go_redis_rendezvous gives the tests' counts; the "
                                 "per-key expect is the reference's"}]
    for nm, shards in (("reference_names", ["shard-a", "shard-b", "shard-c", "shard-d", "shard-e"]),
                       ("reference_hash_tags", ["redis-1", "redis-2", "redis-3"])):
        keys = KEYS if nm == "reference_names" else [k for k in KEYS[:100]] + [
            "{user1000}.following", "{user1000}.followers", "a{b}c", "{}x", "x{}", "{a}{b}", "}{a}", "{a"]
        cases.append({"name": nm, "source": "reference", "shards": shards, "keys": keys,
                      "expect": [shards[R.go_redis_rendezvous(shards, k.encode())] for k in keys]})
    write_vector("go_redis", __file__,
                 {"name": "go-redis Ring v8+ (no peer runs here)", "version": None},
                 "unit_test: go-redis's own ring tests (counts only); reference: references.py "
                 "written from internal/hashtag/rendezvous.go and hashtag.go",
                 ["go-redis is a Go module; the machine reaches no Go module proxy and Debian "
                  "does not package it, so it cannot run here.",
                  "go-redis's tests give counts, not per-key answers: the per-key `expect` of "
                  "every case is the reference's (NOT a peer's); the unit_test case's counts "
                  "are the test's and the reference reproduces them.",
                  "The hash-tag rule (text inside the first {...} when non-empty) applies "
                  "before hashing."], cases)


def jedis():
    u = UNIT_TESTS["jedis"]
    for chk in u["checks"]:
        pts = R.jedis_sharded([(None, 1)] * 3, "3", chk["algo"])
        cnt = collections.Counter(R.jedis_lookup(pts, str(i).encode(), chk["algo"]) for i in range(1000))
        if not all(300 < cnt[i] < 400 for i in range(3)):
            fail("jedis " + chk["test"])
    cases = [{"name": "unit_test_bounds", "source": "unit_test",
              "unit_test": {k: u[k] for k in ("repo", "tag", "file")}, "checks": u["checks"],
              "reference_check": "references.jedis_sharded meets both bounds"}]
    named = [("shard-a", 1), ("shard-b", 2), ("shard-c", 1)]
    unnamed = [(None, 1), (None, 1), (None, 2)]
    for ver in ("2.9", "3", "4"):
        for label, shards in (("named", named), ("unnamed", unnamed)):
            if ver == "4" and label == "named":
                continue
            for algo in ("murmur", "md5"):
                pts = R.jedis_sharded(shards, ver, algo)
                cases.append({"name": "reference_%s_%s_%s" % (ver.replace(".", "_"), label, algo),
                              "source": "reference", "jedis": {"2.9": "<= 2.9.3", "3": "2.10.0 - 3.x",
                                                               "4": "4.x JedisSharding"}[ver],
                              "algo": algo, "shards": [[n, w] for n, w in shards],
                              "point_count": len(pts), "keys": KEYS[:250],
                              "expect": [R.jedis_lookup(pts, k.encode(), algo) for k in KEYS[:250]]})
    write_vector("jedis", __file__, {"name": "Jedis Sharded (no peer runs here)", "version": None},
                 "unit_test: Jedis's own sharding tests (bounds only); reference: references.py "
                 "written from Sharded.java (2.9.3, 3.10.0) and 4.4.8 ShardedConnectionProvider",
                 ["Jedis is on Maven Central only (not reachable here; Debian has no package).",
                  "Jedis's tests assert bounds (300 < count < 400), not per-key answers: every "
                  "`expect` here is the reference's (NOT a peer's): the shard index chosen.",
                  "`shards`: [name or null (unnamed), weight]. 4.x ignores names and weights "
                  "(always 'SHARD-i-NODE-n', 160 points)."], cases)


def dubbo():
    addrs = ["10.0.0.1:20880", "10.0.0.2:20880", "10.0.0.3:20881", "[::1]:20880"]
    pts = R.dubbo_ring(addrs)
    cases = [{"name": "reference_default", "source": "reference", "addresses": addrs,
              "replicas": 160, "point_count": len(pts), "keys": KEYS,
              "expect": [addrs[R.dubbo_lookup(pts, k)] for k in KEYS]}]
    pts = R.dubbo_ring(addrs[:3], 40)
    cases.append({"name": "reference_hash_nodes_40", "source": "reference", "addresses": addrs[:3],
                  "replicas": 40, "point_count": len(pts), "keys": KEYS[:200],
                  "expect": [addrs[R.dubbo_lookup(pts, k)] for k in KEYS[:200]]})
    write_vector("dubbo", __file__, {"name": "Apache Dubbo ConsistentHashLoadBalance (no peer runs here)",
                                     "version": None},
                 "reference only: references.py written from ConsistentHashLoadBalance.java "
                 "(apache/dubbo 3.3 branch)",
                 ["Dubbo is on Maven Central only (not reachable here).",
                  "Its unit test (ConsistentHashLoadBalanceTest, apache/dubbo@022b32a8) checks "
                  "only that no invoker takes more than 1.5x the average over mocked "
                  "invocations: no per-key data to reuse. Every `expect` is the reference's "
                  "(NOT a peer's). Keys are the concatenated argument text, hashed as UTF-8 "
                  "(Dubbo uses the platform charset)."], cases)


def main():
    envoy()
    go_redis()
    jedis()
    dubbo()


if __name__ == "__main__":
    main()
