# C: libkeyroute (bindings-c), its generated header, pkg-config file, C tests (shared,
# static, C++, valgrind, ASan/UBSan), the entrance contract in C, the smart cache in C (on
# redis-servers and a local 3-master cluster), the install as a user does it, the C and
# Java examples, and the C benchmark.
#
#   make test-c                   everything below, on a fresh clone
#   make install-c PREFIX=/usr/local [DESTDIR=...]   (also `make install`; stripped libraries)
#   make update-header-c          copy the freshly generated header over include/keyroute.h
#   make bench-c                  keyroute_ring_get vs libmemcached, keyroute_key_slot (C),
#                                 then each C call against the Rust call it wraps
#                                 (build/bench/c.json and c-ffi.json for make bench-report)
#   make bench-c-callgrind        the same C calls against the Rust calls in instructions
#                                 (callgrind; build/bench/c-callgrind.json)
.PHONY: setup-apt-c build-c check-header-c update-header-c lint-c stage-c install-c install \
        test-c test-c-rust test-c-unit test-c-fleet test-c-contract test-c-redis test-c-cache test-c-install \
        test-c-examples check-parity-c build-bench-c example-c example-cache-c example-java bench-c

APT_C := valgrind libjna-java libmemcached-dev pkg-config gcc g++ binutils python3 \
         redis-server redis-tools
SETUP_TARGETS += setup-apt-c

C_SRC := $(ROOT)/bindings-c
C_HEADER := $(C_SRC)/include/keyroute.h
C_LIBDIR := $(CARGO_TARGET_DIR)/release
C_BUILD := $(BUILD)/c
C_STAGE := $(C_BUILD)/prefix
C_VECTORS := $(C_BUILD)/vectors.txt
C_CONTRACT := $(C_BUILD)/contract.txt
C_FLEET := $(C_BUILD)/fleet.txt
# The header cbindgen generated in the last build (build.rs writes it into OUT_DIR only).
C_HEADER_NEW := $(C_BUILD)/keyroute.h
C_VERSION = $(shell sed -n 's/^\#define KEYROUTE_VERSION_STRING "\(.*\)"/\1/p' $(C_HEADER))
# SONAME suffix: MAJOR, or 0.MINOR before 1.0 (as bindings-c/build.rs sets it).
C_SOVER = $(shell echo $(C_VERSION) | awk -F. '{ print ($$1 == "0") ? $$1 "." $$2 : $$1 }')
# System libraries a static libkeyroute needs (printed by rustc, cached by build-c).
C_NATIVE_LIBS = $(shell cat $(C_BUILD)/native-static-libs 2>/dev/null || echo -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)
C_WARN := -Wall -Wextra -Werror -pedantic
C_PKG = PKG_CONFIG_PATH=$(C_STAGE)/lib/pkgconfig pkg-config
JNA_JAR := /usr/share/java/jna.jar
PREFIX ?= /usr/local

setup-apt-c:
	scripts/apt-install.sh $(APT_C)
	command -v javac >/dev/null || scripts/apt-install.sh default-jdk-headless

# Builds libkeyroute.{so,a}; build.rs generates the header into OUT_DIR, copied here to
# $(C_HEADER_NEW) (found through cargo's build-script message). Nothing in the source
# tree is written.
build-c:
	@mkdir -p $(C_BUILD)
	$(CARGO) rustc --release -p keyroute-c --message-format=json-render-diagnostics \
	    -- --print native-static-libs 2>&1 >$(C_BUILD)/cargo.json | tee $(C_BUILD)/rustc.log
	@libs=$$(sed -n 's/.*native-static-libs: //p' $(C_BUILD)/rustc.log | tail -1); \
	  if [ -n "$$libs" ]; then echo "$$libs" > $(C_BUILD)/native-static-libs; fi
	@out=$$(python3 -c 'import json, re, sys; \
	  ms = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]; \
	  print([m["out_dir"] for m in ms if m.get("reason") == "build-script-executed" \
	         and re.search(r"(^|#)keyroute-c[@ ]", m["package_id"])][-1])' $(C_BUILD)/cargo.json) && \
	  cp "$$out/keyroute.h" $(C_HEADER_NEW)

