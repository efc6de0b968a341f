"""Ring vectors from RJ's libketama C code, through the PyPI `ketama` package
(ketama 0.1.1: libketama's ketama.c/md5.c compiled into a CPython extension).

Peer facts (ketama 0.1.1 src/ketama.c, identical in the continuum and lookup
code to RJ/ketama libketama/ketama.c):
* server file lines "addr<TAB or space>weight\n"; lines shorter than 2 chars or
  starting with '#' are skipped; the weight token loses its LAST character (it
  expects the '\n'), so every line, the last one included, must end with '\n';
* addr is kept in char[22]: at most 21 bytes usable (22 or 23 bytes pass the
  parser's length check but overflow/lose the terminator);
* digests per server: ks = floorf(pct * 40.0 * (float)numservers) with
  float pct = (float)w / (float)total; `pct * 40.0` is a double product, the
  result is converted to float for floorf, i.e.
  floorf((float)((double)pct * 40.0 * (double)(float)n));
* server string hashed: sprintf("%s-%d", addr, k), k = 0..ks-1; 4 points per
  digest (LE u32 words);
* continuum sorted with qsort comparing points only (order of equal points is
  whatever glibc's qsort gives);
* lookup: hand-written binary search returning the first point >= key hash
  (the first of equal points), wrapping to index 0;
* the ring lives in SysV shared memory keyed by ftok(server file), so every
  vector is computed in its own subprocess from its own fresh server file.

Binding quirk: Ketama.get_server(str) passes the UTF-8 buffer with the length
in code points (PyUnicode_GET_LENGTH), which truncates non-ASCII keys; we
always pass bytes (correct length), as libketama's own C API would be used.
"""

import json
import os
import subprocess
import sys
import tempfile

from common import KEYS, rel_generator, write_vector
from tie import tie_case

GEN = rel_generator(__file__)


def worker():
    """Subprocess: stdin {"servers": [[addr, w]...], "keys": [...]}; stdout results."""
    from importlib.metadata import version

    from ketama import Ketama

    req = json.load(sys.stdin)
    with tempfile.TemporaryDirectory(prefix="ketama-vec-") as d:
        path = os.path.join(d, "servers.txt")
        with open(path, "w", encoding="ascii", newline="\n") as f:
            for addr, w in req["servers"]:
                f.write("%s\t%d\n" % (addr, w))
        k = Ketama(path)
        points = k.get_points()
        got = [k.get_server(key.encode("utf-8")) for key in req["keys"]]
        del k  # ketama_smoke(): detaches and removes the shared-memory segment
    names = {a for a, _ in req["servers"]}
    assert {ip for _, ip in points} == names, "stale or foreign continuum"
    assert [p for p, _ in points] == sorted(p for p, _ in points)
    per_server = {}
    for _, ip in points:
        per_server[ip] = per_server.get(ip, 0) + 1
    json.dump({"version": version("ketama"), "point_count": len(points),
               "per_server": per_server,
               "expect": [ip for _, ip in got], "points": [p for p, _ in got]},
              sys.stdout)


def run_worker(servers, keys):
    req = json.dumps({"servers": servers, "keys": keys}).encode("utf-8")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker"], input=req,
                         stdout=subprocess.PIPE, check=True).stdout
    return json.loads(out)


def run(name, servers, keys=KEYS):
    for addr, _ in servers:
        assert len(addr.encode()) <= 21, addr
    res = run_worker(servers, keys)
    peer = ("ketama %s (PyPI, RJ's libketama C), Ketama(server_file).get_server(key bytes); "
            "server file lines 'addr\\tweight\\n'" % res["version"])
    write_vector(name, GEN, peer, "libketama", servers, res["point_count"], keys, res["expect"])
    return res


def hosts(n, port=11211, prefix="10.0.0."):
    return ["%s%d:%d" % (prefix, i, port) for i in range(1, n + 1)]


def main():
    run("libketama_equal_3", [(h, 1) for h in hosts(3)])
    run("libketama_equal_10", [(h, 1) for h in hosts(10)])
    res = run("libketama_equal_61", [(h, 1) for h in hosts(61)])
    print("libketama n=61 points per server:", sorted(set(res["per_server"].values())))
    run("libketama_weighted_1_2_3_5", list(zip(hosts(4), [1, 2, 3, 5])))
    keys = ["test"] + [k for k in KEYS if k != "test"]
    res = run("libketama_weighted_600_400", [("127.0.0.1:11211", 600), ("127.0.0.1:11212", 400)],
              keys=keys)
    print("libketama 600/400: %d points, 'test' -> %s at point %d"
          % (res["point_count"], res["expect"][0], res["points"][0]))
    run("libketama_other_ports", [("10.0.0.1:11211", 300), ("10.0.0.2:11212", 200),
                                  ("cache-a.local:22122", 100), ("10.0.0.4:1", 400)])
    # two servers sharing one point (see tie.py); tie keys first.  libketama
    # leaves the order of equal points to qsort(); this records glibc's result.
    a, b, _, tkeys = tie_case()
    run("libketama_tie", [(a, 1), (b, 1)], keys=tkeys + KEYS)


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        worker()
    else:
        main()
