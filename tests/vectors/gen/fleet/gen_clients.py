#!/usr/bin/env python3
"""Client-library rings called directly: redis-rb (Debian ruby-redis), Predis (Debian
php-nrk-predis), pymemcache (PyPI, pinned in requirements.txt; run in the fleet venv) and
groupcache (Debian golang-github-golang-groupcache-dev, built with Debian's Go, no
network).  Each peer runs through a small driver in drivers/ (keyroute's code, not the
peer's); the answers are the peer's.
"""

import json
import os
import subprocess
import sys
import zlib

import choose
from common import BUILD_DIR, HERE, deb_version, make_keys, memcache_safe, write_vector

KEYS = make_keys(n_seq=300, n_ascii=60, n_unicode=60)
DRIVERS = os.path.join(HERE, "drivers")


def run(argv, payload, env=None):
    p = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True,
                       env=env)
    if p.returncode != 0:
        raise SystemExit("%s failed:\n%s" % (argv[0], p.stderr))
    return json.loads(p.stdout)


# ------------------------------------------------------------------ redis-rb

def redis_rb():
    a, b, point = choose.find_tie(choose.random_names("node-", 1),
                                  lambda n: [zlib.crc32(("%s:%d" % (n, i)).encode())
                                             for i in range(160)])
    ring_ids = [a, b, "node-x"]
    pts = sorted(set(zlib.crc32(("%s:%d" % (n, i)).encode()) for n in ring_ids for i in range(160)))
    tk = choose.crc_keys_floor(pts, point, 24, seed=5)
    cases = [
        {"name": "distributed_urls", "mode": "distributed",
         "nodes": ["redis://10.0.0.1:6379/0", "redis://10.0.0.2:6379/0", "redis://10.0.0.3:6380/1",
                   "redis://cache-a.example:6379", "redis://[::1]:6379/2"],
         "notes": "Redis::Distributed.new(urls).node_for(key): node ids are "
                  "'redis://host:port/db'; a key starting with {tag} hashes the tag "
                  "(/^\\{(.+?)\\}/)"},
        {"name": "distributed_custom_ids", "mode": "distributed",
         "nodes": [{"url": "redis://10.0.0.1:6379", "id": "shard-a"},
                   {"url": "redis://10.0.0.2:6379", "id": "shard-b"},
                   {"url": "redis://10.0.0.3:6379", "id": "shard-c"}],
         "notes": "explicit :id options: the id is hashed, not the address"},
        {"name": "ring_ids", "mode": "ring", "ids": ["a", "b", "c", "d"], "replicas": None,
         "notes": "Redis::HashRing over objects with these ids (no tag rule): CRC32 of "
                  "'id:i', i < 160, floor lookup wrapping to the last point"},
        {"name": "ring_replicas_3", "mode": "ring", "ids": ["red", "green", "blue"], "replicas": 3,
         "notes": "3 replicas per node: long arcs, many keys below the first point "
                  "(they wrap to the last)"},
        {"name": "ring_tie_last_wins", "mode": "ring", "ids": ring_ids, "replicas": None,
         "notes": "'%s' and '%s' share the point %d (chosen by choose.py); the first 24 "
                  "keys land on it: the node added last owns it" % (a, b, point),
         "keys": tk + KEYS[:100]},
        {"name": "ring_tie_last_wins_swapped", "mode": "ring", "ids": [b, a, "node-x"],
         "replicas": None, "notes": "the same with the pair swapped", "keys": tk + KEYS[:100]},
    ]
    payload = [dict({k: v for k, v in c.items() if k not in ("name", "notes")},
                    keys=c.get("keys", KEYS)) for c in cases]
    res = run(["ruby", os.path.join(DRIVERS, "redis_rb_driver.rb")], payload)
    ver = res[0]
    out = []
    for c, r in zip(cases, res[1:]):
        oc = {"name": c["name"], "notes": c["notes"], "mode": c["mode"]}
        if c["mode"] == "distributed":
            oc["nodes"] = c["nodes"]
        else:
            oc["replicas"] = c["replicas"] or 160
        oc["ids"] = r["ids"]
        oc["point_count"] = r["points"]
        oc["keys"] = c.get("keys", KEYS)
        oc["expect"] = r["expect"]
        out.append(oc)
    write_vector("redis_rb", __file__,
                 {"name": "redis-rb Redis::HashRing (Debian ruby-redis)",
                  "version": deb_version("ruby-redis"), "gem": ver["version"],
                  "ruby": ver["ruby"]},
                 "drivers/redis_rb_driver.rb builds Redis::Distributed / Redis::HashRing and "
                 "records the id of the node chosen for every key",
                 ["`expect[i]` is the chosen node's id (Redis#id for Distributed).",
                  "`point_count` is the length of sorted_keys (duplicates kept)."], out)


