#!/bin/sh
# Runs a command with a throwaway redis-server on a free 127.0.0.1 port:
#
#   with_redis.sh COMMAND [ARG...]
#
# The server keeps nothing on disk (--save '', no AOF, a temporary --dir). The command
# sees its URL in KEYROUTE_TEST_REDIS_URL; the server is stopped on exit (trap), and the
# command's exit status is returned.
set -eu
command -v redis-server >/dev/null || { echo "with_redis.sh: redis-server not found" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/keyroute-redis.XXXXXX")
pid=
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A port the kernel considers free now; retried if another process takes it first.
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

for attempt in 1 2 3 4 5; do
    port=$(free_port)
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
        --logfile "$dir/redis.log" &
    pid=$!
    i=0
    while [ $i -lt 100 ]; do
        if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
            break 2
        fi
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
        i=$((i + 1))
    done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=
    echo "with_redis.sh: redis-server did not start on port $port (attempt $attempt)" >&2
    tail -5 "$dir/redis.log" >&2 2>/dev/null || true
done
[ -n "$pid" ] || { echo "with_redis.sh: could not start redis-server" >&2; exit 2; }

KEYROUTE_TEST_REDIS_URL="redis://127.0.0.1:$port/"
export KEYROUTE_TEST_REDIS_URL
echo "with_redis.sh: redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on $KEYROUTE_TEST_REDIS_URL" >&2
set +e
"$@"
status=$?
set -e
exit $status
