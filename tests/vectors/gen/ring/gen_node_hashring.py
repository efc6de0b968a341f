"""Ring vectors from npm hashring@3.2.0 (node_modules/hashring/index.js).

Peer facts (hashring 3.2.0 with connection-parse 0.0.7):
* servers given as an object {"host:port": weight}; connection-parse splits the
  string on ':' -> host = part 0, port = Number(part 1); weight = +value || 1;
* digests per server: JS double `Math.floor(weight / total * 40 * servers.length)`
  (evaluated left to right: ((w/total)*40)*n); a per-server `vnodes` option
  replaces it (not used here);
* server string hashed: `string + '-' + i`, or `host + '-' + i` when the
  `default port` option is set and equals the server's numeric port;
* points per digest: 4, or 3 with `compatibility: 'hash_ring'` (the only thing
  that option changes), point j = LE u32 of digest bytes 4j..4j+3;
* ring sorted with Array.prototype.sort (stable in Node >= 11): equal points keep
  insertion order (server order, then digest index, then word);
* find(): binary search for the first point >= key hash (wrap to 0), and among
  equal points the first one, so the earlier server wins a tie;
* range(key, n, true): walk from find()'s index to the end, then from 0,
  collecting distinct server strings.
"""

import json
import os
import subprocess

from common import HERE, KEYS, rel_generator, write_vector
from tie import tie_case

GEN = rel_generator(__file__)
DRIVER = os.path.join(HERE, "node_hashring_driver.js")


def run_node(servers, options, keys, replicas_n):
    req = {"servers": servers, "options": options, "keys": keys, "replicas_n": replicas_n}
    out = subprocess.run(["node", DRIVER], input=json.dumps(req).encode("utf-8"),
                         stdout=subprocess.PIPE, check=True, cwd=HERE).stdout
    return json.loads(out.decode("utf-8"))


def run(name, servers, replicas_n, hr_options=None, vec_options=None, keys=KEYS):
    hr_options = hr_options or {}
    res = run_node(servers, hr_options, keys, replicas_n)
    assert res["point_count"] == res["size"]
    assert all(r[0] == e for r, e in zip(res["replicas"], res["expect"]))
    peer = "hashring %s (npm), new HashRing({'host:port': weight}, 'md5', %s)" % (
        res["version"], json.dumps(hr_options))
    write_vector(name, GEN, peer, "node-hashring", servers, res["point_count"], keys,
                 res["expect"], options=vec_options,
                 replicas={"n": replicas_n, "expect": res["replicas"]})
    return res


def hosts(n, port=11211, prefix="10.0.0."):
    return ["%s%d:%d" % (prefix, i, port) for i in range(1, n + 1)]


def main():
    run("node_hashring_equal_3", [(h, 1) for h in hosts(3)], 3)
    res = run("node_hashring_equal_7", [(h, 1) for h in hosts(7)], 3)
    # float edge: 1/7*40*7 = 39.99999999999999 in f64 -> 39 digests, 156 points each
    print("node-hashring n=7 points per server:", sorted(set(res["points_per_server"].values())))
    run("node_hashring_equal_10", [(h, 1) for h in hosts(10)], 3)
    run("node_hashring_weighted_1_2_3_5",
        list(zip(hosts(4), [1, 2, 3, 5])), 3)
    run("node_hashring_weighted_600_400",
        [("127.0.0.1:11211", 600), ("127.0.0.1:11212", 400)], 2)
    # 'default port': servers on that port hash "host-i" instead of "host:port-i"
    mixed = [("10.0.0.1:11211", 1), ("10.0.0.2:11211", 1), ("10.0.0.3:11212", 1),
             ("10.0.0.4:22122", 2)]
    run("node_hashring_default_port", mixed, 3,
        hr_options={"default port": 11211}, vec_options={"default_port": 11211})
    # compatibility: 'hash_ring' -> 3 points per digest (nothing else changes)
    run("node_hashring_hash_ring_compat_equal_3", [(h, 1) for h in hosts(3)], 3,
        hr_options={"compatibility": "hash_ring"}, vec_options={"points_per_digest": 3})
    run("node_hashring_hash_ring_compat_equal_7", [(h, 1) for h in hosts(7)], 3,
        hr_options={"compatibility": "hash_ring"}, vec_options={"points_per_digest": 3})
    run("node_hashring_hash_ring_compat_weighted_1_2_3_5", list(zip(hosts(4), [1, 2, 3, 5])), 3,
        hr_options={"compatibility": "hash_ring"}, vec_options={"points_per_digest": 3})
    # two nodes sharing one point (see tie.py); tie keys first
    a, b, _, tkeys = tie_case()
    run("node_hashring_tie", [(a, 1), (b, 1)], 2, keys=tkeys + KEYS)
    run("node_hashring_hash_ring_compat_tie", [(a, 1), (b, 1)], 2, keys=tkeys + KEYS,
        hr_options={"compatibility": "hash_ring"}, vec_options={"points_per_digest": 3})


if __name__ == "__main__":
    main()
