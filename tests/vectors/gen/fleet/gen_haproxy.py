#!/usr/bin/env python3
"""HAProxy 2.6 `balance` vectors: the real haproxy (Debian `haproxy`) in front of local backends.

Starts one haproxy (`-db`, foreground) with one frontend + backend per case; every
server has its own local backend (backends.py) answering with the HAProxy server name.
Every key is sent through haproxy and the answering server recorded.  haproxy copies the
value it extracted into an X-Hashed request header (`http-request set-header`, the
same sample the balance algorithm reads: req.hdr(X-Key,1) for `hdr`, path / url / urlp
for `uri` / `uri whole` / `url_param`), so `keys` is what haproxy hashed, reported by
haproxy.  HAProxy hashes server ids, not addresses, so the addresses are arbitrary
fixed 127.77.2.x ports.
"""

import os
import subprocess
import urllib.parse

import choose
from common import (HttpClient, Procs, check_free, deb_version, header_safe, make_keys,
                    rmtree, start_backends, tmpdir, wait_port, write_vector)

HAPROXY = "/usr/sbin/haproxy"
FRONT = "127.77.255.2"
FRONT_PORT0 = 18200
BACK = "127.77.2.1"
BACK_PORT0 = 23000

KEYS = header_safe(make_keys(n_seq=300, n_ascii=60, n_unicode=60))


def srv(name, weight=None, sid=None):
    return {"name": name, "weight": weight, "id": sid}


def five():
    return [srv("s%d" % i) for i in range(1, 6)]


def tie_keys(servers, avalanche, fn):
    """Keys whose hash is exactly between two adjacent points of different servers."""
    puids, nxt, used = {}, 1, {s["id"] for s in servers if s["id"]}
    for s in servers:
        if s["id"]:
            puids[s["name"]] = s["id"]
        else:
            while nxt in used:
                nxt += 1
            puids[s["name"]] = nxt
            used.add(nxt)
        nxt += 1
    # (2.6 advances next_id for every server; the ids above follow get_next_id.)
    pts = {n: choose.haproxy_points(puids[n], next(s["weight"] or 1 for s in servers
                                                   if s["name"] == n)) for n in puids}
    ties = choose.haproxy_exact_ties(pts)[:8]
    out, intended = [], []
    for i, (mid, prev, nxt_s) in enumerate(ties):
        for delta in (0, 1):
            h = (mid + delta) & choose.M32
            pre = choose.full_hash_inverse(h) if avalanche else h
            if fn == "sdbm":
                k = choose.sdbm_preimage(pre, seed=100 * i + delta).decode()
            else:
                k = choose.crc32_preimage(pre, seed=100 * i + delta).decode()
            out.append(k)
            intended.append({"key": k, "hash": h, "tie": delta == 0,
                             "prev": prev, "next": nxt_s,
                             "expected_by_notes": prev if delta == 0 else nxt_s})
    return out, intended


