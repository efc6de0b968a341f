"""keyroute over TLS and with passwords, from Python, on a real redis-server.

Certificates are made at test time with the openssl command (a CA, a server certificate
for 127.0.0.1, and a second CA that signed nothing). The server listens on TLS only
(``--port 0 --tls-port``). Every URL form of the grammar reaches it through the one
connection layer of keyroute-redis; a wrong CA is ``REDIS_TLS``, and no ``repr()`` or
message shows a secret.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import keyroute

SECRET = "Py-s3cret-Qx7"

if shutil.which("redis-server") is None or shutil.which("openssl") is None:
    pytest.skip("redis-server and openssl are needed", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _openssl(cwd: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("certs")
    for ca in ("ca", "other-ca"):
        _openssl(d, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                 "-keyout", f"{ca}.key", "-out", f"{ca}.crt", "-subj", f"/CN=test {ca}")
    (d / "server.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(d, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
             "-out", "server.csr", "-subj", "/CN=server")
    _openssl(d, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
             "-CAcreateserial", "-days", "2", "-out", "server.crt", "-extfile", "server.ext")
    return d


@pytest.fixture(scope="module")
def tls_port(certs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    d = tmp_path_factory.mktemp("redis-tls")
    port = _free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
         "--save", "", "--appendonly", "no", "--requirepass", SECRET,
         "--tls-cert-file", str(certs / "server.crt"), "--tls-key-file", str(certs / "server.key"),
         "--tls-ca-cert-file", str(certs / "ca.crt"), "--tls-auth-clients", "no",
         "--dir", str(d)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert time.monotonic() < deadline and proc.poll() is None, "redis-server did not start"
            time.sleep(0.02)
    yield port
    proc.terminate()
    proc.wait(10)


def test_picks_and_the_smart_cache_over_tls(certs: Path, tls_port: int) -> None:
    url = f"rediss://:{SECRET}@127.0.0.1:{tls_port}?ssl_ca_certs={certs / 'ca.crt'}"
    pool = keyroute.LeastUsed(url, "{py-tls}:pool")
    assert pool.seed(["a", "b"]) == 2
    assert sorted(pool.pick() or "" for _ in range(4)) == ["a", "a", "b", "b"]
    assert SECRET not in repr(pool)

    cache = keyroute.SmartCache(url)
    calls = []

    def load() -> bytes:
        calls.append(1)
        time.sleep(0.2)
        return b"v"

    results: list[bytes] = []
    threads = [threading.Thread(target=lambda: results.append(cache.get_or_load("c1", "k", load)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [b"v"] * 8 and len(calls) == 1
    assert SECRET not in repr(cache)


def test_a_wrong_ca_and_a_wrong_password_are_refused_without_the_secret(
    certs: Path, tls_port: int
) -> None:
    wrong_ca = f"rediss://:{SECRET}@127.0.0.1:{tls_port}?ssl_ca_certs={certs / 'other-ca.crt'}"
    with pytest.raises(keyroute.KeyrouteError) as info:
        keyroute.LeastUsed(wrong_ca, "{py-tls}:pool").pick()
    assert info.value.code == "REDIS_TLS", info.value
    assert SECRET not in str(info.value)
    wrong_pw = f"rediss://:{SECRET}x@127.0.0.1:{tls_port}?ssl_ca_certs={certs / 'ca.crt'}"
    with pytest.raises(keyroute.KeyrouteError) as info:
        keyroute.LeastUsed(wrong_pw, "{py-tls}:pool").pick()
    assert info.value.code == "REDIS_AUTH", info.value
    assert SECRET not in str(info.value)


@pytest.mark.parametrize(
    "url",
    [
        f"redis+unix:///nonexistent.sock?pass={SECRET}",
        f"redis+sentinel://:{SECRET}@127.0.0.1:1/m?sentinel_password={SECRET}",
        f"redis://u:{SECRET}@127.0.0.1:1/0?password={SECRET}",
    ],
)
def test_no_repr_or_message_shows_a_secret(url: str) -> None:
    pool = keyroute.LeastUsed(url, "{p}:pool", timeout=0.3)
    assert SECRET not in repr(pool)
    with pytest.raises(keyroute.KeyrouteError) as info:
        pool.pick()
    assert SECRET not in str(info.value) and SECRET not in repr(info.value)


def test_options_outside_the_grammar_are_refused() -> None:
    for url in [f"redis://:{SECRET}@h:1?colour=red", f"redis://:{SECRET}@h:1?ssl_ca_certs=/x"]:
        with pytest.raises(keyroute.KeyrouteError) as info:
            keyroute.LeastUsed(url, "{p}:pool")
        assert info.value.code == "REDIS_BAD_URL" and SECRET not in str(info.value)
