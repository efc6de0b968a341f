#!/usr/bin/env bash
# Installs the real peers for issue 16's fleet vectors and runs generate.py "$@"
# (no arguments: rewrite tests/vectors/fleet/*.json; --check: compare a fresh run with them).
#   Debian: nginx, haproxy (2.6), nutcracker (twemproxy 0.5.0), libspymemcached-java,
#           libguava-java, ruby + ruby-redis, php-cli + php-nrk-predis, golang-go +
#           golang-github-golang-groupcache-dev, a JDK (javac)
#   PyPI:   requirements.txt (pymemcache, xxhash) in build/fleet-vectors-venv
# Services are not started by the packages (the generators start and stop their own).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../../.." && pwd)"
VENV="$REPO/build/fleet-vectors-venv"

APT=(nginx haproxy nutcracker libspymemcached-java libguava-java ruby ruby-redis php-cli
     php-nrk-predis golang-go golang-github-golang-groupcache-dev python3-venv)
command -v javac >/dev/null 2>&1 || APT+=(default-jdk-headless)
"$REPO/scripts/apt-install.sh" "${APT[@]}"

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check -r "$HERE/requirements.txt"

exec "$VENV/bin/python" "$HERE/generate.py" "$@"
