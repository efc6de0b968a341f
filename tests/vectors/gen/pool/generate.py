#!/usr/bin/env python3
"""Generate tests/vectors/pool/sequences.json from a real redis-server.

Starts its own standalone `redis-server` on a free 127.0.0.1 port (temporary directory,
no persistence), loads the pool scripts from tests/vectors/scripts/scripts.json (core's
SCRIPTS as the build assembles them, checked current by core/tests/script_vectors.rs),
checks every recorded SHA1 against both hashlib and the server's SCRIPT LOAD answer, runs
fixed operation sequences with
EVALSHA, records every operation with the server's reply and the pool's state after it,
writes the JSON deterministically and stops the server.

Needs: python3 (stdlib only) and redis-server on PATH
(Debian: `apt-get install -y redis-server redis-tools`).

Usage: python3 tests/vectors/gen/pool/generate.py [--check]
  --check  do not write; exit 1 if the committed file differs from a fresh run.

Format of sequences.json: {"generator", "peer", "notes", "scripts": {name: {"file", "sha1"}},
"sequences": [{"name", "pool_key_hex", "side_key_hex", "ops": [op, ...]}]}. Every op has
"counts" (ZRANGE pool 0 -1 WITHSCORES after it: [[member_hex, count], ...] in pick order)
and "removed" (HGETALL side after it, [[member_hex, count], ...] sorted by member bytes):
  {"op": "pick", "result_hex": hex | null}
  {"op": "pick_many", "n": n, "result_hex": [hex, ...]}        (the least-used script n times)
  {"op": "seed", "members_hex": [...], "initial": n, "overwrite": bool, "result": n}
      or, when the server refused it (initial > 2^53, an empty member), "error": message
      instead of "result"
  {"op": "remove", "member_hex": hex, "result": n | null}
  {"op": "restore", "member_hex": hex, "mode": "keep" | "at_minimum", "result": n}
      or, when the server refused it (an empty member), "error": message instead of "result"
Each sequence starts from an empty database (FLUSHALL). All counts are in 0..=2^53, exact
as JSON numbers in every language.
"""

import hashlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
SCRIPTS_JSON = ROOT / "tests" / "vectors" / "scripts" / "scripts.json"
OUT = ROOT / "tests" / "vectors" / "pool" / "sequences.json"
GENERATOR = "tests/vectors/gen/pool/generate.py"

# The pool's scripts, as keyroute's CLI names them.
SCRIPTS = ["least-used", "seed", "remove", "restore"]

MAX_EXACT = 2**53


class RespError(Exception):
    """An error reply from the server."""


