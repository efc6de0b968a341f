# Native Redis, selection half: LeastUsed and Leases on a real redis-server (feature
# `redis`), the `keyroute pick` / `keyroute pool` demo step and the pick benchmark.
#
#   make test-redis    the redis_least_used* and redis_leases suites (they start their own
#                      redis-server / 3-master cluster on free 127.0.0.1 ports), and the
#                      doc tests of redis::{least_used,leases,error}
#   make demo-select   the selection step of `make demo` (REDIS_URL, else a private
#                      redis-server, else the in-memory model)
#   make bench-redis   pick() vs redis-benchmark's EVALSHA, pick_many(n) vs single picks
.PHONY: test-redis demo-select bench-redis

REDIS_TESTS := redis_least_used redis_least_used_concurrency redis_least_used_faults \
               redis_least_used_cluster redis_leases

# `make test-rust` already runs these (the CLI turns the `redis` feature on for the whole
# workspace); this target runs the selection suites alone.
test-redis: setup-apt-core
	$(CARGO) test -p keyroute --features redis $(addprefix --test ,$(REDIS_TESTS))
	$(CARGO) test -p keyroute --features redis --doc -- redis::least_used redis::leases redis::error

# After demo-cli (the CLI tour): `make demo` runs DEMO_TARGETS in order.
DEMO_TARGETS += demo-select
demo-select: build-cli
	@scripts/demo-select.sh $(KEYROUTE)

BENCH_TARGETS += bench-redis
bench-redis: setup-apt-core
	$(CARGO) bench -p keyroute --features redis --bench redis_pick
