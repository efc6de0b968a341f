#!/usr/bin/env python3
"""Converts the entrance contract (tests/contract/bad_inputs.json) to lines that
test_contract.c reads without a JSON parser: one line per case C can express, fields
separated by spaces, text as lower-case hex ("-" for the empty string).

    ID OP WANT ARGS... [OK-VALUES...]

WANT is OK, or NAME:NUMBER for an error: the code's name (the C status is KEYROUTE_ +
NAME) and its number as docs/errors.md lists it. ARGS and the values of OK cases, per op:

    parse_nodes    TEXT                          ok: N (NAME WEIGHT)*N
    parse_weights  TEXT                          ok: N (NAME WEIGHT)*N
    ring           RING                          ok: N NAME*N
    ring_change    RING CHANGE NAME WEIGHT       (change: add, remove, set_weight)
    ring_get_n     RING KEY N                    ok: COUNT
    diff           RING RING
    pool_seed      INITIAL N MEMBER*N            ok: ADDED
    pool_restore   MEMBER MODE                   ok: COUNT   (mode: 0 keep, 1 at_minimum,
                                                              99 for any other name)
    pool_pick_many N M MEMBER*M                  ok: COUNT
    pool_key       KEY
    slot_map_add_master HOST PORT
    slot_map_assign     START END
    redirect       TEXT                          ok: KIND SLOT HOST PORT
    plan           M (ADDR R (START END)*R)*M  W (ADDR WEIGHT)*W

where RING = PROFILE VNODES PPD PORT N (NAME WEIGHT)*N, options given as in
keyroute_ring_options (0 = the profile's default; a default_port of 0 in the table,
"no default port", is -1 in C).

A case whose "skip" names "c" is left out. A number that does not fit the C type of its
parameter is an error here: such a case must say why C skips it.

usage: contract_to_lines.py bad_inputs.json errors.md > contract.txt   (counts on stderr)
"""
import json
import sys

I64 = (-(2 ** 63), 2 ** 63 - 1)
U64 = (0, 2 ** 64 - 1)
U16 = (0, 2 ** 16 - 1)
SIZE = U64  # the tests run on 64-bit targets


def h(s):
    return s.encode("utf-8").hex() or "-"


def num(v, rng, what):
    if not isinstance(v, int) or isinstance(v, bool) or not rng[0] <= v <= rng[1]:
        raise ValueError("%s %r does not fit its C type %r" % (what, v, rng))
    return str(v)


def ring(a):
    o = a.get("options", {})
    port = o.get("default_port", None)
    port = 0 if port is None else (-1 if port == 0 else port)
    out = [a["profile"], num(o.get("vnodes", 0), I64, "vnodes"),
           num(o.get("points_per_digest", 0), I64, "points_per_digest"),
           num(port, I64, "default_port"), str(len(a["nodes"]))]
    for name, w in a["nodes"]:
        out += [h(name), num(w, I64, "weight")]
    return out


def pairs(ok):
    out = [str(len(ok))]
    for name, w in ok:
        out += [h(name), str(w)]
    return out


def members(ms):
    return [str(len(ms))] + [h(m) for m in ms]


def numbers(errors_md):
    """{name: number} from the table of docs/errors.md (| number | `NAME` | when |)."""
    out = {}
    for line in open(errors_md, encoding="utf-8"):
        cells = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].isdigit() and cells[1].startswith("`"):
            out[cells[1].strip("`")] = int(cells[0])
    if not out:
        raise SystemExit("%s: no codes found" % errors_md)
    return out


def case_line(c, codes):
    op, a, ok = c["op"], c["args"], c.get("ok")
    if op in ("parse_nodes", "parse_weights"):
        args, vals = [h(a["text"])], (pairs(ok) if ok is not None else [])
    elif op == "ring":
        args, vals = ring(a), ([str(len(ok))] + [h(n) for n in ok] if ok is not None else [])
    elif op == "ring_change":
        args = ring(a) + [a["change"], h(a["name"]), num(a.get("weight", 0), I64, "weight")]
        vals = []
    elif op == "ring_get_n":
        args, vals = ring(a) + [h(a["key"]), num(a["n"], SIZE, "n")], ([str(ok)] if ok is not None else [])
    elif op == "diff":
        args, vals = ring(a["a"]) + ring(a["b"]), []
    elif op == "pool_seed":
        args = [num(a["initial"], U64, "initial")] + members(a["members"])
        vals = [str(ok)] if ok is not None else []
    elif op == "pool_restore":
        mode = {"keep": "0", "at_minimum": "1"}.get(a["mode"], "99")
        args, vals = [h(a["member"]), mode], ([str(ok)] if ok is not None else [])
    elif op == "pool_pick_many":
        args = [num(a["n"], SIZE, "n")] + members(a["members"])
        vals = [str(ok)] if ok is not None else []
    elif op == "pool_key":
        args, vals = [h(a["key"])], []
    elif op == "slot_map_add_master":
        args, vals = [h(a["host"]), num(a["port"], I64, "port")], []
    elif op == "slot_map_assign":
        args, vals = [num(a["start"], U16, "start"), num(a["end"], U16, "end")], []
    elif op == "redirect":
        args = [h(a["text"])]
        vals = ([ok[0], str(ok[1]), h(ok[2]), str(ok[3])] if ok is not None else [])
    elif op == "plan":
        args = [str(len(a["masters"]))]
        for addr, ranges in a["masters"]:
            args += [h(addr), str(len(ranges))]
            for s, e in ranges:
                args += [num(s, U16, "start"), num(e, U16, "end")]
        args.append(str(len(a["weights"])))
        for addr, w in a["weights"]:
            args += [h(addr), num(w, U64, "weight")]
        vals = []
    else:
        raise ValueError("unknown op %r: teach contract_to_lines.py and test_contract.c" % op)
    if "ok" in c:
        want = "OK"
    elif c["code"] in codes:
        want = "%s:%d" % (c["code"], codes[c["code"]])
    else:
        raise ValueError("unknown code %r (not in docs/errors.md)" % c["code"])
    return " ".join([c["id"], op, want] + args + vals)


def main():
    table = json.load(open(sys.argv[1], encoding="utf-8"))
    codes = numbers(sys.argv[2])
    lines, skipped = [], 0
    for c in table["cases"]:
        if "c" in c.get("skip", {}):
            skipped += 1
            continue
        if ("ok" in c) == ("code" in c):
            raise SystemExit("%s: a case has exactly one of ok and code" % c["id"])
        try:
            lines.append(case_line(c, codes))
        except ValueError as e:
            raise SystemExit("%s: %s" % (c["id"], e))
    sys.stdout.write("\n".join(lines) + "\n")
    print("contract_to_lines: %d cases for C, %d skipped for C" % (len(lines), skipped),
          file=sys.stderr)


if __name__ == "__main__":
    main()
