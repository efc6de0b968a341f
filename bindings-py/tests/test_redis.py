"""keyroute.LeastUsed and keyroute.Leases against a real redis-server.

Each test module run starts its own redis-server on a free 127.0.0.1 port (no
persistence, temporary directory) and stops it afterwards. Without a redis-server on
PATH the tests are skipped, unless KEYROUTE_REQUIRE_REDIS=1 (then they fail).
"""

from __future__ import annotations

import collections
import contextlib
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
from test_vectors import check_pool_op


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
    password: str | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(
            host="127.0.0.1", port=self.port, socket_timeout=5, password=self.password
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                self.proc.kill()
                self.proc.wait()


def start_server(tmp: Path, port: int | None = None, password: str | None = None) -> Server:
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
             "--dir", str(tmp), "--protected-mode", "no", "--loglevel", "warning",
             *(["--requirepass", password] if password else [])],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )
        server = Server(proc, p, tmp, password)
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
    assert lu.pick_bytes() is None
    assert lu.pick_many(5) == [] and lu.pick_many_bytes(5) == []
    assert lu.counts() == {} and lu.removed() == {}
    assert lu.key == key.encode() and lu.side_key == key.encode() + b":removed"
    assert lu.timeout == 2.0 and key in repr(lu)


def test_basic_str_and_bytes(server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(server.url, key, timeout=1.5)
    lu.connect()
    assert lu.seed(["proxy-b", b"proxy-a"]) == 2
    assert lu.seed(["proxy-a"]) == 0
    assert lu.pick() == "proxy-a"
    assert lu.pick_bytes() == b"proxy-b"
    assert lu.pick_many(4) == ["proxy-a", "proxy-b", "proxy-a", "proxy-b"]
    assert lu.pick_many_bytes(2) == [b"proxy-a", b"proxy-b"]
    assert lu.counts() == {"proxy-a": 4, "proxy-b": 4}
    assert lu.remove("proxy-a") == 4
    assert lu.remove("proxy-a") is None
    assert lu.removed() == {"proxy-a": 4}
    assert lu.removed_bytes() == {b"proxy-a": 4}
    assert lu.pick() == "proxy-b"
    assert lu.restore("proxy-a", "keep") == 4
    assert lu.counts_bytes() == {b"proxy-a": 4, b"proxy-b": 5}
    assert lu.remove("proxy-b") == 5 and lu.restore("proxy-b") == 4  # at_minimum
    # A binary member: str results refuse it with BAD_UTF8 (the pick is counted), the
    # bytes variants do not.
    assert lu.seed([b"\xff"], 0) == 1
    with pytest.raises(keyroute.BadUtf8Error) as info:
        lu.pick()
    assert info.value.code == "BAD_UTF8" and "pick_bytes" in str(info.value)
    assert isinstance(info.value, UnicodeError)
    assert lu.pick_bytes() == b"\xff"
    assert lu.counts_bytes()[b"\xff"] == 2


def test_empty_members_refused_on_redis(server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(server.url, key)
    for call in (lambda: lu.seed(["a", ""]), lambda: lu.restore(""),
                 lambda: lu.restore(b"", "keep")):
        with pytest.raises(keyroute.PoolError) as info:
            call()
        assert info.value.code == "EMPTY_MEMBER"
    assert lu.counts() == {} and server.client().exists(key) == 0
    leases = keyroute.Leases(server.url, "{e-" + key + "}")
    with pytest.raises(keyroute.PoolError) as info:
        leases.seed(["w", ""])
    assert info.value.code == "EMPTY_MEMBER"


def test_pick_many_is_bounded_before_anything_is_sent(server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(server.url, key)
    lu.seed(["a", "b"])
    for n in (2**63, keyroute.MAX_PICKS_PER_CALL + 1, -1):
        with pytest.raises(keyroute.TooLargeError) as info:
            lu.pick_many(n)
        assert info.value.code == "TOO_LARGE"
        assert str(keyroute.MAX_PICKS_PER_CALL) in str(info.value)
    assert lu.counts() == {"a": 0, "b": 0}
    with pytest.raises(keyroute.BadTypeError):
        lu.pick_many(2.0)  # type: ignore[arg-type]


# --- the shared vectors, replayed on a real Redis and on the in-memory Pool ----------

POOL_FILES = vector_files("pool")


def _pool_ids() -> list[tuple[Path, str]]:
    return [(p, s["name"]) for p in POOL_FILES for s in load(p)["sequences"]]


def _state(obj: Any) -> tuple[list[list[Any]], list[list[Any]]]:
    counts, removed = obj.counts_bytes(), obj.removed_bytes()
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
        check_pool_op(lu, op, where)
        check_pool_op(mem, op, where)
        assert _state(lu) == _state(mem) == (op["counts"], op["removed"]), where


# --- concurrency, script cache, failures ---------------------------------------------


def test_threads_keep_counts_exact(server: Server, key: str) -> None:
    lu = keyroute.LeastUsed(server.url, key)
    members = [f"proxy-{i}" for i in range(7)]
    lu.seed(members)
    threads, per_thread = 8, 300
    picked: list[list[str]] = [[] for _ in range(threads)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(threads)

    def work(i: int) -> None:
        try:
            barrier.wait()
            for j in range(per_thread):
                if j % 50 == 0:
                    picked[i].extend(lu.pick_many(10))
                else:
                    m = lu.pick()
                    assert m is not None
                    picked[i].append(m)
        except BaseException as err:  # noqa: BLE001 - collected, asserted below
            errors.append(err)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert errors == []
    # Every thread made 294 single picks and 6 pick_many(10): 354 picks each.
    expected = threads * ((per_thread - per_thread // 50) + (per_thread // 50) * 10)
    total = sum(len(p) for p in picked)
    assert total == expected == 2832
    counts = lu.counts()
    assert sum(counts.values()) == expected
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


def test_server_down_is_a_connection_error() -> None:
    lu = keyroute.LeastUsed(f"redis://127.0.0.1:{_free_port()}", "{p}:pool", timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(keyroute.RedisConnectionError) as e:
        lu.pick()
    assert time.monotonic() - t0 < 3
    assert e.value.code == "REDIS_CONNECT"
    assert isinstance(e.value, ConnectionError) and isinstance(e.value, keyroute.RedisError)
    assert "connect" in str(e.value)
    with pytest.raises(keyroute.RedisConnectionError):
        lu.connect()
    leases = keyroute.Leases(f"redis://127.0.0.1:{_free_port()}", "{p}:busy", timeout=0.5)
    with pytest.raises(keyroute.RedisConnectionError):
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
        assert len(result) == 1 and isinstance(result[0], keyroute.RedisTimeoutError), result
        assert result[0].code == "REDIS_TIMEOUT" and isinstance(result[0], TimeoutError)
        assert "pick" in str(result[0]) and "timed out" in str(result[0])
        assert elapsed < 3
    finally:
        own_server.proc.send_signal(signal.SIGCONT)
    # The next call reconnects.
    assert lu.pick() == "a"


@contextlib.contextmanager
def stalled(server: Server) -> Iterator[None]:
    """The server stopped (SIGSTOP) while the block runs: connections are still accepted
    by the kernel, but nothing answers, as on a server stuck in a long command. (CLIENT
    PAUSE ALL does the same, but its end cannot be brought forward: CLIENT UNPAUSE waits
    for the pause too.)"""
    server.proc.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        server.proc.send_signal(signal.SIGCONT)


def _timed(call: Any) -> tuple[BaseException | None, float]:
    t0 = time.monotonic()
    try:
        call()
    except BaseException as err:  # noqa: BLE001 - returned to the caller
        return err, time.monotonic() - t0
    return None, time.monotonic() - t0


TIMEOUT = 0.5


def test_timeout_reads_as_timeout_and_takes_about_the_timeout(own_server: Server, key: str) -> None:
    """A paused server: a call on an open connection, a call that must reconnect first,
    and a first call of a new handle each fail with REDIS_TIMEOUT after about the
    configured timeout (not twice it)."""
    lu = keyroute.LeastUsed(own_server.url, key, timeout=TIMEOUT)
    lu.seed(["a", "b"])
    assert lu.pick() == "a"
    with stalled(own_server):
        cases = {
            "open connection": lu.pick,
            "reconnect first": lu.pick,  # the timeout above dropped the connection
            "new handle": keyroute.LeastUsed(own_server.url, key, timeout=TIMEOUT).pick,
            "leases": keyroute.Leases(own_server.url, key + "l", timeout=TIMEOUT).outstanding,
        }
        for what, call in cases.items():
            err, took = _timed(call)
            assert isinstance(err, keyroute.RedisTimeoutError), (what, err)
            assert err.code == "REDIS_TIMEOUT" and isinstance(err, TimeoutError), what
            assert "timed out" in str(err) and "os error" not in str(err), (what, str(err))
            assert TIMEOUT * 0.9 <= took <= TIMEOUT * 1.6, f"{what}: {took:.3f} s for {TIMEOUT} s"
    # The timed-out picks were sent: the server may run them once it resumes (a pick
    # whose reply was lost may or may not be counted). The handle reconnects.
    assert lu.pick() in ("a", "b")


def test_pipelined_picks_time_out_once(own_server: Server, key: str) -> None:
    """pick_many pipelines its picks: a stalled server must cost one timeout, not one per
    pick of the pipeline."""
    lu = keyroute.LeastUsed(own_server.url, key, timeout=0.2)
    lu.seed(["a", "b"])
    assert lu.pick_many(3) == ["a", "b", "a"]
    with stalled(own_server):
        err, took = _timed(lambda: lu.pick_many(1000))
    assert isinstance(err, keyroute.RedisTimeoutError), err
    assert took < 0.2 * 3, f"pick_many(1000) took {took:.2f} s with a 0.2 s timeout"


@pytest.fixture()
def password_server(tmp_path: Path) -> Iterator[Server]:
    s = start_server(tmp_path, password=PASSWORD)
    yield s
    s.stop()


PASSWORD = "s3cret-PW-never-shown"


def _no_secret(err: BaseException) -> None:
    import traceback

    shown = "".join(traceback.format_exception(err)) + repr(err) + repr(err.args)
    assert PASSWORD not in shown and "wrongpw" not in shown, shown


def test_password_never_appears(password_server: Server, key: str) -> None:
    port = password_server.port
    good = f"redis://:{PASSWORD}@127.0.0.1:{port}/0"
    lu = keyroute.LeastUsed(good, key, timeout=TIMEOUT)
    lu.seed(["a"])
    assert lu.pick() == "a"
    assert PASSWORD not in repr(lu)
    cases = [
        (f"redis://:wrongpw@127.0.0.1:{port}", keyroute.RedisAuthError, "REDIS_AUTH"),
        (f"redis://default:wrongpw@127.0.0.1:{port}", keyroute.RedisAuthError, "REDIS_AUTH"),
        (f"redis://127.0.0.1:{port}", keyroute.RedisAuthError, "REDIS_AUTH"),  # NOAUTH
        (f"redis://:{PASSWORD}@127.0.0.1:{_free_port()}", keyroute.RedisConnectionError,
         "REDIS_CONNECT"),
    ]
    for url, cls, code in cases:
        for call in (lambda: keyroute.LeastUsed(url, key).pick(),
                     lambda: keyroute.Leases(url, key).connect()):
            with pytest.raises(cls) as info:
                call()
                # Leases.connect() opens a connection; NOAUTH shows on the first command.
                keyroute.Leases(url, key).outstanding()
            assert info.value.code == code, (url, info.value)
            _no_secret(info.value)
    for url in (f"redis://:{PASSWORD}@127.0.0.1:notaport", f"redis://u:{PASSWORD}@[::1"):
        with pytest.raises(keyroute.RedisBadUrlError) as bad:
            keyroute.LeastUsed(url, key)
        assert bad.value.code == "REDIS_BAD_URL" and isinstance(bad.value, ValueError)
        _no_secret(bad.value)
    # A timeout on a password URL: a timeout, in about the timeout (the handshake's AUTH
    # is waited for once), and no password in it.
    with stalled(password_server):
        for handle in (keyroute.LeastUsed(good, key, timeout=TIMEOUT), lu):
            err, took = _timed(handle.pick)
            assert isinstance(err, keyroute.RedisTimeoutError), err
            assert err.code == "REDIS_TIMEOUT"
            assert TIMEOUT * 0.9 <= took <= TIMEOUT * 1.6, f"{took:.3f} s for {TIMEOUT} s"
            _no_secret(err)
    assert lu.pick() == "a"


def test_reconnects_after_restart(tmp_path: Path, key: str) -> None:
    s = start_server(tmp_path)
    try:
        lu = keyroute.LeastUsed(s.url, key, timeout=1.0)
        lu.seed(["a", "b"])
        assert lu.pick() == "a"
        s.stop()
        with pytest.raises(keyroute.RedisConnectionError):
            lu.pick()
        s = start_server(tmp_path, port=s.port)
        assert lu.pick() is None  # a new, empty server
        lu.seed(["c"])
        assert lu.pick() == "c"
    finally:
        s.stop()


def test_errors(server: Server, key: str) -> None:
    for bad in ("", b"", "a}b"):
        for cls in (keyroute.LeastUsed, keyroute.Leases):
            with pytest.raises(keyroute.PoolError) as info:
                cls(server.url, bad)
            assert info.value.code == "BAD_POOL_KEY" and isinstance(info.value, ValueError)
    with pytest.raises(keyroute.BadTypeError) as t:
        keyroute.LeastUsed(server.url, 42)  # type: ignore[arg-type]
    assert t.value.code == "BAD_TYPE"
    for timeout in (0.0, -1.0, float("nan"), float("inf"), 0):
        with pytest.raises(keyroute.PoolError) as info:
            keyroute.LeastUsed(server.url, key, timeout=timeout)
        assert info.value.code == "BAD_TTL"
    with pytest.raises(keyroute.BadTypeError):
        keyroute.LeastUsed(server.url, key, timeout="1")  # type: ignore[arg-type]
    with pytest.raises(keyroute.RedisBadUrlError) as u:
        keyroute.LeastUsed("http://nope", key)
    assert u.value.code == "REDIS_BAD_URL"
    lu = keyroute.LeastUsed(server.url, key)
    with pytest.raises(keyroute.PoolError) as m:
        lu.restore("a", "zero")  # type: ignore[arg-type]
    assert m.value.code == "BAD_RESTORE_MODE"
    for initial, code in ((keyroute.MAX_EXACT_COUNT + 1, "BAD_COUNT"), (-1, "BAD_COUNT"),
                          (10**30, "BAD_COUNT"), (10**300, "OUT_OF_RANGE")):
        with pytest.raises(keyroute.KeyrouteError) as info:
            lu.seed(["a"], initial)
        assert info.value.code == code
    with pytest.raises(keyroute.BadTypeError):
        lu.seed("ab")
    with pytest.raises(keyroute.BadTypeError):
        lu.remove(1)  # type: ignore[arg-type]
    with pytest.raises(keyroute.BadTypeError):
        lu.seed(["a"], overwrite=1)  # type: ignore[arg-type]
    assert lu.counts() == {}
    server.client().set(key, "not a sorted set")
    for call in (lu.pick, lambda: lu.pick_many(3), lambda: lu.seed(["x"]),
                 lambda: lu.remove("x"), lambda: lu.restore("x")):
        with pytest.raises(keyroute.RedisWrongTypeError, match="WRONGTYPE") as w:
            call()
        assert w.value.code == "REDIS_WRONGTYPE"
    assert server.client().get(key) == b"not a sorted set"
    leases = keyroute.Leases(server.url, key)
    for ttl in (0, -1.0, float("nan")):
        with pytest.raises(keyroute.PoolError) as info:
            leases.acquire(ttl)
        assert info.value.code == "BAD_TTL"
    with pytest.raises(keyroute.RedisWrongTypeError):
        leases.acquire(1.0)
    with pytest.raises(keyroute.BadTypeError):
        leases.release("not a lease")  # type: ignore[arg-type]
    with pytest.raises(keyroute.OutOfRangeError):
        leases.reclaim(now_ms=-1)
    with pytest.raises(keyroute.OutOfRangeError):
        keyroute.Lease("a", -1, 0)


def test_a_peer_that_is_not_redis_is_a_protocol_error(key: str) -> None:
    """An HTTP server where Redis was expected: REDIS_PROTOCOL, with a message that says
    so (not a parse error of the reply)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        def answer() -> None:
            for _ in range(2):
                conn, _ = listener.accept()
                with conn:
                    conn.recv(4096)
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

        t = threading.Thread(target=answer, daemon=True)
        t.start()
        with pytest.raises(keyroute.RedisError) as info:
            keyroute.LeastUsed(f"redis://127.0.0.1:{port}", key, timeout=2).pick()
        t.join(5)
    assert info.value.code == "REDIS_PROTOCOL", info.value
    assert isinstance(info.value, keyroute.RedisProtocolError)
    assert "Redis server" in str(info.value)


def test_a_refused_script_changes_nothing(server: Server, key: str) -> None:
    """Issue 12: with the side key holding a string, remove/seed/restore answer WRONGTYPE
    and the pool keeps its members and counts."""
    r = server.client()
    lu = keyroute.LeastUsed(server.url, key)
    lu.seed(["m", "n"])
    lu.pick_many(3)
    r.set(lu.side_key, "x")
    before = r.zrange(key, 0, -1, withscores=True)
    for call in (lambda: lu.remove("m"), lambda: lu.seed(["a"]),
                 lambda: lu.seed(["m"], 5, True), lambda: lu.restore("z", "keep")):
        with pytest.raises(keyroute.RedisWrongTypeError) as info:
            call()
        assert info.value.code == "REDIS_WRONGTYPE"
    assert r.zrange(key, 0, -1, withscores=True) == before
    assert r.get(lu.side_key) == b"x"


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
    assert leases.in_flight_bytes() == {b"a": 1, b"b": 1}
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
            got = lu.pick_bytes()
        assert got == mem.pick_bytes(), i
    assert lu.counts_bytes() == mem.counts_bytes()
    assert r.zrange(key, 0, -1, withscores=True) == [
        (m, float(c)) for m, c in mem.counts_bytes().items()
    ]


def test_affinity_takes_under_the_cap_and_matches_bounded(server: Server, key: str) -> None:
    aff = keyroute.Affinity(server.url, "{a-" + key + "}")
    assert aff.take("j1", ["a", "b"], cap=1) == ("a", 1, 1, True)
    assert aff.take("j1", ["b"], cap=1) == ("a", 1, 1, False)  # held already
    assert aff.take("j2", ["a", "b"], cap=1) == ("b", 1, 1, True)
    assert aff.take("j3", ["a", "b"], cap=1) is None  # every candidate full
    assert aff.holder("j3") is None and aff.held() == 2
    assert aff.loads() == {"a": 1, "b": 1}
    assert aff.release("j1") == "a" and aff.release("j1") is None
    assert aff.loads() == {"b": 1}
    # The factor rule picks what the in-memory Bounded picks for the same candidates.
    router = keyroute.Router("rendezvous", [f"n{i}" for i in range(5)])
    bounded = keyroute.Bounded(router, 1.25)
    aff2 = keyroute.Affinity(server.url, "{b-" + key + "}")
    for i in range(200):
        item = f"item-{i}"
        want = bounded.assign(item)
        got = aff2.take(item, router.get_n(item, 5), c=1.25)
        assert got is not None and got[0] == want, i
    # Checked before anything is sent, with the codes of every language.
    for call, code in [
        (lambda: aff.take("", ["a"], cap=1), "EMPTY_MEMBER"),
        (lambda: aff.take("x", [], cap=1), "OUT_OF_RANGE"),
        (lambda: aff.take("x", ["a", ""], cap=1), "EMPTY_MEMBER"),
        (lambda: aff.take("x", ["a"], cap=0), "OUT_OF_RANGE"),
        (lambda: aff.take("x", ["a"], cap=-1), "OUT_OF_RANGE"),
        (lambda: aff.take("x", ["a"], c=0.5), "OUT_OF_RANGE"),
        (lambda: aff.take("x", ["a"], c=float("nan")), "OUT_OF_RANGE"),
        (lambda: aff.take("x", ["a"]), "BAD_TYPE"),
        (lambda: aff.take("x", ["a"], cap=1, c=1.5), "BAD_TYPE"),
        (lambda: aff.take("x", ["a"] * 70000, cap=1), "TOO_LARGE"),
        (lambda: aff.take("x", [b"\xff"], cap=5), "BAD_UTF8"),
        (lambda: aff.release(""), "EMPTY_MEMBER"),
    ]:
        with pytest.raises(keyroute.KeyrouteError) as e:
            call()
        assert e.value.code == code, (code, e.value)
    assert aff.held() == 1
