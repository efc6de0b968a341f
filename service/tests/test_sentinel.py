"""`keyroute serve --redis redis+sentinel://...` through a Sentinel failover (1 master, 1
replica, 3 Sentinels, all started here): cache.put and session.create keep being answered
while `SENTINEL FAILOVER` promotes the replica, any STORE_UNAVAILABLE stretch is short, and
every write made a second after the switch is on the new master (the old one answers as a
master for ~11 s before the Sentinels demote it, and drops what it took meanwhile: serve
asks the Sentinels at most once a second whether its master is still theirs). A session
and an entry written (and replicated) before the failover are still served after it."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

from conftest import Redis, free_port, wait_for


class Sentinel:
    def __init__(self, master_port: int) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="keyroute-serve-sentinel-")
        conf = Path(self.dir) / "sentinel.conf"
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\nprotected-mode no\ndir {self.dir}\n"
            f"sentinel monitor mymaster 127.0.0.1 {master_port} 2\n"
            "sentinel down-after-milliseconds mymaster 1000\n"
            "sentinel failover-timeout mymaster 3000\n")
        self.proc = subprocess.Popen(["redis-server", str(conf), "--sentinel"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: self.cli("PING") == "PONG", 10, f"Sentinel on {self.port}")

    def cli(self, *args: str) -> str:
        return subprocess.run(["redis-cli", "-p", str(self.port), *args], capture_output=True, text=True,
                              timeout=10).stdout.strip()

    def master_port(self) -> str:
        return self.cli("SENTINEL", "get-master-addr-by-name", "mymaster").split("\n")[-1]

    def remove(self) -> None:
        self.proc.kill()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def entry_value(node: Redis, kind: str) -> str:
    """The cached value of (c1, kind) on `node`, read there directly ('' if none)."""
    keys = node.cli("--scan", "--pattern", f"kr:*:e:{kind}").split()
    return node.cli("HGET", keys[0], "v") if keys else ""


def test_serve_follows_a_sentinel_failover(serve_factory):
    master = Redis()
    replica = Redis()
    sentinels: List[Sentinel] = []
    try:
        assert replica.cli("REPLICAOF", "127.0.0.1", str(master.port)) == "OK"
        wait_for(lambda: "master_link_status:up" in replica.cli("INFO", "replication"), what="replica link up")
        sentinels = [Sentinel(master.port) for _ in range(3)]
        for s in sentinels:
            wait_for(lambda: s.cli("SENTINEL", "sentinels", "mymaster").count("127.0.0.1") >= 2
                     and str(replica.port) in s.cli("SENTINEL", "replicas", "mymaster"), 30, "Sentinels ready")
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in sentinels)
        srv = serve_factory(redis=f"redis+sentinel://{hosts}/mymaster")
        with srv.client() as c:
            sid = c.request("session.create", {"client": "c1", "version": "1"}, b"before").body["sid"]
            assert c.request("cache.put", {"client": "c1", "kind": "before", "ttl_ms": 600000}, b"v0").error_code is None
            assert master.cli("WAIT", "1", "5000") == "1"

            assert sentinels[0].cli("SENTINEL", "FAILOVER", "mymaster") == "OK"
            started = time.monotonic()
            switched = None
            answers: List[Tuple[float, int, str]] = []  # (time, i, outcome)
            i = 0
            while switched is None or time.monotonic() < switched + 2.0:
                assert time.monotonic() - started < 30, "no switch within 30 s"
                if switched is None and sentinels[0].master_port() == str(replica.port):
                    switched = time.monotonic()
                got = c.request("cache.put", {"client": "c1", "kind": f"k{i}", "ttl_ms": 600000},
                                f"v{i}".encode(), deadline_ms=3000)
                outcome = got.transport_error or got.error_code or "ok"
                assert outcome in ("ok", "STORE_UNAVAILABLE"), (i, got)
                answers.append((time.monotonic(), i, outcome))
                i += 1
                time.sleep(0.02)
            assert switched is not None
            # Bounded unavailability: no stretch of refusals longer than 3 s.
            longest, run_start = 0.0, None
            for t, _, outcome in answers:
                if outcome != "ok":
                    run_start = t if run_start is None else run_start
                    longest = max(longest, t - run_start)
                else:
                    run_start = None
            assert longest < 3.0, (longest, answers)
            late = [i for t, i, outcome in answers if outcome == "ok" and t > switched + 1.2]
            assert late, answers
            assert "role:master" in replica.cli("INFO", "replication")
            for i in late:
                # On the new master, and served by serve from there.
                assert entry_value(replica, f"k{i}") == f"v{i}", (i, switched, answers)
                assert c.request("cache.get", {"client": "c1", "kind": f"k{i}"}).payload == f"v{i}".encode()
            # What was written and replicated before the failover is still there.
            assert c.request("session.touch", {"sid": sid}).payload == b"before"
            assert c.request("cache.get", {"client": "c1", "kind": "before"}).payload == b"v0"
            new_sid = c.request("session.create", {"client": "c1", "version": "1"}, b"after").body["sid"]
            assert c.request("session.touch", {"sid": new_sid}).payload == b"after"
            assert len(replica.cli("--scan", "--pattern", "kr:*:s:*").split()) == 2, "both sessions on the new master"
        assert srv.proc.poll() is None, srv.log_text()
    finally:
        for s in sentinels:
            s.remove()
        replica.remove()
        master.remove()
