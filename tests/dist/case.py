#!/usr/bin/env python3
"""Writes the lookup case test-dist gives every installed artifact, from one shared vector
file (answers recorded from the real peer, tests/vectors/README.md):

    line 1      the ring profile
    line 2      the node list in keyroute's node-list grammar (NAME=WEIGHT,...)
    line 3..    the keys (the vector's keys that are non-empty printable ASCII)

and, with --expect, the peer's answer for each of those keys instead (one per line).

usage: case.py VECTOR.json [--expect] > FILE
"""
import json
import sys


def main():
    vec = json.load(open(sys.argv[1], encoding="utf-8"))
    if vec.get("options"):
        sys.exit("case.py: a vector with profile options is not supported here")
    pairs = [
        (k, e)
        for k, e in zip(vec["keys"], vec["expect"])
        if k and k.isascii() and k.isprintable() and k.strip() == k and e is not None
    ]
    if len(pairs) < 100:
        sys.exit("case.py: fewer than 100 usable keys in %s" % sys.argv[1])
    if "--expect" in sys.argv[2:]:
        for _, e in pairs:
            print(e)
        return
    print(vec["profile"])
    print(",".join("%s=%d" % (n, w) for n, w in vec["nodes"]))
    for k, _ in pairs:
        print(k)


if __name__ == "__main__":
    main()
