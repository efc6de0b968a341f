#!/usr/bin/env bash
# The service step of `make demo`: `keyroute serve` with the in-memory store, a Rust
# loader worker, a Python client (pyzmq) asking for sessions and product data, the
# metrics, then a graceful stop (SIGTERM).
# Usage: scripts/demo-serve.sh path/to/keyroute path/to/examples/worker path/to/python
set -euo pipefail
KR=$1
WORKER=$2
PY=${3:-python3}
step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
tmp=$(mktemp -d)
serve_pid=""
worker_pid=""
cleanup() {
  for p in $worker_pid $serve_pid; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

port=$(free_port); wport=$(free_port); mport=$(free_port)
step "the caching broker service, state in memory" \
  "keyroute serve --bind tcp://127.0.0.1:$port --workers-bind tcp://127.0.0.1:$wport --metrics 127.0.0.1:$mport --cap cards=4"
KEYROUTE_LOG=info "$KR" serve --bind "tcp://127.0.0.1:$port" --workers-bind "tcp://127.0.0.1:$wport" \
  --metrics "127.0.0.1:$mport" --cap cards=4 2> "$tmp/serve.log" &
serve_pid=$!

step "a loader worker in Rust (200 ms per load: the slow backend)" \
  "worker tcp://127.0.0.1:$wport accounts,cards 200"
"$WORKER" "tcp://127.0.0.1:$wport" accounts,cards 200 > "$tmp/worker.log" &
worker_pid=$!

step "a client in Python (pyzmq, keyroute.serve.Client)" "python client.py"
"$PY" - "tcp://127.0.0.1:$port" <<'PYEOF'
import sys, time
from keyroute.serve import Client  # the keyroute package of this tree (make serve-venv)

with Client(sys.argv[1]) as c:
    # wait for the worker's first heartbeat
    while c.request("product.get", {"client": "probe", "kind": "cards"}).transport_error == "NO_LOADER":
        time.sleep(0.05)
    s = c.request("session.create", {"client": "client-42", "version": "app-2.14"}, b'{"lang":"en"}')
    print(f"session.create  -> sid {s.body['sid'][:20]}..., expires_at {s.body['expires_at']}")
    t = c.request("session.touch", {"sid": s.body["sid"], "version": "app-2.14"})
    print(f"session.touch   -> client {t.body['client']}, data {t.payload!r}")
    for i in range(2):
        t0 = time.monotonic()
        r = c.request("product.get", {"client": "client-42", "kind": "accounts"})
        print(f"product.get     -> {r.payload!r} in {(time.monotonic() - t0) * 1000:.0f} ms ({'loaded by the worker' if i == 0 else 'from the cache'})")
    ids = [c.send("product.get", {"client": "client-7", "kind": "cards"}) for _ in range(50)]
    got = [c.recv() for _ in ids]
    print(f"50 x product.get on one cold key -> {len({g.payload for g in got})} distinct payload, all answered: {len(got) == 50}")
    r = c.request("cache.get", {"client": "client-42", "kind": "nothing"})
    print(f"cache.get       -> data error {r.error_code}: {r.body['message']}")
    r = c.request(999)
    print(f"type 999        -> transport error {r.transport_error}")
PYEOF
echo "worker loads: $(grep -c '^load' "$tmp/worker.log") (accounts once, cards once for 50 requests, plus the probe)"

step "metrics (Prometheus text)" "curl http://127.0.0.1:$mport/metrics | grep ..."
python3 - "$mport" <<'PYEOF'
import sys, urllib.request
text = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
for line in text.splitlines():
    if line.startswith(("keyroute_serve_requests_total", "keyroute_serve_backend_loads", "keyroute_serve_workers{",
                        "keyroute_serve_store{", "keyroute_serve_queue_depth")):
        print("  " + line)
PYEOF

step "graceful stop" "kill -TERM <keyroute serve>"
kill -TERM "$serve_pid"
wait "$serve_pid" && echo "keyroute serve exited 0"
serve_pid=""
grep -E "stopp" "$tmp/serve.log" | sed 's/^/  /'
