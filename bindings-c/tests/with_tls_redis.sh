#!/bin/sh
# Runs a command with a throwaway TLS-only redis-server (--port 0 --tls-port) that requires
# a password, with certificates made now by the openssl command:
#
#   with_tls_redis.sh COMMAND [ARG...]
#
# The command sees KEYROUTE_TEST_TLS_URL (rediss://, the password and ssl_ca_certs),
# KEYROUTE_TEST_TLS_WRONG_CA_URL (the same with a CA that signed nothing of the server's)
# and KEYROUTE_TEST_TLS_PASSWORD. Everything is removed on exit.
set -eu
[ $# -gt 0 ] || { echo "usage: with_tls_redis.sh COMMAND [ARG...]" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/keyroute-tls.XXXXXX")
pid=
cleanup() {
    if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
cd "$dir"
for ca in ca other-ca; do
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -keyout "$ca.key" -out "$ca.crt" \
        -subj "/CN=keyroute test $ca" 2>/dev/null
done
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=server 2>/dev/null
echo "subjectAltName=IP:127.0.0.1" > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -out server.crt -extfile server.ext 2>/dev/null
password=$(python3 -c 'import secrets; print("kr-" + secrets.token_hex(12))')
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
{
    echo "port 0"
    echo "tls-port $port"
    echo "bind 127.0.0.1"
    echo "save \"\""
    echo "appendonly no"
    echo "dir $dir"
    echo "logfile $dir/redis.log"
    echo "requirepass $password"
    echo "tls-cert-file $dir/server.crt"
    echo "tls-key-file $dir/server.key"
    echo "tls-ca-cert-file $dir/ca.crt"
    echo "tls-auth-clients no"
} > redis.conf
chmod 600 redis.conf
redis-server redis.conf &
pid=$!
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; do
    kill -0 "$pid" 2>/dev/null || { tail -5 redis.log >&2; exit 2; }
    i=$((i + 1)); [ $i -lt 200 ] || { echo "with_tls_redis.sh: no server" >&2; exit 2; }
    sleep 0.05
done
KEYROUTE_TEST_TLS_URL="rediss://:$password@127.0.0.1:$port?ssl_ca_certs=$dir/ca.crt"
KEYROUTE_TEST_TLS_WRONG_CA_URL="rediss://:$password@127.0.0.1:$port?ssl_ca_certs=$dir/other-ca.crt"
KEYROUTE_TEST_TLS_PASSWORD=$password
export KEYROUTE_TEST_TLS_URL KEYROUTE_TEST_TLS_WRONG_CA_URL KEYROUTE_TEST_TLS_PASSWORD
echo "with_tls_redis.sh: TLS redis-server on 127.0.0.1:$port (password required)" >&2
cd - >/dev/null
set +e
"$@"
status=$?
set -e
exit $status
