"""keyroute.LeastUsed and keyroute.Leases against a real redis-server.

Each test module run starts its own redis-server on a free 127.0.0.1 port (no
persistence, temporary directory) and stops it afterwards. Without a redis-server on
PATH the tests are skipped, unless KEYROUTE_REQUIRE_REDIS=1 (then they fail).
"""

from __future__ import annotations

import collections
import os
import pickle
import shutil
import signal
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis

import keyroute
from conftest import load, vector_files


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    port: int
    dir: Path

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                self.proc.kill()
                self.proc.wait()


def start_server(tmp: Path, port: int | None = None) -> Server:
    exe = shutil.which("redis-server")
    if exe is None:
        if os.environ.get("KEYROUTE_REQUIRE_REDIS") == "1":
            pytest.fail("redis-server not found on PATH (KEYROUTE_REQUIRE_REDIS=1)")
        pytest.skip("redis-server not found on PATH")
    last = ""
    for _ in range(5):
        p = port or _free_port()
        proc = subprocess.Popen(
            [exe, "--port", str(p), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(tmp), "--protected-mode", "no", "--loglevel", "warning"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        server = Server(proc, p, tmp)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if server.client().ping():
                    return server
            except redis.ConnectionError:
                time.sleep(0.02)
        server.stop()
        last = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
    pytest.fail(f"redis-server did not start: {last}")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    s = start_server(tmp_path_factory.mktemp("redis"))
    yield s
    s.stop()


@pytest.fixture()
def own_server(tmp_path: Path) -> Iterator[Server]:
    """A server of its own, for tests that stop, pause or kill it."""
    s = start_server(tmp_path)
    yield s
    s.stop()


@pytest.fixture()
def key() -> str:
    """A fresh pool key (hash-tagged) per test."""
    return "{t-" + uuid.uuid4().hex + "}:pool"


def test_empty_pool_picks_none(server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(server.url, key)
    assert lu.pick() is None
    assert lu.pick(raw=True) is None
    assert lu.pick_many(5) == []
    assert lu.counts() == {} and lu.removed() == {}
    assert lu.key == key.encode() and lu.side_key == key.encode() + b":removed"
    assert lu.timeout == 2.0 and key in repr(lu)


def test_basic_str_and_bytes(server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(server.url, key, timeout=1.5)
    lu.connect()
    assert lu.seed(["proxy-b", b"proxy-a"]) == 2
    assert lu.seed(["proxy-a"]) == 0
    assert lu.pick() == "proxy-a"
    assert lu.pick(raw=True) == b"proxy-b"
    assert lu.pick_many(4) == ["proxy-a", "proxy-b", "proxy-a", "proxy-b"]
    assert lu.counts() == {"proxy-a": 3, "proxy-b": 3}
    assert lu.remove("proxy-a") == 3
    assert lu.remove("proxy-a") is None
    assert lu.removed() == {"proxy-a": 3}
    assert lu.removed(raw=True) == {b"proxy-a": 3}
    assert lu.pick() == "proxy-b"
    assert lu.restore("proxy-a", "keep") == 3
    assert lu.counts(raw=True) == {b"proxy-a": 3, b"proxy-b": 4}
    assert lu.remove("proxy-b") == 4 and lu.restore("proxy-b") == 3  # at_minimum
    # A binary member: str results refuse it (the pick is counted), raw ones do not.
    assert lu.seed([b"\xff"], 0) == 1
    with pytest.raises(UnicodeDecodeError):
        lu.pick()
    assert lu.pick(raw=True) == b"\xff"
    assert lu.counts(raw=True)[b"\xff"] == 2


# --- the shared vectors, replayed on a real Redis and on the in-memory Pool ----------

POOL_FILES = vector_files("pool")


def _pool_ids() -> list[tuple[Path, str]]:
    return [(p, s["name"]) for p in POOL_FILES for s in load(p)["sequences"]]


def _state(obj: Any) -> tuple[list[list[Any]], list[list[Any]]]:
    counts = obj.counts(raw=True) if isinstance(obj, keyroute.LeastUsed) else obj.counts()
    removed = obj.removed(raw=True) if isinstance(obj, keyroute.LeastUsed) else obj.removed()
    return ([[m.hex(), c] for m, c in counts.items()], [[m.hex(), c] for m, c in removed.items()])


@pytest.mark.parametrize("path,name", _pool_ids(), ids=lambda x: getattr(x, "stem", x))
def test_pool_vector_on_redis(server: Server, path: Path, name: str) -> None:
    seq = next(s for s in load(path)["sequences"] if s["name"] == name)
    # The vector's own key shape, made unique: "{tag}:pool" -> "{tag-<uuid>}:pool".
    pool_key = bytes.fromhex(seq["pool_key_hex"])
    unique = uuid.uuid4().hex.encode()
    key = pool_key.replace(b"}", b"-" + unique + b"}", 1) if b"}" in pool_key else (
        pool_key + b"-" + unique)
    lu = keyroute.LeastUsed(server.url, key)
    mem = keyroute.Pool()
    for i, op in enumerate(seq["ops"]):
        where = f"{name} op {i} {op['op']}"
        kind = op["op"]
        if "error" in op:
            assert kind == "seed", where
            args = ([bytes.fromhex(m) for m in op["members_hex"]], op["initial"], op["overwrite"])
            with pytest.raises(keyroute.PoolError):
                lu.seed(*args)
            with pytest.raises(keyroute.PoolError):
                mem.seed(*args)
        elif kind == "seed":
            args = ([bytes.fromhex(m) for m in op["members_hex"]], op["initial"], op["overwrite"])
            assert lu.seed(*args) == mem.seed(*args) == op["result"], where
        elif kind == "pick":
            got = lu.pick(raw=True)
            want = mem.pick()
            assert got == want, where
            assert (got.hex() if got is not None else None) == op.get("result_hex"), where
        elif kind == "pick_many":
            got_many = lu.pick_many(op["n"], raw=True)
            assert got_many == mem.pick_many(op["n"]), where
            assert [m.hex() for m in got_many] == (op.get("result_hex") or []), where
        elif kind == "remove":
            m = bytes.fromhex(op["member_hex"])
            assert lu.remove(m) == mem.remove(m) == op["result"], where
        elif kind == "restore":
            m = bytes.fromhex(op["member_hex"])
            assert lu.restore(m, op["mode"]) == mem.restore(m, op["mode"]) == op["result"], where
        else:
            pytest.fail(f"{where}: unknown op")
        assert _state(lu) == _state(mem) == (op["counts"], op["removed"]), where


# --- concurrency, script cache, failures ---------------------------------------------


def test_threads_keep_counts_exact(server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(server.url, key)
    members = [f"proxy-{i}" for i in range(7)]
    lu.seed(members)
    threads, per_thread = 8, 300
    picked: list[list[str]] = [[] for _ in range(threads)]
    barrier = threading.Barrier(threads)

    def work(i: int) -> None:
        barrier.wait()
        for j in range(per_thread):
            if j % 50 == 0:
                picked[i].extend(lu.pick_many(10))
            else:
                m = lu.pick()
                assert m is not None
                picked[i].append(m)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    total = sum(len(p) for p in picked)
    counts = lu.counts()
    assert sum(counts.values()) == total
    assert max(counts.values()) - min(counts.values()) <= 1
    assert collections.Counter(m for p in picked for m in p) == counts


def test_script_flush_is_transparent(server: Server, key: str) -> None:
    r = server.client()
    lu = keyroute.LeastUsed(server.url, key)
    lu.seed(["a", "b", "c"])
    assert lu.pick() == "a"
    r.script_flush()
    assert lu.pick() == "b"
    r.script_flush()
    assert lu.pick_many(4) == ["c", "a", "b", "c"]
    # Flushes racing with single and pipelined picks: nothing lost, nothing doubled.
    stop = threading.Event()

    def flusher() -> None:
        while not stop.is_set():
            r.script_flush()
            time.sleep(0.001)

    t = threading.Thread(target=flusher)
    t.start()
    try:
        n = 0
        for _ in range(200):
            assert lu.pick() is not None
            n += 1
        for _ in range(5):
            n += len(lu.pick_many(700))
    finally:
        stop.set()
        t.join()
    counts = lu.counts()
    assert sum(counts.values()) == 6 + n == 6 + 200 + 5 * 700
    assert max(counts.values()) - min(counts.values()) <= 1


def test_server_down_is_redis_error() -> None:
    lu = keyroute.LeastUsed(f"redis://127.0.0.1:{_free_port()}", "{p}:pool", timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(keyroute.RedisError) as e:
        lu.pick()
    assert time.monotonic() - t0 < 3
    assert isinstance(e.value, keyroute.KeyrouteError)
    assert "pick" in str(e.value) or "connect" in str(e.value)
    with pytest.raises(keyroute.RedisError):
        lu.connect()
    leases = keyroute.Leases(f"redis://127.0.0.1:{_free_port()}", "{p}:busy", timeout=0.5)
    with pytest.raises(keyroute.RedisError):
        leases.acquire(1.0)


def test_stalled_server_times_out_without_holding_the_gil(own_server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(own_server.url, key, timeout=0.4)
    lu.seed(["a"])
    assert lu.pick() == "a"
    own_server.proc.send_signal(signal.SIGSTOP)
    try:
        result: list[BaseException | str | None] = []

        def pick() -> None:
            try:
                result.append(lu.pick())
            except BaseException as err:  # noqa: BLE001
                result.append(err)

        t0 = time.monotonic()
        t = threading.Thread(target=pick)
        t.start()
        spins = 0
        while t.is_alive() and time.monotonic() - t0 < 0.2:
            spins += 1  # runs only if the pick released the GIL
        t.join(5)
        elapsed = time.monotonic() - t0
        assert not t.is_alive()
        assert spins > 1000
        assert len(result) == 1 and isinstance(result[0], keyroute.RedisError), result
        assert "pick" in str(result[0])
        assert elapsed < 3
    finally:
        own_server.proc.send_signal(signal.SIGCONT)
    # The next call reconnects.
    assert lu.pick() == "a"


def test_reconnects_after_restart(tmp_path: Path, key: str) -> None:
    s = start_server(tmp_path)
    try:
        lu = keyroute.LeastUsed(s.url, key, timeout=1.0)
        lu.seed(["a", "b"])
        assert lu.pick() == "a"
        s.stop()
        with pytest.raises(keyroute.RedisError):
            lu.pick()
        s = start_server(tmp_path, port=s.port)
        assert lu.pick() is None  # a new, empty server
        lu.seed(["c"])
        assert lu.pick() == "c"
    finally:
        s.stop()


def test_errors(server: Server, key: str) -> None:
    for bad in ("", b"", "a}b"):
        with pytest.raises(ValueError):
            keyroute.LeastUsed(server.url, bad)
        with pytest.raises(keyroute.PoolError):
            keyroute.Leases(server.url, bad)
    with pytest.raises(TypeError):
        keyroute.LeastUsed(server.url, 42)  # type: ignore[arg-type]
    for t in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            keyroute.LeastUsed(server.url, key, timeout=t)
    with pytest.raises(ValueError):
        keyroute.LeastUsed("http://nope", key)
    lu = keyroute.LeastUsed(server.url, key)
    with pytest.raises(ValueError):
        lu.restore("a", "zero")  # type: ignore[arg-type]
    with pytest.raises(keyroute.PoolError):
        lu.seed(["a"], keyroute.MAX_EXACT_COUNT + 1)
    with pytest.raises(TypeError):
        lu.seed("ab")
    with pytest.raises(TypeError):
        lu.remove(1)  # type: ignore[arg-type]
    server.client().set(key, "not a sorted set")
    with pytest.raises(keyroute.RedisError, match="WRONGTYPE"):
        lu.pick()
    with pytest.raises(keyroute.RedisError, match="WRONGTYPE"):
        lu.pick_many(3)
    leases = keyroute.Leases(server.url, key)
    with pytest.raises(ValueError):
        leases.acquire(0)
    with pytest.raises(keyroute.RedisError):
        leases.acquire(1.0)


# --- leases --------------------------------------------------------------------------


def test_leases(server: Server, key: str) -> None:
    leases = keyroute.Leases(server.url, key)
    assert leases.acquire(5.0) is None
    assert leases.seed(["b", "a"]) == 2
    assert leases.seed(["a"]) == 0
    now_ms = int(time.time() * 1000)
    a = leases.acquire(5.0)
    b = leases.acquire(5.0)
    assert a is not None and b is not None
    assert (a.member, b.member) == ("a", "b") and a.member_bytes == b"a"
    assert a.id != b.id
    assert abs(a.deadline_ms - (now_ms + 5000)) < 2000
    assert leases.in_flight() == {"a": 1, "b": 1}
    assert leases.in_flight(raw=True) == {b"a": 1, b"b": 1}
    assert leases.outstanding() == 2
    a2 = leases.acquire(5.0)
    assert a2 is not None and a2.member == "a"
    assert leases.release(a) == "released"
    assert leases.release(a) == "already_released_or_expired"
    assert leases.in_flight() == {"a": 1, "b": 1}
    # Reclaim at a time past every deadline: b and a2 come back, once.
    got = leases.reclaim(now_ms=b.deadline_ms + 60_000)
    assert sorted(lease.id for lease in got) == sorted([b.id, a2.id])
    assert leases.reclaim(now_ms=b.deadline_ms + 60_000) == []
    assert leases.release(b) == "already_released_or_expired"
    assert leases.in_flight() == {"a": 0, "b": 0}
    # A lease past its deadline but not reclaimed: "expired", once.
    short = leases.acquire(0.05)
    assert short is not None
    time.sleep(0.15)
    assert leases.release(short) == "expired"
    assert leases.release(short) == "already_released_or_expired"
    # Server-clock reclaim.
    gone = leases.acquire(0.02)
    assert gone is not None
    time.sleep(0.1)
    assert leases.reclaim() == [gone]
    # Remove: no new lease goes to it.
    assert leases.remove("a") is True and leases.remove("a") is False
    c = leases.acquire(1.0)
    assert c is not None and c.member == "b"
    assert leases.release(c) == "released"
    # Lease values.
    same = keyroute.Lease("b", c.id, c.deadline_ms)
    assert same == c and hash(same) == hash(c) and c in {same}
    assert pickle.loads(pickle.dumps(c)) == c
    assert "deadline_ms" in repr(c) and key in repr(leases)
    assert len(leases.keys) == 4 and leases.keys[0] == key.encode()


def test_leases_threads(server: Server, key: str) -> None:
    leases = keyroute.Leases(server.url, key)
    leases.seed([f"w{i}" for i in range(4)])
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(100):
                lease = leases.acquire(10.0)
                assert lease is not None
                assert leases.release(lease) == "released"
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    ts = [threading.Thread(target=work) for _ in range(6)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    assert set(leases.in_flight().values()) == {0} and leases.outstanding() == 0


# --- agreement with redis-py running the same script -----------------------------------


def test_agrees_with_redis_py_register_script(server: Server, key: str) -> None:
    r = server.client()
    script = r.register_script(keyroute.LEAST_USED_SCRIPT)
    assert script.sha == keyroute.LEAST_USED_SHA1
    lu = keyroute.LeastUsed(server.url, key)
    mem = keyroute.Pool()
    members = [f"10.0.0.{i}:8080" for i in range(9)] + ["\u00e9t\u00e9", "a"]
    for i, m in enumerate(members):
        lu.seed([m], i % 3)
        mem.seed([m], i % 3)
    for i in range(300):
        if i % 2:
            got = script(keys=[key])
        else:
            got = lu.pick(raw=True)
        assert got == mem.pick(), i
    assert lu.counts(raw=True) == mem.counts()
    assert r.zrange(key, 0, -1, withscores=True) == [
        (m, float(c)) for m, c in mem.counts().items()
    ]
