"""Bad input: garbage frames, short and long headers, wrong version or system, unknown
types, huge session ids, bodies that are not JSON objects, frames over the maximum. The
service answers each with a clear error, never crashes, and other clients are served
meanwhile."""

from __future__ import annotations

import struct

import zmq

from conftest import kserve

H = kserve.encode_header


def raw(c: kserve.Client, frames):
    c.socket.send_multipart(frames)
    return c.recv()


def test_bad_frames_get_clear_errors(serve_factory):
    s = serve_factory("--max-frame", str(1 << 20))
    with s.client() as c, s.client() as other:
        rid = b"r" * 16
        cases = [
            ([b"garbage"], "BAD_HEADER"),
            ([b""], "BAD_HEADER"),
            ([H(1, rid)[:28], b""], "BAD_HEADER"),                      # short
            ([H(1, rid) + b"x" * 600, b""], "BAD_HEADER"),               # long (> 512)
            ([H(1, rid, version=2), b""], "BAD_HEADER"),                 # wrong version
            ([H(1, rid, system=9), b""], "UNKNOWN_SYSTEM"),              # another system
            ([H(1, rid)[:28] + bytes([200]) + b"s" * 10, b""], "BAD_HEADER"),  # sid length past the end
            ([H(1, rid)], "BAD_HEADER"),                                 # no body frame
            ([H(1, rid), b"", b"", b""], "BAD_HEADER"),                  # four frames
            ([H(999, rid), b""], "UNKNOWN_TYPE"),
            ([H(0x8001, rid), b""], "UNKNOWN_TYPE"),                     # a reply sent as a request
            ([H(101, rid), b"{}"], "UNKNOWN_TYPE"),                      # a broker->worker type
            ([H(102, rid), b"{}"], "UNKNOWN_TYPE"),                      # a worker type on the client socket
        ]
        for frames, want in cases:
            r = raw(c, frames)
            assert r.transport_error == want, (frames[0][:40], r)
            assert r.header.msg_type & 0x8000
            # Other clients are unaffected.
            assert other.request("ping").header.transport_error == 0
        # The request id is echoed even on a refusal, when it was there.
        assert raw(c, [H(999, rid), b""]).header.request_id == rid
        # Reserved bytes after the session id are ignored (the header grows at its end).
        r = raw(c, [H(1, rid, session_id=b"abc") + b"\x00\x07", b""])
        assert r.transport_error is None and r.header.session_id == b"abc"
        # A 255-byte session id is echoed.
        sid = bytes(range(255))
        assert c.request("ping", session_id=sid).header.session_id == sid

        body_cases = [
            (b"not json", "BAD_TYPE"),
            (b"[1, 2]", "BAD_TYPE"),
            (b'"text"', "BAD_TYPE"),
            (b'{"client": 1, "kind": "k"}', "BAD_TYPE"),
            (b'{"client": "c"}', "BAD_TYPE"),
            (b'{"client": "c", "kind": "k", "extra": 1}', "BAD_TYPE"),
            (b"\xff\xfe", "BAD_TYPE"),
            (b'{"client": "c", "kind": "' + b"k" * 300 + b'"}', "BAD_KIND"),
        ]
        for body, want in body_cases:
            r = raw(c, [H(20, rid), body])
            assert r.error_code == want and r.header.flags == 1, (body, r)
            assert "message" in r.body
        # cache.put without its payload; a payload where none is taken.
        assert raw(c, [H(21, rid), b'{"client":"c","kind":"k"}']).error_code == "BAD_TYPE"
        assert raw(c, [H(20, rid), b'{"client":"c","kind":"k"}', b"x"]).error_code == "BAD_TYPE"
        # Over --max-frame: a clear error, nothing stored.
        big = b"\x01" * (2 << 20)
        r = raw(c, [H(21, rid), b'{"client":"c","kind":"k"}', big])
        assert r.error_code == "VALUE_TOO_LARGE"
        assert c.request("cache.get", {"client": "c", "kind": "k"}).error_code == "NOT_FOUND"
        # A payload at the maximum is fine.
        ok = b"\x02" * (1 << 20)
        assert c.request("cache.put", {"client": "c", "kind": "k"}, ok).error_code in (None, "VALUE_TOO_LARGE")
    assert s.proc.poll() is None


def test_100_mb_payload_and_garbage_flood(serve_factory):
    s = serve_factory()  # default --max-frame 16 MiB
    with s.client(timeout_s=30) as c, s.client() as other:
        r = c.request("cache.put", {"client": "c", "kind": "k"}, b"\x00" * (100 * 1000 * 1000))
        assert r.error_code == "VALUE_TOO_LARGE"
        assert other.request("ping").header.transport_error == 0
        # A flood of random frames from one client.
        import os
        for i in range(2000):
            n = 1 + (i % 7)
            c.socket.send_multipart([os.urandom((i * 37) % 80) for _ in range(n)])
        # Every message is answered (an empty first frame is taken as a REQ socket's
        # delimiter and echoed before the header).
        answered = 0
        while c.socket.poll(2000):
            frames = c.socket.recv_multipart()
            if frames[0] == b"":
                frames = frames[1:]
            h = kserve.decode_header(frames[0])
            assert h.msg_type & 0x8000 and h.transport_error in (4, 5)
            answered += 1
        assert answered == 2000
        assert other.request("ping").header.transport_error == 0
    # RSS is back to normal once the 100 MB frame is gone.
    assert s.rss_kib() < 150 * 1024
    assert s.proc.poll() is None


def test_req_socket_envelope(serve_factory):
    # A REQ socket adds an empty delimiter frame; the reply carries it back.
    s = serve_factory()
    ctx = zmq.Context.instance()
    req = ctx.socket(zmq.REQ)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(s.bind)
    try:
        req.send_multipart([H(1, b"q" * 16), b""])
        assert req.poll(5000)
        frames = req.recv_multipart()
        h = kserve.decode_header(frames[0])
        assert h.msg_type == 0x8001 and h.request_id == b"q" * 16
    finally:
        req.close(0)


def test_worker_socket_bad_input(serve_factory):
    s = serve_factory()
    ctx = zmq.Context.instance()
    d = ctx.socket(zmq.DEALER)
    d.setsockopt(zmq.LINGER, 0)
    d.connect(s.workers)
    try:
        for frames in ([b"junk"], [H(100), b"not json"], [H(100), b'{"kinds": ["a{"], "capacity": 1}'],
                       [H(100), b'{"kinds": ["a"], "capacity": 0}'], [H(1), b""],
                       [H(102), b'{"fence": 12345}', b"late"]):
            d.send_multipart(frames)
        got = 0
        while d.poll(1000):
            d.recv_multipart()
            got += 1
        assert got == 5  # the unknown fence is dropped silently (a late answer)
        with s.client() as c:
            assert c.request("ping").header.transport_error == 0
    finally:
        d.close(0)
