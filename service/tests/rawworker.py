"""A worker on a bare pyzmq DEALER socket, for tests that need a worker that misbehaves:
one that never answers its loads, one that answers with a chosen code, or raw frames."""

from __future__ import annotations

import json
import threading
from typing import Callable, List, Optional

import zmq

from conftest import kserve

H = kserve.encode_header


class RawWorker:
    """Declares ``kinds`` and heartbeats every 0.2 s in a thread; each ``load`` is handed
    to ``on_load(body) -> frames or None`` (None: never answered)."""

    def __init__(self, endpoint: str, kinds: List[str],
                 on_load: Optional[Callable[[dict], Optional[list]]] = None) -> None:
        self.endpoint = endpoint
        self.kinds = kinds
        self.on_load = on_load or (lambda body: None)
        self.loads: List[dict] = []
        self.replies: List[kserve.Reply] = []
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.outbox: List[list] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def send(self, frames: list) -> None:
        """Sends raw frames from the worker's socket (from its thread)."""
        with self.lock:
            self.outbox.append(frames)

    def _run(self) -> None:
        ctx = zmq.Context.instance()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(self.endpoint)
        ready = json.dumps({"kinds": self.kinds, "capacity": 1024}).encode()
        last = 0.0
        import time

        while not self.stopping.is_set():
            if time.monotonic() - last > 0.2:
                sock.send_multipart([H(100), ready])
                last = time.monotonic()
            with self.lock:
                out, self.outbox = self.outbox, []
            for frames in out:
                sock.send_multipart(frames)
            if not sock.poll(20):
                continue
            while sock.poll(0):
                frames = sock.recv_multipart()
                h = kserve.decode_header(frames[0])
                body = json.loads(frames[1]) if len(frames) > 1 and frames[1] else {}
                if h.msg_type == 101:
                    self.loads.append(body)
                    answer = self.on_load(body)
                    if answer is not None:
                        sock.send_multipart(answer)
                else:
                    payload = frames[2] if len(frames) > 2 else None
                    self.replies.append(kserve.Reply(h, body, payload))
        sock.close(0)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)


def failed(fence: int, code: str, message: str = "m") -> list:
    return [H(103), json.dumps({"fence": fence, "code": code, "message": message}).encode()]