# ------------------------------------------------------------------ Predis

def predis():
    a, b, point = choose.find_tie(choose.random_names("node-", 2),
                                  lambda n: [zlib.crc32(("%s:%d" % (n, i)).encode())
                                             for i in range(128)])
    tie_nodes = [[a, None], [b, None], ["node-x", None]]
    pts = sorted(set(zlib.crc32(("%s:%d" % (n, i)).encode()) for n, _ in tie_nodes
                     for i in range(128)))
    tk = choose.crc_keys_floor(pts, point, 24, seed=6)
    cases = [
        {"name": "client_default", "mode": "client",
         "params": ["tcp://10.0.0.1:6379", "tcp://10.0.0.2:6379", "tcp://10.0.0.3:6380",
                    "tcp://cache-a.example:6379"],
         "notes": "new Predis\\Client(params): PredisCluster + PredisStrategy + HashRing; "
                  "node hash 'host:port', weight 100 each, 128 replicas per equal share; "
                  "the {tag} rule applies (first '{' to the next '}', when non-empty)"},
        {"name": "client_weights_alias", "mode": "client",
         "params": ["tcp://10.0.0.1:6379?weight=100&alias=first",
                    "tcp://10.0.0.2:6379?weight=200", "tcp://10.0.0.3:6379?weight=50&alias=third",
                    "tcp://10.0.0.4:6379?weight=0"],
         "notes": "weights change the replica count: (int) round(w / total * n * 128); "
                  "an alias is not hashed (the node hash stays host:port); weight=0 reads "
                  "as the default 100"},
        {"name": "hashring_weights", "mode": "hashring",
         "nodes": [["a", 1], ["b", 2], ["c", 3], ["d", None]],
         "notes": "HashRing->add(name, weight) with weights 1, 2, 3 and the default (100)"},
        {"name": "hashring_tie_last_wins", "mode": "hashring", "nodes": tie_nodes,
         "notes": "'%s' and '%s' share the point %d (chosen by choose.py); the first 24 "
                  "keys land on it (floor lookup): the node added last wins" % (a, b, point),
         "keys": tk + KEYS[:100]},
        {"name": "hashring_tie_swapped", "mode": "hashring",
         "nodes": [tie_nodes[1], tie_nodes[0], tie_nodes[2]],
         "notes": "the same with the pair swapped", "keys": tk + KEYS[:100]},
        {"name": "ketama_ring", "mode": "ketama",
         "nodes": [["10.0.0.1:6379", None], ["10.0.0.2:6379", None], ["10.0.0.3:6379", 200]],
         "notes": "Predis' KetamaRing: md5('node-i') 4 points per digest, floor(w/total * n "
                  "* 40) digests, ceiling lookup wrapping to the first"},
    ]
    payload = [dict({k: v for k, v in c.items() if k in ("mode", "params", "nodes")},
                    keys=c.get("keys", KEYS)) for c in cases]
    res = run(["php", os.path.join(DRIVERS, "predis_driver.php")], payload)
    ver = res[0]
    out = []
    for c, r in zip(cases, res[1:]):
        oc = {"name": c["name"], "notes": c["notes"], "mode": c["mode"]}
        if "params" in c:
            oc["params"] = c["params"]
        else:
            oc["nodes"] = c["nodes"]
        oc["keys"] = c.get("keys", KEYS)
        oc["expect"] = r["expect"]
        out.append(oc)
    write_vector("predis", __file__,
                 {"name": "Predis (Debian php-nrk-predis)",
                  "version": deb_version("php-nrk-predis"), "library": ver["version"],
                  "php": ver["php"]},
                 "drivers/predis_driver.php builds Predis\\Client (no connection is made) or a "
                 "HashRing/KetamaRing distributor and records the node chosen for every key",
                 ["client cases: `expect[i]` is (string) of the connection chosen by "
                  "getConnectionByKey(keys[i]): 'host:port'.",
                  "hashring/ketama cases: `nodes` are [name, weight or null] as passed to "
                  "add(); `expect[i]` is get(keys[i])."], out)


