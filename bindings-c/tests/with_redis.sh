#!/bin/sh
# Runs a command with a throwaway redis-server on a free 127.0.0.1 port:
#
#   with_redis.sh [--password] [--var NAME] COMMAND [ARG...]
#
# The server keeps nothing on disk (--save '', no AOF, a temporary --dir). The command
# sees its URL in KEYROUTE_TEST_REDIS_URL (or in NAME with --var); the server is stopped on
# exit (trap), and the command's exit status is returned.
#
# --password: the server requires a password (random, written to a config file, never on a
# command line); the URL carries no password and the password is in
# KEYROUTE_TEST_REDIS_PASSWORD. Nest two calls for a plain and a password-protected server:
#   with_redis.sh --password --var KEYROUTE_TEST_REDIS_AUTH_URL with_redis.sh COMMAND
set -eu
password=
var=KEYROUTE_TEST_REDIS_URL
while [ $# -gt 0 ]; do
    case "$1" in
        --password) password=$(python3 -c 'import secrets; print("kr-" + secrets.token_hex(12))'); shift ;;
        --var) var=$2; shift 2 ;;
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: with_redis.sh [--password] [--var NAME] COMMAND [ARG...]" >&2; exit 2; }
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
    {
        echo "port $port"
        echo "bind 127.0.0.1"
        echo "save \"\""
        echo "appendonly no"
        echo "dir $dir"
        echo "logfile $dir/redis.log"
        if [ -n "$password" ]; then echo "requirepass $password"; fi
    } > "$dir/redis.conf"
    chmod 600 "$dir/redis.conf"
    redis-server "$dir/redis.conf" &
    pid=$!
    i=0
    while [ $i -lt 100 ]; do
        # An unauthenticated PING gets NOAUTH from a password-protected server: up all the same.
        if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q -e PONG -e NOAUTH; then
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

url="redis://127.0.0.1:$port/"
export "$var=$url"
if [ -n "$password" ]; then
    KEYROUTE_TEST_REDIS_PASSWORD=$password
    export KEYROUTE_TEST_REDIS_PASSWORD
fi
echo "with_redis.sh: redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') on $url${password:+ (password required)} as $var" >&2
set +e
"$@"
status=$?
set -e
exit $status
