"""The smart-cache stampede harness: keyroute.SmartCache against its Python peers, side by
side in one run on one redis-server.

    python bindings-py/bench/stampede.py [--json PATH] [--runs N]    # or: make bench-python

Implementations (the peers' versions are pinned in bench/requirements-cache.txt):

* naive cache-aside with redis-py (GET; on a miss call the backend, then SET);
* aiocache ``cached_stampede`` (Redis backend, lease 2 s; ``--lease-s``);
* dogpile.cache, Redis backend with ``distributed_lock`` (``thread_local_lock=False`` as
  its docs advise), ``lock_timeout`` unset (its default) and 2 s (``--lease-s``);
* keyroute ``SmartCache`` (lease 2 s, its default; ``--lease-s``).

Scenarios, each with a fresh key, the peers taking turns within each run:

1. **Stampede**: 4 processes x 50 concurrent requests (threads; tasks for aiocache) for
   one cold key, all starting at one wall-clock instant; the backend takes 200 ms.
   Backend calls in all processes, and p50/p99/max latency, each request timed from its
   own start. Repeated ``--runs`` times; the run with the median p99 is reported.
2. **Takeover after a kill**: a holder process starts loading (a 30 s backend) and is
   SIGKILLed 1 s later; 3 waiters in another process (started while it loads) use a
   200 ms backend. Reported: when the last waiter was served, measured from the kill
   (negative: it did not wait for the holder), or that it was not served within 15 s.
3. **Slow live holder**: the holder's backend takes 3 s and it lives; the same 3 waiters.
   Reported: backend calls in all (a lock that expires under a live holder lets a second
   load in).

Every process makes its client before the start instant (connections open, scripts
loaded). Times are wall-clock (time.time across processes, time.perf_counter within
one). The figures are printed as a table and written as JSON (default
build/bench/cache.json): the benchmark report's common row shape (schema 1), each row
also carrying the fields of bench.py's python.json rows (name, clock "wall",
keyroute_ns, peer_ns). The load average is recorded at the start and the end: on a busy
machine re-run when ``uptime`` is lower.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

import keyroute

PEERS = ["naive", "aiocache", "dogpile", "dogpile-2s", "keyroute"]
# The lease of aiocache and keyroute and dogpile-2s's lock_timeout, seconds (--lease-s;
# passed to the workers in the environment).
LEASE_S = float(os.environ.get("KEYROUTE_BENCH_LEASE_S", "2"))


def labels() -> dict[str, str]:
    return {
        "naive": "naive cache-aside (redis-py)",
        "aiocache": f"aiocache cached_stampede (Redis, lease {LEASE_S:g} s)",
        "dogpile": "dogpile.cache Redis distributed_lock (no lock_timeout)",
        "dogpile-2s": f"dogpile.cache Redis distributed_lock, lock_timeout={LEASE_S:g}",
        "keyroute": f"keyroute SmartCache (lease {LEASE_S:g} s)",
    }

DIST = {"aiocache": "aiocache", "dogpile": "dogpile.cache", "dogpile-2s": "dogpile.cache",
        "naive": "redis"}
LABEL = labels()
CLIENT = "bench-client"
WAIT_CAP_S = 15.0


# --- the workers (child processes) ------------------------------------------------------


def sync_request(peer: str, port: int) -> Callable[[str, Callable[[], bytes]], bytes]:
    """request(key, backend) for a thread-based implementation, its client made now."""
    if peer == "naive":
        r = redis.Redis(host="127.0.0.1", port=port)
        r.ping()

        def naive(key: str, backend: Callable[[], bytes]) -> bytes:
            v = r.get(key)
            if v is None:
                v = backend()
                r.set(key, v, ex=600)
            return bytes(v)  # type: ignore[arg-type]  # redis-py: bytes without decode_responses

        return naive
    if peer.startswith("dogpile"):
        from dogpile.cache import make_region

        region = make_region().configure(
            "dogpile.cache.redis",
            expiration_time=600,
            arguments={
                "host": "127.0.0.1", "port": port, "distributed_lock": True,
                "thread_local_lock": False, "redis_expiration_time": 600,
                "lock_timeout": LEASE_S if peer == "dogpile-2s" else None,
            },
        )
        region.backend.writer_client.ping()

        def dogpile(key: str, backend: Callable[[], bytes]) -> bytes:
            return bytes(region.get_or_create(key, backend))

        return dogpile
    if peer == "keyroute":
        cache = keyroute.SmartCache(f"redis://127.0.0.1:{port}", lease_ms=int(LEASE_S * 1000))

        def ours(key: str, backend: Callable[[], bytes]) -> bytes:
            return cache.get_or_load(CLIENT, key, backend, timeout_ms=60_000)

        return ours
    raise SystemExit(f"unknown peer {peer}")


def worker(peer: str, port: int, key: str, start: float, n: int, backend_s: float,
           announce: bool) -> None:
    """n concurrent requests for `key` at wall-clock `start`; prints one JSON line:
    latencies (ms), wall times served, backend calls, and how many were not served
    within WAIT_CAP_S."""
    calls = 0
    lock = threading.Lock()
    lat: list[float] = []
    served: list[float] = []
    began_loads: list[float] = []
    value = b"value of " + key.encode()

    def counted() -> None:
        nonlocal calls
        with lock:
            calls += 1
            began_loads.append(time.time())
        if announce:
            print("LOADING", flush=True)

    def report(unserved: int) -> None:
        print(json.dumps({"lat_ms": lat, "served_at": served, "calls": calls,
                          "loads_at": began_loads, "unserved": unserved}), flush=True)

    if peer == "aiocache":
        from aiocache import Cache, cached_stampede  # type: ignore[import-untyped]

        @cached_stampede(lease=LEASE_S, ttl=600, cache=Cache.REDIS,  # type: ignore[untyped-decorator]
                         endpoint="127.0.0.1", port=port, key=key)
        async def load() -> str:
            counted()
            await asyncio.sleep(backend_s)
            return value.decode()

        async def one() -> None:
            began = time.perf_counter()
            got = await load()
            assert got == value.decode(), got
            lat.append((time.perf_counter() - began) * 1000)
            served.append(time.time())

        async def main() -> int:
            await asyncio.sleep(max(0.0, start - time.time()))
            print("STARTED", flush=True)
            tasks = [asyncio.ensure_future(one()) for _ in range(n)]
            done, pending = await asyncio.wait(tasks, timeout=start + WAIT_CAP_S - time.time())
            for t in done:
                t.result()
            return len(pending)

        unserved = asyncio.run(main())
        report(unserved)
        os._exit(0)

    request = sync_request(peer, port)

    def backend() -> bytes:
        counted()
        time.sleep(backend_s)
        return value

    ready = threading.Barrier(n)
    said = threading.Event()

    def run() -> None:
        ready.wait()
        left = start - time.time()
        if left > 0:
            time.sleep(left)
        if not said.is_set():
            said.set()
            print("STARTED", flush=True)
        began = time.perf_counter()
        got = request(key, backend)
        assert got == value, got
        took = (time.perf_counter() - began) * 1000
        with lock:
            lat.append(took)
            served.append(time.time())
            if len(lat) == n:
                done.set()
        # Exit together once every request is served (as a server's pooled threads would
        # not exit): a thread's exit takes CPU and the GIL from requests still being served.
        done.wait(max(0.0, start + WAIT_CAP_S - time.time()))

    # The main thread sleeps until the last request is served (joining thread after thread
    # would wake it, and make it take the GIL, while requests are still being served).
    done = threading.Event()
    threads = [threading.Thread(target=run, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    done.wait(max(0.0, start + WAIT_CAP_S - time.time()))
    for t in threads:
        t.join(max(0.0, start + WAIT_CAP_S - time.time()))
    with lock:
        report(sum(t.is_alive() for t in threads))
    os._exit(0)  # threads still waiting (a lock without a TTL) must not hold the exit


# --- the driver -------------------------------------------------------------------------


def spawn(peer: str, port: int, key: str, start: float, n: int, backend_s: float,
          announce: bool = False) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--worker", peer, str(port), key, repr(start), str(n),
         repr(backend_s), "1" if announce else "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def result(proc: subprocess.Popen[str], timeout: float = 60) -> dict[str, Any]:
    out, err = proc.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker failed ({proc.returncode}): {err.strip()[-2000:]}")
    doc: dict[str, Any] = json.loads(lines[-1])
    return doc


def wait_for(proc: subprocess.Popen[str], want: str, timeout: float = 20) -> float:
    """Reads the worker's lines until `want`; the wall time it came."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == want:
            return time.time()
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise RuntimeError(f"the worker never printed {want}: {proc.stderr.read() if proc.stderr else ''}")


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def stampede(peer: str, port: int, processes: int, threads: int, backend_ms: int,
             delay: float) -> dict[str, Any]:
    key = f"stampede-{peer}-{uuid.uuid4().hex}"
    start = time.time() + delay
    kids = [spawn(peer, port, key, start, threads, backend_ms / 1000) for _ in range(processes)]
    docs = [result(k) for k in kids]
    lat = [x for d in docs for x in d["lat_ms"]]
    unserved = sum(d["unserved"] for d in docs)
    return {"calls": sum(d["calls"] for d in docs), "p50": pct(lat, 50), "p99": pct(lat, 99),
            "max": max(lat), "unserved": unserved}


