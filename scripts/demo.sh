#!/usr/bin/env bash
# A short tour of the keyroute CLI. Usage: scripts/demo.sh path/to/keyroute
set -euo pipefail
KR=${1:-keyroute}
NODES="10.0.0.1:11211:1,10.0.0.2:11211:1,10.0.0.3:11211:2"
step() { printf '\n\033[1m== %s\033[0m\n$ %s\n' "$1" "$2"; }

step "Route keys on a memcached fleet, as libmemcached would" "keyroute route --profile libmemcached --nodes $NODES user:1 user:2 user:3"
"$KR" route --profile libmemcached --nodes "$NODES" user:1 user:2 user:3

step "The same keys and nodes as npm hashring would route them" "keyroute route --profile node-hashring --nodes $NODES user:1 user:2 user:3"
"$KR" route --profile node-hashring --nodes "$NODES" user:1 user:2 user:3

step "Native profile, with 2 replicas per key, keys from stdin" "printf 'user:1\\nuser:2\\n' | keyroute route --nodes a,b,c --replicas 2"
printf 'user:1\nuser:2\n' | "$KR" route --nodes a,b,c --replicas 2

step "Add an 11th node to 10: who loses keys, and how many move?" "keyroute simulate --profile native --nodes 10 --keys 100000 --add 1 --width 30"
"$KR" simulate --profile native --nodes 10 --keys 100000 --add 1 --width 30

if "$KR" slot --help >/dev/null 2>&1 && "$KR" slot foo >/dev/null 2>&1; then
  step "Redis Cluster slots (hash tags keep related keys together)" "keyroute slot foo '{user:1}:cart' '{user:1}:orders'"
  "$KR" slot foo '{user:1}:cart' '{user:1}:orders'
fi