# The committed header must be what cbindgen generates now.
check-header-c: build-c
	@diff -u $(C_HEADER) $(C_HEADER_NEW) >&2 || { \
	  echo "bindings-c/include/keyroute.h differs from a fresh cbindgen generation (diff above);" \
	       "run 'make update-header-c' and commit it" >&2; exit 1; }
	@echo "keyroute.h: committed header matches a fresh cbindgen generation"

update-header-c: build-c
	cp $(C_HEADER_NEW) $(C_HEADER)

# install_c PREFIX: libraries (with SONAME symlinks; debug info stripped: release keeps it
# for the benchmarks, a user's install does not), header, keyroute.pc.
define install_c
	install -d $(1)/lib/pkgconfig $(1)/include
	install -m 644 $(C_HEADER) $(1)/include/keyroute.h
	install -m 644 $(C_LIBDIR)/libkeyroute.a $(1)/lib/libkeyroute.a
	strip --strip-debug $(1)/lib/libkeyroute.a
	install -m 755 $(C_LIBDIR)/libkeyroute.so $(1)/lib/libkeyroute.so.$(C_VERSION)
	strip --strip-unneeded $(1)/lib/libkeyroute.so.$(C_VERSION)
	ln -sf libkeyroute.so.$(C_VERSION) $(1)/lib/libkeyroute.so.$(C_SOVER)
	ln -sf libkeyroute.so.$(C_SOVER) $(1)/lib/libkeyroute.so
	sed -e 's|@PREFIX@|$(PREFIX_PC)|' -e 's|@VERSION@|$(C_VERSION)|' \
	    -e 's|@NATIVE_STATIC_LIBS@|$(C_NATIVE_LIBS)|' $(C_SRC)/keyroute.pc.in > $(1)/lib/pkgconfig/keyroute.pc
endef

install-c: build-c
	$(call install_c,$(DESTDIR)$(PREFIX))
install-c: PREFIX_PC = $(PREFIX)
install: install-c

stage-c: check-header-c
	rm -rf $(C_STAGE)
	$(call install_c,$(C_STAGE))
	@! objdump -h $(C_STAGE)/lib/libkeyroute.a | grep -q '\.debug_info' || \
	  { echo "libkeyroute.a still carries debug info" >&2; exit 1; }
	@! readelf -S $(C_STAGE)/lib/libkeyroute.so.$(C_VERSION) | grep -q '\.debug_info' || \
	  { echo "libkeyroute.so still carries debug info" >&2; exit 1; }
	@echo "staged: $$(stat -c %s $(C_STAGE)/lib/libkeyroute.a) B libkeyroute.a," \
	  "$$(stat -c %s $(C_STAGE)/lib/libkeyroute.so.$(C_VERSION)) B libkeyroute.so" \
	  "(unstripped: $$(stat -c %s $(C_LIBDIR)/libkeyroute.a) B, $$(stat -c %s $(C_LIBDIR)/libkeyroute.so) B)"
stage-c: PREFIX_PC = $(C_STAGE)

