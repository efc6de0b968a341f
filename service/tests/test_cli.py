"""`keyroute serve` flags and environment: bad values exit 2 with a code before anything
starts; every flag can come from the environment; passwords are never printed."""

from __future__ import annotations

import os
import signal
import subprocess

from conftest import KEYROUTE, free_port, kserve, wait_for


def run(*args: str, env=None, timeout: float = 20) -> subprocess.CompletedProcess:
    return subprocess.run([str(KEYROUTE), "serve", *args], capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def test_bad_flags_exit_2_with_a_code():
    cases = [
        (["--queue", "0"], "[OUT_OF_RANGE]"),
        (["--threads", "-1"], "[OUT_OF_RANGE]"),
        (["--queue", "99999999999999999999"], "[OUT_OF_RANGE]"),
        (["--default-deadline-ms", "0"], "[BAD_TTL]"),
        (["--cap", "cards"], "expected KIND=N"),
        (["--cap", "cards=0"], "at least 1"),
        (["--cap", "a{b}=1"], "--cap"),
        (["--metrics", "localhost"], "[BAD_ADDRESS]"),
        (["--bind", "nonsense://x"], "ZeroMQ"),
    ]
    for args, want in cases:
        p = run(*args)
        assert p.returncode == 2, (args, p.stderr)
        assert want in p.stderr and p.stderr.startswith("keyroute: error: "), (args, p.stderr)


def test_unreachable_redis_never_prints_the_password():
    port = free_port()
    p = run("--redis", f"redis://user:s3cret@127.0.0.1:{port}", "--bind", f"tcp://127.0.0.1:{free_port()}",
            "--workers-bind", f"tcp://127.0.0.1:{free_port()}")
    assert p.returncode == 2 and "s3cret" not in p.stderr + p.stdout
    assert "[REDIS_CONNECT]" in p.stderr


def test_flags_from_the_environment():
    port, wport = free_port(), free_port()
    env = {"KEYROUTE_BIND": f"tcp://127.0.0.1:{port}", "KEYROUTE_WORKERS_BIND": f"tcp://127.0.0.1:{wport}",
           "KEYROUTE_QUEUE": "7", "KEYROUTE_CAP": "cards=1,loans=2", "KEYROUTE_LOG_FORMAT": "json"}
    proc = subprocess.Popen([str(KEYROUTE), "serve"], env=dict(os.environ, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        def up() -> bool:
            with kserve.Client(env["KEYROUTE_BIND"], timeout_s=0.2) as c:
                try:
                    return c.request("ping").header.msg_type == 0x8001
                except TimeoutError:
                    return False
        wait_for(up, 20, "keyroute serve from the environment")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    first = err.splitlines()[0]
    assert first.startswith("{") and '"queue":7' in first and "keyroute serve started" in first
