"""keyroute vs its Python peers, side by side in one run (best of interleaved rounds).

    python bindings-py/bench/bench.py [--json PATH]      # or: make bench-python

The figures are printed and written as JSON (default build/bench/python.json) so that a
report is generated from one recorded run rather than typed: each row names what it
measures, its clock ("cpu": time.process_time, "wall": time.perf_counter), keyroute's
and the peer's time per key or call in nanoseconds, the ratio peer / keyroute, and
whether the two sides compute the same answers ("like_for_like", checked on the keys
before timing).

In-process rows are CPU time of this process (time.process_time), so other processes on
a busy machine inflate them less than wall-clock time would; they still share caches and
cores.
Per-call figures include the Python `for` loop that makes the calls (the same loop for
both sides of a comparison), so they are upper bounds for the call itself.

The Redis rows (LeastUsed.pick vs redis-py's register_script running the same script)
start their own redis-server on a free 127.0.0.1 port (skipped without one on PATH) and
are wall-clock time (time.perf_counter): a network call mostly waits, which CPU time does
not see; the CPU-time ratio is printed too.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from redis.crc import key_slot as redis_key_slot
from uhashring import HashRing  # type: ignore[import-untyped]

import keyroute

# Repeats of each Redis case (best kept).
REPEAT = 5
# Rounds of the interleaved in-process cases (each round runs every case once).
ROUNDS = 40
rng = random.Random(42)
NODES = [f"10.0.{i // 250}.{i % 250}:11211" for i in range(10)]
KEYS = [f"user:{rng.randrange(10**9)}:session" for _ in range(10_000)]
BKEYS = [k.encode() for k in KEYS]
BIG = [f"key:{i}:{rng.randrange(10**9)}".encode() for i in range(100_000)]
BIG_STR = [k.decode() for k in BIG]


rows: list[dict[str, Any]] = []


def row(
    name: str,
    ours: float,
    theirs: float | None,
    target: str,
    *,
    clock: str,
    unit: str = "ns/key",
    peer: str | None = None,
    like_for_like: bool | None = None,
) -> None:
    """Prints a row and records it for the JSON report (times in seconds per unit)."""
    ratio = f"{theirs / ours:6.1f}x" if theirs else "      "
    theirs_s = f"{theirs * 1e9:9.1f}" if theirs else "        -"
    print(f"{name:<44} {ours * 1e9:9.1f} {theirs_s} {ratio}   {clock:<4} {target}")
    rows.append({
        "name": name,
        "clock": clock,
        "unit": unit,
        "keyroute_ns": round(ours * 1e9, 2),
        "peer": peer,
        "peer_ns": round(theirs * 1e9, 2) if theirs else None,
        "ratio": round(theirs / ours, 3) if theirs else None,
        "like_for_like": like_for_like,
        "target": target,
    })


def interleaved(cases: dict[str, tuple[Callable[[], object], int]]) -> dict[str, float]:
    """Best seconds per key of each case, the cases taking turns round after round.

    This machine's speed drifts over seconds; running every case once per round (rather
    than all rounds of one case, then the next) lets a slow spell hit all of them alike,
    and the best round of each is kept. Each timed run follows an untimed one of the same
    case, so that no case is timed cold. A case is (function, number of keys it handles).
    """
    best_s = {name: float("inf") for name in cases}
    for _ in range(ROUNDS):
        for name, (fn, n) in cases.items():
            fn()  # untimed: its keys and tables back in cache after the other cases
            t = time.process_time()
            fn()
            best_s[name] = min(best_s[name], (time.process_time() - t) / n)
    return best_s


def loop(f: Callable[[Any], object], keys: list[Any]) -> Callable[[], None]:
    def run() -> None:
        for k in keys:
            f(k)

    return run


def main() -> int:
    global ROUNDS, REPEAT
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = Path(__file__).resolve().parents[2]
    parser.add_argument("--json", type=Path, default=root / "build" / "bench" / "python.json",
                        help="where to write the figures (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help="interleaved rounds of the in-process cases (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=REPEAT,
                        help="repeats of each Redis case (default: %(default)s)")
    args = parser.parse_args()
    ROUNDS, REPEAT = max(1, args.rounds), max(1, args.repeat)

    print(f"keyroute {keyroute.__version__}, Python {sys.version.split()[0]}")
    print(f"{'benchmark (ns per key)':<44} {'keyroute':>9} {'peer':>9} {'ratio':>7}   clock target")

    ketama = keyroute.Ring(NODES, profile="libketama")
    uh = HashRing(nodes=NODES, hash_fn="ketama")
    uh_ring = keyroute.Ring(NODES, profile="uhashring")
    native = keyroute.Ring(NODES)
    # Like-for-like: the uhashring profile answers exactly as uhashring; libketama does not
    # (another weight rule and tie order), so that row compares different algorithms.
    same = [uh.get_node(k) for k in KEYS] == uh_ring.get_many(KEYS)
    assert same, "the uhashring profile must give uhashring's answers"
    differs = [uh.get_node(k) for k in KEYS] != ketama.get_many(KEYS)
    assert keyroute.key_slots(BIG[:1000]) == [redis_key_slot(k) for k in BIG[:1000]]
    assert keyroute.key_slots_array(BIG[:1000]).tolist() == keyroute.key_slots(BIG[:1000])
    k, b = len(KEYS), len(BIG)
    t = interleaved({
        # 1. libketama profile vs uhashring's ketama get_node, same 10-node ring and keys.
        "ketama": (loop(ketama.get, KEYS), k),
        "uhashring": (loop(uh.get_node, KEYS), k),
        "uh_profile": (loop(uh_ring.get, KEYS), k),
        # 2. native single get.
        "native_str": (loop(native.get, KEYS), k),
        "native_bytes": (loop(native.get, BKEYS), k),
        # 3. native get_many.
        "many_bytes": (lambda: native.get_many(BIG), b),
        "many_indexes": (lambda: native.get_many_indexes(BIG), b),
        "many_str": (lambda: native.get_many(BIG_STR), b),
        "many_ketama": (lambda: ketama.get_many(BIG), b),
        "many_uh_profile": (lambda: uh_ring.get_many(BIG_STR), b),
        "many_10k": (lambda: native.get_many(KEYS), k),
        # Calibration: the cheapest possible Python loop over the same keys.
        "calibration": (lambda: [len(k) for k in BIG], b),
        # 4. key_slot vs redis-py's key_slot, one call at a time.
        "key_slot": (loop(keyroute.key_slot, BKEYS), k),
        "redis_key_slot": (loop(redis_key_slot, BKEYS), k),
        # 5. key_slots on 100k keys vs a loop over redis-py's key_slot.
        "key_slots": (lambda: keyroute.key_slots(BIG), b),
        "key_slots_array": (lambda: keyroute.key_slots_array(BIG), b),
        "redis_key_slots": (lambda: [redis_key_slot(k) for k in BIG], b),
    })
    cpu = "cpu"
    row("Ring.get uhashring profile vs uhashring", t["uh_profile"], t["uhashring"], "",
        clock=cpu, peer="uhashring get_node (hash_fn='ketama')", like_for_like=True)
    row("Ring.get libketama vs uhashring get_node", t["ketama"], t["uhashring"], ">= 5x",
        clock=cpu, peer="uhashring get_node (hash_fn='ketama')", like_for_like=not differs)
    row("Ring.get native (str key)", t["native_str"], None, "<= 300 ns", clock=cpu)
    row("Ring.get native (bytes key)", t["native_bytes"], None, "<= 300 ns", clock=cpu)
    row("Ring.get_many native, 100k bytes keys", t["many_bytes"], None, "<= 40 ns/key",
        clock=cpu)
    row("Ring.get_many_indexes native, 100k bytes keys", t["many_indexes"], None,
        "<= 20 ns/key", clock=cpu)
    row("Ring.get_many native, 100k str keys", t["many_str"], None, "<= 40 ns/key", clock=cpu)
    row("Ring.get_many native, 10k str keys", t["many_10k"], None, "<= 40 ns/key", clock=cpu)
    row("Ring.get_many libketama, 100k bytes keys", t["many_ketama"], None, "", clock=cpu)
    row("Ring.get_many uhashring profile, 100k str keys", t["many_uh_profile"], None, "",
        clock=cpu)
    row("(calibration) [len(k) for k in 100k keys]", t["calibration"], None, "", clock=cpu)
    row("key_slot vs redis.crc.key_slot", t["key_slot"], t["redis_key_slot"],
        "<= peer (>= 1x)", clock=cpu, peer="redis.crc.key_slot", like_for_like=True)
    row("key_slots 100k vs [redis key_slot(k) ...]", t["key_slots"], t["redis_key_slots"],
        ">= 5x", clock=cpu, peer="redis.crc.key_slot in a list comprehension",
        like_for_like=True)
    row("key_slots_array 100k (array('H')) vs [redis key_slot(k) ...]",
        t["key_slots_array"], t["redis_key_slots"], "<= 15 ns/key", clock=cpu,
        peer="redis.crc.key_slot in a list comprehension", like_for_like=True)

    # 6. One change to a 30k-node ring (issue 17: <= 1 ms), in place when no reader holds it.
    change_rows()

    # 7. LeastUsed.pick vs redis-py running the same script, on the same server.
    redis_rows()
    write_json(args.json)
    return 0


def change_rows() -> None:
    """Best time of one add, set_weight and remove on a 30,000-node native ring."""
    for vnodes in (160, 1):
        ring = keyroute.Ring([f"node-{i}" for i in range(30_000)], vnodes=vnodes)
        best = {"add": float("inf"), "set_weight": float("inf"), "remove": float("inf")}
        for i in range(max(5, ROUNDS * 2)):
            name = f"extra-{i}"
            for op, call in (("add", lambda: ring.add(name)),
                             ("set_weight", lambda: ring.set_weight(name, 2)),
                             ("remove", lambda: ring.remove(name))):
                t = time.perf_counter()
                call()
                best[op] = min(best[op], time.perf_counter() - t)
        for op, sec in best.items():
            row(f"Ring.{op}, 30k nodes x {vnodes}", sec, None, "<= 1 ms", clock="wall",
                unit="ns/call")


def write_json(path: Path) -> None:
    """The run's rows and what it ran on, for the benchmark report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "benchmark": "bindings-py/bench/bench.py",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "keyroute": keyroute.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "method": (
            f"best of {ROUNDS} interleaved rounds per in-process case (each timed run after "
            f"an untimed one), best of {REPEAT} repeats per Redis case; times include the "
            "Python loop making the calls"
        ),
        "peers": {"uhashring": _version("uhashring"), "redis": _version("redis")},
        "rows": rows,
    }
    path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def start_redis(tmp: str) -> tuple[subprocess.Popen[bytes], int] | None:
    exe = shutil.which("redis-server")
    if exe is None:
        return None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", tmp, "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            client.ping()
            return proc, port
        except redis.ConnectionError:
            time.sleep(0.02)
    proc.kill()
    proc.wait()
    return None


