"""Ring vectors from PyPI uhashring (HashRing(nodes, hash_fn='ketama')).

Peer facts (uhashring 2.5, uhashring/ring_ketama.py and ring.py):
* digests per node: integer `vnodes * len(nodes) * weight // sum(weights)`,
  vnodes = 40 by default for hash_fn='ketama';
* server string hashed: f"{nodename}-{k}", k = 0..digests-1, UTF-8;
* points per digest: `replicas` (default 4), point h = LE u32 of digest bytes 4h..4h+3;
* lookup: bisect.bisect (bisect_right) on the sorted point list, i.e. the
  first point strictly greater than the key hash, wrapping to index 0;
* equal points: `_ring[point] = node` in node insertion order, so the node
  added last wins; `_keys` keeps duplicates (len(_keys) counts them);
* range(key, size, unique=True): clockwise walk from the lookup position,
  skipping nodes already returned.
"""

import sys

import uhashring
from uhashring import HashRing

from common import KEYS, rel_generator, write_vector
from tie import tie_case

GEN = rel_generator(__file__)
VERSION = getattr(uhashring, "__version__", None)
if VERSION is None:
    from importlib.metadata import version as _v
    VERSION = _v("uhashring")
PEER = "uhashring %s (PyPI), HashRing(nodes={name: {'weight': w}}, hash_fn='ketama')" % VERSION


def build(nodes):
    ring = HashRing(nodes={n: {"weight": w} for n, w in nodes}, hash_fn="ketama")
    # node insertion order is the order we gave
    assert list(ring.get_nodes()) == [n for n, _ in nodes]
    return ring


def run(name, nodes, replicas_n, keys=KEYS):
    ring = build(nodes)
    expect = [ring.get_node(k) for k in keys]
    reps = [[c["nodename"] for c in ring.range(k, size=replicas_n, unique=True)] for k in keys]
    assert all(len(r) == min(replicas_n, len(nodes)) for r in reps)
    assert all(r[0] == e for r, e in zip(reps, expect))
    keys_sorted = ring.runtime._keys
    if len(keys_sorted) != len(ring.runtime._ring):
        print("note: %s has %d duplicate points" % (name, len(keys_sorted) - len(ring.runtime._ring)),
              file=sys.stderr)
    write_vector(name, GEN, PEER, "uhashring", nodes, len(keys_sorted), keys, expect,
                 replicas={"n": replicas_n, "expect": reps})


def main():
    run("uhashring_equal_3", [("cache-a", 1), ("cache-b", 1), ("cache-c", 1)], 3)
    run("uhashring_equal_10", [("node-%d" % i, 1) for i in range(10)], 3)
    run("uhashring_equal_100", [("10.0.1.%d:11211" % i, 1) for i in range(1, 101)], 3)
    run("uhashring_weighted_1_2_3_5", [("w1", 1), ("w2", 2), ("w3", 3), ("w5", 5)], 3)
    run("uhashring_weighted_600_400", [("127.0.0.1:11211", 600), ("127.0.0.1:11212", 400)], 2)
    # two nodes sharing one point (see tie.py); tie keys first
    a, b, _, tkeys = tie_case()
    run("uhashring_tie", [(a, 1), (b, 1)], 2, keys=tkeys + KEYS)


if __name__ == "__main__":
    main()
