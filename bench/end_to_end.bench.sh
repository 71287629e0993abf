#!/usr/bin/env bash
# The whole analysis (load, shapes, schedule, plan, validate, report) of an
# 18,000-node graph (2,000 blocks of 9 ops: LayerNormalization, two MatMuls,
# activation, residual...), built at run time by bench/footprint-make-model,
# side by side in one run with Python's onnx.shape_inference.infer_shapes on
# the same file (when /usr/bin/python3 has Debian's onnx). Also the real
# models of issue 2. Time is wall time of the whole process, best of 3; peak
# RSS from /usr/bin/time when present (else getrusage of the child).
# Exits 1 when the 18,000-node analysis takes a quarter of infer_shapes' time
# or more (issue 5), or light_densenet121 takes 1 s or more (issue 2).
# Usage: bench/end_to_end.bench.sh BUILD_DIR
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$build/onnx-footprint"
maker="$build/bench/footprint-make-model"
python=/usr/bin/python3
work="$(mktemp -d "${TMPDIR:-/tmp}/e2e-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
status=0

best_of_3() {  # COMMAND... -> best wall seconds and max RSS (KiB) of 3 runs
  local best="" rss=0
  for _ in 1 2 3; do
    local start end
    start=$(date +%s.%N)
    "$@" > "$work/out" 2> "$work/err" || { cat "$work/err" >&2; return 1; }
    end=$(date +%s.%N)
    local t; t=$(echo "$end - $start" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  printf '%.3f' "$best"
}

peak_rss_mib() {  # COMMAND... -> peak RSS in MiB of one run
  python3 - "$@" <<'PY' 2>/dev/null || echo "-"
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.1f}")
PY
}

"$maker" --kind blocks-18k --output "$work/blocks18k.onnx" > /dev/null
nodes=18000
printf '%-34s %10s %12s %14s\n' "run" "seconds" "peak MiB" "vs infer_shapes"
ours=$(best_of_3 "$binary" analyze "$work/blocks18k.onnx" --format json --output "$work/r.json")
ours_rss=$(peak_rss_mib "$binary" analyze "$work/blocks18k.onnx" --format json --output "$work/r.json")
ours_base=$(best_of_3 "$binary" analyze "$work/blocks18k.onnx" --baseline --format json --output "$work/r.json")
if (cd "$work" && "$python" -c 'import onnx' 2>/dev/null); then
  cat > "$work/infer.py" <<'PY'
import sys, time, onnx
from onnx import shape_inference
model = onnx.load(sys.argv[1])
start = time.perf_counter()
shape_inference.infer_shapes(model)
print(f"{time.perf_counter() - start:.3f}")
PY
  infer=$(for _ in 1 2 3; do (cd "$work" && "$python" infer.py blocks18k.onnx); done | sort -n | head -1)
  ratio=$(echo "$ours / $infer" | bc -l)
  printf '%-34s %10s %12s %14s\n' "onnx.shape_inference.infer_shapes" "$infer" "-" "1.000"
  printf '%-34s %10s %12s %14.3f\n' "onnx-footprint analyze (all modes)" "$ours" "$ours_rss" "$ratio"
  printf '%-34s %10s %12s %14.3f\n' "onnx-footprint analyze --baseline" "$ours_base" "-" "$(echo "$ours_base / $infer" | bc -l)"
  if [ "$(echo "$ratio >= 0.25" | bc -l)" = 1 ]; then
    echo "FAIL: the 18,000-node analysis takes ${ratio}x infer_shapes' time (target < 0.25)"; status=1
  fi
else
  printf '%-34s %10s %12s %14s\n' "onnx-footprint analyze (all modes)" "$ours" "$ours_rss" "-"
  printf '%-34s %10s %12s %14s\n' "onnx-footprint analyze --baseline" "$ours_base" "-" "-"
  echo "(no Python onnx: infer_shapes not measured)"
fi
echo
printf '%-80s %10s\n' "model (issue 2)" "seconds"
for model in onnx_onnx/light_resnet50 onnx_onnx/light_densenet121 onnx_onnx/light_inception_v2 \
             onnx_onnx/light_shufflenet microsoft_onnxruntime-extensions/FastestDet \
             Linzaer_Ultra-Light-Fast-Generic-Face-Detector-1MB/version-slim-320_simplified \
             microsoft_onnxruntime-inference-examples/mnist; do
  path="$here/../shared/models/$model.onnx"
  [ -f "$path" ] || continue
  t=$(best_of_3 "$binary" analyze "$path" --format json --output "$work/r.json")
  printf '%-80s %10s\n' "$model" "$t"
  if [ "$model" = onnx_onnx/light_densenet121 ] && [ "$(echo "$t >= 1" | bc -l)" = 1 ]; then
    echo "FAIL: light_densenet121 takes ${t} s (target well under 1 s)"; status=1
  fi
done
exit $status
