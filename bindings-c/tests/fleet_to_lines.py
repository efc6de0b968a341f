#!/usr/bin/env python3
"""Converts tests/vectors/fleet_routes.json and the fleet vectors it names
(tests/vectors/fleet/*.json) to lines the C test (test_fleet.c) reads without a JSON
parser. Text is lower-case hex, "-" for the empty string.

    router ENGINE FILE CASE        ENGINE "-" for a configuration
    config HEXTEXT HEXPOOL ALLOW_DOWN
    resolved HEXHOST COUNT
    node HEXNAME WEIGHT
    option HEXNAME HEXVALUE
    add HEXNAME WEIGHT             keyroute_router_add after the build (the route's ops)
    remove HEXNAME                 keyroute_router_remove after the build
    key HEXKEY HEXEXPECTED_NAME
    end

usage: fleet_to_lines.py VECTORS_DIR > fleet.txt
"""
import json
import os
import sys


def h(s):
    return s.encode("utf-8").hex() or "-"


def main():
    root = sys.argv[1]
    routes = json.load(open(os.path.join(root, "fleet_routes.json"), encoding="utf-8"))["routes"]
    files = {}
    out = []
    for r in routes:
        f = r["file"]
        if f not in files:
            files[f] = json.load(open(os.path.join(root, "fleet", f), encoding="utf-8"))
        v = files[f]
        case = v["cases"][r["case"]]
        out.append("router %s %s %d" % (r.get("engine", "-"), f, r["case"]))
        if "config" in r:
            c = r["config"]
            out.append("config %s %s %d" % (h(v["config_file"]), h(c["pool"]), int(c["allow_down"])))
            for host, n in c["resolved"]:
                out.append("resolved %s %d" % (h(host), n))
        else:
            for name, w in r["nodes"]:
                out.append("node %s %d" % (h(name), w))
            for k, val in r["options"]:
                out.append("option %s %s" % (h(k), h(val)))
            for op in r.get("ops", []):
                if op[0] == "add":
                    out.append("add %s %d" % (h(op[1]), op[2]))
                else:
                    out.append("remove %s" % h(op[1]))
        mode = r["expect"]
        for k, e in zip(case["keys"], case["expect"]):
            if mode == "name":
                want = e
            elif mode == "index":
                want = r["nodes"][e][0]
            else:
                want = r["nodes"][e[mode["index_column"]]][0]
            out.append("key %s %s" % (h(k), h(want)))
        out.append("end")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
