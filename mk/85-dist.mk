# Release artifacts for every language, in dist/ (not committed; .gitignore), from the
# builds the other targets make (build-c's release libkeyroute, pack-js's npm tarball,
# make java's jar); the wheel and sdist are maturin's (its release build of bindings-py,
# in the same target dir).
#
#   make dist        dist/keyroute-<v>-cp310-abi3-manylinux_*.whl   Python wheel (abi3,
#                                                                    tag checked by auditwheel)
#                    dist/keyroute-<v>.tar.gz                        Python sdist (maturin)
#                    dist/keyroute-<v>.tgz                           npm tarball (npm pack)
#                    dist/keyroute-<v>.jar                           Java jar (libkeyroute.so inside)
#                    dist/keyroute-c-<v>-linux-x86_64.tar.gz         C: lib/ (libkeyroute.so
#                       without rpath, libkeyroute.a), include/keyroute.h,
#                       lib/pkgconfig/keyroute.pc (prefix relative to the .pc: relocatable)
#                    dist/SHA256SUMS                                 sha256sum -c format
#   make test-dist   sha256sum -c; each artifact installed in a clean place under
#                    build/dist-test (a new venv, a new npm project, a bare javac/java
#                    classpath, a C program built through pkg-config against the unpacked
#                    tarball, shared and static) looks up the keys of one shared vector
#                    file; every answer must be the real peer's (tests/dist/case.py)
#   make test-dist-sdist   the same lookup from the sdist, built by pip (not in make test)
.PHONY: setup-apt-dist dist dist-python dist-js dist-java dist-c test-dist test-dist-sdist

# What dist and test-dist run besides the other targets' tools (python3-venv for the
# venvs, binutils' readelf and strip, gcc and pkg-config for the C program).
APT_DIST := python3 python3-venv binutils gcc pkg-config tar
SETUP_TARGETS += setup-apt-dist
setup-apt-dist:
	scripts/apt-install.sh $(APT_DIST)

DIST := $(ROOT)/dist
DIST_STAGE := $(BUILD)/dist
DIST_VENV := $(BUILD)/venv-dist
DIST_REQS := bindings-py/requirements-dist.txt
DIST_TEST := $(BUILD)/dist-test
DIST_PLATFORM := linux-x86_64
DIST_C_NAME = keyroute-c-$(C_VERSION)-$(DIST_PLATFORM)
JS_VERSION = $(shell node -p 'require("$(JS_DIR)/package.json").version')
# Tarball entries get the last commit's time (reproducible archives), 0 outside git.
DIST_EPOCH = $(shell git -C $(ROOT) log -1 --format=%ct 2>/dev/null || echo 0)
DIST_TAR = tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@$(DIST_EPOCH)
# The vector file whose keys every installed artifact looks up (answers from libketama).
DIST_VECTOR := tests/vectors/ring/libketama_weighted_1_2_3_5.json

$(DIST_VENV)/.deps: $(DIST_REQS) | setup-apt-dist
	$(PYTHON) -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/pip install -q --disable-pip-version-check -r $(DIST_REQS)
	touch $@

