# The service: `keyroute serve` (crate keyroute-serve in service/), its Python client and
# worker (keyroute.serve: bindings-py/python/keyroute/serve.py over core's frame codec),
# suites on real processes and benchmarks.
#
#   make test-serve    lints, unit and doc tests, then service/tests (pytest + pyzmq):
#                      real redis-server (standalone and a 6-node Cluster), `keyroute serve`
#                      processes, Python and Rust workers. Takes ~3 minutes on 2 cores; the
#                      LONG suite is test_rss_flat_at_ten_times_capacity (~75 s, 60 s of 10x
#                      load; KEYROUTE_RSS_SECONDS shortens it), and the 60-second soak
#                      (service/tests/test_soak.py; mk/61-soak.mk runs it for 10 min).
#   make demo-serve    the service step of `make demo`
#   make bench-serve   ping through the broker, cache hits on Redis, RSS with 100 workers
#                      and a full 3,000-message queue, refusal latency while stalled
.PHONY: setup-apt-serve build-serve serve-venv lint-serve test-serve demo-serve bench-serve

APT_SERVE := libzmq3-dev pkg-config redis-server redis-tools
SETUP_TARGETS += setup-apt-serve
SERVE_VENV := $(BUILD)/venv-serve
SERVE_PY := $(SERVE_VENV)/bin/python
SERVE_REQS := service/tests/requirements.txt
SERVE_WORKER := $(CARGO_TARGET_DIR)/release/examples/worker

setup-apt-serve:
	scripts/apt-install.sh $(APT_SERVE)

# A venv of its own (pyzmq, pytest), rebuilt when the pins change, with the keyroute
# package of this tree: keyroute.serve writes and reads frames with core's codec
# (keyroute::frame) through the native module. pip always rebuilds a local directory
# (maturin's build is cargo's, cached in $(CARGO_TARGET_DIR)).
$(SERVE_VENV)/.deps: $(SERVE_REQS)
	python3 -m venv --clear $(SERVE_VENV)
	$(SERVE_PY) -m pip install -q --disable-pip-version-check -r $(SERVE_REQS)
	touch $@
serve-venv: $(SERVE_VENV)/.deps
	$(SERVE_PY) -m pip install -q --disable-pip-version-check ./bindings-py

build-serve: setup-apt-serve
	$(CARGO) build --release -p keyroute-cli
	$(CARGO) build --release -p keyroute-serve --example worker

lint-serve: setup-apt-serve
	$(CARGO) fmt -p keyroute-serve -p keyroute-cli -- --check
	$(CARGO) clippy -p keyroute-serve --all-targets -- -D warnings

TEST_TARGETS += test-serve
test-serve: setup-apt-serve lint-serve build-serve serve-venv
	$(CARGO) test -p keyroute --test queue_props --test frame_props
	$(CARGO) test -p keyroute --doc -- frame queue
	$(CARGO) test -p keyroute-serve
	KEYROUTE_BIN=$(KEYROUTE) KEYROUTE_WORKER_BIN=$(SERVE_WORKER) \
	  $(SERVE_PY) -m pytest -q -p no:cacheprovider -c service/tests/pytest.ini --durations=5 service/tests

DEMO_TARGETS += demo-serve
demo-serve: build-serve serve-venv
	@scripts/demo-serve.sh $(KEYROUTE) $(SERVE_WORKER) $(SERVE_PY)

BENCH_TARGETS += bench-serve
bench-serve: build-serve
	KEYROUTE_BIN=$(KEYROUTE) $(CARGO) bench -p keyroute-serve --bench serve
