# Issue 16's fleet vectors (tests/vectors/fleet/): real nginx, HAProxy 2.6 and twemproxy
# in front of local backends, spymemcached, Guava, redis-rb, Predis, pymemcache and
# groupcache called directly, plus cited unit-test data and labelled references for the
# peers that cannot run here. generate.sh installs the Debian packages and the venv.
#   make vectors-fleet         rewrite tests/vectors/fleet/*.json (~25 s after installs)
#   make vectors-fleet-check   fail if a fresh generation differs from the committed files
.PHONY: vectors-fleet vectors-fleet-check
VECTOR_TARGETS += vectors-fleet
vectors-fleet:
	tests/vectors/gen/fleet/generate.sh
vectors-fleet-check:
	tests/vectors/gen/fleet/generate.sh --check
