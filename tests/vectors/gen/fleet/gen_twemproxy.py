#!/usr/bin/env python3
"""twemproxy vectors: the real nutcracker 0.5.0 (Debian `nutcracker`) in front of local
memcached-protocol backends.

Starts one nutcracker with one pool per case (memcache: true), backends (backends.py,
memcache protocol) on fixed 127.77.3.x addresses that answer `get <key>` with the
server's label (its alias, else host:port as written), sends `get <key>` for every key
through nutcracker and records the label that came back.  twemproxy hashes the alias
or the `host:port` text, so the addresses are fixed; the generator fails clearly if one
is taken.
"""

import os
import socket
import subprocess

from common import (Procs, check_free, deb_version, make_keys, memcache_safe, rmtree,
                    start_backends, tmpdir, wait_port, write_vector)

NUTCRACKER = "/usr/sbin/nutcracker"
FRONT = "127.77.255.3"
FRONT_PORT0 = 18300
STATS_PORT = 18399

KEYS = memcache_safe(make_keys(n_seq=250, n_ascii=50, n_unicode=50))
HASHES = ["md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64", "fnv1_32", "fnv1a_32",
          "hsieh", "murmur", "jenkins", "one_at_a_time"]


def servers(n, base, port0, weight=1, alias=None):
    out = []
    for i in range(1, n + 1):
        out.append({"host": "127.77.3.%d" % (base + i), "port": port0 + i if port0 else 11211,
                    "weight": weight, "alias": alias % i if alias else None})
    return out


def build_cases():
    cases = []

    def add(name, hash_, dist, srvs, notes, hash_tag=None, keys=None):
        cases.append({"name": name, "hash": hash_, "distribution": dist, "servers": srvs,
                      "notes": notes, "hash_tag": hash_tag, "keys": keys})

    add("ketama_md5", "md5", "ketama", servers(5, 0, 24000),
        "host:port:1 without alias, ports other than 11211: points from 'host:port-i'")
    add("ketama_md5_port_11211", "md5", "ketama", servers(5, 10, 0),
        "servers on port 11211 without alias: twemproxy hashes 'host' alone ('host-i')")
    add("ketama_md5_alias", "md5", "ketama", servers(5, 20, 24020, alias="cache-%d"),
        "aliases: the alias is hashed, the address is not")
    add("ketama_md5_alias_11211", "md5", "ketama",
        servers(3, 30, 24030, alias="mc-%d:11211") + servers(2, 33, 0, alias="plain-%d"),
        "aliases ending in ':11211' are hashed verbatim (the ':11211' stays), unlike a "
        "server without alias on port 11211")
    long1 = "long-alias-" + "x" * 261 + "-tail-one"   # 281 bytes; first 272 shared
    long2 = "long-alias-" + "x" * 261 + "-tail-two"
    assert len(long1) > 272 and long1[:272] == long2[:272]
    lng = servers(4, 40, 24040)
    lng[0]["alias"] = "short-a"
    lng[1]["alias"] = long1
    lng[2]["alias"] = long2
    lng[3]["alias"] = "short-b"
    add("ketama_md5_long_alias", "md5", "ketama", lng,
        "aliases of 281 bytes: twemproxy cuts each point string ('alias-i') to "
        "KETAMA_MAX_HOSTLEN (272) bytes, so a long alias has only 4 distinct points, and "
        "the two long aliases (same first 272 bytes) share all of them (a tie)")
    w = servers(4, 50, 24050)
    for s, wt in zip(w, (1, 2, 5, 10)):
        s["weight"] = wt
    add("ketama_md5_weights", "md5", "ketama", w, "weights 1, 2, 5, 10 (float formula)")
    add("ketama_md5_equal_25", "md5", "ketama", servers(25, 60, 24060),
        "25 servers of weight 1, where the float formula's rounding shows", keys=KEYS[:200])
    add("ketama_md5_hash_tag", "md5", "ketama", servers(5, 0, 24000),
        "hash_tag '{}': only the text between the first '{' and the next '}' is hashed "
        "(when non-empty)", hash_tag="{}",
        keys=[k for k in KEYS[:120]] + ["{user1000}.following", "{user1000}.followers",
                                         "a{b}c", "{}x", "x{}", "{a}{b}", "}{a}", "{a"])
    for h in HASHES[1:]:
        add("ketama_" + h, h, "ketama", servers(5, 0, 24000),
            "`hash: %s`: continuum points stay MD5, keys are hashed with %s" % (h, h),
            keys=KEYS[:240])
    for h in ("md5", "fnv1a_64", "crc32a", "murmur"):
        w = servers(4, 90, 24090)
        for s, wt in zip(w, (1, 2, 1, 3)):
            s["weight"] = wt
        add("modula_" + h, h, "modula", w,
            "`distribution: modula`: each server takes `weight` slots; key hash %% slots",
            keys=KEYS[:240])
    return cases