# ------------------------------------------------------------------ pymemcache

def pymemcache():
    venv_py = os.path.join(BUILD_DIR, "..", "fleet-vectors-venv", "bin", "python")
    script = r'''
import json, sys
import pymemcache
from pymemcache.client.hash import HashClient
from pymemcache.client.rendezvous import RendezvousHash
cases = json.load(sys.stdin)
out = [{"version": pymemcache.__version__}]
for c in cases:
    if c["mode"] == "hashclient":
        servers = [tuple(s) if isinstance(s, list) else s for s in c["servers"]]
        hc = HashClient(servers, allow_unicode_keys=True)
        keys = [k.encode() if c["bytes"] else k for k in c["keys"]]
        inv = {id(v): k for k, v in hc.clients.items()}
        out.append({"expect": [inv[id(hc._get_client(k))] for k in keys],
                    "nodes": list(hc.hasher.nodes)})
    else:
        h = RendezvousHash(c["nodes"], seed=c.get("seed", 0))
        out.append({"expect": [h.get_node(k) for k in c["keys"]], "nodes": c["nodes"]})
print(json.dumps(out, ensure_ascii=False))
'''
    mkeys = memcache_safe(KEYS)
    cases = [
        {"name": "hashclient_tuples", "mode": "hashclient", "bytes": False,
         "servers": [["10.0.0.1", 11211], ["10.0.0.2", 11211], ["10.0.0.3", 11212],
                     ["::1", 11211], "/var/run/memcached.sock"],
         "keys": mkeys,
         "notes": "HashClient(servers, allow_unicode_keys=True)._get_client(str key): node "
                  "names are 'host:port' ('::1:11211' for IPv6, no brackets) or the unix "
                  "path; murmur3_32 over '%s-%s' % (node, key), each character's code "
                  "point & 0xff (not UTF-8)"},
        {"name": "hashclient_bytes_keys", "mode": "hashclient", "bytes": True,
         "servers": [["10.0.0.1", 11211], ["10.0.0.2", 11211], ["10.0.0.3", 11212]],
         "keys": [k for k in mkeys if k.isascii()],
         "notes": "the same with bytes keys (keys[i].encode()): Python 3 formats them as "
                  "\"b'...'\", so the hashed text is 'node-b'key''"},
        {"name": "rendezvous_names", "mode": "rendezvous",
         "nodes": ["alpha", "beta", "gamma", "delta", "epsilon"], "keys": KEYS,
         "notes": "RendezvousHash(nodes).get_node(key), any str key (empty included)"},
        {"name": "rendezvous_seed", "mode": "rendezvous", "seed": 12345,
         "nodes": ["alpha", "beta", "gamma"], "keys": KEYS[:200],
         "notes": "RendezvousHash(nodes, seed=12345)"},
        {"name": "rendezvous_tie_masked", "mode": "rendezvous",
         "nodes": ["nodeA", "node\u0141", "other"], "keys": KEYS[:200],
         "notes": "'nodeA' and 'node\\u0141' hash the same bytes (0x141 & 0xff = 'A'), so "
                  "they tie on every key: the tie goes to max(str(node), str(winner)) = "
                  "'node\\u0141'"},
    ]
    payload = [{k: v for k, v in c.items() if k not in ("name", "notes")} for c in cases]
    res = run([venv_py, "-c", script], payload)
    out = []
    for c, r in zip(cases, res[1:]):
        oc = {"name": c["name"], "notes": c["notes"], "mode": c["mode"]}
        if "servers" in c:
            oc["servers"] = c["servers"]
        if "seed" in c:
            oc["seed"] = c["seed"]
        oc["nodes"] = r["nodes"]
        if c.get("bytes"):
            oc["keys_are_bytes"] = True
        oc["keys"] = c["keys"]
        oc["expect"] = r["expect"]
        out.append(oc)
    write_vector("pymemcache", __file__,
                 {"name": "pymemcache (PyPI)", "version": res[0]["version"]},
                 "pymemcache %s (pinned in tests/vectors/gen/fleet/requirements.txt) run in "
                 "build/fleet-vectors-venv: HashClient._get_client and RendezvousHash.get_node"
                 % res[0]["version"],
                 ["`nodes` are the hasher's node strings in order; `expect[i]` is the node "
                  "chosen for keys[i].",
                  "HashClient refuses keys with spaces/control characters or over 250 bytes "
                  "(check_key): those cases use the memcached-safe keys."], out)


