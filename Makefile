# keyroute — one routing core, every language.
#
#   make demo    build and run a short tour of the CLI
#   make test    install what the tests need and run every test suite
#   make bench   benchmarks, side by side with the peers
#   make vectors regenerate tests/vectors/ from the real peers and real Redis
#
# Each area adds its own targets in mk/*.mk and appends to TEST_TARGETS / DEMO_TARGETS.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT := $(abspath .)
BUILD := $(ROOT)/build
CARGO ?= cargo
export CARGO_TARGET_DIR ?= $(ROOT)/target

TEST_TARGETS :=
DEMO_TARGETS :=
BENCH_TARGETS :=
VECTOR_TARGETS :=
SETUP_TARGETS :=

include $(sort $(wildcard mk/*.mk))

.PHONY: help setup test demo bench vectors
help:
	@sed -n '2,8p' Makefile

setup: $(SETUP_TARGETS)

test: $(TEST_TARGETS)
	@echo "make test: every suite passed ($(TEST_TARGETS))"

demo: $(DEMO_TARGETS)

bench: $(BENCH_TARGETS)

vectors: $(VECTOR_TARGETS)
