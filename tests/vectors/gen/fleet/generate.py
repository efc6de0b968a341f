#!/usr/bin/env python3
"""Regenerate tests/vectors/fleet/*.json from the real peers (issue 16), or check them.

Usage: generate.py [--check] [--strict] [--only NAME[,NAME...]]
  (run through generate.sh, which installs the peers and the venv first)

  --check   generate into a temporary directory and compare with the committed files;
            exit 1 on any difference.  A difference confined to a file's `peer` block
            (e.g. a Debian security update bumped a package version) is reported as a
            warning and passes, unless --strict is given.
  --only    run only these families: nginx, haproxy, twemproxy, java, java_reference,
            clients, unit_refs
            (with --check, only the files those families write are compared)

Each family runs in its own process (the generators start and stop their own servers).
"""

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
OUT = os.path.join(REPO, "tests", "vectors", "fleet")
VENV_PY = os.path.join(REPO, "build", "fleet-vectors-venv", "bin", "python")

FAMILIES = {
    "nginx": ("gen_nginx.py", ["nginx"]),
    "haproxy": ("gen_haproxy.py", ["haproxy"]),
    "twemproxy": ("gen_twemproxy.py", ["twemproxy"]),
    "java": ("gen_java.py", ["spymemcached", "guava_jump", "java_hashcode"]),
    "java_reference": ("gen_java_reference.py", ["java_reference"]),
    "clients": ("gen_clients.py", ["redis_rb", "predis", "pymemcache", "groupcache"]),
    "unit_refs": ("gen_unit_refs.py", ["envoy", "go_redis", "jedis", "dubbo"]),
}


def run(families, out_dir):
    env = dict(os.environ, FLEET_OUT=out_dir, PYTHONDONTWRITEBYTECODE="1")
    py = VENV_PY if os.path.exists(VENV_PY) else sys.executable
    for fam in families:
        script = FAMILIES[fam][0]
        t0 = time.monotonic()
        subprocess.run([py, os.path.join(HERE, script)], check=True, env=env, cwd=HERE)
        print("generate.py: %s done in %.1f s" % (fam, time.monotonic() - t0), flush=True)


def compare(families, fresh, strict):
    bad, warn = [], []
    for fam in families:
        for name in FAMILIES[fam][1]:
            a = os.path.join(OUT, name + ".json")
            b = os.path.join(fresh, name + ".json")
            if not os.path.exists(a):
                bad.append("%s: not committed" % name)
                continue
            ta, tb = open(a, encoding="utf-8").read(), open(b, encoding="utf-8").read()
            if ta == tb:
                continue
            ja, jb = json.loads(ta), json.loads(tb)
            ja.pop("peer"), jb.pop("peer")
            ja.pop("source", None), jb.pop("source", None)
            diff = "".join(list(difflib.unified_diff(ta.splitlines(True), tb.splitlines(True),
                                                     a, b, n=1))[:40])
            if ja == jb and not strict:
                warn.append("%s: only the peer version/source text differs:\n%s" % (name, diff))
            else:
                bad.append("%s differs from a fresh generation:\n%s" % (name, diff))
    for w in warn:
        print("generate.py --check: WARNING " + w, file=sys.stderr)
    for b in bad:
        print("generate.py --check: " + b, file=sys.stderr)
    return not bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    families = [f for f in args.only.split(",") if f] or list(FAMILIES)
    for f in families:
        if f not in FAMILIES:
            ap.error("unknown family %r (known: %s)" % (f, ", ".join(FAMILIES)))
    t0 = time.monotonic()
    if args.check:
        os.makedirs(os.path.join(REPO, "build"), exist_ok=True)
        fresh = tempfile.mkdtemp(prefix="fleet-check-", dir=os.path.join(REPO, "build"))
        try:
            run(families, fresh)
            ok = compare(families, fresh, args.strict)
        finally:
            shutil.rmtree(fresh, ignore_errors=True)
        n = sum(len(FAMILIES[f][1]) for f in families)
        print("generate.py --check: %s (%d files, %.0f s)"
              % ("the committed vectors match a fresh generation" if ok else "MISMATCH", n,
                 time.monotonic() - t0))
        sys.exit(0 if ok else 1)
    os.makedirs(OUT, exist_ok=True)
    run(families, OUT)
    print("generate.py: done in %.0f s" % (time.monotonic() - t0))


if __name__ == "__main__":
    main()
