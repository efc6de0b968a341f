"""CURVE on both sockets and the ZAP allow-lists (issue 34 item 7): a worker whose key is
not listed never registers, a listed one is served; a client without CURVE, or with an
unlisted key, gets nothing; a socket bound beyond loopback without CURVE is warned about;
key files are bounded and their secrets never printed."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import zmq
import zmq.auth

from conftest import KEYROUTE, free_port, kserve, wait_for


def keys(tmp_path: Path):
    """The service's certificate, a listed worker, an unlisted one, a listed client."""
    d = tmp_path / "certs"
    d.mkdir()
    _, server_secret = zmq.auth.create_certificates(str(d), "server")
    workers = tmp_path / "workers"
    workers.mkdir()
    zmq.auth.create_certificates(str(workers), "loader1")  # loader1.key is read, .key_secret skipped
    listed = kserve.Curve.from_files(str(d / "server.key"), str(workers / "loader1.key_secret"))
    server_public, _ = zmq.auth.load_certificate(str(d / "server.key"))
    pub, sec = zmq.curve_keypair()
    unlisted = kserve.Curve(server_public, pub, sec)
    cpub, csec = zmq.curve_keypair()
    client = kserve.Curve(server_public, cpub, csec)
    (tmp_path / "clients.keys").write_text(f"# the front servers\n{cpub.decode()}\n")
    args = ["--curve-secret-key", server_secret, "--curve-worker-keys", str(workers),
            "--curve-client-keys", str(tmp_path / "clients.keys")]
    return args, listed, unlisted, client


def test_an_unknown_worker_key_is_refused_and_a_listed_one_served(tmp_path, serve_factory, py_workers):
    args, listed, unlisted, client = keys(tmp_path)
    s = serve_factory(*args, curve=client)
    py_workers(s.workers, ["cards"], fn=lambda c, k: b"forged", curve=unlisted)
    wait_for(lambda: s.metrics().get('keyroute_serve_auth_total{socket="workers",outcome="refused"}', 0) >= 1,
             what="the unlisted worker refused")
    time.sleep(0.5)  # it keeps trying; it must never register
    assert not s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}')
    with s.client() as c:
        r = c.request("product.get", {"client": "c1", "kind": "cards"})
        assert r.transport_error == "NO_LOADER", r
        py_workers(s.workers, ["cards"], curve=listed)
        wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1,
                 what="the listed worker")
        r = c.request("product.get", {"client": "c2", "kind": "cards"})
        assert r.payload == b"py:c2:cards", r
    m = s.metrics()
    assert m['keyroute_serve_auth_total{socket="workers",outcome="allowed"}'] >= 1
    log = s.log_text()
    assert "not on the allow-list" in log and unlisted.public_key.decode() in log
    assert listed.secret_key.decode() not in log and unlisted.secret_key.decode() not in log


def test_a_listed_rust_worker_is_served(tmp_path, serve_factory, rust_workers):
    args, listed, unlisted, client = keys(tmp_path)
    s = serve_factory(*args, curve=client)
    rust_workers(s.workers, "cards", env={"KEYROUTE_CURVE_SERVER_KEY": listed.server_key.decode(),
                                          "KEYROUTE_CURVE_KEY_FILE": str(tmp_path / "workers" / "loader1.key_secret")})
    wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="the rust worker")
    with s.client() as c:
        assert c.request("product.get", {"client": "c1", "kind": "cards"}).payload == b"rust:c1:cards"


def test_a_client_without_curve_or_with_an_unlisted_key_gets_nothing(tmp_path, serve_factory):
    args, listed, unlisted, client = keys(tmp_path)
    s = serve_factory(*args, curve=client)
    with s.client() as c:
        assert c.request("ping").header.msg_type == 0x8001
    for curve in (None, kserve.Curve(client.server_key, unlisted.public_key, unlisted.secret_key)):
        with kserve.Client(s.bind, timeout_s=0.5, curve=curve) as c:
            try:
                r = c.request("ping")
            except TimeoutError:
                continue
            raise AssertionError(f"answered a client it should not admit: {r}")
    wait_for(lambda: s.metrics().get('keyroute_serve_auth_total{socket="clients",outcome="refused"}', 0) >= 1,
             what="the unlisted client refused")


def test_a_socket_beyond_loopback_without_curve_is_warned_about(tmp_path):
    port, wport = free_port(), free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        p = subprocess.Popen([str(KEYROUTE), "serve", "--bind", f"tcp://0.0.0.0:{port}",
                              "--workers-bind", f"tcp://127.0.0.1:{wport}"],
                             stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ, KEYROUTE_LOG="info"))
        try:
            wait_for(lambda: "keyroute serve started" in log.read_text(), what="start")
            time.sleep(0.2)
        finally:
            p.terminate()
            p.wait(10)
    text = log.read_text()
    assert "beyond loopback without CURVE" in text and f"0.0.0.0:{port}" in text, text
    assert f"127.0.0.1:{wport}" not in text.split("beyond loopback")[0].splitlines()[-1]


def run_serve(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(KEYROUTE), "serve", "--bind", f"tcp://127.0.0.1:{free_port()}",
                           "--workers-bind", f"tcp://127.0.0.1:{free_port()}", *args],
                          capture_output=True, text=True, timeout=20)


def test_key_files_are_bounded_and_their_secrets_never_printed(tmp_path):
    pub, sec = zmq.curve_keypair()
    good = tmp_path / "server.secret"
    good.write_text(sec.decode() + "\n")
    leaky = tmp_path / "workers.keys"
    leaky.write_text(f'public-key = "{pub.decode()}"\nsecret-key = "{sec.decode()}"\n')
    cases = [
        (["--curve-secret-key", "/dev/zero", "--curve-worker-keys", str(leaky)], "longer than"),
        (["--curve-secret-key", str(good), "--curve-worker-keys", str(leaky)], "secret key"),
        (["--curve-secret-key", str(good)], "needs --curve-worker-keys"),
        (["--curve-worker-keys", str(leaky)], "need --curve-secret-key"),
    ]
    for args, why in cases:
        r = run_serve(*args)
        out = r.stdout + r.stderr
        assert r.returncode != 0 and why in out, (args, out)
        assert sec.decode() not in out, out
    bad_list = tmp_path / "bad.keys"
    bad_list.write_text("not a key\n")
    r = run_serve("--curve-secret-key", str(good), "--curve-worker-keys", str(bad_list))
    assert r.returncode != 0 and "[BAD_CONFIG]" in r.stderr and "bad.keys: line 1" in r.stderr, r.stderr