class Redis:
    """A minimal binary-safe RESP2 client."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")

    def close(self):
        self.file.close()
        self.sock.close()

    def call(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            if isinstance(arg, str):
                arg = arg.encode()
            elif isinstance(arg, int):
                arg = str(arg).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
        self.sock.sendall(b"".join(parts))
        return self._read()

    def _line(self):
        line = self.file.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed by redis-server")
        return line[:-2]

    def _read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RespError(rest.decode("utf-8", "replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.file.read(n + 2)
            return data[:-2]
        if kind == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [self._read() for _ in range(n)]
        raise ValueError("unexpected RESP reply %r" % line)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(workdir):
    exe = shutil.which("redis-server")
    if exe is None:
        sys.exit("redis-server not found: install it (Debian: apt-get install -y redis-server redis-tools)")
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", workdir, "--daemonize", "no", "--logfile", os.path.join(workdir, "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                client = Redis(port)
                if client.call("PING") == "PONG":
                    return proc, client
                client.close()
            except (OSError, RespError):
                time.sleep(0.05)
        stop_server(proc)
    sys.exit("could not start redis-server; see %s/redis.log" % workdir)


def stop_server(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def hash_tag(key):
    """Redis Cluster hash tag: bytes between the first '{' and the first '}' after it."""
    open_ = key.find(b"{")
    if open_ < 0:
        return None
    close = key.find(b"}", open_ + 1)
    if close <= open_ + 1:
        return None
    return key[open_ + 1:close]


def side_key(pool_key):
    """The side-key rule of core/src/select/keys.rs."""
    if not pool_key:
        raise ValueError("empty pool key")
    if hash_tag(pool_key) is not None:
        return pool_key + b":removed"
    if b"}" in pool_key:
        raise ValueError("pool key needs a hash tag")
    return b"{" + pool_key + b"}:removed"


def load_scripts(client):
    recorded = {s["name"]: s for s in json.loads(SCRIPTS_JSON.read_text())}
    scripts = {}
    for name in SCRIPTS:
        if name not in recorded:
            sys.exit("%s is not in %s" % (name, SCRIPTS_JSON.relative_to(ROOT)))
        text = recorded[name]["text"].encode()
        declared = recorded[name]["sha1"]
        local = hashlib.sha1(text).hexdigest()
        loaded = client.call("SCRIPT", "LOAD", text).decode()
        if not declared == local == loaded:
            sys.exit("SHA1 mismatch for %s: scripts.json %s, hashlib %s, SCRIPT LOAD %s"
                     % (name, declared, local, loaded))
        scripts[name] = {"file": str(SCRIPTS_JSON.relative_to(ROOT)), "sha1": loaded}
    return scripts


class Runner:
    def __init__(self, client, scripts):
        self.client = client
        self.sha = {name: s["sha1"] for name, s in scripts.items()}

    def begin(self, name, pool_key):
        self.client.call("FLUSHALL")
        self.pool = pool_key
        self.side = side_key(pool_key)
        self.ops = []
        self.sequence = {"name": name, "pool_key_hex": pool_key.hex(), "side_key_hex": self.side.hex(),
                         "ops": self.ops}
        return self.sequence

    def _eval(self, name, keys, args):
        return self.client.call("EVALSHA", self.sha[name], len(keys), *keys, *args)

    def _state(self, op):
        flat = self.client.call("ZRANGE", self.pool, 0, -1, "WITHSCORES")
        counts = []
        for member, score in zip(flat[::2], flat[1::2]):
            counts.append([member.hex(), exact_int(score)])
        flat = self.client.call("HGETALL", self.side)
        removed = sorted([m.hex(), exact_int(c)] for m, c in zip(flat[::2], flat[1::2]))
        removed.sort(key=lambda entry: bytes.fromhex(entry[0]))
        op["counts"] = counts
        op["removed"] = removed
        self.ops.append(op)

    def pick(self):
        got = self._eval("least-used", [self.pool], [])
        self._state({"op": "pick", "result_hex": None if got is None else got.hex()})
        return got

    def pick_many(self, n):
        got = [self._eval("least-used", [self.pool], []) for _ in range(n)]
        while got and got[-1] is None:
            got.pop()
        assert None not in got
        self._state({"op": "pick_many", "n": n, "result_hex": [m.hex() for m in got]})

    def seed(self, members, initial, overwrite):
        op = {"op": "seed", "members_hex": [m.hex() for m in members], "initial": initial,
              "overwrite": overwrite}
        try:
            op["result"] = self._eval("seed", [self.pool, self.side],
                                      [initial, "1" if overwrite else "0", *members])
        except RespError as err:
            op["error"] = str(err)
        self._state(op)

    def remove(self, member):
        got = self._eval("remove", [self.pool, self.side], [member])
        self._state({"op": "remove", "member_hex": member.hex(), "result": got})

    def restore(self, member, mode):
        op = {"op": "restore", "member_hex": member.hex(), "mode": mode}
        try:
            op["result"] = self._eval("restore", [self.pool, self.side], [member, mode])
        except RespError as err:
            op["error"] = str(err)
        self._state(op)


def exact_int(score):
    value = float(score)
    if value != int(value) or not 0 <= value <= MAX_EXACT:
        raise ValueError("score %r is not an exact count" % score)
    return int(value)


def sequences(run):
    out = []
    key = b"{keyroute-vectors}:pool"

    out.append(run.begin("basic", key))
    run.seed([b"proxy-c", b"proxy-a", b"proxy-b"], 0, False)
    for _ in range(4):
        run.pick()
    run.pick_many(8)

    out.append(run.begin("ties_memcmp_binary_utf8", b"pool-untagged"))
    members = [b"b", b"a", b"ab", b"abc", b"a\x00", b"a\xff", b"A", b"\x00", b"\xff\xfe",
               "é".encode(), "日本".encode(), "e\u0301".encode(), b"a b", b"\r\n", b"{x}"]
    run.seed(members, 0, False)
    for _ in range(2 * len(members) + 3):
        run.pick()

    out.append(run.begin("empty_and_missing", b"{empty}"))
    run.pick()
    run.pick_many(3)
    run.remove(b"ghost")
    run.seed([], 0, False)
    run.pick()
    run.restore(b"ghost", "keep")
    run.pick()
    run.remove(b"ghost")
    run.pick()
    run.restore(b"ghost", "at_minimum")
    run.remove(b"ghost")
    run.restore(b"ghost", "keep")
    run.pick_many(2)

    out.append(run.begin("empty_members_refused", b"{refused}:pool"))
    run.seed([b"a", b"b"], 0, False)
    run.pick()
    run.seed([b"c", b""], 0, False)
    run.restore(b"", "keep")
    run.restore(b"", "at_minimum")
    run.pick_many(3)

    out.append(run.begin("seed_keeps_or_overwrites", b"{seed}:pool"))
    run.seed([b"a", b"b"], 0, False)
    run.pick_many(5)
    run.seed([b"b", b"c"], 0, False)
    run.seed([b"a"], 1, True)
    run.seed([b"d", b"d", b"a"], 2, False)
    run.seed([b"c", b"e", b"e"], 7, True)
    run.pick_many(6)
    run.seed([b"a", b"b", b"c", b"d", b"e"], 0, True)
    run.pick_many(5)

    out.append(run.begin("initial_counts_differ", b"{initial}:pool"))
    run.seed([b"old-1", b"old-2"], 10, False)
    run.seed([b"new"], 3, False)
    run.pick_many(10)
    run.seed([b"newer"], 12, False)
    run.pick_many(6)

    out.append(run.begin("remove_restore_keep", b"{keep}:pool"))
    run.seed([b"p1", b"p2", b"p3", b"p4"], 0, False)
    run.pick_many(10)
    run.remove(b"p2")
    run.remove(b"p2")
    run.pick_many(9)
    run.restore(b"p2", "keep")
    run.pick_many(8)
    run.remove(b"p1")
    run.remove(b"p3")
    run.restore(b"p3", "keep")
    run.pick_many(3)
    run.restore(b"p1", "keep")
    run.restore(b"p1", "keep")
    run.pick_many(4)

    out.append(run.begin("remove_restore_at_minimum", b"{minimum}:pool"))
    run.seed([b"p1", b"p2", b"p3"], 0, False)
    run.pick_many(9)
    run.remove(b"p3")
    run.pick_many(12)
    run.restore(b"p3", "at_minimum")
    run.pick_many(4)
    run.restore(b"p2", "at_minimum")
    run.restore(b"fresh", "keep")
    run.restore(b"fresh2", "at_minimum")
    run.pick_many(6)
    run.remove(b"p1")
    run.remove(b"p2")
    run.remove(b"p3")
    run.remove(b"fresh")
    run.remove(b"fresh2")
    run.pick()
    run.restore(b"p2", "at_minimum")
    run.restore(b"p1", "keep")
    run.pick_many(3)

    out.append(run.begin("reseed_forgets_removed_count", b"{reseed}:pool"))
    run.seed([b"a", b"b"], 0, False)
    run.pick_many(6)
    run.remove(b"a")
    run.seed([b"a"], 0, False)
    run.restore(b"a", "keep")
    run.pick_many(3)
    run.remove(b"b")
    run.seed([b"b"], 1, True)
    run.restore(b"b", "keep")
    run.pick_many(2)

    out.append(run.begin("exact_count_limits", b"{limits}:pool"))
    run.seed([b"big"], MAX_EXACT - 2, False)
    run.pick_many(4)
    run.seed([b"top"], MAX_EXACT, False)
    run.pick_many(2)
    run.seed([b"over"], 2 * MAX_EXACT, False)
    run.seed([b"big"], 2 * MAX_EXACT, True)
    run.remove(b"big")
    run.restore(b"big", "keep")
    run.pick()

    out.append(run.begin("large_pool_spread", b"{large}:pool"))
    run.seed([b"m%04d" % i for i in range(500)], 0, False)
    run.pick_many(1234)
    run.remove(b"m0007")
    run.pick_many(300)
    run.restore(b"m0007", "keep")
    run.pick_many(20)

    rng = random.Random(20240601)
    names = [b"a", b"b", b"ab", b"\x00", b"\xff", "ü".encode(), b"x1", b"x10", b"x2"]
    out.append(run.begin("random_walk", b"random{walk}"))
    run.seed(names[:5], 0, False)
    for _ in range(400):
        roll = rng.random()
        if roll < 0.55:
            run.pick()
        elif roll < 0.62:
            run.pick_many(rng.randrange(1, 6))
        elif roll < 0.74:
            run.remove(rng.choice(names))
        elif roll < 0.9:
            run.restore(rng.choice(names), rng.choice(["keep", "at_minimum"]))
        else:
            run.seed(rng.sample(names, rng.randrange(0, 4)), rng.randrange(0, 30), rng.random() < 0.5)
    return out


def render(doc):
    """Deterministic JSON: one line per operation."""
    head = {k: v for k, v in doc.items() if k != "sequences"}
    lines = ["{"]
    for k, v in head.items():
        lines.append("  %s: %s," % (json.dumps(k), json.dumps(v, ensure_ascii=False, sort_keys=True)))
    lines.append('  "sequences": [')
    for i, seq in enumerate(doc["sequences"]):
        lines.append("    {")
        for k in ("name", "pool_key_hex", "side_key_hex"):
            lines.append("      %s: %s," % (json.dumps(k), json.dumps(seq[k])))
        lines.append('      "ops": [')
        for j, op in enumerate(seq["ops"]):
            comma = "," if j + 1 < len(seq["ops"]) else ""
            lines.append("        " + json.dumps(op, ensure_ascii=False, separators=(", ", ": ")) + comma)
        lines.append("      ]")
        lines.append("    }" + ("," if i + 1 < len(doc["sequences"]) else ""))
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    check = "--check" in sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="keyroute-pool-") as workdir:
        proc, client = start_server(workdir)
        try:
            info = client.call("INFO", "server").decode()
            version = re.search(r"redis_version:(\S+)", info).group(1)
            scripts = load_scripts(client)
            run = Runner(client, scripts)
            doc = {
                "generator": GENERATOR,
                "peer": "redis-server %s (standalone), scripts run with EVALSHA" % version,
                "notes": ("members and keys are hex; counts are integers in 0..=2^53; each op "
                          "records the reply (result / result_hex, or error) and the state after "
                          "it: counts = ZRANGE pool 0 -1 WITHSCORES, removed = HGETALL side sorted "
                          "by member bytes; pick_many = the least-used script called n times"),
                "scripts": scripts,
                "sequences": sequences(run),
            }
        finally:
            client.close()
            stop_server(proc)
    text = render(doc)
    if check:
        if not OUT.exists() or OUT.read_text() != text:
            sys.exit("%s is stale: run python3 %s" % (OUT.relative_to(ROOT), GENERATOR))
        print("%s is up to date" % OUT.relative_to(ROOT))
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    total = sum(len(s["ops"]) for s in doc["sequences"])
    print("wrote %s: %d sequences, %d ops" % (OUT.relative_to(ROOT), len(doc["sequences"]), total))


if __name__ == "__main__":
    main()
