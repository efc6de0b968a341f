#!/usr/bin/env python3
"""The reference Java ring of issue 38, run on the JDK: java/ConsistentHashRedis.java
(150 vnodes `server + "-N" + i` at Math.abs(hashCode()) in a ConcurrentSkipListMap, a
later put overwriting, removal by the points a server's vnodes hash to, and the answer
vnode.split("-")[0]), driven by java/ReferenceRingDriver.java. Needs only a JDK (javac).

Writes tests/vectors/fleet/java_reference.json: rings built by the constructor, then
addServer/removeServer sequences (the Aa/BB hashCode collision among them), names with
'-', and many keys. Each ring is recorded under both of keyroute's `node` modes of
`java-hashcode`: `prefix` (the reference's getServer answer) and `name` (the server of
the vnode the lookup lands on, before the split: keyroute's default).
"""

import os
import subprocess

import choose
from common import BUILD_DIR, HERE, hx, java_version, make_keys, unhx, write_vector

KEYS = make_keys(n_seq=300, n_ascii=60, n_unicode=60)
MANY_KEYS = make_keys(n_seq=1600, n_ascii=200, n_unicode=200)


def run_driver(lines):
    out = os.path.join(BUILD_DIR, "java-reference")
    os.makedirs(out, exist_ok=True)
    subprocess.run(["javac", "-nowarn", "-d", out,
                    os.path.join(HERE, "java", "ConsistentHashRedis.java"),
                    os.path.join(HERE, "java", "ReferenceRingDriver.java"),
                    os.path.join(HERE, "java", "Hex.java")], check=True)
    p = subprocess.run(["java", "-cp", out, "ReferenceRingDriver"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("ReferenceRingDriver failed:\n" + p.stderr)
    return p.stdout.splitlines()


def point(name):
    """Math.abs(name.hashCode()) as an unsigned value (MIN_VALUE stays 2^31)."""
    return abs(choose.java_hash(name)) & choose.M32


def keys_on(p, n):
    """N keys whose Math.abs(hashCode()) is P: they land on the point P, whatever points
    lie next to it. Raising one character by one and lowering the next by 31 keeps a
    hashCode ("Aa" and "BB")."""
    k = choose.java_string_with_hash(p, seed=77)
    out = [k]
    for i in range(len(k) - 1):
        a, b = ord(k[i]) + 1, ord(k[i + 1]) - 31
        if 0x21 <= b and a < 0x7f and len(out) < n:
            out.append(k[:i] + chr(a) + chr(b) + k[i + 2:])
    assert len(out) == n and all(point(x) == p for x in out), out
    return out


def rings():
    """(name, notes, servers, ops, keys, dashes): the constructor's servers, then ops."""
    five = ["redis-%d" % i for i in range(1, 6)]
    # hashCode puts a run of ten vnodes side by side (redis-2-N0 .. N9 are P-9 .. P). A
    # server whose vnodes N90 .. N99 land on those ten points, P being the last of the
    # run on the ring of five (the point after it is another server's): put later, it
    # wins them.
    ring = sorted((point("%s-N%d" % (s, i)), s) for s in five for i in range(150))
    vnode = next("redis-2-N%d" % i for i in (9, 19, 29, 39, 49, 59, 69, 79, 89, 99)
                 if ring[(ring.index((point("redis-2-N%d" % i), "redis-2")) + 1) % len(ring)][1]
                 != "redis-2")
    p = point(vnode)
    shared = choose.java_node_with_point(p, seed=5, prefix="cache-", suffix="-N99")
    mine = {point("%s-N%d" % (shared, i)) for i in range(150)}
    theirs = {point("redis-2-N%d" % i) for i in range(150)}
    assert mine & theirs == set(range(p - 9, p + 1)), sorted(mine & theirs)
    on_p = keys_on(p, 4)
    add, rm = (lambda n: ("add", n)), (lambda n: ("remove", n))
    return [
        ("dash_names", "five servers named redis-1 .. redis-5: the reference answers "
         "'redis' for every key (split(\"-\")[0])", five, [], KEYS, True),
        ("dash_edges", "'-' first (the server before it is empty), twice, in a non-ASCII "
         "name, after an emoji (two UTF-16 units), and '-N' inside a name",
         ["redis-1", "cache-a", "plain", "-lead", "a--b", "узел-2", "x-N5", "🎉-4"], [],
         KEYS, True),
        ("issue_sequence", "issue 38's sequence: add Aa, BB, cache3, then remove BB. "
         "\"Aa\".hashCode() == \"BB\".hashCode(), so BB's puts overwrote every point of Aa "
         "and its removal removes them: every key goes to cache3 (a build over [Aa, cache3] "
         "gives Aa about half)", [],
         [add("Aa"), add("BB"), add("cache3"), rm("BB")], MANY_KEYS, False),
        ("issue_sequence_remove_first", "add Aa, BB, cache3, then remove Aa: Aa's points "
         "are BB's now, and go", [], [add("Aa"), add("BB"), add("cache3"), rm("Aa")], KEYS,
         False),
        ("issue_sequence_add_again", "add Aa, BB, cache3, remove BB, add BB again: BB "
         "takes its points back, Aa still has none", [],
         [add("Aa"), add("BB"), add("cache3"), rm("BB"), add("BB")], KEYS, False),
        ("collision_dash", "Aa-1 and BB-1 collide as Aa and BB do: BB-1 goes, with "
         "Aa-1's points, then BB-2 comes", ["Aa-1", "BB-1", "cache-3"],
         [rm("BB-1"), add("BB-2")], KEYS, True),
        ("shared_points", "%s's vnodes N90 .. N99 land on the points %d .. %d of "
         "redis-2 (up to %s; chosen by choose.py: hashCode puts a run of ten vnodes side "
         "by side, and the point after %d is another server's). Put later, it wins them; "
         "removing it removes them, and redis-2 does not get them back. The first %d keys "
         "land on %d" % (shared, p - 9, p, vnode, p, len(on_p), p), five + [shared],
         [rm(shared)], on_p + KEYS, True),
        ("shared_points_remove_owner", "the same ring, then redis-2 is removed: its "
         "points %d .. %d were %s's, and go with it. The first %d keys land on %d"
         % (p - 9, p, shared, len(on_p), p), five + [shared], [rm("redis-2")],
         on_p + KEYS, True),
        ("sequence", "adds and removes without a shared point: what a build over the "
         "servers left gives", five,
         [rm("redis-3"), add("redis-6"), rm("redis-1"), add("redis-3"), add("cache-7")],
         KEYS, True),
    ]


def main():
    lines, plan = [], []
    for name, notes, servers, ops, keys, dashes in rings():
        lines.append(" ".join(["new"] + [hx(s) for s in servers]))
        lines += ["%s %s" % (op, hx(n)) for op, n in ops]
        lines += ["size", " ".join(["get"] + [hx(k) for k in keys])]
        plan.append((name, notes, servers, ops, keys, dashes))
    out = run_driver(lines)
    pos, cases = 0, []
    for name, notes, servers, ops, keys, dashes in plan:
        size = int(out[pos])
        rows = [r.split(" ") for r in out[pos + 1: pos + 1 + len(keys)]]
        pos += 1 + len(keys)
        server = [unhx(r[0]) for r in rows]
        node = [unhx(r[1]) for r in rows]
        assert all(s == n.split("-")[0] for s, n in zip(server, node))
        modes = [("prefix", server), ("name", node)] if dashes else [("name", node)]
        if not dashes:
            assert server == node
        for mode, expect in modes:
            cases.append({
                "name": name if not dashes else "%s_%s" % (name, mode), "notes": notes,
                "node": mode, "nodes": servers,
                "ops": [{"op": op, "node": n} for op, n in ops],
                "point_count": size, "keys": keys, "expect": expect})
    assert pos == len(out)
    write_vector(
        "java_reference", __file__,
        {"name": "the reference ConcurrentSkipListMap ring of issue 38 (keyroute's "
                 "ConsistentHashRedis.java) on OpenJDK", "version": java_version()},
        "java/ConsistentHashRedis.java run by java/ReferenceRingDriver.java: a ring built "
        "by the constructor from `nodes`, then `ops` (addServer, removeServer) in order, "
        "then getServer(key) for every key",
        ["`node: prefix` cases: `expect` is the reference's answer, vnode.split(\"-\")[0] "
        "(java-hashcode with node=prefix). `node: name` cases: the server whose vnode the "
         "lookup lands on, its whole name (java-hashcode's default); names without '-' are "
         "recorded once, as both agree.",
         "`point_count` is the map's size after the ops (distinct points).",
         "Keys are generated (common.make_keys); chosen keys (choose.py, inputs only) are "
         "named in a case's notes."],
        cases)


if __name__ == "__main__":
    main()
