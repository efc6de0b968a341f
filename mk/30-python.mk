# Python: the `keyroute` package in bindings-py/ (pyo3 + maturin), its tests and benches.
#
#   make test-python    venv in $(BUILD)/venv-py, pip install ./bindings-py (PEP 517,
#                       maturin), clippy, pytest (vectors, the contract table, parity,
#                       real redis-server and a real 3-master cluster, the examples),
#                       mypy.stubtest, mypy --strict on the examples; the smart cache
#                       (SmartCache, Sessions, Devices) on both, with SIGKILLed and
#                       SIGSTOPped lease holders
#   make bench-python   side-by-side timings against uhashring and redis-py, also written
#                       to $(BUILD)/bench/python.json; then the smart-cache stampede
#                       harness against naive cache-aside, aiocache and dogpile.cache
#                       (pinned in bindings-py/bench/requirements-cache.txt, installed into
#                       the same venv), written to $(BUILD)/bench/cache.json
.PHONY: test-python bench-python python-install python-venv

PYTHON ?= python3
PY_VENV := $(BUILD)/venv-py
PY := $(PY_VENV)/bin/python
PY_REQS := bindings-py/requirements-test.txt
PY_BENCH_REQS := bindings-py/bench/requirements-cache.txt

# The venv with the pinned test dependencies; rebuilt when the pins change.
$(PY_VENV)/.deps: $(PY_REQS)
	$(PYTHON) -m venv $(PY_VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip
	$(PY) -m pip install -q --disable-pip-version-check -r $(PY_REQS)
	touch $@

python-venv: $(PY_VENV)/.deps

# The stampede harness's peers (bench only, not needed by the tests).
$(PY_VENV)/.bench-deps: $(PY_BENCH_REQS) $(PY_VENV)/.deps
	$(PY) -m pip install -q --disable-pip-version-check -r $(PY_BENCH_REQS)
	touch $@

# pip always rebuilds a local directory; maturin builds into $(CARGO_TARGET_DIR).
python-install: python-venv
	$(PY) -m pip install -q --disable-pip-version-check ./bindings-py

TEST_TARGETS += test-python
test-python: setup-apt-core python-install
	$(CARGO) clippy -p keyroute-py -- -D warnings
	cd bindings-py && KEYROUTE_REQUIRE_REDIS=1 $(PY) -m pytest -q -p no:cacheprovider tests
	cd $(BUILD) && $(PY) -m mypy.stubtest keyroute
	$(PY) -m mypy --strict --no-incremental examples/python/example.py examples/python/shard_redis_py.py examples/python/smart_cache.py
	$(PY) examples/python/example.py > /dev/null

BENCH_TARGETS += bench-python
bench-python: python-install $(PY_VENV)/.bench-deps
	$(PY) bindings-py/bench/bench.py --json $(BUILD)/bench/python.json
	$(PY) bindings-py/bench/stampede.py --json $(BUILD)/bench/cache.json
