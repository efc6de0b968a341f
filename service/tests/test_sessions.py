"""Sessions slide on use (issue 36, item 1) and session data (item 2), on both stores and
across two instances sharing Redis: every request whose header carries a session id
checks and slides that session in the same atomic call as its data operation; a session
that is not live gets SESSION_EXPIRED and the operation does not run."""

from __future__ import annotations

import time

import pytest

from conftest import Redis, wait_for

TTL_MS = 1000


@pytest.fixture(params=["memory", "redis"])
def store(request):
    """The store a test runs on: `None` (in memory) or a redis-server's URL."""
    if request.param == "memory":
        yield None
        return
    r = Redis()
    yield r.url
    r.remove()


def login(c, client: str = "c-1", data: bytes = b"d0") -> bytes:
    r = c.request("session.create", {"client": client, "version": "v1"}, data)
    assert r.error_code is None, r
    return r.body["sid"].encode()


def test_data_requests_keep_the_session_alive(serve_factory, store):
    # The measurement of the issue: five cache.get calls carrying the sid over 2 s, with
    # a session TTL of 1 s. Each one slides the session, so it is still live after them.
    s = serve_factory("--session-ttl-ms", str(TTL_MS), redis=store)
    with s.client() as c:
        sid = login(c)
        assert c.request("cache.put", {"client": "c-1", "kind": "k"}, b"v", session_id=sid).error_code is None
        for _ in range(5):
            time.sleep(0.4)
            r = c.request("cache.get", {"client": "c-1", "kind": "k"}, session_id=sid)
            assert r.payload == b"v", r
        r = c.request("session.touch", {"sid": sid.decode()})
        assert r.error_code is None and r.payload == b"d0"
        # Without use, it expires.
        time.sleep(TTL_MS / 1000 + 0.3)
        r = c.request("cache.get", {"client": "c-1", "kind": "k"}, session_id=sid)
        assert r.error_code == "SESSION_EXPIRED" and r.header.flags == 1, r


def test_an_expired_session_runs_nothing(serve_factory, py_workers, store):
    s = serve_factory("--session-ttl-ms", "300", redis=store)
    w = py_workers(s.workers, ["cards"])
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    with s.client() as c:
        sid = login(c)
        time.sleep(0.5)
        for req in (("cache.put", {"client": "c-1", "kind": "k"}, b"v"),
                    ("cache.get", {"client": "c-1", "kind": "k"}),
                    ("cache.invalidate", {"client": "c-1", "kind": "k"}),
                    ("product.get", {"client": "c-1", "kind": "cards"}),
                    ("session.list", {"client": "c-1"}),
                    ("device.bind", {"device": "dev-1", "client": "c-1"})):
            r = c.request(*req, session_id=sid)
            assert r.error_code == "SESSION_EXPIRED", (req, r)
        # Nothing ran: no value, no load, no binding.
        assert c.request("cache.get", {"client": "c-1", "kind": "k"}).error_code == "NOT_FOUND"
        assert w.calls == []
        c.send("app.start", {"device": "dev-1"})
        assert c.request("ping").header.msg_type == 0x8001
    assert s.metrics()["keyroute_serve_backend_loads_total"] == 0


def test_product_get_under_a_session(serve_factory, py_workers, store):
    s = serve_factory("--session-ttl-ms", str(TTL_MS), redis=store)
    w = py_workers(s.workers, ["cards"], delay=0.2)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    with s.client() as c:
        sid = login(c)
        # Requests of one session for one cold key share one load (parked).
        ids = {c.send("product.get", {"client": "c-1", "kind": "cards"}, session_id=sid) for _ in range(20)}
        got = [c.recv() for _ in ids]
        assert {r.header.request_id for r in got} == ids
        assert all(r.payload == b"py:c-1:cards" for r in got), got
        assert len(w.calls) == 1
        for _ in range(4):
            time.sleep(0.4)
            assert c.request("product.get", {"client": "c-1", "kind": "cards"}, session_id=sid).payload \
                == b"py:c-1:cards"
        assert c.request("session.touch", {"sid": sid.decode()}).error_code is None


def test_the_header_session_must_be_the_clients(serve_factory, store):
    s = serve_factory(redis=store)
    with s.client() as c:
        mine, theirs = login(c, "c-1"), login(c, "c-2")
        for req in (("cache.put", {"client": "c-1", "kind": "k"}, b"v"),
                    ("cache.get", {"client": "c-1", "kind": "k"}),
                    ("product.get", {"client": "c-1", "kind": "k"}),
                    ("session.list", {"client": "c-1"}),
                    ("session.touch", {"sid": mine.decode()}),
                    ("device.bind", {"device": "dev-1", "client": "c-1"})):
            r = c.request(*req, session_id=theirs)
            assert r.error_code == "SESSION_CLIENT_MISMATCH", (req, r)
        assert c.request("cache.get", {"client": "c-1", "kind": "k"}).error_code == "NOT_FOUND"
        r = c.request("cache.get", {"client": "c-1", "kind": "k"}, session_id=b"not-a-session-id")
        assert r.error_code == "BAD_SESSION_ID"
        # ping is the broker's own: its session id is only echoed.
        assert c.request("ping", session_id=b"anything").header.session_id == b"anything"


