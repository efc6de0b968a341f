"""keyroute.SmartCache, Sessions and Devices on a real 3-master Redis Cluster.

The cluster is started by this module (test_cluster.Cluster: three cluster-enabled
redis-server processes on free 127.0.0.1 ports, joined with redis-cli) and stopped
afterwards. Clients are spread over many slots, so every call runs on every master;
a script touching keys of two slots would fail with CROSSSLOT.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

import keyroute
from test_cache import counting, in_thread, run_stampede
from test_cluster import Cluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("cache-cluster"))
    yield c
    c.stop()


def seeds(cluster: Cluster) -> list[str]:
    return [f"redis://127.0.0.1:{p}" for p in cluster.ports]


def test_stampede_on_a_cluster_costs_one_backend_call(cluster: Cluster) -> None:
    run_stampede(seeds(cluster)[0], "cluster")


def test_every_call_runs_in_one_slot_on_every_master(cluster: Cluster) -> None:
    cache = keyroute.SmartCache(seeds(cluster), cluster=True, neg_ttl_ms=500)
    sessions = keyroute.Sessions(seeds(cluster)[1], cluster=True, ttl_ms=10_000)
    devices = keyroute.Devices(seeds(cluster)[2:], cluster=True)
    assert cache.cluster and sessions.cluster and devices.cluster
    run = uuid.uuid4().hex
    owners = set()
    for n in range(24):
        client = f"client-{run}-{n}"
        value = f"accounts of {client}".encode()
        load, calls = counting(value)
        assert cache.get_or_load(client, "accounts", load) == value
        assert cache.get_or_load(client, "accounts", load) == value
        assert len(calls) == 1
        assert cache.invalidate(client, "accounts") is True
        sid = sessions.create(client, "v1", b"data")
        assert sessions.touch(sid, "v1").client == client
        assert [s for s, _ in sessions.list(client)] == [sid]
        assert sessions.destroy(sid) is True
        device = f"device-{run}-{n}"
        devices.bind(device, client, 60_000)
        assert devices.client_of(device) == client
        report = cache.warm(device, ["accounts", "cards", "loans"], lambda c, k: k.encode())
        assert report.client == client and sorted(report.granted) == ["accounts", "cards", "loans"]
        # The session id embeds the client's token T; its keys are tagged {c:T}.
        owners.add(keyroute.key_slot("{c:" + sid.split(".")[0] + "}"))
    slot_map = keyroute.SlotMap.from_redis_py(redis.Redis(port=cluster.ports[0]))
    assert {slot_map.owner(s) for s in owners} == {slot_map.owner(s) for s in (0, 8000, 16383)}

    def failing() -> bytes:
        raise RuntimeError("down")

    with pytest.raises(keyroute.BackendError):
        cache.get_or_load(f"client-{run}-0", "statements", failing)
    with pytest.raises(keyroute.BackendError) as cached:
        cache.get_or_load(f"client-{run}-0", "statements", failing)
    assert cached.value.cached is True


def test_a_waiter_on_another_instance_is_woken_by_the_shard_channel(cluster: Cluster) -> None:
    """The waiter is served when the fill is published (SSUBSCRIBE on the slot's owner), not
    when a poll or the lease would have run out."""
    client = "client-" + uuid.uuid4().hex
    holder = keyroute.SmartCache(seeds(cluster)[0], cluster=True, lease_ms=10_000)
    waiter = keyroute.SmartCache(seeds(cluster)[1], cluster=True, lease_ms=10_000)
    go, loading = threading.Event(), threading.Event()

    def slow() -> bytes:
        loading.set()
        go.wait(10)
        return b"filled"

    h, _ = in_thread(lambda: holder.get_or_load(client, "k", slow))
    assert loading.wait(10)
    w, out = in_thread(lambda: waiter.get_or_load(client, "k", lambda: b"never"))
    time.sleep(1.0)  # the waiter's polls are at 200 ms by now
    assert "at" not in out
    filled = time.perf_counter()
    go.set()
    h.join(10)
    w.join(10)
    assert out["value"] == b"filled"
    assert out["at"] - filled < 0.15, out["at"] - filled
    assert waiter.stats()["waits"] == 1 and waiter.stats()["backend_calls"] == 0


def test_a_cluster_seed_that_is_not_a_cluster_or_is_down(tmp_path: Path, cluster: Cluster) -> None:
    from test_redis import _free_port

    with pytest.raises(keyroute.RedisError) as e:
        keyroute.SmartCache([f"redis://127.0.0.1:{_free_port()}"], cluster=True, timeout=0.5)
    assert e.value.code in ("CLUSTER_UNREACHABLE", "REDIS_CONNECT"), e.value
