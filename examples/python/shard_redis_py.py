"""Shard redis-py connections with a keyroute Ring.

    python examples/python/shard_redis_py.py 127.0.0.1:6379 127.0.0.1:6380 127.0.0.1:6381

Several standalone Redis servers hold one data set between them: each key lives on the
node the ring picks for it. Any program that uses keyroute with the same node list and
profile (Python, Node, C, Java, the CLI) picks the same node, so they share the data
without a proxy. The node names are the servers' "host:port" (a name keeps its port).

`make test-python` runs this file against three redis-server processes it starts.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Mapping

import redis

import keyroute


def _bytes(value: bytes | str | None) -> bytes | None:
    """redis-py answers bytes (str only with decode_responses=True, not used here)."""
    return value.encode() if isinstance(value, str) else value


class ShardedRedis:
    """redis-py clients, one per node, routed by a keyroute Ring.

    `nodes` is what keyroute.Ring takes (names "host:port", with weights if you like),
    or a node list string ("10.0.0.1:6379,10.0.0.2:6379=2").
    """

    def __init__(
        self, nodes: str | Mapping[str, int] | Iterable[str], profile: str = "native"
    ) -> None:
        self.ring = (
            keyroute.Ring.from_spec(nodes, profile=profile)
            if isinstance(nodes, str)
            else keyroute.Ring(nodes, profile=profile)
        )
        self.clients: dict[str, redis.Redis] = {}
        for name in self.ring:
            host, _, port = name.rpartition(":")
            self.clients[name] = redis.Redis(
                host=host.strip("[]"), port=int(port), socket_timeout=2
            )

    def client_for(self, key: str | bytes) -> redis.Redis:
        """The client of the node that owns `key`."""
        owner = self.ring.get(key)
        if owner is None:
            raise LookupError("the ring has no nodes")
        return self.clients[owner]

    def set(self, key: str, value: str | bytes) -> None:
        self.client_for(key).set(key, value)

    def get(self, key: str) -> bytes | None:
        return _bytes(self.client_for(key).get(key))

    def mget(self, keys: list[str]) -> list[bytes | None]:
        """One MGET per node (owners computed in one call), answers in key order."""
        by_node: dict[str, list[int]] = {}
        for i, owner in enumerate(self.ring.get_many(keys)):
            if owner is None:
                raise LookupError("the ring has no nodes")
            by_node.setdefault(owner, []).append(i)
        out: list[bytes | None] = [None] * len(keys)
        for owner, indexes in by_node.items():
            values = self.clients[owner].mget([keys[i] for i in indexes])
            for i, value in zip(indexes, values):
                out[i] = _bytes(value)
        return out

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__)
        return 2
    shards = ShardedRedis(",".join(argv[1:]))
    try:
        keys = [f"user:{i}:profile" for i in range(1000)]
        for k in keys:
            shards.set(k, f"value of {k}")
        if shards.mget(keys) != [f"value of {k}".encode() for k in keys]:
            raise SystemExit("MGET did not read back what SET wrote")
        # Each key is on its owner and nowhere else.
        owners = shards.ring.get_many(keys)
        for k, owner in zip(keys, owners):
            for name, client in shards.clients.items():
                if bool(client.exists(k)) != (name == owner):
                    raise SystemExit(f"{k} is misplaced on {name} (owner {owner})")
        per_node = Counter(owners)
        for name in shards.ring:
            print(f"{name}: {per_node[name]} keys (DBSIZE {shards.clients[name].dbsize()})")
        # What adding a node would move: only keys the new node takes.
        bigger = shards.ring.copy()
        bigger.add("127.0.0.1:1")
        moved = shards.ring.diff(bigger).moved_fraction
        print(f"adding a node would move {moved:.1%} of the keys")
        print("ok: every key on the node keyroute picks")
    finally:
        shards.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
