"""Overload (the reference's incident: the loader stops answering), graceful stop under
load, a worker killed mid-load. Every request gets exactly one reply."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter

import pytest
import zmq

from conftest import kserve, wait_for


def collect(c: kserve.Client, ids, timeout_s: float = 15.0):
    """Replies by request id; fails on a duplicate or an unknown id."""
    got = {}
    end = time.monotonic() + timeout_s
    while len(got) < len(ids) and time.monotonic() < end:
        if not c.socket.poll(200):
            continue
        r = c.recv()
        rid = r.header.request_id
        assert rid in ids, "a reply to no request"
        assert rid not in got, "two replies to one request"
        got[rid] = (r, time.monotonic())
    # Nothing more comes.
    assert not c.socket.poll(300), "a reply past the last request"
    return got


def outcome(r: kserve.Reply) -> str:
    return r.transport_error or r.error_code or "ok"


def test_overload_workers_then_queue_then_refusal(serve_factory, py_workers):
    s = serve_factory("--queue", "50", "--threads", "10", "--cap", "loans=2")
    release = threading.Event()
    w = py_workers(s.workers, ["cards", "loans"], capacity=4,
                   fn=lambda c, k: (release.wait(30), b"late")[1])
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 4, what="worker")
    with s.client() as c:
        sent = {}
        for i in range(1000):
            kind = "loans" if i % 5 == 0 else "cards"
            t0 = time.monotonic()
            rid = c.send("product.get", {"client": f"c{i}", "kind": kind}, deadline_ms=400)
            sent[rid] = (f"c{i}", kind, t0)
        got = collect(c, set(sent))
    release.set()
    assert len(got) == len(sent), "every request gets exactly one reply"
    outcomes = Counter(outcome(r) for r, _ in got.values())
    assert set(outcomes) <= {"LOAD_TIMEOUT", "QUEUE_FULL", "EXPIRED", "AT_CAP"}, outcomes
    # Workers filled first (4 loads), then the threads (10), then the queue (50): the rest
    # was refused at once.
    assert outcomes["QUEUE_FULL"] >= 1000 - 10 - 50 - 50, outcomes
    assert len(w.calls) <= 14 and w.max_active.get("cards", 0) <= 4
    # Caps hold: at most 2 loans loads at once.
    assert w.max_active.get("loans", 0) <= 2
    # Expired items never reached a worker.
    loaded_clients = {cl for cl, _, _ in w.calls}
    expired = {sent[rid][0] for rid, (r, _) in got.items() if outcome(r) in ("EXPIRED", "AT_CAP")}
    assert not (loaded_clients & expired)
    # Refusals are immediate.
    refusals = sorted(t - sent[rid][2] for rid, (r, t) in got.items() if outcome(r) == "QUEUE_FULL")
    assert refusals[len(refusals) // 2] < 0.25
    m = s.metrics()
    assert m['keyroute_serve_errors_total{type="product.get",code="QUEUE_FULL"}'] == outcomes["QUEUE_FULL"]
    assert m["keyroute_serve_queue_capacity"] == 50


def test_graceful_stop_under_load(serve_factory, py_workers):
    s = serve_factory("--threads", "8", "--grace-ms", "1500")
    py_workers(s.workers, ["cards"], delay=0.05, capacity=8)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 8, what="worker")
    with s.client() as c:
        ids = {c.send("product.get", {"client": f"c{i}", "kind": "cards"}, deadline_ms=20000) for i in range(500)}
        time.sleep(0.3)
        s.proc.send_signal(signal.SIGTERM)
        time.sleep(0.1)
        late = {c.send("product.get", {"client": "late", "kind": "cards"})}
        got = collect(c, ids | late, timeout_s=20)
    assert s.proc.wait(10) == 0
    missing = (ids | late) - set(got)
    assert not missing, f"{len(missing)} unanswered: {sorted(int.from_bytes(m[8:], 'big') for m in missing)[:20]}; got {Counter(outcome(r) for r, _ in got.values())}"
    assert set(got) == ids | late
    outcomes = Counter(outcome(r) for r, _ in got.values())
    assert set(outcomes) <= {"ok", "SHUTTING_DOWN"} and outcomes["ok"] > 0 and outcomes["SHUTTING_DOWN"] > 0, outcomes
    assert outcome(got[next(iter(late))][0]) == "SHUTTING_DOWN"
    assert all(r.payload == f"py:{r.payload.decode().split(':')[1]}:cards".encode()
               for r, _ in got.values() if outcome(r) == "ok")
    assert "every accepted request was answered" in s.log_text() or "grace deadline" in s.log_text()


def test_worker_killed_mid_load_fails_over(serve_factory, py_workers, rust_workers):
    s = serve_factory("--worker-timeout-ms", "500")
    rw = rust_workers(s.workers, "cards", delay_ms=10000)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="rust worker")
    with s.client() as c:
        t0 = time.monotonic()
        rid = c.send("product.get", {"client": "c1", "kind": "cards"}, deadline_ms=8000)
        wait_for(lambda: "load c1 cards" in rw.lines, what="the load at the rust worker")
        py_workers(s.workers, ["cards"])
        wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="python worker")
        rw.proc.send_signal(signal.SIGKILL)
        r = c.recv(timeout_s=8)
        assert r.header.request_id == rid and r.payload == b"py:c1:cards"
        assert time.monotonic() - t0 < 5
    assert s.metrics()["keyroute_serve_worker_drops_total"] == 1


def test_worker_killed_with_no_other_fails_clearly(serve_factory, rust_workers):
    s = serve_factory("--worker-timeout-ms", "500")
    rw = rust_workers(s.workers, "cards", delay_ms=10000)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="rust worker")
    with s.client() as c:
        rid = c.send("product.get", {"client": "c1", "kind": "cards"}, deadline_ms=8000)
        wait_for(lambda: "load c1 cards" in rw.lines, what="the load")
        t0 = time.monotonic()
        rw.proc.send_signal(signal.SIGKILL)
        r = c.recv(timeout_s=8)
        assert r.header.request_id == rid and r.transport_error == "NO_LOADER"
        assert time.monotonic() - t0 < 3, "failed well before the deadline"


def test_busy_workers_make_loads_wait_until_the_deadline(serve_factory, py_workers):
    s = serve_factory()
    py_workers(s.workers, ["cards"], delay=1.0)
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    with s.client() as c:
        a = c.send("product.get", {"client": "a", "kind": "cards"}, deadline_ms=3000)
        time.sleep(0.1)
        b = c.send("product.get", {"client": "b", "kind": "cards"}, deadline_ms=300)
        got = collect(c, {a, b})
    assert got[b][0].transport_error == "LOAD_TIMEOUT"
    assert got[a][0].payload == b"py:a:cards"


@pytest.mark.long
def test_rss_flat_at_ten_times_capacity(serve_factory, py_workers):
    """LONG (~80 s): the loader stalls; 10x the capacity is offered for 15 s of warm-up (three
    deadlines) and 60 s measured: RSS stays within +-2 MiB, every request gets one reply."""
    seconds = int(os.environ.get("KEYROUTE_RSS_SECONDS", "60"))
    s = serve_factory()  # defaults: queue 3000, threads 100
    release = threading.Event()
    py_workers(s.workers, ["cards"], capacity=10, fn=lambda c, k: (release.wait(120), b"x")[1])
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 10, what="worker")
    # 10x the capacity (queue + threads) within each deadline (the default, 5 s).
    per_second = 10 * (3000 + 100) // 5
    replies = Counter()
    sent = 0
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.DEALER)  # one socket, used from this thread only
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.connect(s.bind)

    def drain(wait_ms: int = 0) -> None:
        while sock.poll(wait_ms):
            frames = sock.recv_multipart()
            replies[kserve.decode_header(frames[0]).transport_error] += 1
            wait_ms = 0

    rss = []
    head = kserve.encode_header
    t_end = time.monotonic() + 15 + seconds
    i = 0
    while time.monotonic() < t_end:
        t_sec = time.monotonic()
        # Evenly: a slice every 10 ms; replies are read in between.
        for tick in range(100):
            for _ in range(per_second // 100):
                i += 1
                sock.send_multipart([head(30, i.to_bytes(16, "big")),
                                     b'{"client":"c%d","kind":"cards"}' % i])
            sent += per_second // 100
            drain()
            time.sleep(max(0.0, (tick + 1) / 100 - (time.monotonic() - t_sec)))
        if time.monotonic() > t_end - seconds:
            rss.append(s.rss_kib())
    end = time.monotonic() + 10
    while sum(replies.values()) < sent and time.monotonic() < end:
        drain(100)
    sock.close(0)
    release.set()
    total = sum(replies.values())
    print(f"offered {sent} in {15 + seconds} s; replies {dict(replies)}; RSS KiB min {min(rss)} max {max(rss)}: {rss}")
    assert total == sent
    assert replies[1] > 0  # QUEUE_FULL
    assert max(rss) - min(rss) <= 4 * 1024, f"RSS moved {max(rss) - min(rss)} KiB"
