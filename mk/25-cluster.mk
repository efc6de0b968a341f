# Redis Cluster routing/resharding and the ring-sharded client: suites against real
# redis-server processes (3-master local clusters and standalone nodes started and
# stopped by the tests). `make test-rust` runs them all; this target runs the cluster
# suites alone.
.PHONY: test-cluster bench-cluster

test-cluster: setup-apt-core
	$(CARGO) test -p keyroute-redis --lib
	$(CARGO) test -p keyroute-redis --test 'redis_cluster*' --test 'redis_sharded*'

BENCH_TARGETS += bench-cluster
bench-cluster: setup-apt-core
	$(CARGO) bench -p keyroute-bench --bench redis_cluster -- --warm-up-time 1 --measurement-time 5
