"""`--redis` naming a replica (a real `REPLICAOF`): store writes are answered
STORE_UNAVAILABLE (not a hang, not a crash), the metrics say role="replica", the log says
READONLY, and nothing reaches the master."""

from __future__ import annotations

import time

from conftest import Redis, wait_for


def test_serve_on_a_replica_answers_store_unavailable(serve_factory):
    master, replica = Redis(), Redis()
    try:
        assert replica.cli("REPLICAOF", "127.0.0.1", str(master.port)) == "OK"
        wait_for(lambda: "master_link_status:up" in replica.cli("INFO", "replication"), what="replica link up")
        s = serve_factory(redis=replica.url)
        with s.client() as c:
            for req in (("cache.put", {"client": "c1", "kind": "prefs", "ttl_ms": 60000}, b"v"),
                        ("session.create", {"client": "c1", "version": "1"}, b"d")):
                started = time.monotonic()
                got = c.request(*req, deadline_ms=3000)
                assert got.transport_error == "STORE_UNAVAILABLE", (req, got)
                assert time.monotonic() - started < 2.5, (req, "answered at once, not at the deadline")
            assert c.request("ping").header.msg_type == 0x8001, "serve still answers"
        assert s.proc.poll() is None, s.log_text()
        m = s.metrics()
        assert m.get(f'keyroute_serve_store{{address="{replica.url}",role="replica"}}') == 1, m
        assert m.get('keyroute_serve_errors_total{type="cache.put",code="STORE_UNAVAILABLE"}') == 1, m
        assert m.get('keyroute_serve_errors_total{type="session.create",code="STORE_UNAVAILABLE"}') == 1, m
        assert "READONLY" in s.log_text(), s.log_text()
        assert master.cli("DBSIZE") == "0"

        # The master's URL works: the same requests succeed and write there.
        ok = serve_factory(redis=master.url)
        with ok.client() as c:
            assert c.request("cache.put", {"client": "c1", "kind": "prefs", "ttl_ms": 60000}, b"v").error_code is None
            assert "sid" in c.request("session.create", {"client": "c1", "version": "1"}, b"d").body
        assert master.cli("DBSIZE") != "0"
    finally:
        replica.remove()
        master.remove()
