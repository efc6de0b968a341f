"""Talk to ``keyroute serve`` over ZeroMQ (pure Python, on pyzmq).

* :class:`LoaderWorker` -- a loader worker: declares its kinds, heartbeats, and answers
  each ``load`` with ``fn(client, kind) -> bytes``::

      from keyroute.serve import LoaderWorker

      def load(client: str, kind: str) -> bytes:
          return backend.fetch(client, kind)      # ~200 ms, once across every instance

      LoaderWorker("tcp://127.0.0.1:5556", ["accounts", "cards"], load).run()

* :class:`Client` -- a small client (a DEALER socket) for any message type::

      from keyroute.serve import Client
      with Client("tcp://127.0.0.1:5555") as c:
          reply = c.request("product.get", {"client": "c-42", "kind": "cards"})
          reply.payload   # the value, bytes

* :func:`encode_header` / :func:`decode_header` -- the binary header (docs/protocol.md).

``pip install pyzmq`` is the only requirement; nothing is started at import.
"""

from __future__ import annotations

import json
import os
import queue
import struct
import threading
import time
from collections import deque
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

import zmq

__all__ = [
    "VERSION",
    "SYSTEM",
    "REPLY_BIT",
    "FLAG_DATA_ERROR",
    "TYPES",
    "TRANSPORT_ERRORS",
    "Header",
    "Reply",
    "encode_header",
    "decode_header",
    "Client",
    "Curve",
    "LoaderWorker",
    "LoadFailed",
]

VERSION = 1
SYSTEM = 0
REPLY_BIT = 0x8000
FLAG_DATA_ERROR = 1
_FIXED = struct.Struct(">BBHHBBI16sB")  # 29 bytes; the session id follows

#: Message types by name (docs/protocol.md).
TYPES: Dict[str, int] = {
    "ping": 1,
    "session.create": 10,
    "session.touch": 11,
    "session.destroy": 12,
    "session.list": 13,
    "session.update": 14,
    "cache.get": 20,
    "cache.put": 21,
    "cache.invalidate": 22,
    "product.get": 30,
    "app.start": 31,
    "device.bind": 32,
    "worker.ready": 100,
    "load": 101,
    "loaded": 102,
    "failed": 103,
}

#: Transport errors by number.
TRANSPORT_ERRORS: Dict[int, str] = {
    1: "QUEUE_FULL",
    2: "EXPIRED",
    3: "SHUTTING_DOWN",
    4: "BAD_HEADER",
    5: "UNKNOWN_TYPE",
    6: "NO_LOADER",
    7: "STORE_UNAVAILABLE",
    8: "LOAD_TIMEOUT",
    9: "AT_CAP",
    10: "TOO_MANY_WAITERS",
    11: "STORE_FULL",
    12: "UNKNOWN_SYSTEM",
}


class Header(NamedTuple):
    """Every field of the header."""

    version: int
    system: int
    msg_type: int
    transport_error: int
    flags: int
    priority: int
    deadline_ms: int
    request_id: bytes
    session_id: bytes


class Reply(NamedTuple):
    """A reply: its header, its JSON body (``{}`` when empty) and its payload, if any."""

    header: Header
    body: Dict[str, Any]
    payload: Optional[bytes]

    @property
    def transport_error(self) -> Optional[str]:
        """The transport error's name, or None."""
        t = self.header.transport_error
        return TRANSPORT_ERRORS.get(t, str(t)) if t else None

    @property
    def error_code(self) -> Optional[str]:
        """The data error's code (flag bit 0), or None."""
        if self.header.flags & FLAG_DATA_ERROR:
            return str(self.body.get("code"))
        return None


def encode_header(
    msg_type: int,
    request_id: bytes = b"\0" * 16,
    *,
    priority: int = 0,
    deadline_ms: int = 0,
    session_id: bytes = b"",
    transport_error: int = 0,
    flags: int = 0,
    version: int = VERSION,
    system: int = SYSTEM,
) -> bytes:
    """The header frame (big-endian). ``request_id`` is padded or cut to 16 bytes."""
    if len(session_id) > 255:
        raise ValueError("a session id is at most 255 bytes")
    rid = request_id[:16].ljust(16, b"\0")
    return (
        _FIXED.pack(
            version,
            system,
            msg_type,
            transport_error,
            flags,
            priority,
            deadline_ms,
            rid,
            len(session_id),
        )
        + session_id
    )


def decode_header(frame: bytes) -> Header:
    """Reads a header frame; ``ValueError`` when it is too short."""
    if len(frame) < _FIXED.size:
        raise ValueError(f"header of {len(frame)} bytes is shorter than 29")
    v, s, t, te, fl, pr, dl, rid, n = _FIXED.unpack_from(frame)
    if len(frame) < _FIXED.size + n:
        raise ValueError("the session id runs past the header")
    return Header(v, s, t, te, fl, pr, dl, rid, bytes(frame[_FIXED.size : _FIXED.size + n]))


def _type_number(msg_type: "int | str") -> int:
    return TYPES[msg_type] if isinstance(msg_type, str) else int(msg_type)


