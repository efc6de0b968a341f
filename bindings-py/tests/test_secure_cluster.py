"""``cluster=True`` on a 3-master Redis Cluster whose nodes require ACL users: keyroute's
user (the README's ACL line, not ``default``) given once in the seeds reaches every
master through LeastUsed, Leases, SmartCache, Sessions and Devices; the same seeds with a
wrong password are ``REDIS_AUTH``, and the password is in no message and no ``repr()``.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

import keyroute
from test_cluster import Cluster

ADMIN = "adm-" + secrets.token_hex(8)
PASSWORD = "kr-" + secrets.token_hex(8)
USERS = [
    f"default on >{ADMIN} ~* &* +@all",
    f"keyroute on >{PASSWORD} ~* &* +@all -@dangerous +info +role",
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    c = Cluster(tmp_path_factory.mktemp("acl-cluster"), users=USERS, admin=ADMIN)
    yield c
    c.stop()


def seeds(c: Cluster, password: str = PASSWORD) -> list[str]:
    return [f"redis://keyroute:{password}@127.0.0.1:{p}" for p in c.ports]


def test_every_entrance_as_an_acl_user(cluster: Cluster) -> None:
    keys = [f"{{acl-{i}}}:pool" for i in range(12)]
    for key in keys:
        lu = keyroute.LeastUsed(seeds(cluster), key, cluster=True, timeout=2)
        assert lu.seed(["a", "b"]) == 2
        assert lu.pick() == "a"
        assert PASSWORD not in repr(lu)
    # Every master holds some of the pools: the user reached each one.
    held = [cluster.node(p).dbsize() for p in cluster.ports]
    assert all(n > 0 for n in held), held
    leases = keyroute.Leases(seeds(cluster)[1], "{acl}:busy", cluster=True)
    leases.seed(["x"])
    lease = leases.acquire(60)
    assert lease is not None and leases.release(lease) == "released"
    cache = keyroute.SmartCache(seeds(cluster), cluster=True)
    assert cache.get_or_load("c-acl", "cards", lambda: b"v") == b"v"
    assert cache.get_or_load("c-acl", "cards", lambda: b"other") == b"v"
    sessions = keyroute.Sessions(seeds(cluster), cluster=True, ttl_ms=60_000)
    sid = sessions.create("c-acl", "1", b"data")
    assert sessions.touch(sid).data == b"data"
    devices = keyroute.Devices(seeds(cluster), cluster=True)
    devices.bind("d-acl", "c-acl", 60_000)
    assert devices.client_of("d-acl") == "c-acl"
    assert PASSWORD not in repr(cache) + repr(sessions) + repr(devices)


def test_a_wrong_password_is_redis_auth_without_the_secret(cluster: Cluster) -> None:
    wrong = "not-" + PASSWORD
    for make in (
        lambda: keyroute.LeastUsed(seeds(cluster, wrong), "{acl}:pool", cluster=True).pick(),
        lambda: keyroute.SmartCache(seeds(cluster, wrong), cluster=True),
        lambda: keyroute.Sessions(seeds(cluster, wrong), cluster=True, ttl_ms=60_000),
    ):
        with pytest.raises(keyroute.KeyrouteError) as info:
            make()
        assert info.value.code == "REDIS_AUTH", info.value
        text = str(info.value) + repr(info.value)
        assert wrong not in text and PASSWORD not in text, text
