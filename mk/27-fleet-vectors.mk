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

# Issue 38's reference Java ring (tests/vectors/fleet/java_reference.json), alone: it needs
# only a JDK (installed when javac is missing), not the other peers. vectors-fleet writes it
# too, with the rest.
#   make vectors-java-ring         rewrite tests/vectors/fleet/java_reference.json (~3 s)
#   make vectors-java-ring-check   fail if a fresh run differs from the committed file
.PHONY: vectors-java-ring vectors-java-ring-check
vectors-java-ring:
	command -v javac >/dev/null 2>&1 || scripts/apt-install.sh default-jdk-headless
	python3 tests/vectors/gen/fleet/generate.py --only java_reference
vectors-java-ring-check:
	command -v javac >/dev/null 2>&1 || scripts/apt-install.sh default-jdk-headless
	python3 tests/vectors/gen/fleet/generate.py --check --only java_reference
