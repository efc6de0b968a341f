# Java: bindings-java/, the org.keyroute jar over libkeyroute through JNA (Debian's
# libjna-java), built with javac and jar (Maven Central is not reachable here; pom.xml is
# for users who build with Maven). The jar carries libkeyroute.so for linux-x86-64,
# stripped (bindings-java/README.md: other platforms).
#
#   make java        build/java/keyroute.jar
#   make test-java   JUnit 5 (Debian's junit5): the shared vectors, the entrance contract,
#                    16 threads on one Ring, and LeastUsed and SmartCache on a throwaway
#                    redis-server, through the jar as a user loads it
#   make java JAVA_NATIVE_PROFILE=ffi   the library of cargo's `ffi` profile (fat LTO, one
#                    codegen unit: smaller, slower to build) instead of release's, stripped
.PHONY: setup-apt-java java test-java example-java-jar bench-java

APT_JAVA := libjna-java junit5 redis-server redis-tools python3
SETUP_TARGETS += setup-apt-java

JAVA_SRC := $(ROOT)/bindings-java
JAVA_BUILD := $(BUILD)/java
JAVA_JAR := $(JAVA_BUILD)/keyroute.jar
JAVA_JNA := /usr/share/java/jna.jar
JAVA_JUNIT := /usr/share/java/junit-platform-console-standalone.jar
JAVA_NATIVE_PROFILE ?= release
JAVA_NATIVE_DIR := org/keyroute/native/linux-x86-64
JAVAC := javac --release 17 -Xlint:all -Werror -encoding UTF-8

setup-apt-java:
	scripts/apt-install.sh $(APT_JAVA)
	command -v javac >/dev/null || scripts/apt-install.sh default-jdk-headless

# The native library: release's (built by build-c, as every C target uses) or ffi's.
$(JAVA_BUILD)/libkeyroute.so: build-c FORCE_JAVA
	@mkdir -p $(JAVA_BUILD)
	@if [ "$(JAVA_NATIVE_PROFILE)" != release ]; then \
	  $(CARGO) build --profile $(JAVA_NATIVE_PROFILE) -p keyroute-c; fi
	strip --strip-unneeded -o $@.tmp $(CARGO_TARGET_DIR)/$(JAVA_NATIVE_PROFILE)/libkeyroute.so
	@mv $@.tmp $@
	@echo "libkeyroute.so for the jar ($(JAVA_NATIVE_PROFILE), stripped): $$(stat -c %s $@) B"

.PHONY: FORCE_JAVA
FORCE_JAVA:

java: setup-apt-java $(JAVA_BUILD)/libkeyroute.so
	rm -rf $(JAVA_BUILD)/classes && mkdir -p $(JAVA_BUILD)/classes/$(JAVA_NATIVE_DIR)
	$(JAVAC) -cp $(JAVA_JNA) -d $(JAVA_BUILD)/classes $$(find $(JAVA_SRC)/src/main/java -name '*.java' | sort)
	cp $(JAVA_BUILD)/libkeyroute.so $(JAVA_BUILD)/classes/$(JAVA_NATIVE_DIR)/libkeyroute.so
	cp $(ROOT)/LICENSE-APACHE $(ROOT)/LICENSE-MIT $(JAVA_BUILD)/classes/
	printf 'Automatic-Module-Name: org.keyroute\nImplementation-Title: keyroute\nImplementation-Version: %s\n' \
	    "$$(sed -n 's/^\#define KEYROUTE_VERSION_STRING "\(.*\)"/\1/p' $(C_HEADER))" > $(JAVA_BUILD)/manifest.txt
	jar --create --file $(JAVA_JAR).tmp --manifest $(JAVA_BUILD)/manifest.txt -C $(JAVA_BUILD)/classes .
	@mv $(JAVA_JAR).tmp $(JAVA_JAR)
	@echo "built $(JAVA_JAR): $$(stat -c %s $(JAVA_JAR)) B"

