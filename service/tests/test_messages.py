"""Every message type end to end from a pyzmq client, on the in-memory store, with a
Python worker and the Rust example worker."""

from __future__ import annotations

import time

from conftest import kserve, wait_for


def test_every_message_type(serve_factory, py_workers):
    s = serve_factory()
    w = py_workers(s.workers, ["accounts", "cards"])
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    with s.client() as c:
        r = c.request("ping", session_id=b"sess-1", priority=7)
        assert r.header.msg_type == 1 | 0x8000 and r.header.session_id == b"sess-1"
        assert (r.header.transport_error, r.header.flags, r.payload) == (0, 0, None)

        # sessions
        r = c.request("session.create", {"client": "c-42", "version": "2.14"}, b"\x00session data\xff")
        assert r.header.msg_type == 10 | 0x8000 and r.error_code is None
        sid, exp = r.body["sid"], r.body["expires_at"]
        assert exp > time.time() * 1000
        r = c.request("session.touch", {"sid": sid, "version": "2.14"})
        assert r.body["client"] == "c-42" and r.payload == b"\x00session data\xff"
        r = c.request("session.touch", {"sid": sid, "version": "3.0"})
        assert r.error_code == "VERSION_MISMATCH" and r.header.flags == 1 and "2.14" in r.body["message"]
        r = c.request("session.list", {"client": "c-42"})
        assert [x["sid"] for x in r.body["sessions"]] == [sid]
        assert c.request("session.destroy", {"sid": sid}).body == {"destroyed": True}
        assert c.request("session.destroy", {"sid": sid}).body == {"destroyed": False}
        assert c.request("session.touch", {"sid": sid}).error_code == "SESSION_EXPIRED"
        assert c.request("session.touch", {"sid": "not-a-sid"}).error_code == "BAD_SESSION_ID"

        # cache
        assert c.request("cache.get", {"client": "c-42", "kind": "prefs"}).error_code == "NOT_FOUND"
        r = c.request("cache.put", {"client": "c-42", "kind": "prefs", "ttl_ms": 60000}, b"v1")
        assert r.header.msg_type == 21 | 0x8000 and r.error_code is None
        assert c.request("cache.get", {"client": "c-42", "kind": "prefs"}).payload == b"v1"
        assert c.request("cache.invalidate", {"client": "c-42", "kind": "prefs"}).body == {"dropped": True}
        assert c.request("cache.get", {"client": "c-42", "kind": "prefs"}).error_code == "NOT_FOUND"
        assert c.request("cache.get", {"client": "c-42", "kind": "a{b}"}).error_code == "BAD_KIND"
        assert c.request("cache.get", {"client": "", "kind": "k"}).error_code == "BAD_CLIENT_ID"

        # product.get: loaded once, then a hit
        r = c.request("product.get", {"client": "c-42", "kind": "cards"})
        assert r.header.msg_type == 30 | 0x8000 and r.payload == b"py:c-42:cards"
        assert c.request("product.get", {"client": "c-42", "kind": "cards"}).payload == b"py:c-42:cards"
        assert len(w.calls) == 1
        r = c.request("product.get", {"client": "c-42", "kind": "loans"})
        assert r.transport_error == "NO_LOADER"

        # device.bind + app.start: warms the device's client; no reply
        assert c.request("device.bind", {"device": "ios-7F3A", "client": "c-7"}).error_code is None
        c.send("app.start", {"device": "ios-7F3A"})
        wait_for(lambda: len(w.calls) == 3, what="warm-up loads")
        assert sorted(k for cl, k, _ in w.calls if cl == "c-7") == ["accounts", "cards"]
        # A login after the warm-up finds the values: no new load.
        assert c.request("product.get", {"client": "c-7", "kind": "accounts"}).payload == b"py:c-7:accounts"
        assert len(w.calls) == 3
        # app.start has no reply: the next reply is the ping's.
        assert c.request("ping").header.msg_type == 0x8001
    m = s.metrics()
    assert m['keyroute_serve_requests_total{type="app.start"}'] == 1
    assert m['keyroute_serve_errors_total{type="cache.get",code="NOT_FOUND"}'] == 2
    # Loads the store ran (the one for "loans" found no loader) and loads the workers got.
    assert m["keyroute_serve_backend_loads_total"] == 4
    assert m['keyroute_serve_worker_loads_total{kind="cards",outcome="sent"}'] == 2
    assert m['keyroute_serve_worker_loads_total{kind="accounts",outcome="sent"}'] == 1
    assert m['keyroute_serve_worker_loads_total{kind="other",outcome="no_loader"}'] == 1
    assert m['keyroute_serve_store{address="memory",role="memory"}'] == 1


def test_python_and_rust_workers_serve_loads(serve_factory, py_workers, rust_workers):
    s = serve_factory()
    py_workers(s.workers, ["accounts"])
    rw = rust_workers(s.workers, "cards,fail-x")
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="rust worker")
    with s.client() as c:
        assert c.request("product.get", {"client": "c1", "kind": "accounts"}).payload == b"py:c1:accounts"
        assert c.request("product.get", {"client": "c1", "kind": "cards"}).payload == b"rust:c1:cards"
        r = c.request("product.get", {"client": "c1", "kind": "fail-x"})
        assert r.error_code == "BACKEND_ERROR" and "UPSTREAM_500" in r.body["message"]
        # The failure is remembered for the negative TTL: no second load.
        assert c.request("product.get", {"client": "c1", "kind": "fail-x"}).error_code == "BACKEND_ERROR"
    assert rw.lines.count("load c1 cards") == 1 and rw.lines.count("load c1 fail-x") == 1


def test_least_used_worker_choice(serve_factory, py_workers):
    s = serve_factory()
    a = py_workers(s.workers, ["cards"], delay=0.05)
    b = py_workers(s.workers, ["cards"], delay=0.05)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 2, what="workers")
    with s.client() as c:
        for i in range(10):
            assert c.request("product.get", {"client": f"c{i}", "kind": "cards"}).payload == f"py:c{i}:cards".encode()
    # One at a time, least-used first: the two workers alternate.
    assert (len(a.calls), len(b.calls)) == (5, 5)


def test_single_flight_parks_waiters(serve_factory, py_workers):
    # 1,000 waiters on one cold key with a queue of 10: they take no slot.
    s = serve_factory("--queue", "10", "--threads", "2")
    w = py_workers(s.workers, ["cards"], delay=0.5)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    with s.client() as c:
        ids = {c.send("product.get", {"client": "hot", "kind": "cards"}) for _ in range(1000)}
        wait_for(lambda: s.metrics().get("keyroute_serve_parked_waiters") == 999, what="999 parked")
        assert s.metrics()["keyroute_serve_queue_depth"] == 0
        got = {}
        for _ in range(1000):
            r = c.recv()
            got[r.header.request_id] = r
        assert set(got) == ids
        assert all(r.payload == b"py:hot:cards" for r in got.values())
    assert len(w.calls) == 1
