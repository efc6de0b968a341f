"""libketama's own golden test (RJ/ketama libketama/test.sh), re-run on the real
libketama C code from the PyPI `ketama` package.

test.sh runs `ketama_test ../ketama.servers | md5sum` and expects
5672b131391f5aa2b280936aec1eea74.  ketama_test.c prints ketama_error() and a
newline after ketama_roll(), then for i in 0..999999 (key = sprintf("%d", i)):
    printf("%u %u %s\n", ketama_hashi(key), mcs->point, mcs->ip)
where mcs = ketama_get_server(key).

The server list (ketama.servers) is not shipped by any package reachable here
(the PyPI ketama sdist has only the C sources), and public-repository content is
not committed to this project.  So this generator runs only when the file is
provided: KETAMA_GOLDEN_SERVERS=<path>, or ../shared/ketama.servers next to the
repository.  The JSON it writes records the file by path and SHA-256, not its
content; the Rust test reads the same file, regenerates the 1,000,000 lines and
compares the MD5.  Without the file it prints a notice and writes nothing.
"""

import hashlib
import json
import os
import struct
import subprocess
import sys

from common import OUT_DIR, REPO, rel_generator

GEN = rel_generator(__file__)
UPSTREAM_MD5 = "5672b131391f5aa2b280936aec1eea74"  # RJ/ketama libketama/test.sh
DEFAULT_SERVERS = os.path.join(os.path.dirname(REPO), "shared", "ketama.servers")
N = 1000000


def worker(path):
    from importlib.metadata import version

    from ketama import Ketama

    k = Ketama(path)  # raises on a ketama_roll() failure, so ketama_error() is ""
    npoints = len(k.get_points())
    md5 = hashlib.md5()
    md5.update(b"\n")  # printf("%s\n", ketama_error())
    chunk = []
    for i in range(N):
        key = b"%d" % i
        point, ip = k.get_server(key)
        kh = struct.unpack("<I", hashlib.md5(key).digest()[:4])[0]  # ketama_hashi(key)
        chunk.append("%d %d %s\n" % (kh, point, ip))
        if len(chunk) == 10000:
            md5.update("".join(chunk).encode())
            chunk = []
    md5.update("".join(chunk).encode())
    del k
    json.dump({"version": version("ketama"), "point_count": npoints, "md5": md5.hexdigest()},
              sys.stdout)


def main():
    path = os.environ.get("KETAMA_GOLDEN_SERVERS") or DEFAULT_SERVERS
    out = os.path.join(OUT_DIR, "libketama_golden.json")
    if not os.path.isfile(path):
        print("gen_libketama_golden: no ketama.servers (set KETAMA_GOLDEN_SERVERS or put it at "
              "%s); libketama_golden.json not written" % DEFAULT_SERVERS, file=sys.stderr)
        return
    with open(path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    res = json.loads(subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", path],
                                    stdout=subprocess.PIPE, check=True).stdout)
    doc = {
        "generator": GEN,
        "peer": "ketama %s (PyPI, RJ's libketama C), Ketama(server_file).get_server(key bytes)"
                % res["version"],
        "profile": "libketama",
        "server_file": "shared/ketama.servers",
        "server_file_sha256": sha,
        "point_count": res["point_count"],
        "keys": {"first": 0, "last": N - 1, "format": "%d"},
        "output_first_line": "",
        "output_line_format": "%u %u %s\\n: MD5-LE key hash, continuum point, server addr",
        "output_md5": res["md5"],
        "upstream_md5": UPSTREAM_MD5,
        "matches_upstream": res["md5"] == UPSTREAM_MD5,
    }
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print("wrote %s (md5 %s, upstream %s)" % (os.path.relpath(out, REPO), res["md5"],
                                              "match" if doc["matches_upstream"] else "MISMATCH"))
    if not doc["matches_upstream"]:
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2])
    else:
        main()