# The tests load the library from the jar (no KEYROUTE_LIB, no jna.library.path), as a
# user's `java -cp keyroute.jar:jna.jar` does.
TEST_TARGETS += test-java
test-java: java $(C_VECTORS) $(C_CONTRACT) $(C_FLEET) example-java-jar
	rm -rf $(JAVA_BUILD)/test-classes && mkdir -p $(JAVA_BUILD)/test-classes
	$(JAVAC) -cp $(JAVA_JAR):$(JAVA_JNA):$(JAVA_JUNIT) -d $(JAVA_BUILD)/test-classes \
	    $$(find $(JAVA_SRC)/src/test/java -name '*.java' | sort)
	env -u KEYROUTE_LIB $(C_WITH_CLUSTER) $(C_WITH_REDIS) java -Dkeyroute.requireRedis=true -Dkeyroute.requireCluster=true \
	    -Dkeyroute.vectors=$(C_VECTORS) -Dkeyroute.contract=$(C_CONTRACT) -Dkeyroute.fleet=$(C_FLEET) \
	    -Dkeyroute.parity=$(ROOT)/docs/parity.md -Dkeyroute.classpath=$(JAVA_JAR):$(JAVA_JNA):$(JAVA_BUILD)/test-classes -Dkeyroute.jar=$(JAVA_JAR) -Dkeyroute.jna=$(JAVA_JNA) \
	    -jar $(JAVA_JUNIT) --disable-banner --disable-ansi-colors --details=tree --fail-if-no-tests \
	    --class-path $(JAVA_JAR):$(JAVA_JNA):$(JAVA_BUILD)/test-classes \
	    --select-package org.keyroute 2>&1 | tee $(JAVA_BUILD)/junit.log
	@grep -q ' 0 tests failed' $(JAVA_BUILD)/junit.log && ! grep -q ' [1-9][0-9]* tests skipped' $(JAVA_BUILD)/junit.log || \
	  { echo "test-java: failed or skipped tests (above)" >&2; exit 1; }

# The examples (examples/java/*.java but Route.java, which example-java runs over the
# staged C library) against the jar: a sharded client, a pool pick and a cache get.
example-java-jar: java
	rm -rf $(JAVA_BUILD)/examples && mkdir -p $(JAVA_BUILD)/examples
	$(JAVAC) -cp $(JAVA_JAR) -d $(JAVA_BUILD)/examples \
	    $$(ls $(ROOT)/examples/java/*.java | grep -v /Route.java)
	env -u KEYROUTE_LIB $(C_WITH_REDIS) sh -ec 'cp=$(JAVA_JAR):$(JAVA_JNA):$(JAVA_BUILD)/examples; \
	  java -cp $$cp ShardedRedis; java -cp $$cp PoolPick "$$KEYROUTE_TEST_REDIS_URL"; \
	  java -cp $$cp CacheGet "$$KEYROUTE_TEST_REDIS_URL"'

# Java side by side with its peers (spymemcached's KetamaNodeLocator, Guava's
# consistentHash; Debian libspymemcached-java and libguava-java), every answer checked the
# same first: build/bench/java.json. Not part of make test.
BENCH_TARGETS += bench-java
JAVA_BENCH_CP := $(JAVA_JAR):$(JAVA_JNA):/usr/share/java/spymemcached.jar:/usr/share/java/guava.jar
bench-java: java
	scripts/apt-install.sh libspymemcached-java libguava-java
	rm -rf $(JAVA_BUILD)/bench && mkdir -p $(JAVA_BUILD)/bench $(BUILD)/bench
	javac --release 17 -encoding UTF-8 -cp $(JAVA_BENCH_CP) -d $(JAVA_BUILD)/bench $(JAVA_SRC)/src/bench/java/JavaBench.java
	java -cp $(JAVA_BENCH_CP):$(JAVA_BUILD)/bench JavaBench $(BUILD)/bench/java.json
