#!/usr/bin/env python3
"""Writes the seed inputs of the text-shaped fuzz targets into fuzz/corpus/<target>/.

Seeds come from the shared vectors (tests/vectors/slot, tests/vectors/ring), the entrance
contract (tests/contract/bad_inputs.json) and the documented forms (MOVED/ASK lines, RESP
frames, service headers, serde shapes). File names are the SHA1 of the content, as
libFuzzer names its own, so running this again changes nothing. The structured targets
(ring_ops, slot_map_ops, cluster_reply, cache_reply, script_replies) read fuzzer bytes
through `arbitrary`: their seeds are inputs a fuzz run found, minimized (see README.md).

    python3 fuzz/seed.py            write the seeds
    python3 fuzz/seed.py --check    exit 1 if a seed is missing
"""
import hashlib
import json
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def slot_keys():
    doc = json.loads((ROOT / "tests/vectors/slot/redis_keyslot.json").read_text())
    keys = [bytes.fromhex(c["key_hex"]) for c in doc["cases"]]
    yield from keys[:60]
    yield b"\xff".join(keys[:12])


def node_lists():
    contract = json.loads((ROOT / "tests/contract/bad_inputs.json").read_text())
    for case in contract["cases"]:
        if case["op"] in ("parse_nodes", "parse_weights"):
            yield case["args"]["text"].encode()
    for path in sorted((ROOT / "tests/vectors/ring").glob("*_3.json")):
        doc = json.loads(path.read_text())
        yield ",".join(f"{n}={w}" for n, w in doc["nodes"]).encode()
        yield "\n".join(f"{n}\t{w}" for n, w in doc["nodes"]).encode()
    yield b"# fleet\n10.0.1.1:11211\t600\n10.0.1.2:11211\t300\n"
    yield b"10.0.0.1:11211:2 cache-a,[::1]:6379:1,2001:db8::1,a:2=1"


def redirects():
    contract = json.loads((ROOT / "tests/contract/bad_inputs.json").read_text())
    for case in contract["cases"]:
        if case["op"] == "redirect":
            yield json.dumps(case["args"]).encode()
            for v in case["args"].values():
                if isinstance(v, str):
                    yield v.encode()
    yield from (
        b"MOVED 3999 127.0.0.1:6381",
        b"-ASK 0 ::1:7000\r\n",
        b"MOVED 16383 :7000",
        b"MOVED 1 [::1]:7000",
        b"ASK 16384 h:1",
    )


def resp_frames():
    yield from (
        b"*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$3\r\nkey\r\n",
        b"*3\r\n$10\r\nssubscribe\r\n$1\r\nc\r\n:1\r\n",
        b"+OK\r\n",
        b"-MOVED 1 h:1\r\n",
        b":42\r\n",
        b"$-1\r\n",
        b"*-1\r\n",
        b"*2\r\n*1\r\n:1\r\n$0\r\n\r\n",
    )


def headers():
    def header(msg_type, sid=b"", extra=b"", version=1, system=0):
        return (
            struct.pack(">BBHHBBI", version, system, msg_type, 0, 0, 5, 250)
            + bytes(range(16))
            + bytes([len(sid)])
            + sid
            + extra
        )

    yield header(1)
    yield header(11, b"abc.def")
    yield header(0x8001, extra=b"\0\0\0")
    yield header(20, version=2)
    yield header(20, system=1)
    yield header(20)[:20]


def service_requests():
    """[header length][header][body][0xFF payload?], as fuzz_targets/service_request.rs reads."""

    def req(msg_type, body, payload=None, sid=b""):
        head = (struct.pack(">BBHHBBI", 1, 0, msg_type, 0, 0, 0, 0) + bytes(16)
                + bytes([len(sid)]) + sid)
        out = bytes([len(head)]) + head + body
        return out + b"\xff" + payload if payload is not None else out

    yield req(10, b'{"client": "c1", "version": "v1"}', b"data")
    yield req(11, b'{"sid": "abc.def", "version": "v1"}', sid=b"abc.def")
    yield req(20, b'{"client": "c1", "kind": "accounts"}')
    yield req(21, b'{"client": "c1", "kind": "k", "ttl_ms": 5000}', b"value")
    yield req(31, b'{"device": "d1"}')
    yield req(32, b'{"device": "d1", "client": "c1"}')
    yield req(20, b'{"client": 1}')
    yield req(999, b"")


def worker_messages():
    """[header length][header][body][0xFF payload?], as fuzz_targets/worker_message.rs reads."""

    def msg(msg_type, body, payload=None):
        head = struct.pack(">BBHHBBI", 1, 0, msg_type, 0, 0, 0, 0) + bytes(16) + b"\0"
        out = bytes([len(head)]) + head + body
        return out + b"\xff" + payload if payload is not None else out

    yield msg(100, b'{"kinds": ["accounts", "cards"], "capacity": 4}')
    yield msg(100, b'{"kinds": [], "capacity": 1}')
    yield msg(102, b'{"fence": 7}', b"value")
    yield msg(103, b'{"fence": 7, "code": "UPSTREAM_500", "message": "down"}')
    yield msg(103, b'{"fence": 7, "code": "~LOAD_TIMEOUT"}')
    yield msg(0x8064, b"{}")


def serde_docs():
    yield from (
        b'{"profile": "libketama", "nodes": [{"name": "10.0.0.1:11211", "weight": 600},'
        b' {"name": "10.0.0.2:11211", "weight": 400}]}',
        b'{"profile": "libmemcached", "vnodes": 40, "points_per_digest": 4, "default_port": 11211,'
        b' "nodes": [{"name": "a", "weight": 1}]}',
        b'{"nodes": [{"id": "a", "addr": "10.0.0.1:7000", "role": "master", "health": "online",'
        b' "slots": [[0, 8191]]}, {"addr": "10.0.0.2:7000", "role": "replica", "master": 0}]}',
        b'{"moves": [{"start": 0, "end": 10, "from": 0, "to": 2}], "targets": [{"node": 0,'
        b' "weight": 1, "ideal": 5461.33, "before": 8192, "after": 5461}]}',
        b'{"profile": "native", "nodes": [{"name": "a", "weight": -1}]}',
    )


def cache_inputs():
    yield from (
        b"client-42\0accounts",
        b"\0",
        b"c\0{kind}",
        b"redis://:s3cret@10.0.0.1:6379/0",
        b"[::1]:7000",
        b"redis://app:pa?ss@h:6379",
    )


def configs():
    """The pools each proxy ran for the fleet vectors (nginx upstreams, HAProxy backends,
    twemproxy pools), as the readers take them."""
    for name in ("nginx", "haproxy", "twemproxy"):
        doc = json.loads((ROOT / "tests" / "vectors" / "fleet" / f"{name}.json").read_text())
        for case in doc["cases"]:
            yield case["config"].encode()


SEEDS = {
    "key_slot": slot_keys,
    "node_list": node_lists,
    "redirect": redirects,
    "resp_parse": resp_frames,
    "frame_header": headers,
    "serde_read": serde_docs,
    "service_request": service_requests,
    "worker_message": worker_messages,
    "cache_inputs": cache_inputs,
    "config_read": configs,
}


def main():
    check = "--check" in sys.argv[1:]
    missing = 0
    for target, make in SEEDS.items():
        folder = CORPUS / target
        folder.mkdir(parents=True, exist_ok=True)
        for data in make():
            path = folder / hashlib.sha1(data).hexdigest()
            if path.exists():
                continue
            if check:
                print(f"missing seed {path.relative_to(ROOT)}", file=sys.stderr)
                missing += 1
            else:
                path.write_bytes(data)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
