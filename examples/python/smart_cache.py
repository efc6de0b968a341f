"""keyroute's smart cache from Python: a bank's front server.

    python examples/python/smart_cache.py redis://127.0.0.1:6379

* Product lists come from a slow backend (~200 ms). Twenty requests arriving at once
  cost one backend call -- and so would twenty front servers: the lease is in Redis.
* At app start the device names the client, and its products are loaded before login.
* Sessions any server can read, with a sliding lifetime and a clear "log in again".
* A failing backend is told to every waiter, and not called again for the negative TTL.

Run by `make test-python` against a redis-server the test starts.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import keyroute

backend_calls = 0
lock = threading.Lock()


def products_of(client: str, kind: str) -> bytes:
    """The slow backend: ~200 ms per call."""
    global backend_calls
    with lock:
        backend_calls += 1
    time.sleep(0.2)
    return json.dumps({"client": client, "kind": kind, "items": [f"{kind}-1"]}).encode()


def main(url: str) -> None:
    # One of each per process (thread-safe); connections open and scripts load here.
    cache = keyroute.SmartCache(url, lease_ms=2000, soft_ttl_ms=60_000, neg_ttl_ms=1000)
    sessions = keyroute.Sessions(url, ttl_ms=30 * 60 * 1000, max_age_ms=12 * 3600 * 1000)
    devices = keyroute.Devices(url)
    client = f"client-{time.time_ns()}"

    # 1. Twenty concurrent requests for one cold key: one backend call.
    results: list[bytes] = []

    def request() -> None:
        results.append(cache.get_or_load(client, "accounts",
                                         lambda: products_of(client, "accounts")))

    threads = [threading.Thread(target=request) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1
    print(f"ok: 20 concurrent requests, {backend_calls} backend call")

    # 2. Login: the device is bound to the client (for 90 days) and a session is made.
    device = f"ios-{time.time_ns()}"
    devices.bind(device, client, 90 * 86400 * 1000)
    sid = sessions.create(client, "app-2.14", b'{"lang": "en"}')

    # 3. Next app start, before login: warm the client's products by device. "accounts"
    #    is fresh already, so only the other kinds are loaded (in parallel).
    report = cache.warm(device, ["accounts", "cards", "deposits"], products_of)
    assert report.client == client and report.skipped == ["accounts"]
    print(f"ok: warm-up loaded {sorted(report.granted)} before login, skipped {report.skipped}")

    # 4. Any server reads the session from its id alone, and slides its expiry.
    session = sessions.touch(sid, version="app-2.14")
    assert session.client == client and json.loads(session.data) == {"lang": "en"}
    try:
        sessions.touch(sid, version="app-3.0")
    except keyroute.SessionVersionMismatch as e:
        print(f"ok: {e.code}: made by {e.stored_version}")
    sessions.destroy(sid)
    try:
        sessions.touch(sid)
    except keyroute.SessionExpired:
        print("ok: session expired: log in again")

    # 5. The backend fails: the caller gets BackendError (the loader's exception as its
    #    cause); others get it from the cache for neg_ttl_ms instead of calling again.
    def loans_down() -> bytes:
        raise ConnectionError("loans service unavailable")

    for attempt in range(2):
        try:
            cache.get_or_load(client, "loans", loans_down, timeout_ms=3000)
        except keyroute.BackendError as e:
            print(f"ok: {e.code} ({e.backend_code}: {e.backend_message}), cached={e.cached}")

    # 6. The client opened a card: drop the cached list (a load in flight is discarded).
    cache.invalidate(client, "cards")
    print("stats:", cache.stats())


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "redis://127.0.0.1:6379")