# ------------------------------------------------------------------ groupcache

def groupcache():
    exe = os.path.join(BUILD_DIR, "groupcache_driver")
    env = dict(os.environ, GO111MODULE="off", GOPATH="/usr/share/gocode",
               GOCACHE=os.path.join(BUILD_DIR, "gocache"), GOFLAGS="", CGO_ENABLED="0")
    os.makedirs(BUILD_DIR, exist_ok=True)
    subprocess.run(["go", "build", "-o", exe, os.path.join(DRIVERS, "groupcache_driver.go")],
                   check=True, env=env)
    gov = subprocess.run(["go", "version"], capture_output=True, text=True).stdout.strip()
    a, b, point = choose.find_tie(("http://%s:8000" % n for n in choose.random_names("peer-", 3)),
                                  lambda n: [zlib.crc32((str(i) + n).encode()) for i in range(50)])
    cases = [
        {"name": "httppool_urls", "replicas": 50,
         "peers": ["http://10.0.0.1:8000", "http://10.0.0.2:8000", "http://10.0.0.3:8000",
                   "http://cache-a.example:8000"],
         "notes": "consistenthash.New(50, nil) (HTTPPool's default replicas, CRC32-IEEE) "
                  "over HTTPPool base URLs: points crc32(itoa(i) + peer)"},
        {"name": "replicas_3", "replicas": 3, "peers": ["a", "b", "c", "d"],
         "notes": "3 replicas of short names"},
        {"name": "prefix_ambiguity", "replicas": 50, "peers": ["a", "1a", "b"],
         "notes": "'1'+'1a' = '11'+'a' (and so on): 'a' and '1a' share points; the later "
                  "Add overwrites hashMap, so the shared points belong to '1a'"},
        {"name": "prefix_ambiguity_swapped", "replicas": 50, "peers": ["1a", "a", "b"],
         "notes": "the same, 'a' added last: the shared points belong to 'a'"},
        {"name": "crc_tie", "replicas": 50, "peers": [a, b, "http://10.9.9.9:8000"],
         "notes": "'%s' and '%s' share the point %d (chosen by choose.py): the later Add "
                  "wins" % (a, b, point)},
    ]
    pts = sorted(set(zlib.crc32((str(i) + n).encode()) for n in cases[-1]["peers"]
                     for i in range(50)))
    tk = choose.keys_landing(pts, point, 24, seed=7)
    cases[-1]["keys"] = tk + KEYS[:100]
    payload = [{"replicas": c["replicas"], "peers": c["peers"], "keys": c.get("keys", KEYS)}
               for c in cases]
    res = run([exe], payload)
    out = []
    for c, r in zip(cases, res):
        out.append({"name": c["name"], "notes": c["notes"], "replicas": c["replicas"],
                    "peers": c["peers"], "keys": c.get("keys", KEYS), "expect": r["expect"]})
    write_vector("groupcache", __file__,
                 {"name": "groupcache consistenthash (Debian golang-github-golang-groupcache-dev)",
                  "version": deb_version("golang-github-golang-groupcache-dev"), "go": gov},
                 "drivers/groupcache_driver.go, built with Debian's Go against the Debian "
                 "source (GO111MODULE=off, GOPATH=/usr/share/gocode), calls "
                 "consistenthash.New(replicas, nil).Add(peers...).Get(key)",
                 ["`expect[i]` is Get(keys[i]). Go strings are bytes: keys are hashed as "
                  "their UTF-8 bytes.",
                  "go-redis v6/v7 used a copy of this code with 100 replicas; run "
                  "replicas=100 through the same engine for it (not a separate peer here)."],
                 out)


def main(which=None):
    for name, fn in (("redis_rb", redis_rb), ("predis", predis), ("pymemcache", pymemcache),
                     ("groupcache", groupcache)):
        if which in (None, name):
            fn()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
