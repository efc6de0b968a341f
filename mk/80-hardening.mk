# Hardening (issue 18): coverage-guided fuzzing (cargo-fuzz, libFuzzer + ASan, nightly),
# miri on the core's pure modules, and the C API fed random pointer/length combinations
# under ASan/UBSan and valgrind. fuzz/README.md has the targets, corpora and figures.
#
#   make fuzz               every fuzz target for FUZZ_SECONDS (default 300 s each, ~1 h in
#                           all); new inputs in build/fuzz/corpus, crashes in
#                           build/fuzz/artifacts; table in build/fuzz/stats.txt
#   make fuzz FUZZ_TARGETS="ring_ops node_list" FUZZ_SECONDS=60
#   make test-fuzz-smoke    build every target, then each for FUZZ_SMOKE_SECONDS (10 s)
#                           from its committed corpus (fuzz/corpus/<target>)
#   make test-miri          cargo +nightly miri test: the C binding's ffi checks and the
#                           core's cheap modules (MIRI_CORE_MODULES); test-miri-full: all
#   make test-c-fuzz        bindings-c/tests/fuzz_api.c under ASan/UBSan and valgrind
#
# The nightly toolchain (with rust-src and miri) and cargo-fuzz are installed by the
# targets themselves when missing: `rustup toolchain install nightly --profile minimal
# --component rust-src,miri` and `cargo install cargo-fuzz --version 0.13.2 --locked`.
.PHONY: setup-nightly setup-fuzz build-fuzz fuzz test-fuzz-smoke fuzz-seeds test-miri test-c-fuzz

NIGHTLY ?= nightly
CARGO_FUZZ_VERSION := 0.13.2
FUZZ_DIR := $(ROOT)/fuzz
FUZZ_OUT := $(BUILD)/fuzz
# A target dir of its own: sanitizer and coverage flags rebuild everything, so these
# artifacts never mix with the stable builds in $(CARGO_TARGET_DIR).
FUZZ_TARGET_DIR := $(FUZZ_OUT)/target
FUZZ_BIN := $(FUZZ_TARGET_DIR)/x86_64-unknown-linux-gnu/release
FUZZ_TARGETS ?= $(shell sed -n '/^\[\[bin\]\]/{n;s/^name = "\(.*\)"/\1/p}' $(FUZZ_DIR)/Cargo.toml)
FUZZ_SECONDS ?= 300
FUZZ_SMOKE_SECONDS ?= 10

setup-nightly:
	@rustup toolchain list | grep -q '^$(NIGHTLY)' || \
	  rustup toolchain install $(NIGHTLY) --profile minimal --component rust-src,miri
	@rustup component list --installed --toolchain $(NIGHTLY) | grep -q '^rust-src' || \
	  rustup component add rust-src --toolchain $(NIGHTLY)
	@rustup component list --installed --toolchain $(NIGHTLY) | grep -q '^miri' || \
	  rustup component add miri --toolchain $(NIGHTLY)

setup-fuzz: setup-nightly
	@if [ "$$(cargo fuzz --version 2>/dev/null)" != "cargo-fuzz $(CARGO_FUZZ_VERSION)" ]; then \
	  echo "installing cargo-fuzz $(CARGO_FUZZ_VERSION) (1-2 minutes)"; \
	  $(CARGO) install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked; \
	fi

# Release with debug assertions and AddressSanitizer (cargo-fuzz's defaults spelled out).
build-fuzz: setup-fuzz
	cd $(FUZZ_DIR) && CARGO_TARGET_DIR=$(FUZZ_TARGET_DIR) \
	  $(CARGO) +$(NIGHTLY) fuzz build --release --debug-assertions --sanitizer address

# The seeds of the text-shaped targets, written from the vectors (committed; --check in
# the smoke pass proves they are current).
fuzz-seeds:
	python3 $(FUZZ_DIR)/seed.py

fuzz: build-fuzz
	$(FUZZ_DIR)/run.sh $(FUZZ_BIN) $(FUZZ_OUT) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

TEST_TARGETS += test-fuzz-smoke
test-fuzz-smoke: build-fuzz
	python3 $(FUZZ_DIR)/seed.py --check
	$(FUZZ_DIR)/run.sh $(FUZZ_BIN) $(FUZZ_OUT)/smoke $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

# miri: the C binding's argument and handle checks (ffi.rs: the helpers every export's
# unsafe pointer handling goes through) and the core's cheap unit-test modules (keys,
# cache) in make test; `make test-miri-full` runs every core unit test (ring builds hash
# thousands of points: over 30 minutes under miri on 2 cores). The core is safe Rust, so
# miri there checks the standard library and dependencies as the core uses them. Tests
# too slow under miri carry #[cfg_attr(miri, ignore)]; the proptest suites in core/tests
# run on stable in test-rust. Times: fuzz/README.md.
MIRI_TARGET_DIR := $(BUILD)/miri-target
MIRIFLAGS ?= -Zmiri-strict-provenance
MIRI_CORE_MODULES ?= keys:: cache::
MIRI := CARGO_TARGET_DIR=$(MIRI_TARGET_DIR) MIRIFLAGS="$(MIRIFLAGS)" $(CARGO) +$(NIGHTLY) miri
.PHONY: test-miri-full
TEST_TARGETS += test-miri
test-miri: setup-nightly
	$(MIRI) test -p keyroute-c --lib -- ffi::
	$(MIRI) test -p keyroute --lib -- $(MIRI_CORE_MODULES)

test-miri-full: setup-nightly
	$(MIRI) test -p keyroute-c --lib -- ffi::
	$(MIRI) test -p keyroute --lib

# The C API fuzzed (bindings-c/tests/fuzz_api.c) on a throwaway redis-server: under
# ASan/UBSan (30,000 calls) and under valgrind linked to the unstripped release library
# (3,000 calls; the suppression of std's main-thread handle needs its symbols), each with
# two seeds.
C_FUZZ_ITERATIONS ?= 30000
C_FUZZ_VALGRIND_ITERATIONS ?= 3000
TEST_TARGETS += test-c-fuzz
test-c-fuzz: stage-c
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g -fsanitize=address,undefined \
	    -fno-omit-frame-pointer -fno-sanitize-recover=all $(C_SRC)/tests/fuzz_api.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o fuzz_api_asan
	mkdir -p $(C_DEVLIB) && ln -sf $(C_LIBDIR)/libkeyroute.so $(C_DEVLIB)/libkeyroute.so && \
	  ln -sf $(C_LIBDIR)/libkeyroute.so $(C_DEVLIB)/libkeyroute.so.$(C_SOVER)
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $(C_SRC)/tests/fuzz_api.c \
	    -I$(C_SRC)/include -L$(C_DEVLIB) -lkeyroute -Wl,-rpath,$(C_DEVLIB) -o fuzz_api_dev
	for seed in 1 2; do \
	  $(C_ASAN) $(C_WITH_REDIS) $(C_BUILD)/fuzz_api_asan $(C_FUZZ_ITERATIONS) $$seed \
	    > $(C_BUILD)/fuzz_api_asan.$$seed.txt || { cat $(C_BUILD)/fuzz_api_asan.$$seed.txt; exit 1; }; \
	  $(C_WITH_REDIS) $(C_VALGRIND) $(C_BUILD)/fuzz_api_dev $(C_FUZZ_VALGRIND_ITERATIONS) $$seed \
	    > $(C_BUILD)/fuzz_api_valgrind.$$seed.txt || { cat $(C_BUILD)/fuzz_api_valgrind.$$seed.txt; exit 1; }; \
	done
	cat $(C_BUILD)/fuzz_api_asan.1.txt
