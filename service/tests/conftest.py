"""Real processes for the service suites: redis-server, `keyroute serve`, the Rust
example worker, and pyzmq clients and Python workers (keyroute.serve, from the keyroute
package `make serve-venv` installs from this tree: its frames are core's codec, through
the native module). Every process a test starts is stopped by the test."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Dict, Iterator, List, Optional

import pytest

from keyroute import serve as kserve

ROOT = Path(__file__).resolve().parents[2]

TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
KEYROUTE = Path(os.environ.get("KEYROUTE_BIN", TARGET / "release" / "keyroute"))
WORKER = Path(os.environ.get("KEYROUTE_WORKER_BIN", TARGET / "release" / "examples" / "worker"))


def free_port() -> int:
    """A free 127.0.0.1 port (and its +10000 cluster bus port)."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 < 65536:
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            return port


def wait_for(pred: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


class Serve:
    """A `keyroute serve` process on free ports."""

    def __init__(self, *args: str, redis: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                 curve: Optional["kserve.Curve"] = None) -> None:
        self.curve = curve  # the keys of the client that checks it is up, and of client()
        self.port = free_port()
        self.wport = free_port()
        self.mport = free_port()
        self.bind = f"tcp://127.0.0.1:{self.port}"
        self.workers = f"tcp://127.0.0.1:{self.wport}"
        cmd = [str(KEYROUTE), "serve", "--bind", self.bind, "--workers-bind", self.workers,
               "--metrics", f"127.0.0.1:{self.mport}", *args]
        if redis:
            cmd += ["--redis", redis]
        e = dict(os.environ, KEYROUTE_LOG=os.environ.get("KEYROUTE_LOG", "info"), **(env or {}))
        self.log_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"keyroute-serve-{self.port}.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, env=e)
        wait_for(self._up, 20, f"keyroute serve on {self.bind}")

    def _up(self) -> bool:
        if self.proc.poll() is not None:
            raise AssertionError(f"keyroute serve exited {self.proc.returncode}: {self.log_path.read_text()}")
        try:
            with kserve.Client(self.bind, timeout_s=0.2, curve=self.curve) as c:
                return c.request("ping").header.msg_type == 0x8001
        except TimeoutError:
            return False

    def client(self, timeout_s: float = 10.0) -> kserve.Client:
        return kserve.Client(self.bind, timeout_s=timeout_s, curve=self.curve)

    def metrics(self) -> Dict[str, float]:
        import urllib.request

        text = urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/metrics", timeout=5).read().decode()
        out: Dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS")

    def log_text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.log.close()


@pytest.fixture
def serve_factory() -> Iterator[Callable[..., Serve]]:
    made: List[Serve] = []

    def make(*args: str, **kw: object) -> Serve:
        s = Serve(*args, **kw)  # type: ignore[arg-type]
        made.append(s)
        return s

    yield make
    for s in made:
        s.stop(signal.SIGKILL)


class PyWorker:
    """A Python LoaderWorker in a thread, recording its loads."""

    def __init__(self, endpoint: str, kinds: List[str], delay: float = 0.0, capacity: int = 1,
                 fn: Optional[Callable[[str, str], bytes]] = None, curve: Optional["kserve.Curve"] = None) -> None:
        self.calls: List[tuple] = []
        self.active: Dict[str, int] = {}
        self.max_active: Dict[str, int] = {}
        self.lock = threading.Lock()
        self.delay = delay
        self.release = threading.Event()

        def load(client: str, kind: str) -> bytes:
            with self.lock:
                self.calls.append((client, kind, time.monotonic()))
                self.active[kind] = self.active.get(kind, 0) + 1
                self.max_active[kind] = max(self.max_active.get(kind, 0), self.active[kind])
            try:
                if fn is not None:
                    return fn(client, kind)
                time.sleep(self.delay)
                return f"py:{client}:{kind}".encode()
            finally:
                with self.lock:
                    self.active[kind] -= 1

        self.worker = kserve.LoaderWorker(endpoint, kinds, load, capacity=capacity, heartbeat_s=0.2, curve=curve)
        self.thread = threading.Thread(target=self.worker.run, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.worker.stop()
        self.thread.join(10)


@pytest.fixture
def py_workers() -> Iterator[Callable[..., PyWorker]]:
    made: List[PyWorker] = []

    def make(*a: object, **kw: object) -> PyWorker:
        w = PyWorker(*a, **kw)  # type: ignore[arg-type]
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop()


class RustWorker:
    def __init__(self, endpoint: str, kinds: str, delay_ms: int = 0, capacity: int = 1,
                 env: Optional[Dict[str, str]] = None) -> None:
        self.proc = subprocess.Popen([str(WORKER), endpoint, kinds, str(delay_ms), str(capacity)],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     env=dict(os.environ, **(env or {})))
        self.lines: List[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.strip())

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def rust_workers() -> Iterator[Callable[..., RustWorker]]:
    made: List[RustWorker] = []

    def make(*a: object, **kw: object) -> RustWorker:
        w = RustWorker(*a, **kw)  # type: ignore[arg-type]
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop(signal.SIGKILL)


class Redis:
    def __init__(self, port: Optional[int] = None, *extra: str) -> None:
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}"
        self.extra = extra
        self.dir = tempfile.mkdtemp(prefix="keyroute-serve-redis-")
        self.proc: Optional[subprocess.Popen] = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.dir, *self.extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(self.ping, 10, f"redis-server on {self.port}")

    def cli(self, *args: str) -> str:
        return subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()

    def ping(self) -> bool:
        try:
            return self.cli("PING") == "PONG"
        except subprocess.TimeoutExpired:
            return False

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def redis_server() -> Iterator[Redis]:
    r = Redis()
    yield r
    r.remove()
