# One benchmark report (issue 17): every suite in BENCH_TARGETS in one run, then
# docs/benchmarks.md (machine stamp, a table and an SVG chart per operation group),
# docs/benchmarks.json (the record bench-check compares with) and README.md's performance
# section (between its bench:begin/bench:end markers). Not part of `make test`: numbers are
# never asserted in a test. Each suite writes build/bench/<suite>.json in the shape of
# bench/README.md; a suite that fails or is missing is reported as such.
#
#   make bench-report     run every suite, then write the report (one full run: see
#                         bench/README.md for its wall time)
#   make bench-check      run every suite, then compare each ratio with docs/benchmarks.json;
#                         fails when one fell more than BENCH_TOLERANCE below the record
#   make bench-compare    the same comparison on the latest run (build/bench), no re-run
#
# BENCH_REPORT_TARGETS (default: every BENCH_TARGETS) picks the suites; KEYROUTE_BENCH_CLOCK
# is the criterion benches' clock (cpu: this thread's CPU time, steadier on a shared
# machine; wall: elapsed time).
.PHONY: bench-report bench-check bench-compare bench-run bench-venv

BENCH_VENV := $(BUILD)/venv-bench
BENCH_PY := $(BENCH_VENV)/bin/python
BENCH_REPORT := bench/report/report.py
BENCH_REPORT_TARGETS ?= $(BENCH_TARGETS)
BENCH_TOLERANCE ?= 0.40
export KEYROUTE_BENCH_CLOCK ?= cpu

$(BENCH_VENV)/.deps: bench/report/requirements.txt
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_PY) -m pip install -q --disable-pip-version-check -r bench/report/requirements.txt
	touch $@

bench-venv: $(BENCH_VENV)/.deps

bench-run:
	$(PYTHON) $(BENCH_REPORT) run $(BENCH_REPORT_TARGETS)

bench-report: bench-venv
	$(PYTHON) $(BENCH_REPORT) run $(BENCH_REPORT_TARGETS)
	$(BENCH_PY) $(BENCH_REPORT) render

bench-check:
	$(PYTHON) $(BENCH_REPORT) run $(BENCH_REPORT_TARGETS)
	$(PYTHON) $(BENCH_REPORT) check --tolerance $(BENCH_TOLERANCE)

bench-compare:
	$(PYTHON) $(BENCH_REPORT) check --tolerance $(BENCH_TOLERANCE)

# The report's machinery (loading, converting, checking: no figure is asserted), stdlib only.
TEST_TARGETS += test-bench-report
.PHONY: test-bench-report
test-bench-report:
	$(PYTHON) -m unittest discover -s bench/report -p 'test_*.py'
