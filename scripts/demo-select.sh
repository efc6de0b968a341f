#!/usr/bin/env bash
# The selection step of `make demo`: least-used picks on Redis, shared by every worker.
# Usage: scripts/demo-select.sh path/to/keyroute
#   REDIS_URL set             -> uses that server (pool key {keyroute-demo}:pool, deleted first)
#   else $REDIS_SERVER (default redis-server) exists -> starts a private one on a free 127.0.0.1 port, stops it on exit
#   else                      -> runs the in-memory pool model (keyroute pool simulate) and says so
set -euo pipefail
KR=${1:-keyroute}
REDIS_SERVER=${REDIS_SERVER:-redis-server}
POOL='{keyroute-demo}:pool'
step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

tmp=""
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  if [ -n "$tmp" ]; then rm -rf "$tmp"; fi
}
trap cleanup EXIT INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

url=${REDIS_URL:-}
if [ -z "$url" ] && command -v "$REDIS_SERVER" >/dev/null 2>&1; then
  tmp=$(mktemp -d)
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    "$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
      --dir "$tmp" --logfile "$tmp/redis.log" &
    pid=$!
    for _ in $(seq 100); do
      if redis-cli -p "$port" ping >/dev/null 2>&1; then url="redis://127.0.0.1:$port/"; break; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    [ -n "$url" ] && break
    kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""
  done
  [ -n "$url" ] || { echo "demo-select: could not start redis-server (log: $(cat "$tmp/redis.log" 2>/dev/null))" >&2; exit 1; }
  echo "demo-select: started a private redis-server at $url (stopped when the demo ends)"
elif [ -n "$url" ]; then
  echo "demo-select: using REDIS_URL=$url"
fi

if [ -z "$url" ]; then
  echo "demo-select: no REDIS_URL and no $REDIS_SERVER binary: showing the in-memory pool model instead"
  step "Least-used picks on the in-memory pool model (same semantics as the Redis scripts)" \
       "keyroute pool simulate --picks 9 --churn proxy-b proxy-a proxy-b proxy-c"
  "$KR" pool simulate --picks 9 --churn proxy-b proxy-a proxy-b proxy-c
  exit 0
fi

redis-cli -u "$url" DEL "$POOL" "$POOL:removed" >/dev/null 2>&1 || true

step "Seed a pool of three proxies on Redis" "keyroute pool seed --redis $url --pool '$POOL' proxy-a proxy-b proxy-c"
"$KR" pool seed --redis "$url" --pool "$POOL" proxy-a proxy-b proxy-c

step "Each pick goes to the least-used proxy (one atomic script; ties: byte order)" "keyroute pick --redis $url --pool '$POOL' --count 4"
"$KR" pick --redis "$url" --pool "$POOL" --count 4

step "Take proxy-b out (health check failed); picks skip it" "keyroute pool remove ... proxy-b && keyroute pick ... --count 3"
"$KR" pool remove --redis "$url" --pool "$POOL" proxy-b
"$KR" pick --redis "$url" --pool "$POOL" --count 3

step "Bring it back at the pool's minimum, so it is not flooded" "keyroute pool restore ... proxy-b --mode at_minimum"
"$KR" pool restore --redis "$url" --pool "$POOL" proxy-b --mode at_minimum

step "Counts in pick order" "keyroute pool show --redis $url --pool '$POOL'"
"$KR" pool show --redis "$url" --pool "$POOL"

redis-cli -u "$url" DEL "$POOL" "$POOL:removed" >/dev/null 2>&1 || true
step "An empty pool: no member, exit status 1 — the caller makes no request" "keyroute pick --redis $url --pool '$POOL'"
if "$KR" pick --redis "$url" --pool "$POOL"; then
  echo "demo-select: expected a failure on an empty pool" >&2; exit 1
else
  echo "(exit status $?)"
fi
