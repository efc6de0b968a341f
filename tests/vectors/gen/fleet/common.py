"""Shared helpers for the fleet vector generators (tests/vectors/gen/fleet/).

Keys are generated, never typed: a few probes, "key-<i>", and random printable-ASCII
and Unicode strings from a seeded RNG, so every run gives the same list.  Each peer
family filters the list to what its protocol can carry (an HTTP header value, a
memcached key) and says so in its file's notes.

Output: one JSON file per peer/config family in the output directory (default
tests/vectors/fleet/), written by write_vector() with a fixed layout so a second run
is byte-identical.
"""

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
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
OUT_DIR = os.environ.get("FLEET_OUT") or os.path.join(REPO, "tests", "vectors", "fleet")
BUILD_DIR = os.path.join(REPO, "build", "fleet-vectors")

SEED = 20260616

# Unicode ranges for random keys (no surrogates, no control characters).
_UNICODE_RANGES = [
    (0x00A1, 0x00FF),    # Latin-1 supplement
    (0x0391, 0x03C9),    # Greek
    (0x0410, 0x044F),    # Cyrillic
    (0x3041, 0x3096),    # Hiragana
    (0x4E00, 0x9FFF),    # CJK unified ideographs
    (0xAC00, 0xD7A3),    # Hangul syllables
    (0x1F300, 0x1F64F),  # emoji (4-byte UTF-8, 2 UTF-16 units)
    (0x10000, 0x1007F),  # Linear B (4-byte UTF-8)
]

PROBES = ["test", "apple", "0", "foo", "bar", "a", "user:1000", "{tag}key", "key{tag}",
          "ü", "日本語", "🎉", "Zürich/straße", "a b"]


def make_keys(n_seq=200, n_ascii=60, n_unicode=60, seed=SEED, empty=True):
    """The deterministic key list: probes, key-0.., random ASCII, random Unicode."""
    rng = random.Random(seed)
    keys = ([""] if empty else []) + list(PROBES)
    keys += ["key-%d" % i for i in range(n_seq)]
    printable = [chr(c) for c in range(0x21, 0x7F)]
    for _ in range(n_ascii):
        keys.append("".join(rng.choice(printable) for _ in range(rng.randint(1, 24))))
    for _ in range(n_unicode):
        chars = []
        for _ in range(rng.randint(1, 10)):
            if rng.random() < 0.3:
                chars.append(rng.choice(printable))
            else:
                lo, hi = rng.choice(_UNICODE_RANGES)
                chars.append(chr(rng.randint(lo, hi)))
        keys.append("".join(chars))
    seen, out = set(), []
    for k in keys:
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


def header_safe(keys):
    """Keys an HTTP header value carries unchanged: non-empty, no space at either end."""
    return [k for k in keys if k and k == k.strip(" \t")]


def memcache_safe(keys):
    """Keys the memcached text protocol carries: non-empty, no space/control, <= 250 bytes."""
    return [k for k in keys if k and " " not in k and len(k.encode()) <= 250]


def deb_version(pkg):
    out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                         capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout:
        raise SystemExit("generator: Debian package %s is not installed" % pkg)
    return out.stdout.strip()


def hx(s):
    """A string as UTF-8 hex for the drivers' line protocols ("-" = empty)."""
    return s.encode().hex() or "-"


def unhx(h):
    """The string of hx()."""
    return "" if h == "-" else bytes.fromhex(h).decode()


def java_version():
    """The first line of `java -version` (the JDK the Java drivers run on)."""
    out = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    return out.splitlines()[0].strip()


def rel(path):
    return os.path.relpath(os.path.abspath(path), REPO)


# ---------------------------------------------------------------- JSON layout

def _dump(v):
    return json.dumps(v, ensure_ascii=False)


def _is_scalar(v):
    return not isinstance(v, (list, dict))


def _fmt(v, indent):
    pad = " " * indent
    inner = " " * (indent + 2)
    if _is_scalar(v):
        return _dump(v)
    if isinstance(v, list):
        if not v:
            return "[]"
        one = _dump(v)
        if all(_is_scalar(x) for x in v) and len(one) <= 100 and "\n" not in one:
            return one
        if all(isinstance(x, list) and all(_is_scalar(y) for y in x) for x in v):
            items = [_dump(x) for x in v]
        else:
            items = [_fmt(x, indent + 2) for x in v]
        return "[\n" + ",\n".join(inner + i for i in items) + "\n" + pad + "]"
    if not v:
        return "{}"
    one = _dump(v)
    if all(_is_scalar(x) for x in v.values()) and len(one) <= 100:
        return one
    items = ["%s: %s" % (_dump(k), _fmt(x, indent + 2)) for k, x in v.items()]
    return "{\n" + ",\n".join(inner + i for i in items) + "\n" + pad + "}"


