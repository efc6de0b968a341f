#!/usr/bin/env bash
# Runs built fuzz targets one after another, each for SECONDS, and prints one line per
# target: executions, executions per second, corpus size, and whether it crashed.
#
#   fuzz/run.sh BIN_DIR OUT_DIR SECONDS TARGET...
#
# Each target starts from fuzz/corpus/<target> (the committed seeds, never written) and
# OUT_DIR/corpus/<target> (what earlier runs found); new inputs go to the latter, crashes,
# timeouts and out-of-memory inputs to OUT_DIR/artifacts/<target>/. The table is also
# written to OUT_DIR/stats.txt. Exit status 1 if any target failed.
set -euo pipefail
bin_dir=$1 out=$2 seconds=$3
shift 3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out"
stats=$out/stats.txt
printf '%-16s %12s %8s %8s  %s\n' target executions exec/s corpus result | tee "$stats"
failed=0
for t in "$@"; do
  mkdir -p "$out/corpus/$t" "$out/artifacts/$t" "$here/corpus/$t"
  log=$out/$t.log
  # -timeout: one input running over 10 s is a hang; -rss_limit_mb: a run over 2 GiB is
  # unbounded memory; -max_len: inputs up to 16 KiB (structured targets use far less).
  set +e
  "$bin_dir/$t" "$out/corpus/$t" "$here/corpus/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
    -print_final_stats=1 -artifact_prefix="$out/artifacts/$t/" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$out/corpus/$t" "$here/corpus/$t" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc): $(ls "$out/artifacts/$t" | tr '\n' ' ') see $log"
    failed=1
  fi
  printf '%-16s %12s %8s %8s  %s\n' "$t" "${execs:-?}" "${rate:-?}" "$corpus" "$result" | tee -a "$stats"
done
exit "$failed"
