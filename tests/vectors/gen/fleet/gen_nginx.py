#!/usr/bin/env python3
"""nginx upstream `hash` vectors: the real nginx (Debian `nginx`) proxying to local backends.

Starts one nginx (prefix in build/fleet-vectors/, `master_process off`) with one
`upstream` + `server` block per case, backends (backends.py) on fixed 127.77.x.y
addresses, [::1], `localhost` and a unix socket that answer with the server string as
the config writes it, sends every key through nginx and records which backend
answered.  nginx copies the value it hashed into the X-Hashed request header (the same
variable as the `hash` directive), so `keys` is what nginx hashed, as reported by nginx.

Addresses are fixed because nginx hashes the server text: the generator fails with a
clear message if one is taken.
"""

import os
import subprocess
import urllib.parse

import choose
from common import (HttpClient, Procs, check_free, deb_version, header_safe, make_keys,
                    rmtree, start_backends, tmpdir, wait_port, write_vector)

NGINX = "/usr/sbin/nginx"
FRONT = "127.77.255.1"
FRONT_PORT0 = 18100
UNIX_SOCK = "/tmp/keyroute-fleet-nginx.sock"

KEYS = header_safe(make_keys(n_seq=300, n_ascii=60, n_unicode=60))


def server_line(s):
    return "        server %s%s%s;" % (
        s["server"], "" if s.get("weight", 1) == 1 else " weight=%d" % s["weight"],
        " down" if s.get("down") else "")


def listeners(server):
    """Where a `server` string connects (nginx's own rules: no port means 80)."""
    s = server
    if s.startswith("unix:"):
        return [(s[5:], 0)]
    if s.startswith("["):
        host, _, port = s[1:].partition("]")
        return [(host, int(port[1:]) if port else 80)]
    host, _, port = s.rpartition(":") if ":" in s else (s, "", "")
    port = int(port) if port else 80
    if host == "localhost":
        import socket
        addrs = sorted({ai[4][0] for ai in socket.getaddrinfo("localhost", port, 0, socket.SOCK_STREAM)})
        return [(a, port) for a in addrs]
    return [(host, port)]


def build_cases():
    cases = []

    def add(name, hash_line, servers, notes, keys=None, requests=None, key_header=True):
        cases.append({"name": name, "hash": hash_line, "servers": servers, "notes": notes,
                      "keys": keys, "requests": requests, "key_header": key_header})

    plain5 = [{"server": "127.77.0.%d:%d" % (i, 21000 + i)} for i in range(1, 6)]
    add("chash_ip_port", "hash $http_x_key consistent", plain5,
        "five ip:port servers, weight 1: the form pingora-ketama also covers")
    add("chash_weights", "hash $http_x_key consistent",
        [{"server": "127.77.0.11:21011", "weight": 1}, {"server": "127.77.0.12:21012", "weight": 2},
         {"server": "127.77.0.13:21013", "weight": 5}, {"server": "127.77.0.14:21014", "weight": 10}],
        "weights 1, 2, 5, 10: 160*weight points each")
    forms = [
        {"server": "127.77.0.21:21021"},
        {"server": "localhost:21022"},
        {"server": "[::1]:21023"},
        {"server": "127.77.0.24"},
        {"server": "127.77.0.25:0080"},
        {"server": "[::1]"},
        {"server": "unix:" + UNIX_SOCK},
        {"server": "127.77.0.28:21028", "weight": 3},
    ]
    add("chash_server_forms", "hash $http_x_key consistent", forms,
        "servers as nginx hashes their text: a hostname (localhost), IPv6 with brackets "
        "([::1]:port and port-less [::1]), port-less IPv4 (hashed with an empty port, "
        "connects to 80), a port written 0080 (hashed as the text '0080'), a unix socket "
        "(host = the path after 'unix:', empty port)")
    a, b, point = choose.nginx_tie("127.77.1.1", range(22000, 30000))
    tie_servers = [a, b, "127.77.1.2:22001"]
    pts = sorted(set(h for s in tie_servers for h in choose.nginx_points(s)))
    tie_keys = choose.keys_landing(pts, point, 24, seed=1)
    add("chash_tie_first", "hash $http_x_key consistent",
        [{"server": s} for s in tie_servers],
        "%s and %s share the point %d; the tie_keys land on it (CRC32 of the key in "
        "(previous point, %d]); nginx (glibc qsort = stable merge sort, dedup keeps the "
        "first) gives it to the server written first" % (a, b, point, point),
        keys=tie_keys + KEYS[:100])
    add("chash_tie_swapped", "hash $http_x_key consistent",
        [{"server": s} for s in [b, a, "127.77.1.2:22001"]],
        "the same servers with the tied pair in the other order: the tie goes to %s now" % b,
        keys=tie_keys + KEYS[:100])
    add("chash_down", "hash $http_x_key consistent",
        [{"server": "127.77.0.31:21031"}, {"server": "127.77.0.32:21032", "down": True},
         {"server": "127.77.0.33:21033"}, {"server": "127.77.0.34:21034", "weight": 2}],
        "a `down` server keeps its points; a key whose point is the down server's moves "
        "to the next point's server (hp->hash++), as recorded")
    add("plain_hash", "hash $http_x_key",
        [{"server": "127.77.0.41:21041", "weight": 1}, {"server": "127.77.0.42:21042", "weight": 2},
         {"server": "127.77.0.43:21043", "weight": 3}, {"server": "127.77.0.44:21044"}],
        "plain `hash` (Cache::Memcached compatible): ((crc32(key) >> 16) & 0x7fff) % "
        "total weight, walked over the peers in config order")
    add("plain_hash_forms", "hash $http_x_key",
        [{"server": "127.77.0.51"}, {"server": "[::1]:21052", "weight": 2},
         {"server": "localhost:21053"}, {"server": "unix:" + UNIX_SOCK + "2", "weight": 4}],
        "plain `hash` does not hash server names: only the order and weights of the "
        "peers count (localhost must resolve to exactly one address here)")
    # Request-target cases: the key is what nginx decodes/extracts from the request.
    reqs = uri_requests()
    add("chash_uri_decoded", "hash $uri consistent", plain5,
        "key = $uri: nginx percent-decodes the path, merges slashes and resolves "
        "./ and ../ before hashing; `requests` are the request targets sent, `keys` "
        "what nginx hashed", requests=reqs, key_header=False)
    add("chash_arg_raw", "hash $arg_k consistent", plain5,
        "key = $arg_k: the raw query argument, NOT percent-decoded",
        requests=arg_requests(), key_header=False)
    add("chash_request_uri", "hash $request_uri consistent", plain5,
        "key = $request_uri: the raw request target with the query", requests=reqs,
        key_header=False)
    return cases


