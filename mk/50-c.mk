# C: libkeyroute (bindings-c), its generated header, pkg-config file, C tests (shared,
# static, C++, valgrind, ASan), the C and Java examples, and the C benchmark.
#
#   make test-c                   everything below, on a fresh clone
#   make install-c PREFIX=/usr/local [DESTDIR=...]   (also `make install`)
#   make bench-c                  keyroute_ring_get vs libmemcached, keyroute_key_slot (C),
#                                 then each C call against the Rust call it wraps
.PHONY: setup-apt-c build-c check-header-c lint-c stage-c install-c install test-c test-c-unit \
        test-c-redis \
        test-c-examples example-c example-java bench-c

APT_C := valgrind libjna-java libmemcached-dev pkg-config gcc g++ python3 redis-server redis-tools
SETUP_TARGETS += setup-apt-c

C_SRC := $(ROOT)/bindings-c
C_HEADER := $(C_SRC)/include/keyroute.h
C_LIBDIR := $(CARGO_TARGET_DIR)/release
C_BUILD := $(BUILD)/c
C_STAGE := $(C_BUILD)/prefix
C_VECTORS := $(C_BUILD)/vectors.txt
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

# Builds libkeyroute.{so,a}; build.rs regenerates include/keyroute.h. The committed header
# is saved first so that check-header-c can compare it with the fresh generation.
build-c:
	@mkdir -p $(C_BUILD)
	cp $(C_HEADER) $(C_BUILD)/keyroute.h.committed
	$(CARGO) rustc --release -p keyroute-c -- --print native-static-libs 2>&1 | tee $(C_BUILD)/rustc.log
	@libs=$$(sed -n 's/.*native-static-libs: //p' $(C_BUILD)/rustc.log | tail -1); \
	  if [ -n "$$libs" ]; then echo "$$libs" > $(C_BUILD)/native-static-libs; fi

check-header-c: build-c
	@cmp -s $(C_BUILD)/keyroute.h.committed $(C_HEADER) || { \
	  echo "bindings-c/include/keyroute.h is out of date with bindings-c/src/lib.rs (it has now been regenerated; commit it):" >&2; \
	  diff -u $(C_BUILD)/keyroute.h.committed $(C_HEADER) >&2 || true; exit 1; }
	@echo "keyroute.h: committed header matches a fresh cbindgen generation"

# install_c PREFIX: libraries (with SONAME symlinks), header, keyroute.pc.
define install_c
	install -d $(1)/lib/pkgconfig $(1)/include
	install -m 644 $(C_HEADER) $(1)/include/keyroute.h
	install -m 644 $(C_LIBDIR)/libkeyroute.a $(1)/lib/libkeyroute.a
	install -m 755 $(C_LIBDIR)/libkeyroute.so $(1)/lib/libkeyroute.so.$(C_VERSION)
	ln -sf libkeyroute.so.$(C_VERSION) $(1)/lib/libkeyroute.so.$(C_SOVER)
	ln -sf libkeyroute.so.$(C_SOVER) $(1)/lib/libkeyroute.so
	sed -e 's|@PREFIX@|$(PREFIX_PC)|' -e 's|@VERSION@|$(C_VERSION)|' \
	    -e 's|@NATIVE_STATIC_LIBS@|$(C_NATIVE_LIBS)|' $(C_SRC)/keyroute.pc.in > $(1)/lib/pkgconfig/keyroute.pc
endef

install-c: build-c
	$(call install_c,$(DESTDIR)$(PREFIX))
install-c: PREFIX_PC = $(PREFIX)
install: install-c

stage-c: build-c
	rm -rf $(C_STAGE)
	$(call install_c,$(C_STAGE))
stage-c: PREFIX_PC = $(C_STAGE)

