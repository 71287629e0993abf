#!/usr/bin/env bash
# `onnx-footprint fit` with one --fit-dim against one `analyze` of the same
# model: the 18,000-node graph of end_to_end.bench.sh with its input and
# output made [batch, sequence, 64], on a device of one RAM tier (weights
# plus 4 MiB). fit analyzes the model as given, searches `sequence` (each
# probe a full analysis of the model loaded once), and plans the int8 and
# fp16 what-ifs. Time is wall time of the whole process, best of 3.
# Exits 1 when fit takes 10x one analyze or more (issue 24).
# Usage: bench/fit.bench.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
binary="$build/onnx-footprint"
maker="$build/bench/footprint-make-model"
work="$(mktemp -d "${TMPDIR:-/tmp}/fit-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

best_of_3() {  # COMMAND... -> best wall seconds of 3 runs (exit 0 or 1 both count)
  local best=""
  for _ in 1 2 3; do
    local start end t code=0
    start=$(date +%s.%N)
    "$@" > "$work/out" 2> "$work/err" || code=$?
    end=$(date +%s.%N)
    if [ "$code" -gt 1 ]; then cat "$work/err" >&2; return 1; fi
    t=$(echo "$end - $start" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  printf '%.3f' "$best"
}

weights=$("$maker" --kind blocks-18k --symbolic-dims 1 --output "$work/blocks18k.onnx" | sed 's/.*weights_bytes=//')
capacity=$((weights + 4 * 1024 * 1024))
cat > "$work/device.textproto" <<PB
name: "bench-ram"
alignment_bytes: 16
memory { name: "ram" capacity_bytes: $capacity holds_weights: true holds_activations: true }
PB
analyze=$(best_of_3 "$binary" analyze "$work/blocks18k.onnx" --device-file "$work/device.textproto" \
  --dim batch=1 --dim sequence=128 --format json --output "$work/a.json")
fit=$(best_of_3 "$binary" fit "$work/blocks18k.onnx" --device-file "$work/device.textproto" \
  --dim batch=1 --fit-dim sequence --format json --output "$work/f.json")
largest=$(jq '.options[] | select(.kind == "dim") | .largest_fitting' "$work/f.json")
ratio=$(echo "$fit / $analyze" | bc -l)
printf '%-58s %10s %10s\n' "run (18,000 nodes, weights $weights B)" "seconds" "vs analyze"
printf '%-58s %10s %10s\n' "onnx-footprint analyze --dim sequence=128" "$analyze" "1.000"
printf '%-58s %10s %10.3f\n' "onnx-footprint fit --fit-dim sequence (largest: $largest)" "$fit" "$ratio"
if [ "$(echo "$ratio >= 10" | bc -l)" = 1 ]; then
  echo "FAIL: fit takes ${ratio}x one analyze (target < 10)"; exit 1
fi