def _pct(s, safe="/"):
    return urllib.parse.quote(s, safe=safe)


def uri_requests():
    out = []
    for i, k in enumerate([k for k in KEYS if k][:200]):
        enc = _pct(k, safe="")
        v = i % 6
        if v == 0:
            out.append("/k/" + enc)
        elif v == 1:
            out.append("/k/" + enc.lower() if "%" in enc else "/k/" + enc)
        elif v == 2:
            out.append("//k///" + enc + "?q=1")
        elif v == 3:
            out.append("/x/../k/./" + enc)
        elif v == 4:
            out.append("/k/%2F" + enc)
        else:
            out.append("/k/" + "".join("%%%02X" % c for c in k.encode()))
    return out


def arg_requests():
    out = []
    for i, k in enumerate([k for k in KEYS if k][:200]):
        enc = _pct(k, safe="")
        v = i % 3
        if v == 0:
            out.append("/?k=" + enc)
        elif v == 1:
            out.append("/?a=1&k=" + enc + "&b=2")
        else:
            out.append("/?k=" + enc + "&k=second")
    return out


def upstream_block(i, case):
    lines = ["    upstream u%d {" % i, "        " + case["hash"] + ";"]
    lines += [server_line(s) for s in case["servers"]]
    lines.append("    }")
    return "\n".join(lines)


