"""The soak (issue 34): a mixed hostile load on one `keyroute serve` on Redis for
KEYROUTE_SOAK_SECONDS (60 in `make test-serve`, 600 in `make soak`): every client message
type, parked floods on cold keys, a client that reads slowly, random frames, Rust workers
killed and restarted, and a Redis restart. It prints RSS and CPU over time and asserts
that every request got exactly one reply, that every value served was its key's (loaded or put), and
that RSS stays at most 64 MB."""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from pathlib import Path

from conftest import kserve, wait_for

SECONDS = float(os.environ.get("KEYROUTE_SOAK_SECONDS", "60"))
RSS_MAX_KIB = 64 * 1024
PUT_VALUE = b"x" * 100  # what cache.put stores (product.get may serve it)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_soak(serve_factory, rust_workers, redis_server):
    s = serve_factory("--max-waiters-per-key", "2000", "--max-deadline-ms", "3000", redis=redis_server.url)
    kinds = ["accounts", "cards", "loans"]
    workers = [rust_workers(s.workers, ",".join(kinds), 20, 8) for _ in range(2)]
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 16, what="workers")
    rng = random.Random(34)
    sent = {}            # request id -> (type, client, kind)
    replies = Counter()  # request id -> replies
    outcomes = Counter()
    wrong = 0
    c = s.client()
    slow = s.client()    # reads one reply in 50
    slow_sent = set()
    t0 = time.monotonic()
    last_report = t0
    redis_restarted = False
    samples = []

    def read(client, limit):
        nonlocal wrong
        n = 0
        while n < limit and client.socket.poll(0):
            r = client.recv()
            rid = r.header.request_id
            n += 1
            if rid not in sent:  # an answer to random frames (no request id of ours)
                continue
            replies[rid] += 1
            ty, cl, kind = sent.get(rid, ("?", "", ""))
            out = r.transport_error or r.error_code or "ok"
            outcomes[(ty, out)] += 1
            if ty == "product.get" and out == "ok" and r.payload not in (f"rust:{cl}:{kind}".encode(), PUT_VALUE):
                wrong += 1

    i = 0
    while time.monotonic() - t0 < SECONDS:
        i += 1
        elapsed = time.monotonic() - t0
        for _ in range(50):
            cl, kind = f"c{rng.randrange(2000)}", rng.choice(kinds)
            op = rng.randrange(10)
            if op < 4:
                body, ty, payload = {"client": cl, "kind": kind}, "product.get", None
            elif op == 4:
                body, ty, payload = {"client": cl, "kind": kind, "ttl_ms": 500}, "cache.put", PUT_VALUE
            elif op == 5:
                body, ty, payload = {"client": cl, "kind": kind}, "cache.get", None
            elif op == 6:
                body, ty, payload = {"client": cl, "kind": kind}, "cache.invalidate", None
            elif op == 7:
                body, ty, payload = {"client": cl, "version": "1"}, "session.create", b"s"
            elif op == 8:
                body, ty, payload = {"client": cl}, "session.list", None
            else:
                body, ty, payload = {"device": f"d{cl}", "client": cl}, "device.bind", None
            rid = c.send(ty, body, payload, deadline_ms=2000)
            sent[rid] = (ty, cl, kind)
        if i % 20 == 0:  # a parked flood on one cold key
            cl = f"cold{i}"
            for _ in range(500):
                rid = c.send("product.get", {"client": cl, "kind": "cards"}, deadline_ms=3000)
                sent[rid] = ("product.get", cl, "cards")
        if i % 7 == 0:  # random frames
            for _ in range(20):
                c.socket.send_multipart([os.urandom(rng.randrange(1, 60)) for _ in range(rng.randrange(1, 4))])
        rid = slow.send("ping")
        slow_sent.add(rid)
        sent[rid] = ("ping", "", "")
        if i % 50 == 0:
            read(slow, 1)
        if i % 100 == 0:  # a worker killed, another started
            victim = workers.pop(0)
            victim.stop(signal.SIGKILL)
            workers.append(rust_workers(s.workers, ",".join(kinds), 20, 8))
        if not redis_restarted and elapsed > SECONDS / 2:
            redis_server.stop()
            time.sleep(0.5)
            redis_server.start()
            redis_restarted = True
        read(c, 100000)
        now = time.monotonic()
        if now - last_report >= 5:
            samples.append((round(now - t0), s.rss_kib(), cpu_seconds(s.proc.pid)))
            print(f"t={samples[-1][0]}s RSS {samples[-1][1] // 1024} MB CPU {samples[-1][2]:.1f} s")
            last_report = now
        time.sleep(0.01)
    # Drain: every request gets its reply (deadlines are at most 3 s).
    end = time.monotonic() + 15
    while time.monotonic() < end and sum(1 for r in sent if replies[r]) < len(sent):
        read(c, 100000)
        read(slow, 100000)
        time.sleep(0.02)
    rss = s.rss_kib()
    missing = [r for r in sent if replies[r] == 0]
    twice = [r for r, n in replies.items() if n > 1]
    print(f"{len(sent)} requests, {sum(replies.values())} replies, {len(missing)} unanswered, "
          f"{len(twice)} answered twice, {wrong} wrong values, RSS {rss // 1024} MB, "
          f"CPU {cpu_seconds(s.proc.pid):.1f} s, outcomes {dict(Counter(o for (_, o) in outcomes.elements()))}")
    assert not missing and not twice, (len(missing), len(twice))
    assert wrong == 0
    assert max(r for _, r, _ in samples + [(0, rss, 0)]) <= RSS_MAX_KIB, samples
    c.close()
    slow.close()
