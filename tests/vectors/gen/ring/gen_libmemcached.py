"""Ring vectors from Debian's libmemcached (libmemcached-dev 1.1.x), through
libmemcached_driver.c, with MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED=1 and MD5.

Peer facts (libmemcached-awesome 1.1.x, src/libmemcached/hosts.cc and hash.cc):
* pointer_per_server = (uint32_t)(floor((float)(pct * 160 / 4 * (float)live_servers
  + 0.0000000001F)) * 4), pct = (float)weight / (float)total_weight: f32 throughout;
* server string hashed: "host-k" when port == 11211, else "host:port-k",
  k = 0 .. pointer_per_server/4 - 1; 4 points per digest (LE u32 words);
* continuum sorted by (point, server index): equal points -> lower index first;
* lookup: lower bound (first point >= key hash), wrap to index 0;
  with a single server the key is not hashed at all (index 0).

The "twemproxy" files are computed by the same libmemcached (twemproxy is not
installable here): for servers without an alias twemproxy hashes "host-k" for
port 11211 and "host:port-k" otherwise, with the same f32 points-per-server
formula and the same lower-bound lookup, so the continuum is identical except
for the order of equal points (twemproxy's qsort compares points only).
"""

import os
import subprocess

from common import BUILD_DIR, HERE, KEYS, rel_generator, write_vector
from tie import tie_case

GEN = rel_generator(__file__)
DRIVER_SRC = os.path.join(HERE, "libmemcached_driver.c")
DRIVER = os.path.join(BUILD_DIR, "libmemcached_driver")


def build_driver():
    os.makedirs(BUILD_DIR, exist_ok=True)
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libmemcached"],
                           stdout=subprocess.PIPE, check=True, text=True).stdout.split()
    subprocess.run(["gcc", "-std=c99", "-O2", "-Wall", "-Wextra", "-o", DRIVER, DRIVER_SRC] + flags,
                   check=True)


def run_driver(nodes, keys):
    lines = ["%d" % len(nodes)]
    for name, weight in nodes:
        host, port = name.rsplit(":", 1)
        lines.append("%s %d %d" % (host, int(port), weight))
    lines += [k.encode("utf-8").hex() for k in keys]
    out = subprocess.run([DRIVER], input=("\n".join(lines) + "\n").encode(),
                         stdout=subprocess.PIPE, check=True).stdout.decode().split("\n")
    assert out[-1] == ""
    out = out[:-1]
    assert out[0].startswith("version "), out[0]
    assert out[1].startswith("distribution "), out[1]
    assert out[2].startswith("points "), out[2]
    version = out[0].split()[1]
    points = int(out[2].split()[1])
    expect = out[3:]
    assert len(expect) == len(keys)
    names = {n for n, _ in nodes}
    assert all(e in names for e in expect)
    return version, points, expect


def run(name, nodes, profile="libmemcached", keys=KEYS):
    version, points, expect = run_driver(nodes, keys)
    if profile == "libmemcached":
        peer = ("libmemcached %s (Debian libmemcached-dev), MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED=1, "
                "MD5, memcached_server_add_with_weight, memcached_generate_hash" % version)
    else:
        peer = ("libmemcached %s (Debian libmemcached-dev) standing in for twemproxy "
                "(hash: md5, distribution: ketama, servers without alias): same continuum"
                % version)
    write_vector(name, GEN, peer, profile, nodes, points, keys, expect)
    return points, expect


def hosts(n, port=11211, prefix="10.0.0."):
    return ["%s%d:%d" % (prefix, i, port) for i in range(1, n + 1)]


def main():
    build_driver()
    run("libmemcached_equal_3", [(h, 1) for h in hosts(3)])
    run("libmemcached_equal_10", [(h, 1) for h in hosts(10)])
    points, _ = run("libmemcached_equal_25", [(h, 1) for h in hosts(25)])
    print("libmemcached n=25 points per server:", points / 25)
    points, _ = run("libmemcached_equal_100", [(h, 1) for h in hosts(100)])
    print("libmemcached n=100 points per server:", points / 100)
    run("libmemcached_weighted_1_2_3_5", list(zip(hosts(4), [1, 2, 3, 5])))
    run("libmemcached_other_ports", [(h, 1) for h in hosts(5, port=11212)] +
        [("10.0.0.6:22122", 2), ("10.0.0.7:11211", 1)])
    # The check ring of docs/design.md; the values come from the library, we only assert them.
    keys = ["test"] + [k for k in KEYS if k != "test"]
    points, expect = run("libmemcached_weighted_600_400",
                         [("127.0.0.1:11211", 600), ("127.0.0.1:11212", 400)], keys=keys)
    assert points == 320 and expect[0] == "127.0.0.1:11211", (points, expect[0])
    # two servers (port 11212) sharing one point (see tie.py); tie keys first.
    # No twemproxy tie file: twemproxy's qsort compares points only.
    a, b, _, tkeys = tie_case()
    run("libmemcached_tie", [(a, 1), (b, 1)], keys=tkeys + KEYS)

    run("twemproxy_equal_3", [(h, 1) for h in hosts(3)], profile="twemproxy")
    run("twemproxy_equal_25", [(h, 1) for h in hosts(25)], profile="twemproxy")
    run("twemproxy_equal_100", [(h, 1) for h in hosts(100)], profile="twemproxy")
    run("twemproxy_weighted_1_2_3_5", list(zip(hosts(4), [1, 2, 3, 5])), profile="twemproxy")
    run("twemproxy_other_ports", [(h, 1) for h in hosts(5, port=22121)] +
        [("10.0.0.6:22122", 3), ("10.0.0.7:11211", 1)], profile="twemproxy")


if __name__ == "__main__":
    main()
