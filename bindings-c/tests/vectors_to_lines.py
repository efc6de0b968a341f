#!/usr/bin/env python3
"""Converts the shared JSON vectors (tests/vectors/) to a line format the C tests read
without a JSON parser. Byte strings are lower-case hex, "-" for the empty string.

    ring FILE PROFILE VNODES PPD PORT POINT_COUNT REPLICAS_N   (0 = default / -1 = unknown)
    node HEXNAME WEIGHT
    key HEXKEY HEXEXPECT [HEXREPLICA,HEXREPLICA,...]
    end
    slot HEXKEY SLOT
    pool NAME
    seed INITIAL OVERWRITE RESULT|CODE HEXMEMBER...
    pick HEX|NIL
    remove HEX COUNT|NIL
    restore HEX keep|at_minimum COUNT|CODE

CODE is the error code a refused seed or restore gives (the vector's "error" is the
script's message; the code is read from it: an empty member is EMPTY_MEMBER, an initial
count outside 0..=2^53 is BAD_COUNT).
    state LEN                                      followed by LEN lines: count HEX N
    removed HEX COUNT
    endpool

usage: vectors_to_lines.py VECTORS_DIR > vectors.txt
"""
import glob
import json
import os
import sys


def h(b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return b.hex() or "-"


def hx(s):  # already hex
    return s or "-"


def error_code(op):
    """The code of a refused op, from the script's message (unknown messages stop here)."""
    msg = op["error"]
    if "must not be empty" in msg:
        return "EMPTY_MEMBER"
    if "initial count" in msg or "2^53" in msg:
        return "BAD_COUNT"
    raise SystemExit("pool vector: no code known for the error %r; teach vectors_to_lines.py" % msg)


def main():
    root = sys.argv[1]
    out = []
    for path in sorted(glob.glob(os.path.join(root, "ring", "*.json"))):
        v = json.load(open(path, encoding="utf-8"))
        o = v.get("options", {})
        rep = v.get("replicas") or {}
        pc = v.get("point_count")
        out.append("ring %s %s %d %d %d %d %d" % (
            os.path.basename(path), v["profile"], o.get("vnodes", 0),
            o.get("points_per_digest", 0), o.get("default_port", 0),
            -1 if pc is None else pc, rep.get("n", 0)))
        for name, w in v["nodes"]:
            out.append("node %s %d" % (h(name), w))
        reps = rep.get("expect")
        for i, (k, e) in enumerate(zip(v["keys"], v["expect"])):
            line = "key %s %s" % (h(k), h(e))
            if reps:
                line += " " + ",".join(h(x) for x in reps[i])
            out.append(line)
        out.append("end")
    for path in sorted(glob.glob(os.path.join(root, "slot", "*.json"))):
        for c in json.load(open(path))["cases"]:
            out.append("slot %s %d" % (hx(c["key_hex"]), c["slot"]))
    for path in sorted(glob.glob(os.path.join(root, "pool", "*.json"))):
        for seq in json.load(open(path))["sequences"]:
            out.append("pool %s" % seq["name"].replace(" ", "_"))
            for op in seq["ops"]:
                kind = op["op"]
                if kind == "seed":
                    res = error_code(op) if "error" in op else str(op["result"])
                    out.append("seed %d %d %s %s" % (op["initial"], int(op["overwrite"]), res,
                                                     " ".join(hx(m) for m in op["members_hex"])))
                elif kind == "pick":
                    r = op.get("result_hex")
                    out.append("pick %s" % ("NIL" if r is None else hx(r)))
                elif kind == "pick_many":
                    rs = op["result_hex"]
                    for r in rs:
                        out.append("pick %s" % hx(r))
                    if len(rs) < op["n"]:
                        out.append("pick NIL")
                elif kind == "remove":
                    r = op["result"]
                    out.append("remove %s %s" % (hx(op["member_hex"]), "NIL" if r is None else r))
                elif kind == "restore":
                    res = error_code(op) if "error" in op else str(op["result"])
                    out.append("restore %s %s %s" % (hx(op["member_hex"]), op["mode"], res))
                else:
                    raise SystemExit("unknown pool op %r" % kind)
                counts = op.get("counts", [])
                out.append("state %d" % len(counts))
                for m, c in counts:
                    out.append("count %s %d" % (hx(m), c))
                for m, c in op.get("removed", []):
                    out.append("removed %s %d" % (hx(m), c))
            out.append("endpool")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