class Curve(NamedTuple):
    """ZeroMQ CURVE keys for a socket to a service started with ``--curve-secret-key``:
    the service's public key and this peer's own key pair (Z85, as
    ``zmq.curve_keypair()`` makes them). The service admits the public key only if its
    allow-list (``--curve-worker-keys``, ``--curve-client-keys``) lists it.

    >>> import zmq
    >>> public, secret = zmq.curve_keypair()
    >>> Curve(server_key=public, public_key=public, secret_key=secret).server_key == public
    True
    """

    server_key: bytes
    public_key: bytes
    secret_key: bytes

    @classmethod
    def from_files(cls, server_public_file: str, secret_file: str) -> "Curve":
        """Reads certificates as ``zmq.auth.create_certificates`` writes them: the
        service's public one (``.key``) and this peer's secret one (``.key_secret``)."""
        import zmq.auth

        server, _ = zmq.auth.load_certificate(server_public_file)
        public, secret = zmq.auth.load_certificate(secret_file)
        if secret is None:
            raise ValueError(f"{secret_file} holds no secret key")
        return cls(server, public, secret)

    def apply(self, socket: "zmq.Socket[Any]") -> None:
        """Sets the socket's CURVE options (before it connects)."""
        socket.curve_serverkey = self.server_key
        socket.curve_publickey = self.public_key
        socket.curve_secretkey = self.secret_key


class Client:
    """A DEALER socket to the service's client endpoint; one request at a time
    (:meth:`request`), or many in flight (:meth:`send` / :meth:`recv`)."""

    def __init__(self, endpoint: str, *, timeout_s: float = 10.0, context: Optional[zmq.Context] = None, curve: Optional[Curve] = None) -> None:  # type: ignore[type-arg]
        self._ctx = context or zmq.Context.instance()
        self.socket = self._ctx.socket(zmq.DEALER)
        self.socket.setsockopt(zmq.LINGER, 0)
        if curve is not None:
            curve.apply(self.socket)
        self.socket.connect(endpoint)
        self.timeout_s = timeout_s
        self._seq = 0
        # Replies `request` read while waiting for its own, handed out by `recv`.
        self._set_aside: "deque[Reply]" = deque()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.socket.close(0)

    def send(
        self,
        msg_type: "int | str",
        body: Optional[Dict[str, Any]] = None,
        payload: Optional[bytes] = None,
        *,
        priority: int = 0,
        deadline_ms: int = 0,
        session_id: bytes = b"",
        request_id: Optional[bytes] = None,
    ) -> bytes:
        """Sends a request; its 16-byte request id."""
        self._seq += 1
        rid = request_id if request_id is not None else os.urandom(8) + self._seq.to_bytes(8, "big")
        head = encode_header(
            _type_number(msg_type), rid, priority=priority, deadline_ms=deadline_ms, session_id=session_id
        )
        frames = [head, json.dumps(body).encode() if body is not None else b""]
        if payload is not None:
            frames.append(payload)
        self.socket.send_multipart(frames)
        return rid[:16].ljust(16, b"\0")

    def recv(self, timeout_s: Optional[float] = None) -> Reply:
        """The next reply (first those ``request`` set aside); ``TimeoutError`` when none
        comes in time."""
        if self._set_aside:
            return self._set_aside.popleft()
        t = self.timeout_s if timeout_s is None else timeout_s
        if not self.socket.poll(int(t * 1000)):
            raise TimeoutError(f"no reply within {t} s")
        return self._read()

    def request(
        self,
        msg_type: "int | str",
        body: Optional[Dict[str, Any]] = None,
        payload: Optional[bytes] = None,
        **kw: Any,
    ) -> Reply:
        """Sends a request and waits for its reply. Replies to other requests that arrive
        meanwhile are kept, in order, for the next ``recv`` calls."""
        rid = self.send(msg_type, body, payload, **kw)
        waited: "deque[Reply]" = deque()
        try:
            while True:
                t = self.timeout_s
                if not self.socket.poll(int(t * 1000)):
                    raise TimeoutError(f"no reply within {t} s")
                r = self._read()
                if r.header.request_id == rid:
                    return r
                waited.append(r)
        finally:
            self._set_aside.extend(waited)

    def _read(self) -> Reply:
        frames = self.socket.recv_multipart()
        header = decode_header(frames[0])
        body: Dict[str, Any] = json.loads(frames[1]) if len(frames) > 1 and frames[1] else {}
        payload = frames[2] if len(frames) > 2 else None
        return Reply(header, body, payload)