def main():
    version = deb_version("nginx")
    cases = build_cases()
    blocks = [upstream_block(i, c) for i, c in enumerate(cases)]
    conf = ["# written by tests/vectors/gen/fleet/gen_nginx.py; run with nginx -p <dir>",
            "daemon off;", "master_process off;", "worker_processes 1;",
            "pid nginx.pid;", "error_log error.log warn;",
            "events { worker_connections 256; }", "http {", "    access_log off;",
            "    client_body_temp_path tmp_body;", "    proxy_temp_path tmp_proxy;",
            "    fastcgi_temp_path tmp_fastcgi;", "    uwsgi_temp_path tmp_uwsgi;",
            "    scgi_temp_path tmp_scgi;", "    merge_slashes on;"]
    for i, (c, block) in enumerate(zip(cases, blocks)):
        var = c["hash"].split()[1]
        conf.append(block)
        conf += ["    server {", "        listen %s:%d;" % (FRONT, FRONT_PORT0 + i),
                 "        location / {", "            proxy_pass http://u%d;" % i,
                 "            proxy_set_header X-Hashed %s;" % var,
                 "            proxy_next_upstream off;", "        }", "    }"]
    conf.append("}")
    conf_text = "\n".join(conf) + "\n"

    spec, seen = [], set()
    for c in cases:
        for s in c["servers"]:
            for host, port in listeners(s["server"]):
                if (host, port) in seen:
                    continue
                seen.add((host, port))
                spec.append({"host": host, "port": port, "name": s["server"], "proto": "http"})
    work = tmpdir("nginx-")
    procs = Procs()
    try:
        check_free([(x["host"], x["port"]) for x in spec if not x["host"].startswith("/")]
                   + [(FRONT, FRONT_PORT0 + i) for i in range(len(cases))])
        start_backends(procs, spec, work)
        with open(os.path.join(work, "nginx.conf"), "w") as f:
            f.write(conf_text)
        t = subprocess.run([NGINX, "-t", "-p", work + "/", "-c", "nginx.conf", "-e", "error.log"],
                           capture_output=True, text=True)
        if t.returncode != 0:
            raise SystemExit("nginx -t failed:\n" + t.stderr)
        ng = procs.start([NGINX, "-p", work + "/", "-c", "nginx.conf", "-e", "error.log"],
                         stdin=subprocess.DEVNULL)
        for i in range(len(cases)):
            wait_port(FRONT, FRONT_PORT0 + i, proc=ng)
        out_cases = []
        for i, c in enumerate(cases):
            cli = HttpClient(FRONT, FRONT_PORT0 + i)
            keys, expect, requests = [], [], []
            if c["requests"] is None:
                for k in (c["keys"] or KEYS):
                    name, hashed = ask(cli, b"/", [(b"X-Key", k.encode())])
                    if hashed != k:
                        raise SystemExit("nginx hashed %r for the header %r" % (hashed, k))
                    keys.append(k)
                    expect.append(name)
            else:
                for r in c["requests"]:
                    name, hashed = ask(cli, r.encode(), [])
                    requests.append(r)
                    keys.append(hashed)
                    expect.append(name)
            cli.close()
            oc = {"name": c["name"], "notes": c["notes"], "upstream": "u%d" % i,
                  "hash": c["hash"], "config": blocks[i],
                  "servers": [{"server": s["server"], "weight": s.get("weight", 1),
                               **({"down": True} if s.get("down") else {})}
                              for s in c["servers"]]}
            if requests:
                oc["requests"] = requests
            oc["keys"] = keys
            oc["expect"] = expect
            out_cases.append(oc)
    finally:
        procs.stop()
        rmtree(work)
        for p in (UNIX_SOCK, UNIX_SOCK + "2"):
            if os.path.exists(p):
                os.unlink(p)
    tie = [c for c in out_cases if c["name"].startswith("chash_tie")]
    notes = [
        "Each case is one `upstream` block of one nginx.conf (config_file below); "
        "`config` is the block verbatim. `expect[i]` is the `server` text (as written) "
        "of the backend that answered the request for keys[i].",
        "Header cases send `X-Key: <key>` (keys: non-empty, no space at either end, "
        "UTF-8 bytes passed raw); request cases send `requests[i]` as the request "
        "target and `keys[i]` is the value nginx hashed (its $uri/$arg_k/$request_uri), "
        "reported by nginx itself through X-Hashed.",
        "An empty key and an upstream with a single peer make nginx fall back to "
        "round-robin: not hashed, so not recorded.",
        "`localhost` resolved to exactly one address when generated; a name resolving "
        "to k addresses gives k peers sharing the same points (chash) or k peers in the "
        "weight walk (plain hash): not covered (needs /etc/hosts entries).",
        "Tie cases: the tied pair was chosen by tests/vectors/gen/fleet/choose.py "
        "(inputs only); the tie keys are the first 24 keys of those cases.",
    ]
    write_vector("nginx", __file__, {"name": "nginx (Debian nginx)", "version": version},
                 "nginx %s started by the generator with the config_file below, backends "
                 "on 127.77.x.y/[::1]/localhost/a unix socket answering with their server "
                 "text; every key sent through nginx over HTTP/1.1" % version,
                 notes, out_cases, extra={"config_file": conf_text})


def ask(cli, target, headers):
    status, body = cli.get(target, headers)
    if status != 200:
        raise SystemExit("nginx answered %d for %r %r: %r" % (status, target, headers, body))
    name, hx = body.decode().split("\n")[:2]
    return name, bytes.fromhex(hx).decode("utf-8")


if __name__ == "__main__":
    main()
