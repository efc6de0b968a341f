"""keyroute.serve (pure Python over pyzmq): the header codec, and LoaderWorker against a
real ZeroMQ ROUTER socket playing the broker (the service's own suites, in service/tests,
run it against `keyroute serve`)."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zmq  # noqa: E402
from keyroute import serve  # noqa: E402


def test_header_round_trip_and_layout() -> None:
    h = serve.encode_header(30, b"\x01" * 16, priority=7, deadline_ms=0x01020304, session_id=b"sid")
    assert h[:12] == bytes([1, 0, 0, 30, 0, 0, 0, 7, 1, 2, 3, 4]) and h[28] == 3 and h[29:] == b"sid"
    d = serve.decode_header(h)
    assert (d.msg_type, d.priority, d.deadline_ms, d.request_id, d.session_id) == (30, 7, 0x01020304, b"\x01" * 16, b"sid")
    with pytest.raises(ValueError):
        serve.decode_header(h[:20])
    with pytest.raises(ValueError):
        serve.decode_header(h[:30])  # the session id runs past the end
    with pytest.raises(ValueError):
        serve.encode_header(1, session_id=b"x" * 256)
    assert serve.TYPES["product.get"] == 30 and serve.TRANSPORT_ERRORS[1] == "QUEUE_FULL"


def test_the_header_codec_and_tables_are_cores() -> None:
    """keyroute.serve holds no layout or table of its own: the frames are core's codec
    (keyroute::frame) through the native module, which checks what a hand-written struct
    did not (the version, the system, the 512-byte bound), and its tables are core's."""
    import keyroute
    from keyroute import _keyroute

    h = serve.encode_header(1, b"r" * 16)
    assert len(h) == _keyroute.FRAME_HEADER_FIXED_LEN == 29
    for bad, code in (
        (serve.encode_header(1, version=2), "OUT_OF_RANGE"),
        (serve.encode_header(1, system=9), "OUT_OF_RANGE"),
        (h + b"x" * 600, "TOO_LARGE"),
        (h[:28], "OUT_OF_RANGE"),
    ):
        with pytest.raises(ValueError) as e:
            serve.decode_header(bad)
        assert isinstance(e.value, keyroute.KeyrouteError) and e.value.code == code
    with pytest.raises(keyroute.OutOfRangeError):
        serve.encode_header(0x10000)
    with pytest.raises(keyroute.BadTypeError):
        serve.decode_header("not bytes")  # type: ignore[arg-type]
    assert serve.TYPES == dict(_keyroute.FRAME_MSG_TYPES) and len(serve.TYPES) == 16 and serve.TYPES["session.update"] == 14
    assert serve.TRANSPORT_ERRORS == dict(_keyroute.FRAME_TRANSPORT_ERRORS)
    assert (serve.VERSION, serve.SYSTEM, serve.REPLY_BIT, serve.FLAG_DATA_ERROR) == (1, 0, 0x8000, 1)
    # Not part of the package's top level.
    assert "encode_frame_header" not in keyroute.__all__ and not hasattr(keyroute, "FRAME_MSG_TYPES")


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 255), st.integers(0, 255),
    st.integers(0, 2**32 - 1), st.binary(max_size=20), st.binary(max_size=255),
)
def test_header_round_trip_through_cores_codec(
    msg_type: int, transport_error: int, flags: int, priority: int, deadline_ms: int, rid: bytes, sid: bytes
) -> None:
    h = serve.encode_header(msg_type, rid, priority=priority, deadline_ms=deadline_ms, session_id=sid,
                            transport_error=transport_error, flags=flags)
    assert serve.decode_header(h) == serve.Header(
        1, 0, msg_type, transport_error, flags, priority, deadline_ms, rid[:16].ljust(16, b"\0"), sid)


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.binary(max_size=600), st.integers(), st.text(max_size=8), st.none(), st.lists(st.integers(), max_size=3)))
def test_decode_header_refuses_with_a_code(frame: object) -> None:
    """Any input: a Header, or a keyroute error with its code (never another exception)."""
    import keyroute

    try:
        h = serve.decode_header(frame)  # type: ignore[arg-type]
    except keyroute.KeyrouteError as e:
        assert e.code in ("OUT_OF_RANGE", "TOO_LARGE", "BAD_TYPE"), e
        return
    assert isinstance(frame, bytes) and 29 <= len(frame) <= 512 and isinstance(h, serve.Header)


