"""The Python examples run as documented: examples/python/shard_redis_py.py against three
redis-server processes started here (and stopped afterwards)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import redis

import keyroute
from test_redis import start_server

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def test_shard_redis_py_recipe(tmp_path: Path) -> None:
    servers = []
    try:
        for i in range(3):
            d = tmp_path / str(i)
            d.mkdir()
            servers.append(start_server(d))
        nodes = [f"127.0.0.1:{s.port}" for s in servers]
        run = subprocess.run(
            [sys.executable, str(EXAMPLES / "shard_redis_py.py"), *nodes],
            capture_output=True, text=True, timeout=120,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert "ok: every key on the node keyroute picks" in run.stdout
        # Checked from outside the recipe too: each server holds exactly the keys the
        # ring gives it, and every node got some.
        ring = keyroute.Ring(nodes)
        keys = [f"user:{i}:profile" for i in range(1000)]
        owners = ring.get_many(keys)
        for node, s in zip(nodes, servers):
            client = redis.Redis(port=s.port)
            held = sorted(k.decode() for k in client.keys("user:*"))
            assert held == sorted(k for k, o in zip(keys, owners) if o == node)
            assert 200 < len(held) < 500, (node, len(held))
            assert f"{node}: {len(held)} keys" in run.stdout
    finally:
        for s in servers:
            s.stop()


def test_tour_example_runs() -> None:
    run = subprocess.run(
        [sys.executable, str(EXAMPLES / "example.py")], capture_output=True, text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    assert "test -> 127.0.0.1:11211" in run.stdout


def test_bench_writes_its_report(tmp_path: Path) -> None:
    """bench.py records its figures as JSON (a smoke run: one round, no speed asserted)."""
    import json

    out = tmp_path / "python.json"
    bench = Path(__file__).resolve().parents[1] / "bench" / "bench.py"
    run = subprocess.run(
        [sys.executable, str(bench), "--rounds", "1", "--repeat", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(out.read_text())
    assert report["keyroute"] == keyroute.__version__ and report["peers"]["uhashring"]
    rows = report["rows"]
    assert all(r["clock"] in ("cpu", "wall") and r["keyroute_ns"] > 0 for r in rows)
    by_name = {(r["name"], r["clock"]): r for r in rows}
    like = by_name[("Ring.get uhashring profile vs uhashring", "cpu")]
    assert like["like_for_like"] is True and like["peer_ns"] > 0 and like["ratio"] > 0
    # Computed by the bench from the answers (equal weights: libketama agrees too).
    assert isinstance(by_name[("Ring.get libketama vs uhashring get_node", "cpu")]["like_for_like"], bool)
    assert ("LeastUsed.pick vs redis-py register_script", "wall") in by_name
    assert ("LeastUsed.pick vs redis-py register_script", "cpu") in by_name