def holder_scenario(peer: str, port: int, hold_s: float, kill_after: float | None) -> dict[str, Any]:
    """A holder loads for hold_s; 3 waiters in another process; the holder is SIGKILLed
    kill_after seconds into its load (None: it lives)."""
    key = f"holder-{peer}-{uuid.uuid4().hex}"
    holder = spawn(peer, port, key, time.time(), 1, hold_s, announce=True)
    try:
        loading = wait_for(holder, "LOADING")
        waiters = spawn(peer, port, key, time.time() + 0.3, 3, 0.2)
        asking = wait_for(waiters, "STARTED")
        killed = None
        if kill_after is not None:
            # The waiters have been asking for a while (those that do not wait for the
            # holder have loaded by now) and the holder has loaded for kill_after seconds.
            time.sleep(max(0.0, loading + kill_after - time.time(), asking + 0.4 - time.time()))
            holder.send_signal(signal.SIGKILL)
            killed = time.time()
        w = result(waiters, timeout=WAIT_CAP_S + 30)
        h_calls = 1
        if kill_after is None:
            result(holder, timeout=hold_s + 30)
    finally:
        if holder.poll() is None and kill_after is not None:
            holder.kill()
        holder.wait()
    served = w["served_at"]
    out: dict[str, Any] = {"calls": h_calls + w["calls"], "unserved": w["unserved"]}
    if killed is not None:
        # Waiters that started a load of their own while the holder was alive did not wait.
        out["waited"] = all(t >= killed for t in w["loads_at"])
        out["after_kill_ms"] = (max(served) - killed) * 1000 if served and not w["unserved"] else None
    return out


