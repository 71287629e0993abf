#!/usr/bin/env bash
# Replay of an emitted plan next to the analysis that emitted it: the
# 18,000-node graph of end_to_end.bench.sh (bench/footprint-make-model,
# blocks-18k; fully sized, a 160 KiB arena at hidden size 64, so it fits in
# memory as is), and the largest shared model arena (light_vgg19, 392 MiB).
# `analyze --emit-plan plan.json` and `replay plan.json` (read, parse, hash
# the model, walk all steps through runtime/fp_arena's checked build), wall
# time, best of 3. Replay writes and compares every tensor's bytes (852 MB
# for blocks-18k, in a 160 KiB arena): its time follows the sum of tensor
# sizes, the analysis' does not. Exits 1 when an analysis or replay fails.
# Usage: bench/replay.bench.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$build/onnx-footprint"
maker="$build/bench/footprint-make-model"
work="$(mktemp -d "${TMPDIR:-/tmp}/replay-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
status=0

best_of_3() {  # COMMAND... -> best wall seconds of 3 runs
  local best=""
  for _ in 1 2 3; do
    local start end t
    start=$(date +%s.%N)
    "$@" > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; return 1; }
    end=$(date +%s.%N)
    t=$(echo "$end - $start" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  printf '%.3f' "$best"
}

"$maker" --kind blocks-18k --output "$work/blocks18k.onnx" > /dev/null
printf '%-44s %8s %10s %10s %8s\n' "model" "steps" "analyze s" "replay s" "replay/analyze"
run() {  # NAME MODEL [ANALYZE FLAGS...] -> one row; sets status on failure
  local name="$1" model="$2"; shift 2
  local analyze replay steps
  analyze=$(best_of_3 "$binary" analyze "$model" "$@" --emit-plan "$work/plan.json" --output /dev/null) || {
    echo "FAIL: analyze $name"; status=1; return; }
  replay=$(best_of_3 "$binary" replay "$work/plan.json") || { echo "FAIL: replay $name"; status=1; return; }
  steps=$(sed -n 's/.*replayed \([0-9]*\) steps.*/\1/p' "$work/out")
  printf '%-44s %8s %10s %10s %8.2f\n' "$name" "$steps" "$analyze" "$replay" "$(echo "$replay / $analyze" | bc -l)"
}
run "blocks-18k (all modes)" "$work/blocks18k.onnx"
run "blocks-18k --baseline" "$work/blocks18k.onnx" --baseline
vgg="$here/../shared/models/onnx_onnx/light_vgg19.onnx"
[ -f "$vgg" ] && run "light_vgg19 (392 MiB arena)" "$vgg"
exit $status
