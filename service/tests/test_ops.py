"""Operations: /healthz and /readyz on the metrics port (the store, --require-kind, a
stop), the request log (a failed or slow request is one info line with its id; a fast
successful one is not logged; no secrets), UNKNOWN_SYSTEM, priority through the service
(real serve, real workers), and the in-memory store's warning that its state is lost on
restart."""

from __future__ import annotations

import json
import re
import signal
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Tuple

from conftest import Redis, kserve, wait_for

ROOT = Path(__file__).resolve().parents[2]


def http(s, path: str) -> Tuple[int, Dict[str, Any]]:
    """(status, JSON body) of GET path on the metrics port."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{s.mport}{path}", timeout=10) as r:
            status, body = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read()
    try:
        return status, json.loads(body or b"{}")
    except ValueError:
        return status, {"text": body.decode(errors="replace")}


def test_healthz_and_readyz_follow_the_required_workers(serve_factory, py_workers):
    s = serve_factory("--require-kind", "cards", "--require-kind", "loans", "--worker-timeout-ms", "600")
    assert http(s, "/healthz") == (200, {"alive": True})
    status, body = http(s, "/readyz")
    assert status == 503 and body["ready"] is False, body
    assert sorted(body["missing_kinds"]) == ["cards", "loans"] and body["store"] == "ok"
    assert any("cards" in r for r in body["reasons"]), body
    # /metrics is still there; anything else is 404.
    assert http(s, "/metrics")[0] == 200
    assert http(s, "/nope")[0] == 404

    cards = py_workers(s.workers, ["cards"])
    wait_for(lambda: http(s, "/readyz")[1]["missing_kinds"] == ["loans"], what="cards registered")
    assert http(s, "/readyz")[0] == 503
    loans = py_workers(s.workers, ["loans", "deposits"])
    wait_for(lambda: http(s, "/readyz")[0] == 200, what="ready")
    assert http(s, "/readyz")[1] == {"ready": True, "store": "ok", "missing_kinds": [], "stopping": False,
                                     "reasons": []}
    # A worker that goes silent is dropped after --worker-timeout-ms: not ready again.
    loans.stop()
    wait_for(lambda: http(s, "/readyz")[1]["missing_kinds"] == ["loans"], what="loans dropped")
    cards.stop()
    assert http(s, "/healthz")[0] == 200


def test_readyz_without_required_kinds_and_while_stopping(serve_factory, py_workers):
    s = serve_factory("--grace-ms", "3000")
    assert http(s, "/readyz") == (200, {"ready": True, "store": "ok", "missing_kinds": [], "stopping": False,
                                        "reasons": []})
    # While it drains after SIGTERM it is alive but not ready.
    w = py_workers(s.workers, ["slow"], delay=2.0)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="slow",state="idle"}') == 1, what="worker")
    with s.client() as c:
        c.send("product.get", {"client": "c", "kind": "slow"})
        wait_for(lambda: len(w.calls) == 1, what="the load")
        s.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: http(s, "/readyz")[1].get("stopping") is True, what="not ready while stopping")
        assert http(s, "/readyz")[0] == 503
        assert http(s, "/healthz")[0] == 200
        assert c.recv().payload == b"py:c:slow"
    assert s.stop() == 0


def test_readyz_follows_the_redis_store(serve_factory):
    r = Redis()
    try:
        s = serve_factory(redis=r.url)
        assert "lost when it stops or restarts" not in s.log_text()
        assert http(s, "/readyz")[0] == 200
        r.stop()
        wait_for(lambda: http(s, "/readyz")[0] == 503, what="not ready with Redis down")
        body = http(s, "/readyz")[1]
        assert body["store"].startswith("REDIS_"), body
        assert any("store" in x for x in body["reasons"]), body
        assert http(s, "/healthz")[0] == 200
        r.start()
        wait_for(lambda: http(s, "/readyz")[0] == 200, timeout=15, what="ready again")
    finally:
        r.remove()


def test_the_memory_store_says_its_state_is_lost_on_restart(serve_factory):
    s = serve_factory()
    assert "lost when it stops or restarts" in s.log_text()


def _log_lines(s, rid: bytes):
    return [line for line in s.log_text().splitlines() if rid.hex() in line]


def test_failed_and_slow_requests_are_logged_with_their_id(serve_factory, py_workers):
    s = serve_factory("--slow-ms", "300")
    py_workers(s.workers, ["slow"], delay=0.5)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="slow",state="idle"}') == 1, what="worker")
    with s.client() as c:
        # A real session (the header's session id is checked): it must never be logged.
        secret_sid = c.request("session.create", {"client": "client-secret-1", "version": "1"}).body["sid"].encode()
        ok = c.request("cache.put", {"client": "client-secret-1", "kind": "k"}, b"value-secret",
                       session_id=secret_sid)
        assert ok.error_code is None
        failed = c.request("cache.get", {"client": "client-secret-1", "kind": "missing"}, session_id=secret_sid)
        assert failed.error_code == "NOT_FOUND"
        slow = c.request("product.get", {"client": "client-secret-1", "kind": "slow"}, session_id=secret_sid)
        assert slow.payload == b"py:client-secret-1:slow"
        refused = c.request("product.get", {"client": "client-secret-1", "kind": "nobody"})
        assert refused.transport_error == "NO_LOADER"
        bad = c.request("cache.get", {"client": "c"}, request_id=b"\x00bad-body-id\xff\xfe\x01\x02")
        assert bad.error_code == "BAD_TYPE"
    ids = {name: r.header.request_id for name, r in
           [("ok", ok), ("failed", failed), ("slow", slow), ("refused", refused), ("bad", bad)]}
    wait_for(lambda: all(_log_lines(s, ids[n]) for n in ("failed", "slow", "refused", "bad")), what="log lines")
    # A fast successful request is not logged; each other one is, once.
    assert _log_lines(s, ids["ok"]) == []
    for name in ("failed", "slow", "refused", "bad"):
        lines = _log_lines(s, ids[name])
        assert len(lines) == 1, (name, lines)
        assert " INFO " in lines[0] and "queue_ms=" in lines[0] and "store_ms=" in lines[0] \
            and "load_ms=" in lines[0], lines[0]
    assert "request failed" in _log_lines(s, ids["failed"])[0]
    assert "type=cache.get " in _log_lines(s, ids["failed"])[0]
    assert "outcome=NOT_FOUND " in _log_lines(s, ids["failed"])[0]
    slow_line = _log_lines(s, ids["slow"])[0]
    assert "slow request" in slow_line
    load_ms = float(re.search(r"load_ms=([0-9.]+)", slow_line).group(1))
    assert 400 <= load_ms < 5000, slow_line
    assert "outcome=NO_LOADER " in _log_lines(s, ids["refused"])[0]
    log = s.log_text()
    for secret in (secret_sid.decode(), "client-secret-1", "value-secret"):
        assert secret not in log


def test_request_log_lines_are_bounded(serve_factory):
    """A client that fails on purpose cannot flood the log: at most 100 such lines a
    second, then a count of those left out."""
    s = serve_factory()
    with s.client() as c:
        ids = [c.send("cache.get", {"client": "c", "kind": f"none-{i}"}) for i in range(2000)]
        for _ in ids:
            assert c.recv().error_code == "NOT_FOUND"
        # One more in the next second reports how many were left out.
        import time

        time.sleep(1.1)
        c.request("cache.get", {"client": "c", "kind": "none"})
    log = s.log_text()
    logged = sum(1 for rid in ids if rid.hex() in log)
    assert 0 < logged <= 200, logged
    assert "left_out=" in log


def test_a_good_header_of_another_system_is_unknown_system(serve_factory):
    s = serve_factory()
    with s.client() as c:
        rid = b"s" * 16
        c.socket.send_multipart([kserve.encode_header(1, rid, system=5), b""])
        r = c.recv()
        assert r.transport_error == "UNKNOWN_SYSTEM" and r.header.request_id == rid, r
        assert r.header.msg_type == 0x8001
        # Another fault too: a bad header.
        c.socket.send_multipart([kserve.encode_header(1, rid, system=5, version=2), b""])
        assert c.recv().transport_error == "BAD_HEADER"
        c.socket.send_multipart([kserve.encode_header(1, rid, system=5)])
        assert c.recv().transport_error == "BAD_HEADER"
        assert c.request("ping").transport_error is None
    m = s.metrics()
    assert m['keyroute_serve_errors_total{type="bad",code="UNKNOWN_SYSTEM"}'] == 1


def test_the_transport_error_table_is_the_protocol():
    """docs/protocol.md's transport error table lists exactly the Python client's names
    (the Rust side checks the same table against the core)."""
    rows = re.findall(r"^\| (\d+) \| `([A-Z_]+)` \|", (ROOT / "docs/protocol.md").read_text(), re.M)
    assert {int(n): name for n, name in rows} == kserve.TRANSPORT_ERRORS


def test_high_priority_requests_are_served_first(serve_factory, py_workers):
    """One thread, held busy by a load; then 6 low-priority and 6 high-priority requests
    queue (lows first); when the thread frees up, every high one runs before any low."""
    s = serve_factory("--threads", "1")
    release = threading.Event()

    def hold(client: str, kind: str) -> bytes:
        release.wait(20)
        return b"held"

    py_workers(s.workers, ["hold"], fn=hold)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="hold",state="idle"}') == 1, what="worker")
    with s.client() as c:
        held = c.send("product.get", {"client": "c", "kind": "hold"})
        wait_for(lambda: s.metrics()["keyroute_serve_threads_busy"] == 1, what="the thread busy")
        low = [c.send("cache.get", {"client": "c", "kind": f"low-{i}"}, priority=1) for i in range(6)]
        high = [c.send("cache.get", {"client": "c", "kind": f"high-{i}"}, priority=9) for i in range(6)]
        wait_for(lambda: s.metrics()["keyroute_serve_queue_depth"] == 12, what="12 queued")
        release.set()
        order = [c.recv().header.request_id for _ in range(13)]
    assert order[0] == held
    assert order[1:7] == high and order[7:] == low, "high priority first, then arrival within a priority"
