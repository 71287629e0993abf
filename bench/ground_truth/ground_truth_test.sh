#!/usr/bin/env bash
# The ground truth in ctest: a small check against ONNX Runtime, run only
# where onnxruntime-node is installed (make ground-truth installs it into
# BUILD_DIR/ground-truth); skipped (exit 77) elsewhere, never failed.
#   bash ground_truth_test.sh BUILD_DIR MODELS_DIR
# Checks, on mnist (no folding) and light_squeezenet (39 folded nodes):
#  - the measurement repeats to within 4 KiB (two runs of mnist);
#  - with the default modes, the arena is no larger than ORT's run peak;
#  - with --runtime onnxruntime-cpu, the arena is within 20% of ORT's run
#    peak (the sweep's target is 10%; this check keeps a margin for malloc
#    noise on a busy machine);
# and on the probe models of probe_models.py (each isolates one measured rule
# of the profile: the output copy, in-place kernels, NCHWc chains, the loss
# scratch, Softmax's transposes), --runtime's arena + overhead within 5% of
# ORT's run peak (all 47 were within 1.3% when the rules were written).
set -euo pipefail
build=$(cd "$1" && pwd)
models=$2
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node > /dev/null || ! command -v gcc > /dev/null || ! command -v jq > /dev/null ||
   [ ! -d "$build/ground-truth/node_modules/onnxruntime-node" ]; then
  echo "SKIP: onnxruntime-node is not installed in $build/ground-truth (make ground-truth installs it)"
  exit 77
fi
mnist="$models/microsoft_onnxruntime-inference-examples/mnist.onnx"
squeezenet="$models/onnx_onnx/light_squeezenet.onnx"
for model in "$mnist" "$squeezenet"; do
  [ -f "$model" ] || { echo "SKIP: $model is missing"; exit 77; }
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A copy of the build's node_modules path, its own results file.
mkdir -p "$out/ground-truth"
ln -s "$build/ground-truth/node_modules" "$out/ground-truth/node_modules"
ln -s "$build/onnx-footprint" "$out/onnx-footprint"
bash "$here/run.sh" "$out" "$mnist" "$mnist" "$squeezenet" > "$out/table.txt"
cat "$out/table.txt"
results="$out/ground-truth/results.given.jsonl"
status=0
first=$(jq -s '.[0].run_peak' "$results")
second=$(jq -s '.[1].run_peak' "$results")
if [ $(( first > second ? first - second : second - first )) -gt 4096 ]; then
  echo "FAIL: two runs of mnist differ by more than 4 KiB: $first and $second"
  status=1
fi
while IFS=$'\t' read -r model run default runtime; do
  if [ "$default" -gt "$run" ]; then
    echo "FAIL: $model: default arena $default > ORT run peak $run"
    status=1
  fi
  if [ $(( runtime * 10 )) -lt $(( run * 8 )) ] || [ $(( runtime * 10 )) -gt $(( run * 12 )) ]; then
    echo "FAIL: $model: --runtime onnxruntime-cpu runtime tensors + overhead $runtime is not within 20% of ORT run peak $run"
    status=1
  fi
# --runtime: ORT's own buffers (runtime_tensor_bytes) + runtime overhead, the predicted peak working memory.
done < <(jq -r '[.model, .run_peak, .default.arena_bytes,
                 (.runtime.runtime_tensor_bytes // .runtime.arena_bytes) + (.runtime.runtime_overhead_bytes // 0)] | @tsv' "$results")
if ! /usr/bin/python3 -c 'import onnx' 2> /dev/null; then
  echo "probes not run: /usr/bin/python3 has no onnx (Debian's python3-onnx)"
  exit $status
fi
/usr/bin/python3 "$here/probe_models.py" "$out/probes"
bash "$here/run.sh" "$out" "$out/probes" > "$out/probes.txt"
probes=0
while IFS=$'\t' read -r model run runtime; do
  probes=$((probes + 1))
  if [ $(( runtime * 100 )) -lt $(( run * 95 )) ] || [ $(( runtime * 100 )) -gt $(( run * 105 )) ]; then
    echo "FAIL: probe $model: --runtime onnxruntime-cpu runtime tensors + overhead $runtime is not within 5% of ORT run peak $run"
    status=1
  fi
done < <(jq -r 'select(.runtime != null) | [.model, .run_peak,
                 (.runtime.runtime_tensor_bytes // .runtime.arena_bytes) + (.runtime.runtime_overhead_bytes // 0)] | @tsv' "$results")
echo "$probes probe models checked"
if [ "$probes" -lt 47 ]; then
  echo "FAIL: $probes probe models measured, 47 expected"
  cat "$out/probes.txt"
  status=1
fi
exit $status