# The abi3 wheel: maturin's own manylinux check picks the tag (policy from the glibc
# symbol versions the module uses); auditwheel must agree that the wheel is consistent
# with that tag and that it needs no external library (repair would have nothing to add).
dist-python: $(DIST_VENV)/.deps
	rm -rf $(DIST_STAGE)/py && mkdir -p $(DIST_STAGE)/py
	$(DIST_VENV)/bin/maturin build --release --strip -m bindings-py/Cargo.toml --out $(DIST_STAGE)/py
	$(DIST_VENV)/bin/maturin sdist -m bindings-py/Cargo.toml --out $(DIST_STAGE)/py
	@whl=$$(ls $(DIST_STAGE)/py/*.whl); \
	  case "$$whl" in *-abi3-manylinux_*_x86_64*.whl) ;; \
	    *) echo "dist-python: not an abi3 manylinux wheel: $$whl" >&2; exit 1;; esac; \
	  $(DIST_VENV)/bin/auditwheel show "$$whl" | tee $(DIST_STAGE)/py/auditwheel.txt; \
	  tag=$$(basename "$$whl" .whl | sed 's/.*-abi3-//; s/\..*//'); \
	  tr -s ' \n' '  ' < $(DIST_STAGE)/py/auditwheel.txt | grep -q "consistent with the following platform tag: \"$$tag\"" || \
	    { echo "dist-python: auditwheel does not confirm $$tag" >&2; exit 1; }; \
	  ! tr -s ' \n' '  ' < $(DIST_STAGE)/py/auditwheel.txt | grep -q 'external shared libraries' || \
	    { echo "dist-python: the wheel needs external shared libraries" >&2; exit 1; }

dist-js: pack-js
	rm -rf $(DIST_STAGE)/js && mkdir -p $(DIST_STAGE)/js
	cp $(BUILD)/keyroute-$(JS_VERSION).tgz $(DIST_STAGE)/js/

dist-java: java
	rm -rf $(DIST_STAGE)/java && mkdir -p $(DIST_STAGE)/java
	cp $(JAVA_JAR) $(DIST_STAGE)/java/keyroute-$(C_VERSION).jar

# install_c (mk/50-c.mk) into a directory of its own, with the .pc's prefix relative to
# the .pc file itself, then the .so must carry no RPATH/RUNPATH.
dist-c: setup-apt-dist check-header-c
	rm -rf $(DIST_STAGE)/c && mkdir -p $(DIST_STAGE)/c
	$(call install_c,$(DIST_STAGE)/c/$(DIST_C_NAME))
	cp LICENSE-APACHE LICENSE-MIT $(DIST_STAGE)/c/$(DIST_C_NAME)/
	@! readelf -d $(DIST_STAGE)/c/$(DIST_C_NAME)/lib/libkeyroute.so.$(C_VERSION) | grep -E 'RPATH|RUNPATH' || \
	  { echo "dist-c: libkeyroute.so carries an rpath (above)" >&2; exit 1; }
	cd $(DIST_STAGE)/c && $(DIST_TAR) -czf $(DIST_C_NAME).tar.gz $(DIST_C_NAME)
dist-c: PREFIX_PC = $${pcfiledir}/../..

dist: dist-python dist-js dist-java dist-c
	rm -rf $(DIST) && mkdir -p $(DIST)
	cp $(DIST_STAGE)/py/*.whl $(DIST_STAGE)/py/*.tar.gz $(DIST_STAGE)/js/*.tgz \
	   $(DIST_STAGE)/java/*.jar $(DIST_STAGE)/c/*.tar.gz $(DIST)/
	cd $(DIST) && sha256sum $$(ls | grep -v '^SHA256SUMS$$') > SHA256SUMS
	@cd $(DIST) && ls -l --time-style=+ | tail -n +2

TEST_TARGETS += test-dist
test-dist: setup-apt-dist dist
	rm -rf $(DIST_TEST) && mkdir -p $(DIST_TEST)
	cd $(DIST) && sha256sum -c SHA256SUMS
	python3 tests/dist/case.py $(DIST_VECTOR) > $(DIST_TEST)/case.txt
	python3 tests/dist/case.py $(DIST_VECTOR) --expect > $(DIST_TEST)/expect.txt
	@# Python: a new venv, the wheel alone (no index), run outside the source tree (-I).
	$(PYTHON) -m venv $(DIST_TEST)/venv
	$(DIST_TEST)/venv/bin/pip install -q --disable-pip-version-check --no-index --no-deps $(DIST)/*.whl
	$(DIST_TEST)/venv/bin/python -I tests/dist/lookup.py $(DIST_TEST)/case.txt > $(DIST_TEST)/python.out
	@# npm: a new project, the tarball alone (the package has no dependencies).
	mkdir -p $(DIST_TEST)/npm && cd $(DIST_TEST)/npm && npm init -y >/dev/null && \
	  npm install --no-audit --no-fund --offline $(DIST)/keyroute-$(JS_VERSION).tgz >/dev/null
	cp tests/dist/lookup.cjs $(DIST_TEST)/npm/
	node $(DIST_TEST)/npm/lookup.cjs $(DIST_TEST)/case.txt > $(DIST_TEST)/npm.out
	@# Java: javac and java with the jar and JNA only; the library comes out of the jar.
	mkdir -p $(DIST_TEST)/java
	javac -d $(DIST_TEST)/java -cp $(DIST)/keyroute-$(C_VERSION).jar:$(JAVA_JNA) tests/dist/Lookup.java
	env -u KEYROUTE_LIB java -cp $(DIST)/keyroute-$(C_VERSION).jar:$(JAVA_JNA):$(DIST_TEST)/java \
	    Lookup $(DIST_TEST)/case.txt > $(DIST_TEST)/java.out
	@# C: the unpacked tarball through pkg-config, shared (LD_LIBRARY_PATH to its lib/ only,
	@# no rpath in the program) and static (libkeyroute.a and native_static_libs).
	mkdir -p $(DIST_TEST)/c && tar -xzf $(DIST)/$(DIST_C_NAME).tar.gz -C $(DIST_TEST)/c
	cd $(DIST_TEST)/c && export PKG_CONFIG_PATH=$(DIST_TEST)/c/$(DIST_C_NAME)/lib/pkgconfig && \
	  test "$$(realpath "$$(pkg-config --variable=libdir keyroute)")" = "$(DIST_TEST)/c/$(DIST_C_NAME)/lib" && \
	  cc -std=c99 $(C_WARN) -O2 $(ROOT)/tests/dist/lookup.c $$(pkg-config --cflags --libs keyroute) -o lookup_shared && \
	  cc -std=c99 $(C_WARN) -O2 $(ROOT)/tests/dist/lookup.c $$(pkg-config --cflags keyroute) \
	     "$$(pkg-config --variable=libdir keyroute)/libkeyroute.a" $$(pkg-config --variable=native_static_libs keyroute) -o lookup_static
	! readelf -d $(DIST_TEST)/c/lookup_shared | grep -E 'RPATH|RUNPATH'
	! readelf -d $(DIST_TEST)/c/lookup_static | grep -q libkeyroute
	env LD_LIBRARY_PATH=$(DIST_TEST)/c/$(DIST_C_NAME)/lib $(DIST_TEST)/c/lookup_shared $(DIST_TEST)/case.txt > $(DIST_TEST)/c_shared.out
	env -u LD_LIBRARY_PATH $(DIST_TEST)/c/lookup_static $(DIST_TEST)/case.txt > $(DIST_TEST)/c_static.out
	@cd $(DIST_TEST) && for out in python npm java c_shared c_static; do \
	  cmp -s expect.txt $$out.out || { echo "test-dist: $$out.out differs from the peer's answers:" >&2; \
	    diff expect.txt $$out.out | head >&2; exit 1; }; done
	@echo "test-dist: wheel, npm tarball, jar and C tarball (shared, static), each installed in a clean place," \
	  "route all $$(wc -l < $(DIST_TEST)/expect.txt) keys of $(DIST_VECTOR) as its peer did"

# The sdist built from source by pip in a new venv (maturin fetched by pip's build
# isolation; cargo reuses $(CARGO_TARGET_DIR)'s dependencies, the workspace crates are
# built again from the unpacked sdist: about a minute; the next release build of
# keyroute-c then relinks, ~20 s), then the same lookup. Not in
# `make test` (test-dist keeps to the prebuilt artifacts); run it before a release.
test-dist-sdist: dist
	rm -rf $(DIST_TEST)/sdist && mkdir -p $(DIST_TEST)/sdist
	python3 tests/dist/case.py $(DIST_VECTOR) > $(DIST_TEST)/sdist/case.txt
	python3 tests/dist/case.py $(DIST_VECTOR) --expect > $(DIST_TEST)/sdist/expect.txt
	$(PYTHON) -m venv $(DIST_TEST)/sdist/venv
	cd $(DIST_TEST)/sdist && venv/bin/pip install -q --disable-pip-version-check $(DIST)/keyroute-$(C_VERSION).tar.gz
	$(DIST_TEST)/sdist/venv/bin/python -I tests/dist/lookup.py $(DIST_TEST)/sdist/case.txt > $(DIST_TEST)/sdist/python.out
	cmp $(DIST_TEST)/sdist/expect.txt $(DIST_TEST)/sdist/python.out
	@echo "test-dist-sdist: the sdist, built by pip in a new venv, routes all $$(wc -l < $(DIST_TEST)/sdist/expect.txt) keys as libketama did"