def write_vector(name, generator, peer, source, notes, cases, extra=None):
    """Write <OUT_DIR>/<name>.json: {generator, peer, source, notes, [extra...], cases}."""
    for c in cases:
        if "keys" in c and "expect" in c:
            assert len(c["keys"]) == len(c["expect"]), (name, c.get("name"))
    doc = {"generator": rel(generator), "peer": peer, "source": source, "notes": notes}
    if extra:
        doc.update(extra)
    doc["cases"] = cases
    text = _fmt(doc, 0) + "\n"
    assert json.loads(text) == doc
    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, name + ".json")
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    nkeys = sum(len(c.get("keys", [])) for c in cases)
    print("wrote %s (%d cases, %d keys, %d bytes)"
          % (rel(path), len(cases), nkeys, len(text.encode())), flush=True)
    return path


# ---------------------------------------------------------------- processes

class Procs:
    """Processes this generator started; stop() ends exactly those, by pid."""

    def __init__(self):
        self.procs = []

    def start(self, argv, **kw):
        p = subprocess.Popen(argv, **kw)
        self.procs.append(p)
        return p

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    if p.stdin:
                        p.stdin.close()
                except OSError:
                    pass
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []


def start_backends(procs, spec, workdir):
    """Start backends.py for SPEC (a list of listener dicts); waits for 'ready'."""
    path = os.path.join(workdir, "backends.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    p = procs.start([sys.executable, os.path.join(HERE, "backends.py"), path],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    line = p.stdout.readline()
    if line.strip() != b"ready":
        raise SystemExit("backends did not start (port in use?): %r" % line)
    return p


def wait_port(host, port, timeout=10.0, proc=None):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise SystemExit("process exited with %s before listening on %s:%d"
                             % (proc.returncode, host, port))
        s = socket.socket(fam, socket.SOCK_STREAM)
        try:
            s.settimeout(0.5)
            s.connect((host, port))
            return
        except OSError:
            time.sleep(0.05)
        finally:
            s.close()
    raise SystemExit("nothing listens on %s:%d after %.0fs" % (host, port, timeout))


def check_free(addrs):
    """Fail early, with a clear message, if a fixed address is taken."""
    for host, port in addrs:
        fam = socket.AF_INET6 if ":" in host else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as e:
            raise SystemExit("generator: %s:%d is in use (%s); the vectors hash fixed "
                             "addresses, stop whatever holds it" % (host, port, e))
        finally:
            s.close()


class HttpClient:
    """A minimal keep-alive HTTP/1.1 client that sends bytes exactly as given."""

    def __init__(self, host, port):
        self.addr = (host, port)
        self.sock = None
        self.buf = b""

    def _connect(self):
        self.sock = socket.create_connection(self.addr, timeout=10)
        self.buf = b""

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None

    def _read_until(self, marker):
        while marker not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        i = self.buf.index(marker) + len(marker)
        out, self.buf = self.buf[:i], self.buf[i:]
        return out

    def _read_n(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def get(self, target, headers=()):
        """GET target (bytes) with headers [(bytes, bytes)]; returns (status, body)."""
        req = b"GET " + target + b" HTTP/1.1\r\nHost: fleet\r\n"
        for k, v in headers:
            req += k + b": " + v + b"\r\n"
        req += b"\r\n"
        for attempt in range(2):
            if self.sock is None:
                self._connect()
            try:
                self.sock.sendall(req)
                head = self._read_until(b"\r\n\r\n")
                break
            except (ConnectionError, OSError):
                self.close()
                if attempt:
                    raise
        lines = head.split(b"\r\n")
        status = int(lines[0].split()[1])
        length, close = 0, False
        for line in lines[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"content-length":
                length = int(v)
            if k.strip().lower() == b"connection" and v.strip().lower() == b"close":
                close = True
        body = self._read_n(length)
        if close:
            self.close()
        return status, body


def tmpdir(prefix):
    os.makedirs(BUILD_DIR, exist_ok=True)
    return tempfile.mkdtemp(prefix=prefix, dir=BUILD_DIR)


def rmtree(path):
    shutil.rmtree(path, ignore_errors=True)
