# JavaScript: the npm package `keyroute` (bindings-js, wasm-bindgen), its demo page, tests
# in Node and in Debian's Chromium, and benchmarks against the npm peers.
#
#   make test-js    toolchain + npm ci + chromium/redis-server, build, lints, node --test
#                   (the smart cache, keyroute/redis's pools on real redis-servers with the
#                   Rust peer; keyroute/serve against real `keyroute serve` processes), the
#                   node-redis recipe and the smart-cache example, browser test
#   make build-js   bindings-js/dist (wasm-bindgen for Node and for browsers)
#   make pack-js    build/keyroute-<version>.tgz
#   make demo-web   serve the demo page on http://127.0.0.1:$(DEMO_WEB_PORT)/bindings-js/demo/
#   make bench-js   .wasm size, keyroute vs the npm peers side by side (build/bench/js.json);
#                   keyroute/serve's round trips against the Python client's (js-serve.json)
.PHONY: setup-js setup-js-rust setup-js-npm setup-apt-js build-js lint-js pack-js test-js \
        test-js-node test-js-browser demo-web bench-js

JS_DIR := $(ROOT)/bindings-js
JS_WASM := $(CARGO_TARGET_DIR)/wasm32-unknown-unknown/release/keyroute_js.wasm
# The CLI must match the crate exactly; the crate pins it with `=`.
WASM_BINDGEN_VERSION := $(shell sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' $(JS_DIR)/Cargo.toml)
DEMO_WEB_PORT ?= 8040
# Size-minded release build for the .wasm only (wasm32 artifacts do not collide with host
# builds in the shared target dir): opt-level z (~3 KB gzipped smaller than s, within the
# speed targets of bench/bench.mjs; 3 adds ~15 KB), fat LTO, one codegen unit, no debug
# info. The .wasm budget is bindings-js/package.json config.wasmGzipBudget (test/size.test.mjs).
JS_CARGO_ENV := CARGO_PROFILE_RELEASE_OPT_LEVEL=z CARGO_PROFILE_RELEASE_LTO=true \
                CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1 CARGO_PROFILE_RELEASE_DEBUG=0 \
                CARGO_PROFILE_RELEASE_PANIC=abort

SETUP_TARGETS += setup-js
setup-js: setup-js-rust setup-js-npm setup-apt-js

# rustup target and the wasm-bindgen CLI at the crate's version (never --locked: its
# lockfile pins a crate version the registry does not serve); skipped when already there.
setup-js-rust:
	rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@if [ "$$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $(WASM_BINDGEN_VERSION)" ]; then \
	  echo "installing wasm-bindgen-cli $(WASM_BINDGEN_VERSION) (2-5 minutes)"; \
	  $(CARGO) install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --no-default-features; \
	fi

# npm ci from the committed lockfile, again only when the lockfile changed.
setup-js-npm: $(JS_DIR)/node_modules/.package-lock.json
$(JS_DIR)/node_modules/.package-lock.json: $(JS_DIR)/package-lock.json $(JS_DIR)/package.json
	cd $(JS_DIR) && npm ci --no-audit --no-fund
	touch $@

setup-apt-js:
	scripts/apt-install.sh chromium redis-server

# The Lua scripts (core's SCRIPTS) reach the package as JSON printed by a host build of
# core/examples/scripts.rs (keyroute-js builds it as its example `scripts`), outside the
# size-budgeted .wasm.
JS_SCRIPTS := $(BUILD)/js/scripts.json
# The smart cache (keyroute/cache, Node) is a .wasm of its own, from the same crate with
# `--no-default-features --features cache` (budget: config.cacheWasmGzipBudget): built
# first and copied, since both builds write $(JS_WASM).
JS_CACHE_WASM := $(BUILD)/js/keyroute_cache.wasm
# The fleet (keyroute/fleet: engines, fleet profiles, proxy configurations; Node and
# browsers) likewise, `--features fleet` (budget: config.fleetWasmGzipBudget).
JS_FLEET_WASM := $(BUILD)/js/keyroute_fleet.wasm
# The cluster module (SlotMap, ReshardPlan: slot maps and resharding plans; Node loads it
# on first use, browsers with initCluster()), `--features cluster`
# (budget: config.clusterWasmGzipBudget).
JS_CLUSTER_WASM := $(BUILD)/js/keyroute_cluster.wasm
build-js: setup-js-rust setup-js-npm
	mkdir -p $(dir $(JS_SCRIPTS))
	$(JS_CARGO_ENV) $(CARGO) build -p keyroute-js --target wasm32-unknown-unknown --release --no-default-features --features cache
	cp $(JS_WASM) $(JS_CACHE_WASM)
	$(JS_CARGO_ENV) $(CARGO) build -p keyroute-js --target wasm32-unknown-unknown --release --no-default-features --features fleet
	cp $(JS_WASM) $(JS_FLEET_WASM)
	$(JS_CARGO_ENV) $(CARGO) build -p keyroute-js --target wasm32-unknown-unknown --release --no-default-features --features cluster
	cp $(JS_WASM) $(JS_CLUSTER_WASM)
	$(JS_CARGO_ENV) $(CARGO) build -p keyroute-js --target wasm32-unknown-unknown --release
	$(CARGO) run -q -p keyroute-js --example scripts > $(JS_SCRIPTS).tmp && mv $(JS_SCRIPTS).tmp $(JS_SCRIPTS)
	cd $(JS_DIR) && node scripts/build.mjs $(JS_WASM) $(JS_SCRIPTS) $(JS_CACHE_WASM) $(JS_FLEET_WASM) $(JS_CLUSTER_WASM)

lint-js: setup-js-rust
	$(CARGO) fmt -p keyroute-js --check
	$(CARGO) clippy -p keyroute-js --target wasm32-unknown-unknown -- -D warnings
	$(CARGO) clippy -p keyroute-js --target wasm32-unknown-unknown --no-default-features --features cache -- -D warnings
	$(CARGO) clippy -p keyroute-js --target wasm32-unknown-unknown --no-default-features --features fleet -- -D warnings
	$(CARGO) clippy -p keyroute-js --target wasm32-unknown-unknown --no-default-features --features cluster -- -D warnings
	$(CARGO) clippy -p keyroute-js --example scripts -- -D warnings

pack-js: build-js
	mkdir -p $(BUILD)
	cd $(JS_DIR) && npm pack --pack-destination $(BUILD)

TEST_TARGETS += test-js
test-js: setup-js lint-js build-js test-js-node test-js-browser

# test/*.test.mjs: the test files only (test/helpers.mjs is a module, not a test).
# The Rust SmartCache the cache suite shares entries with (bindings-js/examples/cache_peer.rs);
# keyroute/serve's suite runs `keyroute serve`, the Rust example worker and the Python
# client and worker of the serve venv (mk/60-serve.mk: build-serve, serve-venv).
test-js-node: build-js setup-apt-js build-serve serve-venv
	$(CARGO) build -q -p keyroute-js --features peer --example cache_peer
	cd $(JS_DIR) && KEYROUTE_BIN=$(KEYROUTE) KEYROUTE_WORKER_BIN=$(SERVE_WORKER) KEYROUTE_SERVE_PY=$(SERVE_PY) \
	  node --expose-gc --test test/*.test.mjs
	cd $(ROOT)/examples/node && npm ci --no-audit --no-fund --prefer-offline && node example.cjs && node example.mjs \
	  && node check_shard_node_redis.mjs && node check_smart_cache.mjs

test-js-browser: build-js setup-apt-js
	cd $(JS_DIR) && KEYROUTE_SCREENSHOT_DIR=$(BUILD) node --test test-browser/*.test.mjs

# Serves the repository root (the demo imports ../dist/web.mjs; examples/browser imports
# ../../bindings-js/dist/web.mjs). Not in DEMO_TARGETS: it runs until Ctrl-C.
demo-web: build-js
	@echo "keyroute demo: http://127.0.0.1:$(DEMO_WEB_PORT)/bindings-js/demo/"
	@echo "browser example: http://127.0.0.1:$(DEMO_WEB_PORT)/examples/browser/   (Ctrl-C to stop)"
	python3 -m http.server --bind 127.0.0.1 --directory $(ROOT) $(DEMO_WEB_PORT)

BENCH_TARGETS += bench-js
# Writes build/bench/js.json and js.md (the README's table, generated from one run); then
# round trips of the Node and the Python clients of keyroute serve (bench/serve.mjs,
# alternating rounds, medians) into build/bench/js-serve.json.
bench-js: build-js build-serve serve-venv
	cd $(JS_DIR) && node bench/bench.mjs
	mkdir -p $(BUILD)/bench
	cd $(JS_DIR) && KEYROUTE_BIN=$(KEYROUTE) KEYROUTE_SERVE_PY=$(SERVE_PY) node bench/serve.mjs 9 1000 > $(BUILD)/bench/js-serve.json
