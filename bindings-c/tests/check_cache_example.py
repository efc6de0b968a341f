#!/usr/bin/env python3
"""Checks the output of examples/c/cache.c (run on a fresh redis-server by `make test-c`).

usage: check_cache_example.py OUTPUT
"""
import re
import sys


def main():
    out = open(sys.argv[1], encoding="utf-8").read()
    want = [
        # Cold, then warm: one backend call for the two reads.
        r'accounts: \[\{"client":"client-42","kind":"accounts"\}\] \(backend calls so far: 1\)\n'
        r'accounts: \[\{"client":"client-42","kind":"accounts"\}\] \(backend calls so far: 1\)\n',
        r"loans: BACKEND_ERROR: backend error E_CORE: the loans system did not answer\n",
        r"session touch: OK, client client-42\n",
        r"session touch by app-3\.0: VERSION_MISMATCH \(stored version app-2\.14\)\n",
        r"session touch after logout: SESSION_EXPIRED\n",
        r"warm accounts: already warm\nwarm cards: loaded\nwarm deposits: loaded\n",
        # accounts, loans, then cards and deposits by the warm-up.
        r"backend calls: 4\n",
    ]
    missing = [w for w in want if not re.search(w, out)]
    for w in missing:
        print("check_cache_example: missing /%s/" % w, file=sys.stderr)
    if missing:
        raise SystemExit(1)
    print("check_cache_example: examples/c/cache.c printed what it should")


if __name__ == "__main__":
    main()
