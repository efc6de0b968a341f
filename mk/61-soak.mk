# The soak (issue 34): service/tests/test_soak.py, a mixed hostile load on one
# `keyroute serve` on Redis (every client message type, parked floods, a slow reader,
# random frames, Rust workers killed and restarted, a Redis restart). It prints RSS and
# CPU every 5 s and asserts exactly one reply per request, no wrong value, RSS <= 64 MB.
#
#   make soak          10 minutes (SOAK_SECONDS=600)
#   make test-serve    runs the same test for 60 s (KEYROUTE_SOAK_SECONDS unset)
.PHONY: soak

SOAK_SECONDS ?= 600

soak: build-serve serve-venv
	KEYROUTE_BIN=$(KEYROUTE) KEYROUTE_WORKER_BIN=$(SERVE_WORKER) KEYROUTE_SOAK_SECONDS=$(SOAK_SECONDS) \
	  $(SERVE_PY) -m pytest -q -s -p no:cacheprovider -c service/tests/pytest.ini service/tests/test_soak.py