def build_cases():
    cases = []

    def add(name, lines, servers, notes, keys=None, requests=None, hashed="req.hdr(X-Key,1)",
            intended=None):
        cases.append({"name": name, "lines": lines, "servers": servers, "notes": notes,
                      "keys": keys, "requests": requests, "hashed": hashed,
                      "intended": intended})

    hdr = "balance hdr(X-Key)"
    add("consistent_default", [hdr, "hash-type consistent"], five(),
        "bare `hash-type consistent`: sdbm + avalanche (full_hash), 16 points per weight unit")
    for fn in ("sdbm", "djb2", "wt6", "crc32"):
        add("consistent_" + fn, [hdr, "hash-type consistent " + fn], five(),
            "`hash-type consistent %s`: naming the function turns avalanche off" % fn)
    add("consistent_crc32_avalanche", [hdr, "hash-type consistent crc32 avalanche"], five(),
        "crc32 then full_hash")
    add("consistent_weights", [hdr, "hash-type consistent"],
        [srv("w1", 1), srv("w2", 2), srv("w10", 10), srv("w0", 0), srv("w256", 256)],
        "weights 1, 2, 10, 0 (no points, never chosen) and 256 (the maximum)")
    add("consistent_ids", [hdr, "hash-type consistent"],
        [srv("a"), srv("b", sid=3), srv("c"), srv("d", sid=1), srv("e")],
        "explicit `id` on b (3) and d (1); a, c, e take the first free id >= their "
        "1-based position")
    add("consistent_id_wrap", [hdr, "hash-type consistent"],
        [srv("one", sid=1), srv("wrap", sid=1048577), srv("two", sid=2)],
        "id 1048577 = 2^20 + 1: puid*4096 wraps in 32 bits, so `wrap` has exactly the "
        "points of `one` (duplicate keys in the ebtree)")
    tk, intended = tie_keys(five(), True, "sdbm")
    add("consistent_default_exact_tie", [hdr, "hash-type consistent"], five(),
        "keys whose hash (sdbm + avalanche) is exactly midway between two adjacent "
        "points of different servers (tie: HAProxy takes the predecessor) and the same "
        "+1 (the successor); see `intended`", keys=tk + KEYS[:60], intended=intended)
    tk, intended = tie_keys(five(), False, "sdbm")
    add("consistent_sdbm_exact_tie", [hdr, "hash-type consistent sdbm"], five(),
        "as consistent_default_exact_tie, sdbm without avalanche",
        keys=tk + KEYS[:60], intended=intended)
    tk, intended = tie_keys(five(), False, "crc32")
    add("consistent_crc32_exact_tie", [hdr, "hash-type consistent crc32"], five(),
        "as consistent_default_exact_tie, crc32 without avalanche",
        keys=tk + KEYS[:60], intended=intended)
    add("map_based_default", [hdr], [srv("m1", 1), srv("m2", 2), srv("m3", 3)],
        "no `hash-type` line: map-based, sdbm, no avalanche; weights 1, 2, 3")
    add("map_based_gcd", [hdr, "hash-type map-based"], [srv("g1", 2), srv("g2", 4), srv("g3", 6),
                                                         srv("g4", 0)],
        "map-based, weights 2, 4, 6 (gcd 2: the same map as 1, 2, 3) and 0 (no slot)")
    add("map_based_djb2_avalanche", [hdr, "hash-type map-based djb2 avalanche"], five(),
        "map-based, djb2 + avalanche")
    add("map_based_ids", [hdr, "hash-type map-based"],
        [srv("a"), srv("b", sid=3), srv("c"), srv("d", sid=1), srv("e")],
        "map-based: ids play no part, the slot map follows config order")
    add("uri_consistent", ["balance uri", "hash-type consistent"], five(),
        "`balance uri`: the path up to the first '?', raw (percent-encoding is NOT "
        "decoded); `requests` are the targets sent, `keys` what haproxy hashed (%[path])",
        requests=uri_requests(), hashed="path")
    add("uri_whole_consistent", ["balance uri whole", "hash-type consistent"], five(),
        "`balance uri whole`: the whole URI with the query (%[url])",
        requests=uri_requests(), hashed="url")
    add("url_param_consistent", ["balance url_param k", "hash-type consistent"], five(),
        "`balance url_param k`: the raw value of k up to '&' (first occurrence)",
        requests=param_requests(), hashed="urlp(k)")
    return cases


def uri_requests():
    out = []
    for i, k in enumerate([k for k in KEYS if k][:160]):
        enc = urllib.parse.quote(k, safe="")
        v = i % 4
        if v == 0:
            out.append("/k/" + enc)
        elif v == 1:
            out.append("/k/" + enc + "?x=" + str(i))
        elif v == 2:
            out.append("/k/" + "".join("%%%02x" % c for c in k.encode()))
        else:
            out.append("/a/b/" + enc + "?y=1&z=2")
    return out


def param_requests():
    out = []
    for i, k in enumerate([k for k in KEYS if k][:160]):
        enc = urllib.parse.quote(k, safe="")
        v = i % 3
        if v == 0:
            out.append("/?k=" + enc)
        elif v == 1:
            out.append("/p?a=1&k=" + enc + "&b=2")
        else:
            out.append("/?k=" + enc + "&k=second")
    return out


def server_line(s, port):
    line = "    server %s %s:%d" % (s["name"], BACK, port)
    if s["weight"] is not None:
        line += " weight %d" % s["weight"]
    if s["id"] is not None:
        line += " id %d" % s["id"]
    return line


