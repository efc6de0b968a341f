#!/usr/bin/env python3
"""Checks the output of examples/c and examples/java against the shared vectors.

    ring PROFILE NODE=WEIGHT ...   selects the vector file with that profile and nodes
    route PROFILE KEY NODE         must match that file's expect for KEY
    slot KEY SLOT                  must match tests/vectors/slot/*.json
    lupool INITIAL MEMBER ...      a least-used pool seeded with these members at INITIAL
    pick MEMBER|NIL                the next pick from it: the lowest count, ties to the
                                   byte-wise smallest member (NIL when empty)
Lines starting with '#' are ignored.
usage: check_example_output.py [--picks] VECTORS_DIR OUTPUT   (--picks: pick lines required)
"""
import glob
import json
import os
import sys


def main():
    args = sys.argv[1:]
    need_picks = "--picks" in args
    args = [a for a in args if a != "--picks"]
    root, out = args[0], args[1]
    rings = {}
    for path in glob.glob(os.path.join(root, "ring", "*.json")):
        v = json.load(open(path, encoding="utf-8"))
        if v.get("options"):
            continue
        key = (v["profile"], tuple((n, w) for n, w in v["nodes"]))
        rings[key] = dict(zip(v["keys"], v["expect"]))
    slots = {}
    for path in glob.glob(os.path.join(root, "slot", "*.json")):
        for c in json.load(open(path))["cases"]:
            slots[bytes.fromhex(c["key_hex"])] = c["slot"]
    current, checked, errors = {}, 0, []
    pool, picks = None, 0
    for line in open(out, encoding="utf-8"):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "ring":
            nodes = tuple((n, int(w)) for n, w in (x.rsplit("=", 1) for x in f[2:]))
            if (f[1], nodes) not in rings:
                errors.append("no vector file for %s" % line.strip())
            current[f[1]] = rings.get((f[1], nodes), {})
        elif f[0] == "route":
            want = current.get(f[1], {}).get(f[2])
            if want != f[3]:
                errors.append("%s: expected %r" % (line.strip(), want))
            checked += 1
        elif f[0] == "slot":
            want = slots.get(f[1].encode())
            if want is None or want != int(f[2]):
                errors.append("%s: expected %r" % (line.strip(), want))
            checked += 1
        elif f[0] == "lupool":
            pool = {m.encode(): int(f[1]) for m in f[2:]}
        elif f[0] == "pick" and pool is not None:
            want = min(pool, key=lambda m: (pool[m], m)) if pool else None
            got = None if f[1] == "NIL" else f[1].encode()
            if got != want:
                errors.append("%s: expected %r" % (line.strip(), want))
            if want is not None:
                pool[want] += 1
            checked += 1
            picks += 1
        else:
            errors.append("unexpected line %r" % line)
    if checked == 0:
        errors.append("no route/slot lines")
    if need_picks and picks == 0:
        errors.append("no pick lines (was a Redis URL given?)")
    for e in errors:
        print("example output: " + e, file=sys.stderr)
    print("%s: %d lines checked against the vectors, %d errors" % (out, checked, len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
