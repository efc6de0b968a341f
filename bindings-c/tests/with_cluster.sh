#!/bin/sh
# Runs a command with a throwaway 3-master Redis Cluster on free 127.0.0.1 ports:
#
#   with_cluster.sh [--acl] COMMAND [ARG...]
#
# Three cluster-enabled redis-servers (port p and its bus port p + 10000 free), joined by
# `redis-cli --cluster create` (no replicas), keeping nothing on disk but their cluster
# config files in a temporary directory. The command sees the nodes in
# KEYROUTE_TEST_CLUSTER_SEEDS ("127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3") once every node
# reports cluster_state:ok and knows the others; the servers are stopped on exit (trap) and
# the command's exit status is returned.
#
# With --acl the nodes require users (an ACL file): `default` with an admin password (for
# redis-cli) and keyroute's user as the README gives it (`keyroute ... -@dangerous +info
# +role`), with a password made now. The seeds are then
# "redis://keyroute:PASSWORD@127.0.0.1:p1,..." and KEYROUTE_TEST_CLUSTER_PASSWORD holds
# the password.
set -eu
acl=
if [ "${1:-}" = --acl ]; then acl=1; shift; fi
[ $# -gt 0 ] || { echo "usage: with_cluster.sh [--acl] COMMAND [ARG...]" >&2; exit 2; }
command -v redis-server >/dev/null || { echo "with_cluster.sh: redis-server not found" >&2; exit 2; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/keyroute-cluster.XXXXXX")
pids=
cleanup() {
    for pid in $pids; do kill "$pid" 2>/dev/null || true; done
    for pid in $pids; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Three ports p whose bus ports p + 10000 are free too (checked by binding both now).
ports=$(python3 - <<'EOF'
import socket
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
out = []
while len(out) < 3:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close()
    if p + 10000 < 65536 and p not in out and free(p + 10000):
        out.append(p)
print(" ".join(map(str, out)))
EOF
)

# redis-cli's password (REDISCLI_AUTH) and the nodes' ACL file, with --acl.
acl_args=
userinfo=
if [ -n "$acl" ]; then
    admin=$(python3 -c 'import secrets; print("adm-" + secrets.token_hex(12))')
    password=$(python3 -c 'import secrets; print("kr-" + secrets.token_hex(12))')
    printf 'user default on >%s ~* &* +@all\nuser keyroute on >%s ~* &* +@all -@dangerous +info +role\n' \
        "$admin" "$password" > "$dir/users.acl"
    chmod 600 "$dir/users.acl"
    acl_args="--aclfile $dir/users.acl"
    userinfo="keyroute:$password@"
    REDISCLI_AUTH=$admin
    KEYROUTE_TEST_CLUSTER_PASSWORD=$password
    export REDISCLI_AUTH KEYROUTE_TEST_CLUSTER_PASSWORD
fi

seeds=
for port in $ports; do
    mkdir -p "$dir/$port"
    # shellcheck disable=SC2086
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$dir/$port" --logfile "$dir/$port/redis.log" \
        --cluster-enabled yes --cluster-config-file "$dir/$port/nodes.conf" \
        --cluster-node-timeout 5000 $acl_args &
    pids="$pids $!"
    seeds="${seeds:+$seeds,}${userinfo:+redis://$userinfo}127.0.0.1:$port"
done
for port in $ports; do
    i=0
    until redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; do
        i=$((i + 1))
        [ $i -lt 200 ] || { echo "with_cluster.sh: node $port did not start" >&2; tail -5 "$dir/$port/redis.log" >&2; exit 2; }
        sleep 0.05
    done
done
# shellcheck disable=SC2086
redis-cli --cluster create $(for p in $ports; do printf '127.0.0.1:%s ' "$p"; done) \
    --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1 ||
    { echo "with_cluster.sh: redis-cli --cluster create failed" >&2; cat "$dir/create.log" >&2; exit 2; }
i=0
while :; do
    ok=0
    for port in $ports; do
        info=$(redis-cli -h 127.0.0.1 -p "$port" cluster info 2>/dev/null || true)
        known=$(echo "$info" | sed -n 's/^cluster_known_nodes:\([0-9]*\).*/\1/p')
        if echo "$info" | grep -q '^cluster_state:ok' && [ "$known" = 3 ]; then ok=$((ok + 1)); fi
    done
    [ $ok -eq 3 ] && break
    i=$((i + 1))
    [ $i -lt 600 ] || { echo "with_cluster.sh: the cluster did not reach cluster_state:ok" >&2; exit 2; }
    sleep 0.05
done

KEYROUTE_TEST_CLUSTER_SEEDS=$seeds
export KEYROUTE_TEST_CLUSTER_SEEDS
echo "with_cluster.sh: 3-master cluster (redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'))${acl:+ with ACL users} on $ports as KEYROUTE_TEST_CLUSTER_SEEDS" >&2
unset REDISCLI_AUTH
set +e
"$@"
status=$?
set -e
exit $status