def main():
    version = deb_version("haproxy")
    vline = subprocess.run([HAPROXY, "-v"], capture_output=True, text=True).stdout.splitlines()[0]
    vline = vline.split(" - ")[0]
    cases = build_cases()
    cfg = ["# written by tests/vectors/gen/fleet/gen_haproxy.py", "global", "    maxconn 512",
           "defaults", "    mode http", "    timeout connect 2s", "    timeout client 10s",
           "    timeout server 10s", "    option http-server-close"]
    blocks, spec, port = [], [], BACK_PORT0
    for i, c in enumerate(cases):
        cfg += ["frontend f%d" % i, "    bind %s:%d" % (FRONT, FRONT_PORT0 + i),
                "    default_backend b%d" % i]
        block = ["backend b%d" % i] + ["    " + l for l in c["lines"]]
        block.append("    http-request set-header X-Hashed %%[%s]" % c["hashed"])
        for s in c["servers"]:
            block.append(server_line(s, port))
            spec.append({"host": BACK, "port": port, "name": s["name"], "proto": "http"})
            port += 1
        blocks.append("\n".join(block))
        cfg += block
    cfg_text = "\n".join(cfg) + "\n"
    work = tmpdir("haproxy-")
    procs = Procs()
    try:
        check_free([(BACK, x["port"]) for x in spec]
                   + [(FRONT, FRONT_PORT0 + i) for i in range(len(cases))])
        start_backends(procs, spec, work)
        path = os.path.join(work, "haproxy.cfg")
        with open(path, "w") as f:
            f.write(cfg_text)
        t = subprocess.run([HAPROXY, "-c", "-f", path], capture_output=True, text=True)
        if t.returncode != 0:
            raise SystemExit("haproxy -c failed:\n" + t.stdout + t.stderr)
        with open(os.path.join(work, "err"), "w") as err:
            hp = procs.start([HAPROXY, "-db", "-f", path], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
        for i in range(len(cases)):
            wait_port(FRONT, FRONT_PORT0 + i, proc=hp)
        out_cases = []
        for i, c in enumerate(cases):
            cli = HttpClient(FRONT, FRONT_PORT0 + i)
            keys, expect, sent = [], [], []
            if c["requests"] is None:
                for k in (c["keys"] or KEYS):
                    name, hashed = ask(cli, b"/", [(b"X-Key", k.encode())])
                    sent.append(k)
                    keys.append(hashed)
                    expect.append(name)
            else:
                for r in c["requests"]:
                    name, hashed = ask(cli, r.encode(), [])
                    sent.append(r)
                    keys.append(hashed)
                    expect.append(name)
            cli.close()
            oc = {"name": c["name"], "notes": c["notes"], "backend": "b%d" % i,
                  "config": blocks[i],
                  "servers": [{"name": s["name"], "weight": 1 if s["weight"] is None else s["weight"],
                               "id": s["id"]} for s in c["servers"]]}
            if c["requests"] is not None:
                oc["requests"] = sent
            elif sent != keys:
                oc["sent"] = sent
            oc["keys"] = keys
            oc["expect"] = expect
            if c["intended"]:
                got = dict(zip(keys, expect))
                for it in c["intended"]:
                    it["peer"] = got[it["key"]]
                oc["intended"] = c["intended"]
            out_cases.append(oc)
    finally:
        procs.stop()
        rmtree(work)
    notes = [
        "Each case is one `backend` of one haproxy.cfg (config_file below); `config` is "
        "the backend block verbatim (the X-Hashed line only reports the hashed value and "
        "plays no part in balancing). `expect[i]` is the name of the server that answered "
        "keys[i]. `servers[].id` is the explicit `id` or null (automatic).",
        "Header cases send `X-Key: <value>`: `keys` is what haproxy hashed "
        "(req.hdr(X-Key,1): the first comma-separated element, spaces trimmed); where "
        "that differs from what was sent, `sent` holds the header values.",
        "Request cases send `requests[i]` as the request target (HTTP/1.1 origin form).",
        "Exact-tie cases: `intended` lists keys chosen (tests/vectors/gen/fleet/choose.py, "
        "inputs only) to hash exactly midway between two adjacent points of different "
        "servers (tie: true) or one past it; `expected_by_notes` is the research notes' "
        "rule (tie to the predecessor), `peer` what haproxy answered.",
        "Not covered: `balance source` (needs clients from many addresses), rdp-cookie, "
        "`balance hash <expr>`, slowstart/`set weight` at runtime, hash-balance-factor "
        "(load-dependent), backup servers, and 3.x hash-key modes (2.6 has none).",
    ]
    write_vector("haproxy", __file__, {"name": "HAProxy (Debian haproxy)", "version": version,
                                       "haproxy_v": vline},
                 "haproxy %s started by the generator (-db) with the config_file below; "
                 "every key sent through it over HTTP/1.1 to local backends that answer "
                 "with their server name" % version, notes, out_cases,
                 extra={"config_file": cfg_text})


def ask(cli, target, headers):
    status, body = cli.get(target, headers)
    if status != 200:
        raise SystemExit("haproxy answered %d for %r %r: %r" % (status, target, headers, body))
    name, hx = body.decode().split("\n")[:2]
    return name, bytes.fromhex(hx).decode("utf-8")


if __name__ == "__main__":
    main()