$(C_VECTORS): $(wildcard tests/vectors/*/*.json) $(C_SRC)/tests/vectors_to_lines.py
	@mkdir -p $(C_BUILD)
	python3 $(C_SRC)/tests/vectors_to_lines.py tests/vectors > $@.tmp && mv $@.tmp $@

TEST_TARGETS += test-c
test-c: setup-apt-c check-header-c test-c-unit test-c-redis test-c-examples lint-c
	@echo "test-c: C library, header, C/C++ tests (shared, static, valgrind, ASan; Redis calls on a real redis-server), C and Java examples passed"

lint-c:
	$(CARGO) fmt -p keyroute-c --check
	$(CARGO) clippy --release -p keyroute-c -- -D warnings

# The C tests, compiled through pkg-config against the staged install: shared, static, as
# C++, under valgrind memcheck and under AddressSanitizer + UBSan.
test-c-unit: stage-c $(C_VECTORS)
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $(C_SRC)/tests/test_keyroute.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o test_shared
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $$($(C_PKG) --cflags keyroute) \
	    $(C_SRC)/tests/test_keyroute.c $(C_STAGE)/lib/libkeyroute.a \
	    $$($(C_PKG) --variable=native_static_libs keyroute) -o test_static
	cd $(C_BUILD) && g++ -x c++ -std=c++11 $(C_WARN) -O1 -g $(C_SRC)/tests/test_keyroute.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o test_cxx
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g -fsanitize=address,undefined \
	    -fno-omit-frame-pointer -fno-sanitize-recover=all $(C_SRC)/tests/test_keyroute.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o test_asan
	! readelf -d $(C_BUILD)/test_static | grep -q 'libkeyroute'
	readelf -d $(C_BUILD)/test_shared | grep -q 'NEEDED.*libkeyroute.so.$(C_SOVER)'
	$(C_BUILD)/test_shared $(C_VECTORS)
	$(C_BUILD)/test_static $(C_VECTORS)
	$(C_BUILD)/test_cxx $(C_VECTORS)
	ASAN_OPTIONS=detect_leaks=1 $(C_BUILD)/test_asan $(C_VECTORS)
	valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite,indirect,possible \
	    --errors-for-leak-kinds=definite,indirect,possible $(C_BUILD)/test_shared $(C_VECTORS)
	valgrind -q --error-exitcode=3 --leak-check=full --show-leak-kinds=definite,indirect,possible \
	    --errors-for-leak-kinds=definite,indirect,possible $(C_BUILD)/test_static $(C_VECTORS)

# The Redis calls (tests/test_redis.c) on a throwaway redis-server (tests/with_redis.sh
# starts one on a free 127.0.0.1 port and sets KEYROUTE_TEST_REDIS_URL): shared, static,
# C++, ASan/UBSan and valgrind, each run on a fresh server.
C_WITH_REDIS := $(C_SRC)/tests/with_redis.sh
C_VALGRIND := valgrind -q --error-exitcode=3 --leak-check=full \
    --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible
test-c-redis: stage-c $(C_VECTORS)
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $(C_SRC)/tests/test_redis.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o test_redis_shared
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g $$($(C_PKG) --cflags keyroute) \
	    $(C_SRC)/tests/test_redis.c $(C_STAGE)/lib/libkeyroute.a \
	    $$($(C_PKG) --variable=native_static_libs keyroute) -o test_redis_static
	cd $(C_BUILD) && g++ -x c++ -std=c++11 $(C_WARN) -O1 -g $(C_SRC)/tests/test_redis.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o test_redis_cxx
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O1 -g -fsanitize=address,undefined \
	    -fno-omit-frame-pointer -fno-sanitize-recover=all $(C_SRC)/tests/test_redis.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o test_redis_asan
	$(C_WITH_REDIS) $(C_BUILD)/test_redis_shared $(C_VECTORS)
	$(C_WITH_REDIS) $(C_BUILD)/test_redis_static $(C_VECTORS)
	$(C_WITH_REDIS) $(C_BUILD)/test_redis_cxx $(C_VECTORS)
	ASAN_OPTIONS=detect_leaks=1 $(C_WITH_REDIS) $(C_BUILD)/test_redis_asan $(C_VECTORS)
	$(C_WITH_REDIS) $(C_VALGRIND) $(C_BUILD)/test_redis_shared $(C_VECTORS)
	$(C_WITH_REDIS) $(C_VALGRIND) $(C_BUILD)/test_redis_static $(C_VECTORS)

test-c-examples: example-c example-java

# examples/c: built with `pkg-config --cflags --libs keyroute` as a user would; its output
# is checked against the shared vectors.
example-c: stage-c
	cd $(C_BUILD) && gcc -std=c99 $(C_WARN) -O2 $(ROOT)/examples/c/route.c \
	    $$($(C_PKG) --cflags --libs keyroute) -Wl,-rpath,$(C_STAGE)/lib -o example_route
	$(C_BUILD)/example_route | tee $(C_BUILD)/example_c.out
	python3 $(C_SRC)/tests/check_example_output.py tests/vectors $(C_BUILD)/example_c.out

# examples/java: JNA (Debian libjna-java) loading the staged libkeyroute; it also picks
# from a least-used pool on a throwaway redis-server (tests/with_redis.sh).
example-java: stage-c
	rm -rf $(C_BUILD)/java && mkdir -p $(C_BUILD)/java
	javac -d $(C_BUILD)/java -cp $(JNA_JAR) $(ROOT)/examples/java/Route.java
	$(C_WITH_REDIS) sh -ec 'java -cp $(JNA_JAR):$(C_BUILD)/java \
	    -Djna.library.path=$(C_STAGE)/lib Route > $(C_BUILD)/example_java.out'
	cat $(C_BUILD)/example_java.out
	python3 $(C_SRC)/tests/check_example_output.py --picks tests/vectors $(C_BUILD)/example_java.out

BENCH_TARGETS += bench-c
bench-c: setup-apt-c stage-c
	cd $(C_BUILD) && gcc -std=c99 -O2 -Wall -Wextra $(C_SRC)/bench/bench.c \
	    $$($(C_PKG) --cflags keyroute) $(C_STAGE)/lib/libkeyroute.a \
	    $$($(C_PKG) --variable=native_static_libs keyroute) \
	    $$(pkg-config --cflags --libs libmemcached) -o bench_c
	$(C_BUILD)/bench_c
	$(CARGO) bench -p keyroute-c --bench ffi
