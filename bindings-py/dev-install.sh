#!/usr/bin/env bash
# Developer loop: build a release wheel and install it into build/venv-py (what
# `make test-python` does through pip, without the PEP 517 isolation round trip).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${VENV:-$here/../build/venv-py}
out=$(mktemp -d)
"$venv/bin/maturin" build --release -q -m "$here/Cargo.toml" -o "$out"
"$venv/bin/pip" install -q --force-reinstall --no-deps "$out"/*.whl
rm -rf "$out"
