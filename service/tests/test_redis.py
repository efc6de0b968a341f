"""The Redis store: single flight across two instances (the stampede), Redis restarted
(STORE_UNAVAILABLE while down, then recovery), sessions any instance reads."""

from __future__ import annotations

import time

from conftest import Redis, wait_for


def test_stampede_two_instances_one_load(serve_factory, py_workers, redis_server):
    a = serve_factory(redis=redis_server.url)
    b = serve_factory(redis=redis_server.url)
    wa = py_workers(a.workers, ["cards"], delay=0.3)
    wb = py_workers(b.workers, ["cards"], delay=0.3)
    for s in (a, b):
        wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    ca, cb = a.client(), b.client()
    try:
        ids_a = {ca.send("product.get", {"client": "cold-1", "kind": "cards"}) for _ in range(100)}
        ids_b = {cb.send("product.get", {"client": "cold-1", "kind": "cards"}) for _ in range(100)}
        replies = [ca.recv() for _ in ids_a] + [cb.recv() for _ in ids_b]
    finally:
        ca.close()
        cb.close()
    assert {r.header.request_id for r in replies} == ids_a | ids_b
    payloads = {r.payload for r in replies}
    assert len(payloads) == 1 and payloads.pop() == b"py:cold-1:cards"
    assert len(wa.calls) + len(wb.calls) == 1, "exactly one load reached the workers"
    m = [s.metrics() for s in (a, b)]
    assert sum(x["keyroute_serve_backend_loads_total"] for x in m) == 1
    role = [k for k in m[0] if k.startswith("keyroute_serve_store{")]
    assert role == [f'keyroute_serve_store{{address="{redis_server.url}",role="master"}}']


def test_sessions_and_cache_across_instances(serve_factory, redis_server):
    a = serve_factory(redis=redis_server.url)
    b = serve_factory(redis=redis_server.url)
    with a.client() as ca, b.client() as cb:
        sid = ca.request("session.create", {"client": "c-9", "version": "1"}, b"d").body["sid"]
        r = cb.request("session.touch", {"sid": sid})
        assert r.body["client"] == "c-9" and r.payload == b"d"
        assert cb.request("session.list", {"client": "c-9"}).body["sessions"][0]["sid"] == sid
        assert ca.request("cache.put", {"client": "c-9", "kind": "prefs", "ttl_ms": 60000}, b"v").error_code is None
        assert cb.request("cache.get", {"client": "c-9", "kind": "prefs"}).payload == b"v"
        assert cb.request("cache.invalidate", {"client": "c-9", "kind": "prefs"}).body == {"dropped": True}
        assert ca.request("cache.get", {"client": "c-9", "kind": "prefs"}).error_code == "NOT_FOUND"
        assert ca.request("device.bind", {"device": "dev-1", "client": "c-9"}).error_code is None
        assert cb.request("session.destroy", {"sid": sid}).body == {"destroyed": True}
        assert ca.request("session.touch", {"sid": sid}).error_code == "SESSION_EXPIRED"


def test_redis_restarted(serve_factory, py_workers):
    r = Redis()
    try:
        s = serve_factory(redis=r.url)
        py_workers(s.workers, ["cards"])
        wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
        with s.client() as c:
            assert c.request("product.get", {"client": "c1", "kind": "cards"}).payload == b"py:c1:cards"
            r.stop()
            for req in (("cache.get", {"client": "c1", "kind": "cards"}),
                        ("product.get", {"client": "c2", "kind": "cards"}),
                        ("session.list", {"client": "c1"}),
                        ("cache.put", {"client": "c1", "kind": "x"}, b"v")):
                got = c.request(*req, deadline_ms=3000)
                assert got.transport_error == "STORE_UNAVAILABLE", (req, got)
            wait_for(lambda: s.metrics().get(
                f'keyroute_serve_store{{address="{r.url}",role="unreachable"}}') == 1, what="role unreachable")
            r.start()
            wait_for(lambda: c.request("cache.put", {"client": "c1", "kind": "x"}, b"v2").error_code is None,
                     timeout=10, what="recovery")
            assert c.request("cache.get", {"client": "c1", "kind": "x"}).payload == b"v2"
            assert c.request("product.get", {"client": "c3", "kind": "cards"}).payload == b"py:c3:cards"
    finally:
        r.remove()
