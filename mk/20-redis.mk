# Native Redis, selection half: LeastUsed and Leases on a real redis-server (crate
# keyroute-redis), the `keyroute pick` / `keyroute pool` demo step and the pick benchmark.
#
#   make test-redis    the redis_least_used*, redis_leases and redis_replica suites (they
#                      start their own redis-server / 3-master cluster / master and
#                      REPLICAOF replica on free 127.0.0.1 ports), and the
#                      doc tests of redis::{least_used,leases,error}
#   make demo-select   the selection step of `make demo` (REDIS_URL, else a private
#                      redis-server, else the in-memory model)
#   make bench-redis   pick() vs redis-benchmark's EVALSHA, pick_many(n) vs single picks,
#                      a pick over TLS vs a plain pick on one server (the cost of TLS)
#   make bench-mux     pick() from 50 threads: a connection per thread vs one Multiplexed
#                      connection (feature mux) vs redis-benchmark -c50 -P1 and -P16, in
#                      alternating rounds (MUX_ROUNDS=5, MUX_PICKS=1000 per thread, MUX_THREADS=50)
.PHONY: test-redis demo-select bench-redis bench-mux

REDIS_TESTS := redis_least_used redis_least_used_concurrency redis_least_used_faults \
               redis_least_used_cluster redis_leases redis_replica

# `make test-rust` already runs these; this target runs the selection suites alone.
test-redis: setup-apt-core
	$(CARGO) test -p keyroute-redis $(addprefix --test ,$(REDIS_TESTS))
	$(CARGO) test -p keyroute-redis --doc -- least_used leases error

# After demo-cli (the CLI tour): `make demo` runs DEMO_TARGETS in order.
DEMO_TARGETS += demo-select
demo-select: build-cli
	@scripts/demo-select.sh $(KEYROUTE)

BENCH_TARGETS += bench-redis
bench-redis: setup-apt-core
	$(CARGO) bench -p keyroute-bench --bench redis_pick

MUX_ROUNDS ?= 5
MUX_PICKS ?= 1000
MUX_THREADS ?= 50
bench-mux: setup-apt-core
	$(CARGO) run --release -p keyroute-redis --features mux --example mux_pick -- $(MUX_ROUNDS) $(MUX_PICKS) $(MUX_THREADS)