def label(s):
    return s["alias"] or "%s:%d" % (s["host"], s["port"])


def server_entry(s):
    e = "%s:%d:%d" % (s["host"], s["port"], s["weight"])
    return e + (" " + s["alias"] if s["alias"] else "")


def pool_yaml(i, c):
    lines = ["p%d:" % i, "  listen: %s:%d" % (FRONT, FRONT_PORT0 + i),
             "  hash: " + c["hash"], "  distribution: " + c["distribution"]]
    if c["hash_tag"]:
        lines.append('  hash_tag: "%s"' % c["hash_tag"])
    lines += ["  timeout: 5000", "  auto_eject_hosts: false", "  server_connections: 1",
              "  servers:"]
    lines += ["   - " + server_entry(s) for s in c["servers"]]
    return "\n".join(lines)


def ask(sock, f, key):
    sock.sendall(b"get " + key + b"\r\n")
    line = f.readline()
    if not line.startswith(b"VALUE "):
        raise SystemExit("nutcracker answered %r for %r" % (line, key))
    n = int(line.split()[3])
    val = f.read(n + 2)[:-2]
    end = f.readline()
    assert end == b"END\r\n", end
    return val.decode()


def main():
    version = deb_version("nutcracker")
    cases = build_cases()
    pools = [pool_yaml(i, c) for i, c in enumerate(cases)]
    conf_text = "# written by tests/vectors/gen/fleet/gen_twemproxy.py\n" + "\n".join(pools) + "\n"
    spec, seen = [], {}
    for c in cases:
        for s in c["servers"]:
            k = (s["host"], s["port"])
            if k in seen:
                assert seen[k] == label(s), (k, seen[k], label(s))
                continue
            seen[k] = label(s)
            spec.append({"host": s["host"], "port": s["port"], "name": label(s),
                         "proto": "memcache"})
    work = tmpdir("twemproxy-")
    procs = Procs()
    try:
        check_free([(x["host"], x["port"]) for x in spec]
                   + [(FRONT, FRONT_PORT0 + i) for i in range(len(cases))]
                   + [(FRONT, STATS_PORT)])
        start_backends(procs, spec, work)
        path = os.path.join(work, "nutcracker.yml")
        with open(path, "w") as f:
            f.write(conf_text)
        t = subprocess.run([NUTCRACKER, "-t", "-c", path], capture_output=True, text=True)
        if t.returncode != 0:
            raise SystemExit("nutcracker -t failed:\n" + t.stdout + t.stderr)
        nc = procs.start([NUTCRACKER, "-c", path, "-o", os.path.join(work, "log"),
                          "-p", os.path.join(work, "pid"), "-a", FRONT, "-s", str(STATS_PORT),
                          "-v", "4"], stdin=subprocess.DEVNULL)
        for i in range(len(cases)):
            wait_port(FRONT, FRONT_PORT0 + i, proc=nc)
        out_cases = []
        for i, c in enumerate(cases):
            sock = socket.create_connection((FRONT, FRONT_PORT0 + i), timeout=10)
            f = sock.makefile("rb")
            keys = c["keys"] or KEYS
            expect = [ask(sock, f, k.encode()) for k in keys]
            f.close()
            sock.close()
            oc = {"name": c["name"], "notes": c["notes"], "pool": "p%d" % i,
                  "config": pools[i], "hash": c["hash"], "distribution": c["distribution"]}
            if c["hash_tag"]:
                oc["hash_tag"] = c["hash_tag"]
            oc["servers"] = [{"server": server_entry(s), "name": label(s)} for s in c["servers"]]
            oc["keys"] = list(keys)
            oc["expect"] = expect
            out_cases.append(oc)
    finally:
        procs.stop()
        rmtree(work)
    notes = [
        "Each case is one pool of one nutcracker.yml (config_file below); `config` is the "
        "pool verbatim. `servers[].server` is the entry as written, `servers[].name` the "
        "label keyroute should answer (the alias, else host:port). `expect[i]` is the "
        "label of the backend that answered `get keys[i]`.",
        "Keys: the memcached text protocol carries no empty key, no space and no key over "
        "250 bytes, so those are left out; UTF-8 bytes pass through raw.",
        "Not covered: `distribution: random` (not deterministic), server ejection "
        "(auto_eject_hosts is off), redis pools (same hashing code as memcache pools).",
    ]
    write_vector("twemproxy", __file__, {"name": "twemproxy nutcracker (Debian nutcracker)",
                                         "version": version},
                 "nutcracker %s started by the generator with the config_file below; every "
                 "key sent as a memcached `get` through it to local backends that answer "
                 "with their label" % version, notes, out_cases,
                 extra={"config_file": conf_text})


if __name__ == "__main__":
    main()
