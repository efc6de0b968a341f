#!/usr/bin/env bash
# Regenerates every tests/vectors/ring/*.json from the real peer libraries.
#   uhashring (PyPI), ketama (PyPI, RJ's libketama C), hash_ring (PyPI, Python 2
#   source + shim), hashring@3.2.0 (npm), libmemcached (Debian libmemcached-dev).
# Installs what it needs: Debian packages (if missing), a venv in
# build/vectors-venv, node_modules here (npm ci from package-lock.json).
# Deterministic: running it twice gives identical files.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
VENV="$REPO/build/vectors-venv"
OUT="$REPO/tests/vectors/ring"

need_apt=()
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc libc6-dev)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
if ! pkg-config --exists libmemcached 2>/dev/null; then need_apt+=(libmemcached-dev); fi
command -v node >/dev/null 2>&1 || { echo "generate.sh: node (>= 11, stable sort) is required" >&2; exit 1; }
if [ "${#need_apt[@]}" -gt 0 ]; then
  echo "generate.sh: apt-get install ${need_apt[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
# ketama has no wheel: pip builds it from its sdist with gcc.
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt"

(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

mkdir -p "$OUT"
# Remove only files this script produces, so a renamed vector does not linger.
rm -f "$OUT"/uhashring_*.json "$OUT"/node_hashring_*.json "$OUT"/libmemcached_*.json \
      "$OUT"/twemproxy_*.json "$OUT"/libketama_*.json "$OUT"/hash_ring_*.json

cd "$HERE"
export PYTHONDONTWRITEBYTECODE=1
"$VENV/bin/python" gen_uhashring.py
"$VENV/bin/python" gen_node_hashring.py
"$VENV/bin/python" gen_libmemcached.py
"$VENV/bin/python" gen_libketama.py
"$VENV/bin/python" gen_hash_ring.py
"$VENV/bin/python" gen_libketama_golden.py
