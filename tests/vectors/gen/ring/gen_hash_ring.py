"""Ring vectors from PyPI hash_ring 1.3.1 (Amir Salihefendic), a Python-2-only
module, run on Python 3 through a minimal shim that keeps its algorithm.

Peer facts (hash_ring/hash_ring.py):
* digests per node: factor = math.floor((40*len(nodes)*weight) / total_weight);
  on Python 2 with int weights `/` is floor division, so this is the integer
  40*n*w // total (checked below for every ring we build);
* server string hashed: '%s-%s' % (node, j), j = 0..factor-1; 3 points per
  digest, point i = LE u32 of digest bytes 4i..4i+3;
* equal points: self.ring[point] = node, nodes in list order, so the last node
  wins; _sorted_keys keeps duplicates;
* lookup: bisect.bisect (bisect_right) = first point strictly greater than the
  key hash, wrapping to index 0;
* iterate_nodes(key, distinct=True): walk from that index to the end, then from
  0, skipping nodes already returned; the replicas below are its first n values.

The shim (nothing in the module's source is changed; it is executed as-is):
* `xrange = range`                     -- Python 2 builtin;
* `map` returning a list               -- Python 2 semantics (the result is indexed);
* `md5_constructor` replaced after import by hashlib.md5 wrapped so that
  update(str) hashes the UTF-8 bytes (a Python 2 byte string) and digest()
  returns a latin-1 str, so `map(ord, digest)` yields the 16 byte values exactly
  as Python 2's str digest does.
The package's __init__.py is Python 2 syntax (`except ImportError, e`), so the
module file hash_ring/hash_ring.py is loaded directly from site-packages.
"""

import builtins
import hashlib
import importlib.util
import math
import os
from importlib.metadata import version

from common import KEYS, rel_generator, write_vector
from tie import tie_case

GEN = rel_generator(__file__)
VERSION = version("hash_ring")
PEER = ("hash_ring %s (PyPI, Python 2 source run on Python 3 with the documented shim in "
        "gen_hash_ring.py), HashRing(nodes, weights).get_node / iterate_nodes" % VERSION)


class _Py2Md5:
    def __init__(self):
        self._h = hashlib.md5()

    def update(self, data):
        self._h.update(data.encode("utf-8") if isinstance(data, str) else data)

    def digest(self):
        return self._h.digest().decode("latin-1")


def load_hash_ring():
    pkg = importlib.util.find_spec("hash_ring")  # locates the package; does not run __init__
    path = os.path.join(list(pkg.submodule_search_locations)[0], "hash_ring.py")
    spec = importlib.util.spec_from_file_location("hash_ring_py2", path)
    mod = importlib.util.module_from_spec(spec)
    mod.xrange = range
    mod.map = lambda f, seq: list(builtins.map(f, seq))
    spec.loader.exec_module(mod)
    mod.md5_constructor = _Py2Md5
    return mod


HR = load_hash_ring()


def run(name, nodes, replicas_n, keys=KEYS):
    names = [n for n, _ in nodes]
    weights = {n: w for n, w in nodes}
    total = sum(weights.values())
    for _, w in nodes:
        # Python 2 integer division == Python 3 floor of true division here
        assert (40 * len(nodes) * w) // total == math.floor((40 * len(nodes) * w) / total)
    ring = HR.HashRing(names, weights)
    expect = [ring.get_node(k) for k in keys]
    reps = []
    for k in keys:
        walk = []
        for node in ring.iterate_nodes(k, distinct=True):
            walk.append(node)
            if len(walk) == replicas_n:
                break
        reps.append(walk)
    assert all(r[0] == e for r, e in zip(reps, expect))
    write_vector(name, GEN, PEER, "hash_ring", nodes, len(ring._sorted_keys), keys, expect,
                 replicas={"n": replicas_n, "expect": reps})


def main():
    # sanity: the shimmed module hashes like Python 2 would
    assert HR.HashRing(["a"]).gen_key("test") == 3446378249
    run("hash_ring_equal_3", [("10.0.0.%d:11211" % i, 1) for i in range(1, 4)], 3)
    run("hash_ring_equal_10", [("node-%d" % i, 1) for i in range(10)], 3)
    run("hash_ring_weighted_1_2_3_5", [("w1", 1), ("w2", 2), ("w3", 3), ("w5", 5)], 3)
    run("hash_ring_weighted_600_400", [("127.0.0.1:11211", 600), ("127.0.0.1:11212", 400)], 2)
    # two nodes sharing one point (see tie.py); tie keys first
    a, b, _, tkeys = tie_case()
    run("hash_ring_tie", [(a, 1), (b, 1)], 2, keys=tkeys + KEYS)


if __name__ == "__main__":
    main()