class LoadFailed(Exception):
    """Raise it from a load function to answer ``failed`` with a code of your own."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


LoadFn = Callable[[str, str], bytes]


def _load_job(body: bytes) -> Optional[Tuple[str, str, int]]:
    """``(client, kind, fence)`` of a ``load`` body, or None when it is not
    ``{client: str, kind: str, fence: int >= 0}`` (not JSON, a field missing or of
    another type)."""
    try:
        load = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(load, dict):
        return None
    client, kind, fence = load.get("client"), load.get("kind"), load.get("fence")
    if not (isinstance(client, str) and isinstance(kind, str)):
        return None
    if not isinstance(fence, int) or isinstance(fence, bool) or fence < 0:
        return None
    return client, kind, fence


class LoaderWorker:
    """A loader worker for ``kinds`` at the broker's worker endpoint.

    ``fn(client, kind)`` returns the value (``bytes``); an exception answers ``failed``
    with its ``.code`` (``BACKEND_ERROR`` when it has none) and its text. A ``load`` of a
    kind not in ``kinds`` is answered ``failed`` with ``BAD_KIND`` without calling ``fn``;
    a malformed one (not JSON, a field missing or of another type) is skipped. ``capacity``
    loads run at once, each in its own thread; ``worker.ready`` is repeated every
    ``heartbeat_s`` (the broker drops a worker silent for 3 s by default). ``curve``
    (a :class:`Curve`) connects with CURVE, to a service started with
    ``--curve-secret-key`` whose ``--curve-worker-keys`` lists this worker's public key.
    """

    def __init__(
        self,
        endpoint: str,
        kinds: Sequence[str],
        fn: LoadFn,
        *,
        capacity: int = 1,
        heartbeat_s: float = 0.5,
        curve: Optional[Curve] = None,
    ) -> None:
        if isinstance(kinds, str):
            raise TypeError("kinds is a list of kind names, not one string")
        if capacity < 1:
            raise ValueError("capacity is at least 1")
        self.endpoint = endpoint
        self.kinds: List[str] = list(kinds)
        self._declared = frozenset(self.kinds)
        self.fn = fn
        self.capacity = capacity
        self.heartbeat_s = heartbeat_s
        self.curve = curve
        self._stop = threading.Event()
        self.loads = 0

    def stop(self) -> None:
        """Makes :meth:`run` return (after the loads running)."""
        self._stop.set()

    def _work(self, jobs: "queue.Queue[Optional[Tuple[str, str, int]]]", done: "queue.Queue[Tuple[int, Optional[bytes], str, str]]") -> None:
        while True:
            job = jobs.get()
            if job is None:
                return
            client, kind, fence = job
            try:
                value = self.fn(client, kind)
                if not isinstance(value, (bytes, bytearray, memoryview)):
                    raise TypeError(f"the load function returned {type(value).__name__}, not bytes")
                done.put((fence, bytes(value), "", ""))
            except Exception as e:  # answered as `failed`
                done.put((fence, None, str(getattr(e, "code", "BACKEND_ERROR")), str(e)))

    def run(self) -> None:
        """Serves loads until :meth:`stop`."""
        ctx: "zmq.Context[Any]" = zmq.Context.instance()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 500)
        if self.curve is not None:
            self.curve.apply(sock)
        sock.connect(self.endpoint)
        jobs: "queue.Queue[Optional[Tuple[str, str, int]]]" = queue.Queue()
        done: "queue.Queue[Tuple[int, Optional[bytes], str, str]]" = queue.Queue()
        threads = [threading.Thread(target=self._work, args=(jobs, done), daemon=True) for _ in range(self.capacity)]
        for t in threads:
            t.start()
        ready = json.dumps({"kinds": self.kinds, "capacity": self.capacity}).encode()
        seq = 0
        last = 0.0
        try:
            while not self._stop.is_set():
                if time.monotonic() - last >= self.heartbeat_s:
                    seq += 1
                    sock.send_multipart([encode_header(100, seq.to_bytes(16, "big")), ready])
                    last = time.monotonic()
                while True:
                    try:
                        fence, value, code, message = done.get_nowait()
                    except queue.Empty:
                        break
                    seq += 1
                    rid = seq.to_bytes(16, "big")
                    if value is not None:
                        body = json.dumps({"fence": fence}).encode()
                        sock.send_multipart([encode_header(102, rid), body, value])
                    else:
                        body = json.dumps({"fence": fence, "code": code, "message": message}).encode()
                        sock.send_multipart([encode_header(103, rid), body])
                if not sock.poll(20):
                    continue
                while True:
                    try:
                        frames = sock.recv_multipart(zmq.NOBLOCK)
                    except zmq.Again:
                        break
                    try:
                        h = decode_header(frames[0])
                    except ValueError:
                        continue
                    if h.msg_type != 101 or len(frames) < 2:
                        continue
                    job = _load_job(frames[1])
                    if job is None:
                        continue  # malformed: skipped, as the Rust worker does
                    client, kind, fence = job
                    if kind not in self._declared:
                        seq += 1
                        body = json.dumps({
                            "fence": fence,
                            "code": "BAD_KIND",
                            "message": f"this worker does not load kind {kind!r} (it declared {self.kinds})",
                        }).encode()
                        sock.send_multipart([encode_header(103, seq.to_bytes(16, "big")), body])
                        continue
                    self.loads += 1
                    jobs.put(job)
        finally:
            for _ in threads:
                jobs.put(None)
            for t in threads:
                t.join(timeout=5)
            sock.close()