def best_both(fn: Callable[[], object], number: int) -> tuple[float, float]:
    """Best wall-clock and best CPU seconds per call of fn() over REPEAT repeats."""
    wall, cpu = [], []
    for _ in range(REPEAT):
        w0, c0 = time.perf_counter(), time.process_time()
        for _ in range(number):
            fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return min(wall) / number, min(cpu) / number


def redis_rows() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        started = start_redis(tmp)
        if started is None:
            print("(no redis-server on PATH: LeastUsed rows skipped)")
            return
        proc, port = started
        try:
            url = f"redis://127.0.0.1:{port}/0"
            key = "{bench}:pool"
            r = redis.Redis(host="127.0.0.1", port=port)
            members = [f"proxy-{i}" for i in range(10)]
            lu = keyroute.LeastUsed(url, key)
            lu.seed(members)
            script = r.register_script(keyroute.LEAST_USED_SCRIPT)
            ours_fn = lu.pick
            theirs_fn = lambda: script(keys=[key])  # noqa: E731
            for _ in range(2000):  # warm both connections and the script cache
                ours_fn()
                theirs_fn()
            n = 5000
            ours_w, ours_c = best_both(ours_fn, n)
            theirs_w, theirs_c = best_both(theirs_fn, n)
            peer = "redis-py register_script(LEAST_USED_SCRIPT)"
            row("LeastUsed.pick vs redis-py register_script", ours_w, theirs_w, ">= 1.3x",
                clock="wall", unit="ns/call", peer=peer, like_for_like=True)
            row("LeastUsed.pick vs redis-py register_script", ours_c, theirs_c, "",
                clock="cpu", unit="ns/call", peer=peer, like_for_like=True)
            assert script(keys=[key]) is not None and lu.pick() is not None

            # Pipelined picks (no target): pick_many(1000) vs a redis-py pipeline.
            def theirs_many() -> None:
                pipe = r.pipeline(transaction=False)
                for _ in range(1000):
                    script(keys=[key], client=pipe)
                pipe.execute()

            ours_w, _ = best_both(lambda: lu.pick_many(1000), 5)
            theirs_w, _ = best_both(theirs_many, 5)
            row("LeastUsed.pick_many(1000) vs pipeline, /pick", ours_w / 1000,
                theirs_w / 1000, "", clock="wall", unit="ns/pick",
                peer="redis-py pipeline of 1000 script calls", like_for_like=True)
            counts = lu.counts()
            assert max(counts.values()) - min(counts.values()) <= 1
        finally:
            proc.terminate()
            proc.wait(10)


if __name__ == "__main__":
    raise SystemExit(main())