def test_loader_worker_protocol() -> None:
    ctx = zmq.Context.instance()
    broker = ctx.socket(zmq.ROUTER)
    broker.setsockopt(zmq.LINGER, 0)
    port = broker.bind_to_random_port("tcp://127.0.0.1")

    def load(client: str, kind: str) -> bytes:
        if kind == "boom":
            raise serve.LoadFailed("UPSTREAM_500", "the backend said no")
        if kind == "wrong":
            return "not bytes"  # type: ignore[return-value]
        return f"{client}/{kind}".encode()

    w = serve.LoaderWorker(f"tcp://127.0.0.1:{port}", ["cards", "boom", "wrong"], load, capacity=2, heartbeat_s=0.1)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    try:
        assert broker.poll(5000)
        ident, head, body = broker.recv_multipart()
        assert serve.decode_header(head).msg_type == 100
        assert json.loads(body) == {"kinds": ["cards", "boom", "wrong"], "capacity": 2}
        for fence, kind in ((7, "cards"), (8, "boom"), (9, "wrong")):
            broker.send_multipart([ident, serve.encode_header(101, fence.to_bytes(16, "big")),
                                   json.dumps({"client": "c1", "kind": kind, "fence": fence}).encode()])
        answers = {}
        end = time.monotonic() + 5
        while len(answers) < 3 and time.monotonic() < end:
            if not broker.poll(100):
                continue
            frames = broker.recv_multipart()
            h = serve.decode_header(frames[1])
            if h.msg_type == 100:
                continue  # heartbeat
            b = json.loads(frames[2])
            answers[b["fence"]] = (h.msg_type, b, frames[3] if len(frames) > 3 else None)
        assert answers[7] == (102, {"fence": 7}, b"c1/cards")
        assert answers[8][0] == 103 and answers[8][1]["code"] == "UPSTREAM_500"
        assert answers[9][0] == 103 and answers[9][1]["code"] == "BACKEND_ERROR" and "not bytes" in answers[9][1]["message"]
    finally:
        w.stop()
        t.join(5)
        broker.close(0)
    assert not t.is_alive()


def test_loader_worker_refuses_a_string_of_kinds() -> None:
    with pytest.raises(TypeError):
        serve.LoaderWorker("tcp://127.0.0.1:1", "cards", lambda c, k: b"")
    with pytest.raises(ValueError):
        serve.LoaderWorker("tcp://127.0.0.1:1", ["cards"], lambda c, k: b"", capacity=0)


def test_loader_worker_survives_malformed_loads_and_refuses_undeclared_kinds() -> None:
    """Malformed `load` bodies are skipped (they made `run()` raise and the heartbeats
    stop); a kind the worker did not declare is answered `failed` BAD_KIND without calling
    the load function (it was loaded)."""
    ctx = zmq.Context.instance()
    broker = ctx.socket(zmq.ROUTER)
    broker.setsockopt(zmq.LINGER, 0)
    port = broker.bind_to_random_port("tcp://127.0.0.1")
    called: "list[str]" = []

    def load(client: str, kind: str) -> bytes:
        called.append(kind)
        return f"{client}/{kind}".encode()

    w = serve.LoaderWorker(f"tcp://127.0.0.1:{port}", ["cards"], load, heartbeat_s=0.1)
    t = threading.Thread(target=w.run, daemon=True)
    t.start()
    try:
        assert broker.poll(5000)
        ident = broker.recv_multipart()[0]
        bad_bodies = [b"{not json", b"\xff\xfe", b"[1, 2]", b"null", b"{}", b'{"client": "c1", "kind": "cards"}',
                      b'{"client": 1, "kind": "cards", "fence": 1}', b'{"client": "c1", "kind": ["cards"], "fence": 1}',
                      b'{"client": "c1", "kind": "cards", "fence": "x"}', b'{"client": "c1", "kind": "cards", "fence": -1}']
        for body in bad_bodies:
            broker.send_multipart([ident, serve.encode_header(101, b"\0" * 16), body])
        for fence, kind in ((5, "accounts"), (6, "cards")):
            broker.send_multipart([ident, serve.encode_header(101, fence.to_bytes(16, "big")),
                                   json.dumps({"client": "c1", "kind": kind, "fence": fence}).encode()])
        answers = {}
        heartbeats_after = 0
        end = time.monotonic() + 5
        while (len(answers) < 2 or heartbeats_after < 2) and time.monotonic() < end:
            if not broker.poll(100):
                continue
            frames = broker.recv_multipart()
            h = serve.decode_header(frames[1])
            if h.msg_type == 100:
                heartbeats_after += len(answers) == 2
                continue
            b = json.loads(frames[2])
            answers[b["fence"]] = (h.msg_type, b, frames[3] if len(frames) > 3 else None)
        assert answers[5][0] == 103 and answers[5][1]["code"] == "BAD_KIND", answers
        assert "accounts" in answers[5][1]["message"]
        assert answers[6] == (102, {"fence": 6}, b"c1/cards")
        assert heartbeats_after >= 2, "the worker stopped its heartbeats"
        assert called == ["cards"] and w.loads == 1
        assert t.is_alive()
    finally:
        w.stop()
        t.join(5)
        broker.close(0)
    assert not t.is_alive()
