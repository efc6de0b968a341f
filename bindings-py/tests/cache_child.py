"""Child processes of the smart-cache tests (run as `python cache_child.py MODE ...`).

    stampede URL standalone|cluster START_WALL_S THREADS BACKEND_MS CLIENT
        makes its SmartCache first (connections open, scripts loaded), then THREADS threads
        wait for the wall-clock instant START_WALL_S and all ask for one cold key; prints
        one JSON line: {"lat_ms": [...], "calls": n, "stats": {...}}
    holder URL LEASE_MS LOAD_MS VALUE KIND CLIENT
        loads KIND with a loader that prints LOADING and takes LOAD_MS; if it lives, prints
        RESULT <value> and FENCED <fenced fills>
"""

from __future__ import annotations

import json
import sys
import threading
import time

import keyroute


def stampede(url: str, mode: str, start: float, threads: int, backend_ms: int, client: str) -> None:
    cache = keyroute.SmartCache(url, cluster=mode == "cluster")
    calls = 0
    lock = threading.Lock()
    lat: list[float] = []
    errors: list[str] = []
    ready = threading.Barrier(threads)

    def load() -> bytes:
        nonlocal calls
        with lock:
            calls += 1
        time.sleep(backend_ms / 1000)
        return b"accounts of " + client.encode()

    def run() -> None:
        ready.wait()
        left = start - time.time()
        if left > 0:
            time.sleep(left)
        began = time.perf_counter()
        try:
            v = cache.get_or_load(client, "accounts", load, timeout_ms=10_000)
            took = (time.perf_counter() - began) * 1000
            assert v == b"accounts of " + client.encode(), v
        except BaseException as e:  # reported to the parent, which fails the test
            with lock:
                errors.append(repr(e))
                if len(lat) + len(errors) == threads:
                    done.set()
            return
        with lock:
            lat.append(took)
            if len(lat) + len(errors) == threads:
                done.set()
        # Exit together once every request is served (as a server's pooled threads would
        # not exit): a thread's exit takes CPU and the GIL from requests still being served.
        done.wait(60)

    # The main thread sleeps until the last request is served (joining thread after thread
    # would wake it, and make it take the GIL, while requests are still being served).
    done = threading.Event()
    ts = [threading.Thread(target=run) for _ in range(threads)]
    for t in ts:
        t.start()
    done.wait(60)
    for t in ts:
        t.join()
    print(json.dumps({"lat_ms": lat, "calls": calls, "stats": cache.stats(), "errors": errors}),
          flush=True)


def holder(url: str, lease_ms: int, load_ms: int, value: str, kind: str, client: str) -> None:
    cache = keyroute.SmartCache(url, lease_ms=lease_ms)

    def load() -> bytes:
        print("LOADING", flush=True)
        time.sleep(load_ms / 1000)
        return value.encode()

    got = cache.get_or_load(client, kind, load, timeout_ms=30_000)
    print(f"RESULT {got.decode()}", flush=True)
    print(f"FENCED {cache.stats()['fenced_fills']}", flush=True)


def main() -> None:
    mode, *args = sys.argv[1:]
    if mode == "stampede":
        url, kind, start, threads, backend, client = args
        stampede(url, kind, float(start), int(threads), int(backend), client)
    elif mode == "holder":
        url, lease, load, value, kind, client = args
        holder(url, int(lease), int(load), value, kind, client)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
