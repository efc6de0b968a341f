#!/usr/bin/env python3
"""Generate tests/vectors/slot/redis_keyslot.json from a real redis-server.

Starts its own `redis-server --cluster-enabled yes` on a free 127.0.0.1 port (the cluster
bus port, port+10000, must be free too) in a temporary directory, asks it
`CLUSTER KEYSLOT <key>` for several thousand keys over binary-safe RESP, writes the
answers, and stops the server.

Keys come from a seeded RNG, so the output is the same on every run (for the same
redis-server). Python 3 standard library only; needs `redis-server` on PATH
(Debian: `apt-get install -y redis-server`).

Usage:  python3 tests/vectors/gen/slot/generate.py [--out PATH] [--redis-server PATH]
"""

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
DEFAULT_OUT = os.path.join(REPO, "tests", "vectors", "slot", "redis_keyslot.json")
GENERATOR = "tests/vectors/gen/slot/generate.py"
SEED = 0x5107_C0DE


# --------------------------------------------------------------------------- RESP client


class Resp:
    """A minimal binary-safe RESP2 client with pipelining."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    @staticmethod
    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("redis-server closed the connection")
        self.buf += chunk

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2 :]
        return data

    def read(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RuntimeError("redis error: " + rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError("unexpected RESP reply: %r" % line)

    def call(self, *args):
        self.sock.sendall(self.encode(args))
        return self.read()

    def pipeline(self, commands):
        self.sock.sendall(b"".join(self.encode(c) for c in commands))
        return [self.read() for _ in commands]


# --------------------------------------------------------------------------- server


def port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_port():
    """A port p with p and p+10000 (the cluster bus) free on 127.0.0.1."""
    picker = random.SystemRandom()
    for _ in range(200):
        p = picker.randrange(20000, 55000)
        if port_free(p) and port_free(p + 10000):
            return p
    raise RuntimeError("no free port pair (p, p+10000) found on 127.0.0.1")


def start_server(binary, workdir):
    port = free_cluster_port()
    argv = [
        binary,
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--cluster-enabled", "yes",
        "--cluster-config-file", os.path.join(workdir, "nodes.conf"),
        "--dir", workdir,
        "--save", "",
        "--appendonly", "no",
        "--daemonize", "no",
        "--logfile", os.path.join(workdir, "redis.log"),
    ]
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        if proc.poll() is not None:
            log = open(os.path.join(workdir, "redis.log"), errors="replace").read()
            raise RuntimeError("redis-server exited (status %s):\n%s" % (proc.returncode, log))
        try:
            conn = Resp(port)
            if conn.call("PING") == "PONG":
                return proc, conn
            conn.close()
        except OSError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("redis-server did not answer PING within 10 s")
        time.sleep(0.05)


def stop_server(proc, conn):
    try:
        conn.sock.sendall(Resp.encode(["SHUTDOWN", "NOSAVE"]))
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    conn.close()


# --------------------------------------------------------------------------- keys


EDGE_CASES = [
    b"", b"{", b"}", b"{}", b"}{", b"{}{a}", b"{{a}}", b"a}{b}", b"foo{}{bar}",
    b"foo{bar}{zap}", b"{a", b"}a{", b"a{", b"a}", b"{a}", b"{}a", b"a{}", b"{{}}",
    b"{{}", b"{}}", b"}}{{", b"{}{}", b"{ }", b"{\x00}", b"{\xff}", b"\x00", b"\xff",
    b"{a}{b}", b"{b}{a}", b"x{y}z", b"{user1000}.following", b"{user1000}.followers",
    b"foo", b"bar", b"baz", b"123456789", b"{123456789}", b"a{123456789}b",
    b"{{{a}}}", b"{a{b}c}", b"}{a}", b"{}}{a}", b"{\r\n}", b"\r\n", b" ", b"{ a }",
    "{ü}".encode(), "{日本}語".encode(), "日本{語}".encode(), "{}{ü}".encode(),
    "\U0001F600".encode(), "{\U0001F600}x".encode(), "x{\U0001F600}".encode(),
    b"{" * 100, b"}" * 100, b"{}" * 50, b"a" * 1024, b"{a}" + b"b" * 1021,
    b"b" * 1021 + b"{a}", b"{" + b"x" * 1022 + b"}",
]

BRACE_BIASED = [ord("{"), ord("}"), 0x00, 0xFF, 0x7B ^ 0x80, 0x7D ^ 0x80, 0x0A, 0x0D]
PIECES = [b"{", b"}", b"{}", b"}{", b"a", b"foo", b"bar", b":", b"\x00", b"\xff", b"",
          "ü".encode(), "日".encode()]


def random_bytes(rng, n, brace_bias):
    out = bytearray()
    for _ in range(n):
        if rng.random() < brace_bias:
            out.append(rng.choice(BRACE_BIASED))
        else:
            out.append(rng.randrange(256))
    return bytes(out)


def random_text(rng, n):
    ranges = [(0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x3040, 0x30FF),
              (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x1F300, 0x1F64F), (0x10000, 0x10FFF)]
    chars = []
    for _ in range(n):
        lo, hi = rng.choice(ranges)
        chars.append(chr(rng.randint(lo, hi)))
    return "".join(chars)


def generate_keys():
    rng = random.Random(SEED)
    keys = list(EDGE_CASES)
    # Every key of length <= 3 over a brace-heavy alphabet.
    alphabet = [b"{", b"}", b"a", b"\x00", b"\xff"]
    frontier = [b""]
    for _ in range(3):
        frontier = [k + c for k in frontier for c in alphabet]
        keys.extend(frontier)
    # Readable keys like applications use.
    keys.extend(b"key:%d" % i for i in range(300))
    keys.extend(b"{user:%d}:cart" % i for i in range(100))
    # Random binary keys, plain and brace-biased.
    for _ in range(1500):
        keys.append(random_bytes(rng, rng.randrange(0, 65), 0.0))
    for _ in range(1500):
        keys.append(random_bytes(rng, rng.randrange(0, 65), 0.3))
    # Keys assembled from brace pieces and text.
    for _ in range(1200):
        k = b"".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 10)))
        keys.append(k)
    # UTF-8 text, with and without tags.
    for _ in range(600):
        text = random_text(rng, rng.randrange(0, 24))
        form = rng.randrange(4)
        if form == 1:
            text = "{" + text + "}"
        elif form == 2:
            cut = rng.randrange(len(text) + 1)
            text = text[:cut] + "{" + random_text(rng, rng.randrange(0, 4)) + "}" + text[cut:]
        elif form == 3:
            text = text + "{}" + "{" + random_text(rng, 3) + "}"
        keys.append(text.encode())
    # Long keys (KiB), tags at the start, middle, end, or none; one of 16 KiB.
    for i in range(40):
        n = rng.randrange(1024, 4097)
        body = random_bytes(rng, n, 0.0).replace(b"{", b"(").replace(b"}", b")")
        where = i % 4
        tag = b"{" + random_bytes(rng, rng.randrange(1, 8), 0.0).replace(b"}", b")") + b"}"
        if where == 1:
            body = tag + body
        elif where == 2:
            body = body[: n // 2] + tag + body[n // 2 :]
        elif where == 3:
            body = body + tag
        keys.append(body)
    keys.append(bytes(rng.randrange(256) for _ in range(16384)))
    # Unique, in first-seen order.
    seen = set()
    unique = []
    for k in keys:
        if k not in seen:
            seen.add(k)
            unique.append(k)
    return unique


# --------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT, help="output file (default: %(default)s)")
    ap.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server",
                    help="redis-server binary (default: from PATH)")
    args = ap.parse_args()
    if not shutil.which(args.redis_server) and not os.path.exists(args.redis_server):
        sys.exit("redis-server not found; install it: apt-get install -y redis-server")

    keys = generate_keys()
    with tempfile.TemporaryDirectory(prefix="keyroute-slot-gen-") as workdir:
        proc, conn = start_server(args.redis_server, workdir)
        try:
            info = conn.call("INFO", "server").decode()
            version = next(l.split(":", 1)[1].strip() for l in info.splitlines()
                           if l.startswith("redis_version:"))
            enabled = conn.call("INFO", "cluster").decode()
            if "cluster_enabled:1" not in enabled:
                raise RuntimeError("redis-server did not start in cluster mode")
            slots = []
            for i in range(0, len(keys), 500):
                batch = keys[i : i + 500]
                slots.extend(conn.pipeline([["CLUSTER", "KEYSLOT", k] for k in batch]))
        finally:
            stop_server(proc, conn)

    for s in slots:
        if not isinstance(s, int) or not 0 <= s < 16384:
            raise RuntimeError("unexpected CLUSTER KEYSLOT answer %r" % (s,))
    cases = [json.dumps({"key_hex": k.hex(), "slot": s}) for k, s in zip(keys, slots)]
    header = {
        "generator": GENERATOR,
        "peer": "redis-server %s CLUSTER KEYSLOT" % version,
    }
    head = json.dumps(header)[:-1]
    text = head + ', "cases": [\n' + ",\n".join(cases) + "\n]}\n"
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="ascii", newline="\n") as f:
        f.write(text)
    print("wrote %d cases from redis-server %s to %s" % (len(cases), version, args.out))


if __name__ == "__main__":
    main()
