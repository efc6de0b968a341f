"""Agreement with the real peers installed in the test environment.

* uhashring (PyPI), HashRing(hash_fn='ketama') -- on generated node sets and keys;
* redis-py's redis.crc.key_slot -- on random binary keys.
"""

from __future__ import annotations

import random

import pytest
from redis.crc import key_slot as redis_key_slot
from uhashring import HashRing

import keyroute

RNG_SEED = 20261130


def _uhashring(nodes: dict[str, int]) -> HashRing:
    return HashRing(nodes={n: {"weight": w} for n, w in nodes.items()}, hash_fn="ketama")


def _keys(rng: random.Random, n: int) -> list[str]:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789:{}-_/é€😀"
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(n)
    ]


@pytest.mark.parametrize("case", range(12))
def test_uhashring_ketama_agrees(case: int) -> None:
    rng = random.Random(RNG_SEED + case)
    count = rng.choice([1, 2, 3, 5, 8, 13, 31])
    nodes = {
        f"node-{rng.randrange(10**6)}-{i}.cache:{rng.choice([11211, 6379, 7000])}": (
            1 if case % 3 == 0 else rng.randint(1, 20)
        )
        for i in range(count)
    }
    peer = _uhashring(nodes)
    ring = keyroute.Ring(nodes, profile="uhashring")
    keys = _keys(rng, 2000)
    want = [peer.get_node(k) for k in keys]
    assert ring.get_many(keys) == want
    assert [ring.get(k) for k in keys[:200]] == want[:200]


def test_uhashring_ketama_after_changes() -> None:
    rng = random.Random(RNG_SEED)
    nodes = {f"n{i}": i + 1 for i in range(6)}
    peer = _uhashring(nodes)
    ring = keyroute.Ring(nodes, profile="uhashring")
    peer.add_node("n9", {"weight": 4})
    ring.add("n9", 4)
    peer.remove_node("n2")
    ring.remove("n2")
    keys = _keys(rng, 3000)
    assert ring.get_many(keys) == [peer.get_node(k) for k in keys]


@pytest.mark.parametrize("case", range(4))
def test_redis_py_key_slot_agrees_on_random_binary_keys(case: int) -> None:
    rng = random.Random(RNG_SEED * 7 + case)
    keys = []
    for _ in range(5000):
        n = rng.randint(0, 40)
        k = bytearray(rng.getrandbits(8) for _ in range(n))
        # Sprinkle braces so hash tags (and their edge cases) are common.
        for _ in range(rng.randint(0, 3)):
            if k:
                k[rng.randrange(len(k))] = rng.choice(b"{}")
        keys.append(bytes(k))
    want = [redis_key_slot(k) for k in keys]
    assert keyroute.key_slots(keys) == want
    assert [keyroute.key_slot(k) for k in keys] == want


def test_redis_py_key_slot_on_str_keys() -> None:
    rng = random.Random(RNG_SEED)
    keys = _keys(rng, 3000)
    assert keyroute.key_slots(keys) == [redis_key_slot(k.encode()) for k in keys]