$(C_VECTORS): $(wildcard tests/vectors/*/*.json) $(C_SRC)/tests/vectors_to_lines.py
	@mkdir -p $(C_BUILD)
	python3 $(C_SRC)/tests/vectors_to_lines.py tests/vectors > $@.tmp && mv $@.tmp $@

$(C_CONTRACT): tests/contract/bad_inputs.json docs/errors.md $(C_SRC)/tests/contract_to_lines.py
	@mkdir -p $(C_BUILD)
	python3 $(C_SRC)/tests/contract_to_lines.py tests/contract/bad_inputs.json docs/errors.md \
	    > $@.tmp && mv $@.tmp $@

$(C_FLEET): tests/vectors/fleet_routes.json $(wildcard tests/vectors/fleet/*.json) $(C_SRC)/tests/fleet_to_lines.py
	@mkdir -p $(C_BUILD)
	python3 $(C_SRC)/tests/fleet_to_lines.py tests/vectors > $@.tmp && mv $@.tmp $@

TEST_TARGETS += test-c
test-c: setup-apt-c check-header-c test-c-rust test-c-unit test-c-fleet test-c-contract test-c-redis \
        test-c-cache test-c-install test-c-examples check-parity-c build-bench-c lint-c
	@echo "test-c: C library, header, statuses, contract, C/C++ tests (shared, static, valgrind, ASan/UBSan; Redis calls and the smart cache on real redis-servers and a 3-master cluster), install with rpath, C and Java examples, parity passed"

lint-c:
	$(CARGO) fmt -p keyroute-c --check
	$(CARGO) clippy --release -p keyroute-c --all-targets -- -D warnings

# The binding's own Rust tests: every ErrorCode has its status (same name and number) and
# back, the guard, argument checks and handle tags; on a throwaway redis-server, a panic
# while a loader runs (caught as KEYROUTE_INTERNAL, the lease released).
test-c-rust:
	$(C_WITH_REDIS) $(CARGO) test --release -p keyroute-c --lib

# c_variants NAME SOURCE: NAME_shared, NAME_static, NAME_cxx (C++), NAME_asan (ASan+UBSan),
# compiled through pkg-config against the staged install.
define c_variants
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $(2) \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o $(1)_shared
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $$($(C_PKG) --cflags keyroute) \
	    $(2) $(C_STAGE)/lib/libkeyroute.a \
	    $$($(C_PKG) --variable=native_static_libs keyroute) -o $(1)_static
	cd $(C_BUILD) && g++ -x c++ -std=c++11 $(C_WARN) -O1 -g $(2) \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o $(1)_cxx
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g -fsanitize=address,undefined \
	    -fno-omit-frame-pointer -fno-sanitize-recover=all $(2) \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o $(1)_asan
endef

# valgrind memcheck; KEYROUTE_TEST_UNDER_CHECKER tells the tests to leave out the
# use-after-free handle checks (reading a freed handle's tag is what such a checker
# reports, correctly).
# tests/valgrind.supp: the one suppression, std's handle of a thread that calls into
# keyroute and never runs its thread-exit destructors (the main thread), by name.
C_VALGRIND := env KEYROUTE_TEST_UNDER_CHECKER=1 valgrind -q --error-exitcode=3 --leak-check=full \
    --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible \
    --suppressions=$(ROOT)/bindings-c/tests/valgrind.supp
C_ASAN := env ASAN_OPTIONS=detect_leaks=1 KEYROUTE_TEST_UNDER_CHECKER=1

test-c-unit: stage-c $(C_VECTORS)
	$(call c_variants,test,$(C_SRC)/tests/test_keyroute.c)
	! readelf -d $(C_BUILD)/test_static | grep -q 'libkeyroute'
	readelf -d $(C_BUILD)/test_shared | grep -q 'NEEDED.*libkeyroute.so.$(C_SOVER)'
	$(C_BUILD)/test_shared $(C_VECTORS)
	$(C_BUILD)/test_static $(C_VECTORS)
	$(C_BUILD)/test_cxx $(C_VECTORS)
	$(C_ASAN) $(C_BUILD)/test_asan $(C_VECTORS)
	$(C_VALGRIND) $(C_BUILD)/test_shared $(C_VECTORS)
	$(C_VALGRIND) $(C_BUILD)/test_static $(C_VECTORS)

# keyroute_router: every fleet vector case (tests/vectors/fleet_routes.json) and the
# entrance checks; shared, static, C++ and ASan/UBSan, and the API part under valgrind
# (the vectors under valgrind would add about a minute).
test-c-fleet: stage-c $(C_FLEET)
	$(call c_variants,fleet,$(C_SRC)/tests/test_fleet.c)
	$(C_BUILD)/fleet_shared $(C_FLEET)
	$(C_BUILD)/fleet_static $(C_FLEET)
	$(C_BUILD)/fleet_cxx $(C_FLEET)
	$(C_ASAN) $(C_BUILD)/fleet_asan $(C_FLEET)
	$(C_VALGRIND) $(C_BUILD)/fleet_shared

# tests/contract/bad_inputs.json: every case C can express, as the other languages run it.
test-c-contract: stage-c $(C_CONTRACT)
	$(call c_variants,contract,$(C_SRC)/tests/test_contract.c)
	$(C_BUILD)/contract_shared $(C_CONTRACT)
	$(C_BUILD)/contract_static $(C_CONTRACT)
	$(C_BUILD)/contract_cxx $(C_CONTRACT)
	$(C_ASAN) $(C_BUILD)/contract_asan $(C_CONTRACT)
	$(C_VALGRIND) $(C_BUILD)/contract_shared $(C_CONTRACT)

# The Redis calls (tests/test_redis.c) on throwaway redis-servers (tests/with_redis.sh
# starts one on a free 127.0.0.1 port and sets KEYROUTE_TEST_REDIS_URL; the outer one
# requires a password, given to the test in KEYROUTE_TEST_REDIS_AUTH_URL and
# KEYROUTE_TEST_REDIS_PASSWORD): shared, static, C++, ASan/UBSan and valgrind, each run on
# fresh servers.
C_WITH_REDIS := $(C_SRC)/tests/with_redis.sh
C_WITH_REDIS_PAIR := $(C_WITH_REDIS) --password --var KEYROUTE_TEST_REDIS_AUTH_URL $(C_WITH_REDIS)
# tests/test_tls.c on a TLS-only server with a password (tests/with_tls_redis.sh), and with
# --acl-cluster the *_open_cluster() calls as an ACL user on a 3-master cluster whose nodes
# require users (tests/with_cluster.sh --acl).
# With --cluster (under tests/with_cluster.sh, a throwaway 3-master cluster) the same
# tests also run on handles opened with keyroute_*_open_cluster(), after their argument
# statuses (under valgrind without the vectors: --cluster-calls).
test-c-redis: stage-c $(C_VECTORS)
	$(call c_variants,test_tls,$(C_SRC)/tests/test_tls.c)
	$(C_WITH_CLUSTER) --acl $(C_SRC)/tests/with_tls_redis.sh $(C_BUILD)/test_tls_shared --acl-cluster
	$(C_SRC)/tests/with_tls_redis.sh $(C_VALGRIND) --suppressions=$(ROOT)/bindings-c/tests/valgrind-tls.supp $(C_BUILD)/test_tls_static
	$(C_SRC)/tests/with_tls_redis.sh $(C_BUILD)/test_tls_cxx
	$(call c_variants,test_redis,$(C_SRC)/tests/test_redis.c)
	$(C_WITH_CLUSTER) $(C_WITH_REDIS_PAIR) $(C_BUILD)/test_redis_shared $(C_VECTORS) --cluster
	$(C_WITH_REDIS_PAIR) $(C_BUILD)/test_redis_static $(C_VECTORS)
	$(C_WITH_REDIS_PAIR) $(C_BUILD)/test_redis_cxx $(C_VECTORS)
	$(C_ASAN) $(C_WITH_CLUSTER) $(C_WITH_REDIS_PAIR) $(C_BUILD)/test_redis_asan $(C_VECTORS) --cluster
	$(C_WITH_CLUSTER) $(C_WITH_REDIS_PAIR) $(C_VALGRIND) $(C_BUILD)/test_redis_shared $(C_VECTORS) --cluster-calls
	$(C_WITH_REDIS_PAIR) $(C_VALGRIND) $(C_BUILD)/test_redis_static $(C_VECTORS)

# The smart cache, sessions and devices (tests/test_cache.c): on the two throwaway
# redis-servers, and with --cluster also on a throwaway 3-master cluster
# (tests/with_cluster.sh, ~5 s to start). It forks: the stampede runs in 3 processes
# forked before any keyroute call. valgrind runs on the static build and on a shared build
# linked to the unstripped release library: the installed libkeyroute.so is stripped of
# its symbols, so the suppression of std's main-thread handle cannot be matched there.
C_WITH_CLUSTER := $(C_SRC)/tests/with_cluster.sh
C_DEVLIB := $(C_BUILD)/devlib
test-c-cache: stage-c
	$(call c_variants,test_cache,$(C_SRC)/tests/test_cache.c -pthread)
	mkdir -p $(C_DEVLIB) && ln -sf $(C_LIBDIR)/libkeyroute.so $(C_DEVLIB)/libkeyroute.so && \
	  ln -sf $(C_LIBDIR)/libkeyroute.so $(C_DEVLIB)/libkeyroute.so.$(C_SOVER)
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $(C_SRC)/tests/test_cache.c -pthread \
	    -I$(C_SRC)/include -L$(C_DEVLIB) -lkeyroute -Wl,-rpath,$(C_DEVLIB) -o test_cache_dev
	$(C_WITH_CLUSTER) $(C_WITH_REDIS_PAIR) $(C_BUILD)/test_cache_shared --cluster
	$(C_WITH_REDIS_PAIR) $(C_BUILD)/test_cache_static
	$(C_WITH_REDIS_PAIR) $(C_BUILD)/test_cache_cxx
	$(C_ASAN) $(C_WITH_CLUSTER) $(C_WITH_REDIS_PAIR) $(C_BUILD)/test_cache_asan --cluster
	$(C_WITH_REDIS_PAIR) $(C_VALGRIND) $(C_BUILD)/test_cache_static
	$(C_WITH_CLUSTER) $(C_WITH_REDIS_PAIR) $(C_VALGRIND) $(C_BUILD)/test_cache_dev --cluster

# The install as the README shows it: `make install-c PREFIX=...` (no DESTDIR), then
# `cc app.c $(pkg-config --cflags --libs keyroute) -Wl,-rpath,$(pkg-config --variable=libdir
# keyroute)` must give a binary that runs and routes as the vectors say. The same build
# without the rpath is run too, to show (not to require) that the loader needs the rpath or
# ldconfig, which is what the README's note is about.
C_INSTALL_TEST := $(C_BUILD)/install-test
test-c-install: build-c
	rm -rf $(C_INSTALL_TEST)
	$(MAKE) --no-print-directory install-c PREFIX=$(C_INSTALL_TEST)
	cd $(C_BUILD) && export PKG_CONFIG_PATH=$(C_INSTALL_TEST)/lib/pkgconfig && \
	  cc $(ROOT)/examples/c/route.c $$(pkg-config --cflags --libs keyroute) \
	     -Wl,-rpath,"$$(pkg-config --variable=libdir keyroute)" -o install_rpath && \
	  cc $(ROOT)/examples/c/route.c $$(pkg-config --cflags --libs keyroute) -o install_norpath
	env -u LD_LIBRARY_PATH $(C_BUILD)/install_rpath > $(C_BUILD)/install_rpath.out
	python3 $(C_SRC)/tests/check_example_output.py tests/vectors $(C_BUILD)/install_rpath.out
	@if env -u LD_LIBRARY_PATH $(C_BUILD)/install_norpath >/dev/null 2>&1; then \
	  echo "test-c-install: note: the build without rpath runs too (a libkeyroute.so.$(C_SOVER) is known to ld.so here)"; \
	else echo "test-c-install: the rpath build runs; the same build without rpath (and no ldconfig) does not find libkeyroute.so.$(C_SOVER), as the README says"; fi

test-c-examples: example-c example-cache-c example-java

# docs/parity.md: every name of the C column's `yes:` cells is declared in keyroute.h.
check-parity-c:
	python3 $(C_SRC)/tests/check_parity.py docs/parity.md $(C_HEADER)

# bench/bench.c keeps compiling (and linking against libmemcached) in `make test-c`.
build-bench-c: setup-apt-c stage-c
	cd $(C_BUILD) && gcc -std=c99 -O2 -Wall -Wextra -Werror $(C_SRC)/bench/bench.c \
	    $$($(C_PKG) --cflags keyroute) $(C_STAGE)/lib/libkeyroute.a \
	    $$($(C_PKG) --variable=native_static_libs keyroute) \
	    $$(pkg-config --cflags --libs libmemcached) -o bench_c
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O2 $(C_SRC)/bench/abi.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o abi_c

# examples/c: built with `pkg-config --cflags --libs keyroute` as a user would; its output
# is checked against the shared vectors.
example-c: stage-c
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O2 $(ROOT)/examples/c/route.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o example_route
	$(C_BUILD)/example_route | tee $(C_BUILD)/example_c.out
	python3 $(C_SRC)/tests/check_example_output.py tests/vectors $(C_BUILD)/example_c.out

# examples/c/cache.c: built with pkg-config like route.c, run on a throwaway redis-server;
# its output must show one backend call for a cold then warm key, the loader's failure, a
# session's statuses and a warm-up that loads only the cold kinds.
example-cache-c: stage-c
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O2 $(ROOT)/examples/c/cache.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o example_cache
	$(C_WITH_REDIS) sh -ec '$(C_BUILD)/example_cache "$$KEYROUTE_TEST_REDIS_URL"' \
	    | tee $(C_BUILD)/example_cache.out
	python3 $(C_SRC)/tests/check_cache_example.py $(C_BUILD)/example_cache.out

# examples/java: JNA (Debian libjna-java) loading the staged libkeyroute; it also picks
# from a least-used pool on a throwaway redis-server (tests/with_redis.sh) and on a
# throwaway 3-master cluster (tests/with_cluster.sh, keyroute_least_used_open_cluster),
# and shows a refused call's status name and message.
example-java: stage-c
	rm -rf $(C_BUILD)/java && mkdir -p $(C_BUILD)/java
	javac -d $(C_BUILD)/java -cp $(JNA_JAR) $(ROOT)/examples/java/Route.java
	$(C_WITH_CLUSTER) $(C_WITH_REDIS) sh -ec 'java -cp $(JNA_JAR):$(C_BUILD)/java \
	    -Djna.library.path=$(C_STAGE)/lib Route > $(C_BUILD)/example_java.out'
	cat $(C_BUILD)/example_java.out
	python3 $(C_SRC)/tests/check_example_output.py --picks tests/vectors $(C_BUILD)/example_java.out

BENCH_TARGETS += bench-c
bench-c: build-bench-c
	@mkdir -p $(BUILD)/bench
	$(C_BUILD)/bench_c --json $(BUILD)/bench/c.json
	$(CARGO) bench -p keyroute-c --bench ffi

# The C boundary in instructions (callgrind counts, steady on a shared machine):
# bench/abi.c through the shared libkeyroute against bench/abi.rs calling core directly,
# per call; build/bench/c-callgrind.json for make bench-report.
BENCH_TARGETS += bench-c-callgrind
.PHONY: bench-c-callgrind
bench-c-callgrind: build-bench-c
	@mkdir -p $(BUILD)/bench
	CARGO=$(CARGO) python3 $(C_SRC)/bench/callgrind.py $(C_BUILD)/abi_c cargo \
	    --json $(BUILD)/bench/c-callgrind.json
