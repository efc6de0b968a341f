# Rust: core, CLI, no_std/wasm32 build, lints, benches.
.PHONY: setup-apt-core test-rust test-rust-nostd lint build-cli demo-cli bench-rust vectors-ring vectors-slot vectors-pool vectors-scripts

# Debian packages the Rust suites need (Redis for the integration suites; libzmq for the
# CLI, which links keyroute-serve).
APT_CORE := redis-server redis-tools pkg-config libzmq3-dev openssl
SETUP_TARGETS += setup-apt-core
setup-apt-core:
	scripts/apt-install.sh $(APT_CORE)

TEST_TARGETS += test-rust
# The pure core (also with its optional serde feature), the Redis crate (its suites start
# their own servers and clusters on 127.0.0.1), then the CLI. `cargo tree -p keyroute` must
# show no `redis`. The pool vectors are keyroute's own scripts replayed on a real
# redis-server (a regression snapshot): --check proves the committed file is current.
test-rust: setup-apt-core lint test-rust-nostd
	$(CARGO) test -p keyroute
	$(CARGO) test -p keyroute --features serde --test serde --lib
	$(CARGO) test -p keyroute --features serde --doc
	python3 tests/vectors/gen/pool/generate.py --check
	# The slot suites again with each slower CRC16 path forced (the default run takes the
	# fastest this CPU has; a path the CPU lacks is ignored): bit-exactness of every path.
	KEYROUTE_CRC16=table $(CARGO) test -p keyroute --lib --test 'slot_*'
	KEYROUTE_CRC16=pclmul $(CARGO) test -p keyroute --lib --test 'slot_*'
	# The ring suites again with the MD5 batch path forced to scalar, then AVX2 (the default
	# run takes AVX-512 where the CPU has it): batch lookups bit-exact on every path.
	KEYROUTE_MD5=scalar $(CARGO) test -p keyroute --test 'ring_*'
	KEYROUTE_MD5=avx2 $(CARGO) test -p keyroute --test 'ring_*'
	# ... and with native builds' points hashed one at a time (the default run hashes
	# eight at a time with AVX-512 where the CPU has it).
	KEYROUTE_SIP=scalar $(CARGO) test -p keyroute --test 'ring_*'
	# ... and with circles cut into leaves from 64 points on (in every build from 262,144:
	# ring/index.rs), so that the suites' small rings cross leaves on every path.
	$(CARGO) test -p keyroute --features small-leaves --test 'ring_*' --test 'fleet_*' --test serde
	@! $(CARGO) tree -p keyroute -e normal,build,dev --prefix none | grep -q '^redis ' || \
	  { echo "keyroute (core) must not depend on the redis crate" >&2; exit 1; }
	$(CARGO) test -p keyroute-redis
	# Multiplexed (feature mux, tokio): off by default, so tested on its own.
	$(CARGO) test -p keyroute-redis --features mux --test redis_mux
	$(CARGO) test -p keyroute-redis --features mux --doc mux
	$(CARGO) test -p keyroute-cli

test-rust-nostd:
	$(CARGO) test -p keyroute --no-default-features --features alloc,fleet
	# The size-minded CRC16 (tables filled on first use), ring sort (radix) and 32-bit
	# owners the JavaScript package uses; its in-place changes once more with rings of 64
	# points cut into leaves (small-leaves), as large rings are.
	$(CARGO) test -p keyroute --no-default-features --features alloc,small-crc16,small-sort --lib --test 'slot_*' --test 'ring_*'
	$(CARGO) test -p keyroute --no-default-features --features alloc,small-crc16,small-sort,small-leaves --test 'ring_*'
	rustup target list --installed | grep -q wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	$(CARGO) build -p keyroute --no-default-features --features alloc --target wasm32-unknown-unknown
	$(CARGO) build -p keyroute --no-default-features --features fleet --target wasm32-unknown-unknown
	$(CARGO) build -p keyroute --no-default-features --features serde --target wasm32-unknown-unknown

# scripts/imports.py: no import circle in any crate, no back-arrow between core's modules
# (their order is declared in docs/design.md §Layout).
lint:
	$(CARGO) fmt --all -- --check
	python3 scripts/imports.py
	$(CARGO) clippy -p keyroute -p keyroute-redis -p keyroute-cli -p keyroute-bench --all-targets -- -D warnings
	$(CARGO) clippy -p keyroute-redis --features mux --all-targets -- -D warnings

build-cli:
	$(CARGO) build --release -p keyroute-cli

KEYROUTE := $(CARGO_TARGET_DIR)/release/keyroute
DEMO_TARGETS += demo-cli
demo-cli: build-cli
	@scripts/demo.sh $(KEYROUTE)

BENCH_TARGETS += bench-rust
bench-rust:
	$(CARGO) bench -p keyroute-bench --bench ring --bench slot --bench engines --bench config

VECTOR_TARGETS += vectors-ring vectors-slot vectors-scripts vectors-pool
vectors-ring:
	tests/vectors/gen/ring/generate.sh
vectors-slot: setup-apt-core
	python3 tests/vectors/gen/slot/generate.py
vectors-pool: setup-apt-core vectors-scripts
	python3 tests/vectors/gen/pool/generate.py
# Every script as core assembles it (core/tests/script_vectors.rs fails when it is stale).
vectors-scripts:
	$(CARGO) run -q -p keyroute --example scripts > tests/vectors/scripts/scripts.json.tmp
	mv tests/vectors/scripts/scripts.json.tmp tests/vectors/scripts/scripts.json
