# The smart cache (issue 14): keyroute::cache (core) and keyroute_redis::cache on real
# redis-server processes and a 3-master local cluster. `make test-rust` runs them all;
# this target runs the cache suites alone.
#
#   make test-cache    core/tests/cache_*.rs and redis/tests/cache_*.rs (cache_model runs
#                      10,000 random sequences against redis-server: ~20-30 s on 2 cores)
#   make bench-cache   warm hits from Rust (p50/p99) and redis-benchmark EVALSHA sc-get vs
#                      GET at 50 clients, in one run
#   make vectors-cache-driver
#                      records tests/vectors/cache/driver_trace.json: core's GetOrLoad
#                      carried out on a real redis-server (the replays in core/tests and
#                      bindings-js/test check both executors against it)
.PHONY: test-cache bench-cache vectors-cache-driver

test-cache: setup-apt-core
	$(CARGO) test -p keyroute --test 'cache_*'
	$(CARGO) test -p keyroute --doc cache
	$(CARGO) test -p keyroute-redis --test 'cache_*'
	$(CARGO) test -p keyroute-redis --doc cache

BENCH_TARGETS += bench-cache
bench-cache: setup-apt-core
	$(CARGO) bench -p keyroute-bench --bench cache

VECTOR_TARGETS += vectors-cache-driver
vectors-cache-driver: setup-apt-core
	$(CARGO) test -p keyroute-redis --test cache_driver_trace -- --ignored