def start_redis(tmp: str) -> tuple[subprocess.Popen[bytes], int]:
    exe = shutil.which("redis-server")
    if exe is None:
        raise SystemExit("redis-server is not on PATH")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", tmp, "--loglevel", "warning", "--maxclients", "10000"],
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
    raise SystemExit("redis-server did not start")


def _version(dist: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def fmt_ms(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    root = Path(__file__).resolve().parents[2]
    parser.add_argument("--json", type=Path, default=root / "build" / "bench" / "cache.json")
    parser.add_argument("--runs", type=int, default=3, help="stampede runs per implementation")
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument("--backend-ms", type=int, default=200)
    parser.add_argument("--only", nargs="*", choices=PEERS, help="run only these")
    parser.add_argument("--start-delay", type=float, default=2.5,
                        help="seconds between spawning a stampede's processes and its start")
    parser.add_argument("--kill-after", type=float, default=1.0,
                        help="seconds into its 30 s load the holder is killed")
    parser.add_argument("--slow-s", type=float, default=3.0,
                        help="the slow live holder's backend time, seconds")
    parser.add_argument("--lease-s", type=float, default=2.0,
                        help="keyroute's and aiocache's lease and dogpile's lock_timeout")
    args = parser.parse_args()
    global LEASE_S
    LEASE_S = args.lease_s
    os.environ["KEYROUTE_BENCH_LEASE_S"] = repr(args.lease_s)
    LABEL.update(labels())
    peers = args.only or PEERS
    load_start = [round(x, 2) for x in os.getloadavg()]
    print(f"keyroute {keyroute.__version__}, Python {sys.version.split()[0]}, "
          f"load average {load_start}")

    with tempfile.TemporaryDirectory() as tmp:
        proc, port = start_redis(tmp)
        try:
            runs: dict[str, list[dict[str, Any]]] = {p: [] for p in peers}
            for r in range(max(1, args.runs)):
                for peer in peers:  # interleaved: a slow spell hits every peer alike
                    got = stampede(peer, port, args.processes, args.threads, args.backend_ms,
                                   args.start_delay)
                    runs[peer].append(got)
                    print(f"run {r + 1} {peer:<11} calls {got['calls']:>4}  p50 {got['p50']:7.1f} "
                          f"p99 {got['p99']:7.1f} max {got['max']:7.1f} ms", flush=True)
            takeover = {p: holder_scenario(p, port, 30.0, args.kill_after) for p in peers}
            slow = {p: holder_scenario(p, port, args.slow_s, None) for p in peers}
        finally:
            proc.terminate()
            proc.wait(10)

    load_end = [round(x, 2) for x in os.getloadavg()]
    table: list[dict[str, Any]] = []
    for peer in peers:
        med = sorted(runs[peer], key=lambda g: g["p99"])[len(runs[peer]) // 2]
        table.append({"peer": peer, "label": LABEL[peer], "stampede": med,
                      "calls_all_runs": [g["calls"] for g in runs[peer]],
                      "takeover": takeover[peer], "slow": slow[peer]})

    print()
    print(f"{args.processes} processes x {args.threads} concurrent requests, one cold key, "
          f"{args.backend_ms} ms backend (median-p99 run of {args.runs}); load average "
          f"{load_start} -> {load_end}")
    print()
    print("| implementation | backend calls | p50 | p99 | max | takeover after a kill | "
          "slow live holder: backend calls |")
    print("|---|---|---|---|---|---|---|")
    for row in table:
        s, t, sl = row["stampede"], row["takeover"], row["slow"]
        calls = "/".join(str(c) for c in row["calls_all_runs"])
        print(f"| {row['label']} | {calls} | {s['p50']:.0f} ms | {s['p99']:.0f} ms | "
              f"{s['max']:.0f} ms | {takeover_text(t)} | {sl['calls']} |")
    write_json(args.json, table, args, load_start, load_end)
    return 0


def takeover_text(t: dict[str, Any]) -> str:
    if t["unserved"]:
        return f"not served within {WAIT_CAP_S:.0f} s (the lock has no TTL)"
    last = t.get("after_kill_ms")
    if not t.get("waited", True):
        return f"did not wait: loaded while the holder lived ({t['calls'] - 1} backend calls)"
    return f"{last:.0f} ms"


def write_json(path: Path, table: list[dict[str, Any]], args: argparse.Namespace,
               load_start: list[float], load_end: list[float]) -> None:
    """Rows of the report's common shape (schema 1), each with python.json's fields too."""
    ours = next((r for r in table if r["peer"] == "keyroute"), None)
    rows: list[dict[str, Any]] = []
    shape = f"{args.processes}x{args.threads}, {args.backend_ms} ms backend"

    def add(rid: str, what: str, unit: str, k: float | None, p: float | None, peer: str,
            note: str, headline: bool = False) -> None:
        if k is None:
            return
        ratio = (p / k) if (p is not None and k) else None
        rows.append({
            "id": rid, "group": "Smart cache stampede", "what": f"Python {what}",
            "measure": "wall", "unit": unit, "better": "lower", "keyroute": round(k, 3),
            "peer": LABEL[peer], "peer_version": _version(DIST.get(peer, "")) if peer in DIST else None,
            "peer_value": None if p is None else round(p, 3),
            "ratio": None if ratio is None else round(ratio, 3),
            "same_answers": True, "like_for_like": not note.startswith("not like for like"),
            "headline": headline, "note": note,
            # bench.py's python.json row fields
            "name": f"{what} vs {peer}", "clock": "wall",
            "keyroute_ns": round(k * 1e6, 1) if unit == "ms" else None,
            "peer_ns": round(p * 1e6, 1) if (unit == "ms" and p is not None) else None,
            "target": "",
        })

    if ours is not None:
        for r in table:
            peer = r["peer"]
            if peer == "keyroute":
                continue
            s, o = r["stampede"], ours["stampede"]
            add(f"stampede-calls-{peer}", f"stampede {shape}: backend calls", "calls",
                o["calls"], s["calls"], peer, f"calls in each run: {r['calls_all_runs']}",
                headline=peer == "aiocache")
            for m in ("p50", "p99", "max"):
                add(f"stampede-{m}-{peer}", f"stampede {shape}: {m} latency", "ms", o[m], s[m],
                    peer, "each request timed from its own start; the median-p99 run",
                    headline=(m == "p99" and peer == "dogpile"))
            t, ot = r["takeover"], ours["takeover"]
            last = t.get("after_kill_ms")
            note = (f"holder SIGKILLed {args.kill_after:g} s into a 30 s load; 3 waiters in "
                    "another process, 200 ms backend; time from the kill to the last waiter "
                    "served")
            if t["unserved"]:
                note = f"not like for like: the peer's waiters were not served within {WAIT_CAP_S:.0f} s (its lock has no TTL); " + note
                last = None
            elif not t.get("waited", True):
                note = "not like for like: the peer's waiters did not wait for the holder (they called the backend themselves); " + note
                last = None
            elif peer == "dogpile-2s":
                note += ("; dogpile's lock expires lock_timeout after it was taken, alive holder "
                         "or not (a slower backend is loaded twice: see slow-holder-calls), "
                         "keyroute's lease is renewed every lease/3 while its holder lives, so "
                         "waiters are served within one lease of the last renewal")
            add(f"takeover-{peer}", "takeover after the holder is killed", "ms",
                ot.get("after_kill_ms"), last, peer, note)
            add(f"slow-holder-calls-{peer}",
                f"backend calls with a slow ({args.slow_s:g} s) live holder",
                "calls", ours["slow"]["calls"], r["slow"]["calls"], peer,
                "3 waiters in another process; a lock that expires under a live holder lets "
                "a second load in")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": 1, "suite": "cache", "source": "bindings-py/bench/stampede.py",
        "method": (f"{args.processes} processes x {args.threads} concurrent requests for one "
                   f"cold key, {args.backend_ms} ms backend, one redis-server; the run with the "
                   f"median p99 of {args.runs}; wall clock"),
        "unix_time": int(time.time()),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "keyroute": keyroute.__version__, "python": sys.version.split()[0],
        "platform": platform.platform(), "cpus": os.cpu_count(),
        "load_average": load_start, "load_average_end": load_end,
        "peers": {"aiocache": _version("aiocache"), "dogpile.cache": _version("dogpile.cache"),
                  "redis": _version("redis")},
        "table": table,
        "rows": rows,
    }
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        peer, port, key, start, n, backend_s, announce = sys.argv[2:9]
        worker(peer, int(port), key, float(start), int(n), float(backend_s), announce == "1")
    else:
        raise SystemExit(main())
