#!/usr/bin/env bash
# What the JSON report costs on top of the text report, whole process, on an
# 18,000-node graph (bench/footprint-make-model --kind blocks-18k; its JSON is
# ~10 MB). Both write with --output to one file each, overwritten run after
# run, as CI does. Time is wall time, best of $REPORT_BENCH_RUNS (5) each,
# runs alternating; then report_bench times the renderers alone, in process.
# Exits 1 when the JSON run takes over 0.02 s more than the text run.
# (On ext4, renaming over an existing 10 MB file costs a few ms of that: the
# kernel starts writing the new file back before the rename.)
# Usage: bench/report.bench.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
binary="$build/onnx-footprint"
runs="${REPORT_BENCH_RUNS:-5}"
work="$(mktemp -d "${TMPDIR:-/tmp}/report-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

"$build/bench/footprint-make-model" --kind blocks-18k --output "$work/blocks18k.onnx" > /dev/null

wall_seconds() {  # COMMAND... -> wall seconds of one run
  local start end
  start=$(date +%s.%N)
  "$@" > /dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc -l
}

best_text="" best_json=""
for _ in $(seq "$runs"); do
  for format in text json; do
    t=$(wall_seconds "$binary" analyze "$work/blocks18k.onnx" --format "$format" --output "$work/report.$format")
    best_var="best_$format"
    if [ -z "${!best_var}" ] || [ "$(echo "$t < ${!best_var}" | bc -l)" = 1 ]; then
      printf -v "$best_var" '%s' "$t"
    fi
  done
done
extra=$(echo "$best_json - $best_text" | bc -l)
printf '%-40s %10s %12s\n' "blocks-18k, whole run" "seconds" "report bytes"
printf '%-40s %10.3f %12s\n' "analyze --format text" "$best_text" "$(stat -c %s "$work/report.text")"
printf '%-40s %10.3f %12s\n' "analyze --format json" "$best_json" "$(stat -c %s "$work/report.json")"
printf '%-40s %+10.3f\n' "json - text" "$extra"
echo
"$build/bench/report_bench" "$work/blocks18k.onnx" --runs 10
if [ "$(echo "$extra > 0.02" | bc -l)" = 1 ]; then
  echo "FAIL: the JSON report costs ${extra} s more than the text report (target at most 0.02 s)"
  exit 1
fi
