"""keyroute serve on a TLS-only, password-protected redis-server, with certificates made
at test time: two instances, one given the CA as URL options (ssl_ca_certs), the other
through KEYROUTE_TLS_CA, share sessions and cache entries and make one load between them
for a cold key; the password shows in no log and no metric label."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import free_port, wait_for

PASSWORD = "serve-tls-s3cret"


def _openssl(cwd: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def tls_redis():
    d = Path(tempfile.mkdtemp(prefix="keyroute-serve-tls-"))
    _openssl(d, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-keyout", "ca.key",
             "-out", "ca.crt", "-subj", "/CN=serve test ca")
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(d, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=server")
    _openssl(d, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-out", "server.crt", "-extfile", "server.ext")
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(d), "--requirepass", PASSWORD,
         "--tls-cert-file", str(d / "server.crt"), "--tls-key-file", str(d / "server.key"),
         "--tls-ca-cert-file", str(d / "ca.crt"), "--tls-auth-clients", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def up() -> bool:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return True
        except OSError:
            return False

    wait_for(up, 10, "TLS redis-server")
    yield port, d / "ca.crt"
    proc.kill()
    proc.wait()
    shutil.rmtree(d, ignore_errors=True)


def test_two_instances_over_tls(serve_factory, py_workers, tls_redis):
    port, ca = tls_redis
    a = serve_factory(redis=f"rediss://:{PASSWORD}@127.0.0.1:{port}?ssl_ca_certs={ca}")
    b = serve_factory(redis=f"redis://:{PASSWORD}@127.0.0.1:{port}", env={"KEYROUTE_TLS_CA": str(ca)})
    with a.client() as ca_, b.client() as cb:
        sid = ca_.request("session.create", {"client": "c-1", "version": "1"}, b"d").body["sid"]
        assert cb.request("session.touch", {"sid": sid}).payload == b"d"
        assert ca_.request("cache.put", {"client": "c-1", "kind": "prefs", "ttl_ms": 60000}, b"v").error_code is None
        assert cb.request("cache.get", {"client": "c-1", "kind": "prefs"}).payload == b"v"
    wa = py_workers(a.workers, ["cards"], delay=0.3)
    wb = py_workers(b.workers, ["cards"], delay=0.3)
    for s in (a, b):
        wait_for(lambda: s.metrics().get('keyroute_serve_workers{kind="cards",state="idle"}') == 1, what="worker")
    with a.client() as ca_, b.client() as cb:
        ids = [ca_.send("product.get", {"client": "cold", "kind": "cards"}) for _ in range(20)]
        jds = [cb.send("product.get", {"client": "cold", "kind": "cards"}) for _ in range(20)]
        replies = [ca_.recv() for _ in ids] + [cb.recv() for _ in jds]
    assert {r.payload for r in replies} == {b"py:cold:cards"}
    assert len(wa.calls) + len(wb.calls) == 1, "one load across both instances, over TLS"
    for s in (a, b):
        labels = [k for k in s.metrics() if k.startswith("keyroute_serve_store{")]
        assert labels and all(PASSWORD not in k for k in labels), labels
        assert PASSWORD not in s.log_text()


def test_an_untrusted_certificate_is_refused_at_start(tls_redis):
    import os

    from conftest import KEYROUTE

    port, _ = tls_redis
    out = subprocess.run(
        [str(KEYROUTE), "serve", "--bind", f"tcp://127.0.0.1:{free_port()}", "--workers-bind",
         f"tcp://127.0.0.1:{free_port()}", "--redis", f"rediss://:{PASSWORD}@127.0.0.1:{port}"],
        capture_output=True, text=True, timeout=30, env=dict(os.environ))
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "TLS" in text and PASSWORD not in text, text
