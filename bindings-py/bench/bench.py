"""keyroute vs its Python peers, side by side in one run (timeit, best of several repeats).

    python bindings-py/bench/bench.py            # or: make bench-python

Times are CPU time of this process (time.process_time), so other processes on a busy
machine inflate them less than wall-clock time would; they still share caches and cores.
Per-call figures include the Python `for` loop that makes the calls (the same loop for
both sides of a comparison), so they are upper bounds for the call itself.
"""

from __future__ import annotations

import random
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

from redis.crc import key_slot as redis_key_slot
from uhashring import HashRing  # type: ignore[import-untyped]

import keyroute

REPEAT = 5
rng = random.Random(42)
NODES = [f"10.0.{i // 250}.{i % 250}:11211" for i in range(10)]
KEYS = [f"user:{rng.randrange(10**9)}:session" for _ in range(10_000)]
BKEYS = [k.encode() for k in KEYS]
BIG = [f"key:{i}:{rng.randrange(10**9)}".encode() for i in range(100_000)]
BIG_STR = [k.decode() for k in BIG]


def best(fn: Callable[[], object], number: int = 1) -> float:
    """Best seconds per call of fn() over REPEAT repeats."""
    return min(timeit.repeat(fn, number=number, repeat=REPEAT, timer=time.process_time)) / number


def per_key_loop(f: Callable[[Any], object], keys: list[Any]) -> float:
    def run() -> None:
        for k in keys:
            f(k)

    return best(run) / len(keys)


rows: list[tuple[str, str, float, str]] = []


def row(name: str, ours: float, theirs: float | None, target: str) -> None:
    ratio = f"{theirs / ours:6.1f}x" if theirs else "      "
    theirs_s = f"{theirs * 1e9:9.1f}" if theirs else "        -"
    print(f"{name:<44} {ours * 1e9:9.1f} {theirs_s} {ratio}   {target}")
    rows.append((name, f"{ours * 1e9:.1f}", theirs or 0.0, target))


def main() -> int:
    print(f"keyroute {keyroute.__version__}, Python {sys.version.split()[0]}")
    print(f"{'benchmark (ns per key)':<44} {'keyroute':>9} {'peer':>9} {'ratio':>7}   target")

    # 1. libketama profile vs uhashring's ketama get_node, same 10-node ring and keys.
    ketama = keyroute.Ring(NODES, profile="libketama")
    uh = HashRing(nodes=NODES, hash_fn="ketama")
    ours = per_key_loop(ketama.get, KEYS)
    theirs = per_key_loop(uh.get_node, KEYS)
    row("Ring.get libketama vs uhashring get_node", ours, theirs, ">= 5x")
    uh_ring = keyroute.Ring(NODES, profile="uhashring")
    row("Ring.get uhashring profile vs uhashring", per_key_loop(uh_ring.get, KEYS), theirs, "")

    # 2. native single get.
    native = keyroute.Ring(NODES)
    row("Ring.get native (str key)", per_key_loop(native.get, KEYS), None, "<= 300 ns")
    row("Ring.get native (bytes key)", per_key_loop(native.get, BKEYS), None, "<= 300 ns")

    # 3. native get_many, 100k keys.
    row("Ring.get_many native, 100k bytes keys", best(lambda: native.get_many(BIG)) / len(BIG),
        None, "<= 40 ns/key")
    row("Ring.get_many native, 100k str keys",
        best(lambda: native.get_many(BIG_STR)) / len(BIG), None, "<= 40 ns/key")
    row("Ring.get_many libketama, 100k bytes keys",
        best(lambda: ketama.get_many(BIG)) / len(BIG), None, "")

    # Calibration: the cheapest possible Python loop over the same keys on this machine.
    row("(calibration) [len(k) for k in 100k keys]",
        best(lambda: [len(k) for k in BIG]) / len(BIG), None, "")
    row("Ring.get_many native, 10k str keys",
        best(lambda: native.get_many(KEYS), number=10) / len(KEYS), None, "<= 40 ns/key")

    # 4. key_slot vs redis-py's key_slot, one call at a time.
    row("key_slot vs redis.crc.key_slot", per_key_loop(keyroute.key_slot, BKEYS),
        per_key_loop(redis_key_slot, BKEYS), "<= peer (>= 1x)")

    # 5. key_slots on 100k keys vs a loop over redis-py's key_slot.
    ours = best(lambda: keyroute.key_slots(BIG)) / len(BIG)
    theirs = best(lambda: [redis_key_slot(k) for k in BIG]) / len(BIG)
    row("key_slots 100k vs [redis key_slot(k) ...]", ours, theirs, ">= 5x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
