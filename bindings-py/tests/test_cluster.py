"""SlotMap against a real 3-master Redis Cluster and real redis-py clients.

The module starts three cluster-enabled redis-server processes on free 127.0.0.1 ports
(each also needs port + 10000 for the cluster bus), joins them with
`redis-cli --cluster create`, waits for cluster_state:ok, and stops them afterwards.
Without redis-server on PATH the tests are skipped, unless KEYROUTE_REQUIRE_REDIS=1.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster

import keyroute
from keyroute import SlotMap


def _port_free(p: int) -> bool:
    if p > 65535:
        return False
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", p))
        except OSError:
            return False
    return True


def _cluster_port() -> int:
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            p: int = s.getsockname()[1]
        if p + 10000 <= 65535 and _port_free(p + 10000):
            return p
    raise RuntimeError("no free port pair")


def _text(v: object) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


class Cluster:
    """``masters`` cluster-enabled redis-servers joined into a cluster. With ``users``
    (ACL file lines after ``user``), the nodes require them, and ``admin`` is the
    password of ``default`` the harness itself logs in with."""

    def __init__(self, tmp: Path, masters: int = 3, users: list[str] | None = None,
                 admin: str | None = None) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []
        self.admin = admin
        extra: list[str] = []
        auth: list[str] = ["-a", admin, "--no-auth-warning"] if admin else []
        if users:
            acl = tmp / "users.acl"
            acl.write_text("".join(f"user {u}\n" for u in users))
            extra = ["--aclfile", str(acl)]
        self.last_info = ""
        self.ports: list[int] = []
        exe = shutil.which("redis-server")
        cli = shutil.which("redis-cli")
        if exe is None or cli is None:
            if os.environ.get("KEYROUTE_REQUIRE_REDIS") == "1":
                pytest.fail("redis-server/redis-cli not found on PATH (KEYROUTE_REQUIRE_REDIS=1)")
            pytest.skip("redis-server not found on PATH")
        for _ in range(masters):
            p = _cluster_port()
            self.procs.append(subprocess.Popen(
                [exe, "--port", str(p), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                 "no", "--dir", str(tmp), "--protected-mode", "no", "--loglevel", "warning",
                 "--cluster-enabled", "yes", "--cluster-node-timeout", "5000",
                 "--cluster-config-file", str(tmp / f"nodes-{p}.conf"), *extra],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            ))
            self.ports.append(p)
        try:
            for p in self.ports:
                self._wait(lambda p=p: self.node(p).ping())
            subprocess.run(
                [cli, *auth, "--cluster", "create", *[f"127.0.0.1:{p}" for p in self.ports],
                 "--cluster-replicas", "0", "--cluster-yes"],
                check=True, capture_output=True, timeout=60,
            )
            for p in self.ports:
                self._wait(lambda p=p: self._ok(p))
        except BaseException:
            self.stop()
            raise

    def node(self, port: int) -> redis.Redis:
        """A redis-py client of one node, as the admin."""
        return redis.Redis(port=port, socket_timeout=2, password=self.admin)

    def _ok(self, port: int) -> bool:
        info = self.node(port).execute_command("CLUSTER", "INFO")
        if isinstance(info, dict):
            text = "\n".join(f"{_text(k)}:{_text(v)}" for k, v in info.items())
        else:
            text = _text(info)
        self.last_info = text
        return "cluster_state:ok" in text and f"cluster_known_nodes:{len(self.ports)}" in text

    def _wait(self, ready: object, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        last: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                if ready():  # type: ignore[operator]
                    return
            except (redis.RedisError, OSError) as e:
                last = e
            time.sleep(0.05)
        raise TimeoutError(f"cluster not ready: {last}; CLUSTER INFO: {self.last_info!r}")

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    yield c
    c.stop()


KEYS = [f"user:{i}" for i in range(2000)] + ["{user:1}:cart", "foo", "", "é"]


def _truth(cluster: Cluster) -> dict[int, str]:
    """slot -> "host:port" as the running cluster says (CLUSTER SLOTS, read raw)."""
    raw = redis.Redis(port=cluster.ports[0]).execute_command("CLUSTER", "SLOTS")
    owner = {}
    for start, end, master, *_ in raw:
        host = master[0].decode() if isinstance(master[0], bytes) else master[0]
        for slot in range(start, end + 1):
            owner[slot] = f"{host}:{master[1]}"
    assert len(owner) == keyroute.SLOT_COUNT
    return owner


def _agrees(m: SlotMap, truth: dict[int, str]) -> None:
    assert m.is_complete()
    assert [m.address_for_slot(s) for s in range(keyroute.SLOT_COUNT)] == [
        truth[s] for s in range(keyroute.SLOT_COUNT)
    ]


def test_from_redis_py_cluster_client(cluster: Cluster) -> None:
    truth = _truth(cluster)
    for decode in (False, True):
        rc = RedisCluster(host="127.0.0.1", port=cluster.ports[0], decode_responses=decode)
        try:
            m = SlotMap.from_redis_py(rc)
            _agrees(m, truth)
            masters = {m.node(i)["address"] for i in range(len(m)) if m.node(i)["role"] == "master"}
            assert masters == {f"127.0.0.1:{p}" for p in cluster.ports}
            assert all(m.node(i)["id"] and m.node(i)["health"] == "online" for i in range(len(m)))
            # keyroute routes every key where redis-py's cluster client routes it.
            for k in KEYS:
                node = rc.get_node_from_key(k)
                assert m.address_for_key(k) == f"{node.host}:{node.port}", k
            # The shapes of issue 12: cluster_slots() is a dict, cluster_shards() a list.
            slots = rc.cluster_slots()
            assert isinstance(slots, dict)
            _agrees(SlotMap.from_slots(slots), truth)
            _agrees(SlotMap.from_shards(rc.cluster_shards()), truth)
        finally:
            rc.close()


def test_from_redis_py_standalone_client_and_raw_replies(cluster: Cluster) -> None:
    truth = _truth(cluster)
    r = redis.Redis(port=cluster.ports[1])
    _agrees(SlotMap.from_redis_py(r), truth)
    _agrees(SlotMap.from_slots(r.execute_command("CLUSTER", "SLOTS")), truth)
    _agrees(SlotMap.from_shards(r.execute_command("CLUSTER", "SHARDS")), truth)
    r3 = redis.Redis(port=cluster.ports[2], protocol=3)
    _agrees(SlotMap.from_shards(r3.execute_command("CLUSTER", "SHARDS")), truth)


def test_real_moved_redirect(cluster: Cluster) -> None:
    m = SlotMap.from_redis_py(redis.Redis(port=cluster.ports[0]))
    key = "foo"
    owner = m.address_for_key(key)
    wrong = next(p for p in cluster.ports if f"127.0.0.1:{p}" != owner)
    with pytest.raises(redis.ResponseError) as moved:
        redis.Redis(port=wrong).get(key)
    # redis-py strips the error prefix; the MOVED message is its text.
    text = str(moved.value)
    message = text if text.startswith(("MOVED", "ASK")) else "MOVED " + text
    kind, address, node = m.apply_redirect(message, "127.0.0.1")
    assert (kind, address) == ("moved", owner) and node == m.owner_of_key(key)
    assert keyroute.parse_redirect(message)[1] == keyroute.key_slot(key)


def test_from_redis_py_reports_the_clients_errors(cluster: Cluster) -> None:
    dead = redis.Redis(port=_cluster_port(), socket_connect_timeout=0.5)
    with pytest.raises(redis.ConnectionError):
        SlotMap.from_redis_py(dead)