def test_require_session(serve_factory, store):
    s = serve_factory("--require-session", "cache.get", "--require-session", "product.get", redis=store,
                      env={"KEYROUTE_REQUIRE_SESSION": "cache.put"})
    with s.client() as c:
        r = c.request("cache.get", {"client": "c-1", "kind": "k"})
        assert r.error_code == "SESSION_EXPIRED" and "--require-session" in r.body["message"]
        # The flags win over the environment (clap's rule): cache.put needs none here.
        assert c.request("cache.put", {"client": "c-1", "kind": "k"}, b"v").error_code is None
        sid = login(c)
        assert c.request("cache.get", {"client": "c-1", "kind": "k"}, session_id=sid).payload == b"v"
    env_only = serve_factory(redis=store, env={"KEYROUTE_REQUIRE_SESSION": "cache.put,session.list"})
    with env_only.client() as c:
        assert c.request("cache.put", {"client": "c-1", "kind": "k"}, b"v").error_code == "SESSION_EXPIRED"
        assert c.request("session.list", {"client": "c-1"}).error_code == "SESSION_EXPIRED"
        assert c.request("cache.get", {"client": "c-1", "kind": "k"}).error_code in ("NOT_FOUND", None)


def test_session_update(serve_factory, store):
    s = serve_factory("--session-ttl-ms", "500", redis=store)
    with s.client() as c:
        sid = login(c, data=b"card=1")
        r = c.request("session.update", {"sid": sid.decode(), "version": "v1"}, b"card=2;amount=10")
        assert r.header.msg_type == 14 | 0x8000 and r.error_code is None, r
        assert r.body["expires_at"] > time.time() * 1000
        assert c.request("session.touch", {"sid": sid.decode()}).payload == b"card=2;amount=10"
        r = c.request("session.update", {"sid": sid.decode(), "version": "v2"}, b"x")
        assert r.error_code == "VERSION_MISMATCH" and "v1" in r.body["message"]
        assert c.request("session.touch", {"sid": sid.decode()}).payload == b"card=2;amount=10"
        assert c.request("session.update", {"sid": sid.decode(), "version": "v1"}).error_code == "BAD_TYPE"
        r = c.request("session.update", {"sid": sid.decode(), "version": "v1"}, b"x" * ((1 << 20) + 1))
        assert r.error_code == "VALUE_TOO_LARGE"
        # An update is a use: it slides the session.
        for _ in range(3):
            time.sleep(0.3)
            assert c.request("session.update", {"sid": sid.decode(), "version": "v1"}, b"y").error_code is None
        time.sleep(0.7)
        r = c.request("session.update", {"sid": sid.decode(), "version": "v1"}, b"z")
        assert r.error_code == "SESSION_EXPIRED"


def test_session_destroy_removes_what_it_owned(serve_factory, redis_server):
    s = serve_factory(redis=redis_server.url)
    with s.client() as c:
        sid = login(c, data=b"payment parameters")
        keep = login(c)
        assert c.request("session.update", {"sid": sid.decode(), "version": "v1"}, b"card=9").error_code is None
        assert c.request("cache.put", {"client": "c-1", "kind": "prefs"}, b"p", session_id=sid).error_code is None
        keys = set(redis_server.cli("--scan", "--pattern", "kr:*").split())
        session_keys = {k for k in keys if ":s:" in k}
        assert len(session_keys) == 2
        assert c.request("session.destroy", {"sid": sid.decode()}).body == {"destroyed": True}
        left = set(redis_server.cli("--scan", "--pattern", "kr:*").split())
        # Its hash (and its data) is gone, and its index entry; the client's other session
        # and the client's cache entry stay.
        assert left == keys - {k for k in session_keys if k.endswith(sid.decode().split(".")[1])}
        assert [x["sid"] for x in c.request("session.list", {"client": "c-1"}).body["sessions"]] == [keep.decode()]
        assert c.request("session.touch", {"sid": sid.decode()}).error_code == "SESSION_EXPIRED"
        assert c.request("cache.get", {"client": "c-1", "kind": "prefs"}, session_id=keep).payload == b"p"


def test_sessions_slide_across_two_instances(serve_factory, redis_server):
    a = serve_factory("--session-ttl-ms", str(TTL_MS), redis=redis_server.url)
    b = serve_factory("--session-ttl-ms", str(TTL_MS), redis=redis_server.url)
    with a.client() as ca, b.client() as cb:
        sid = login(ca)
        # Used only on b, alternately reading and writing: it stays live for a as well.
        for i in range(5):
            time.sleep(0.4)
            assert cb.request("cache.put", {"client": "c-1", "kind": "k"}, b"v%d" % i, session_id=sid).error_code \
                is None
        r = ca.request("cache.get", {"client": "c-1", "kind": "k"}, session_id=sid)
        assert r.payload == b"v4", r
        assert ca.request("session.update", {"sid": sid.decode(), "version": "v1"}, b"new").error_code is None
        assert cb.request("session.touch", {"sid": sid.decode()}).payload == b"new"
        time.sleep(TTL_MS / 1000 + 0.3)
        assert cb.request("cache.get", {"client": "c-1", "kind": "k"}, session_id=sid).error_code == "SESSION_EXPIRED"
        assert ca.request("session.touch", {"sid": sid.decode()}).error_code == "SESSION_EXPIRED"


def test_a_put_fences_a_load_in_flight(serve_factory, py_workers, store):
    """cache.put while product.get's load runs: the load's fill is refused (fenced) and
    the waiting request is answered with the put value."""
    s = serve_factory(redis=store)
    w = py_workers(s.workers, ["cards"], delay=0.5)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    with s.client() as c:
        slow = c.send("product.get", {"client": "c-5", "kind": "cards"})
        wait_for(lambda: len(w.calls) == 1, what="the load in flight")
        assert c.request("cache.put", {"client": "c-5", "kind": "cards"}, b"put").error_code is None
        r = c.recv()
        assert r.header.request_id == slow and r.payload == b"put", r
        assert c.request("cache.get", {"client": "c-5", "kind": "cards"}).payload == b"put"
    wait_for(lambda: s.metrics().get("keyroute_serve_fenced_fills_total") == 1, what="the fill fenced")
