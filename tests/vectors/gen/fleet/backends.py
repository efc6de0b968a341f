#!/usr/bin/env python3
"""Tiny backends that answer with their own name, for the proxy generators.

Usage: backends.py SPEC.json
SPEC.json: [{"host": "127.77.0.1" (or a unix socket path), "port": 41001, "name": "s1", "proto": "http"|"memcache"}, ...]

Every listener is bound before "ready" is printed on stdout; the process then serves
until stdin closes (the generator that started it closes it, or dies).

- http: any request gets `200` with the body `<name>\n<hex of the X-Hashed header>\n`
  (the proxy copies the value it hashed into X-Hashed, so the generator records
  what the proxy itself hashed); the connection is closed after the answer.
- memcache: `get <key>` gets `VALUE <key> 0 <len>\r\n<name>\r\nEND\r\n`; `version`
  gets `VERSION <name>`; anything else `ERROR`. Connections stay open.
"""

import asyncio
import json
import os
import socket
import sys


async def http_handler(name, reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        hashed = b""
        for line in head.split(b"\r\n")[1:]:
            k, _, v = line.partition(b":")
            if k.strip().lower() == b"x-hashed":
                hashed = v.strip(b" \t")
        body = name.encode() + b"\n" + hashed.hex().encode() + b"\n"
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def memcache_handler(name, reader, writer):
    try:
        while True:
            line = await reader.readuntil(b"\r\n")
            parts = line[:-2].split(b" ")
            if parts[0] in (b"get", b"gets") and len(parts) >= 2:
                out = b""
                for key in parts[1:]:
                    v = name.encode()
                    out += b"VALUE %s 0 %d\r\n%s\r\n" % (key, len(v), v)
                writer.write(out + b"END\r\n")
            elif parts[0] == b"version":
                writer.write(b"VERSION " + name.encode() + b"\r\n")
            else:
                writer.write(b"ERROR\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        writer.close()


async def main(spec):
    servers = []
    for s in spec:
        handler = http_handler if s["proto"] == "http" else memcache_handler
        if s["host"].startswith("/"):
            if os.path.exists(s["host"]):
                os.unlink(s["host"])
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(s["host"])
        else:
            fam = socket.AF_INET6 if ":" in s["host"] else socket.AF_INET
            sock = socket.socket(fam, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((s["host"], s["port"]))
        srv = await asyncio.start_server(
            lambda r, w, n=s["name"], h=handler: h(n, r, w), sock=sock, limit=1 << 20)
        servers.append(srv)
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)
    for srv in servers:
        srv.close()


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        asyncio.run(main(json.load(f)))
