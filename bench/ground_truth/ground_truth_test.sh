#!/usr/bin/env bash
# The ground truth in ctest: a small check against ONNX Runtime on this
# machine, with the rules of its ISA (plain --runtime onnxruntime-cpu is the
# host's). Installs onnxruntime-node into ORT_DIR first when it is not there
# (install_ort.sh); skipped (exit 77, one line saying why) only when npm or
# its registry cannot be reached, or a tool the driver needs is missing.
#   bash ground_truth_test.sh BUILD_DIR MODELS_DIR [ORT_DIR]
# (ORT_DIR: where node_modules/onnxruntime-node is; BUILD_DIR/ground-truth.)
# Checks, on mnist (no folding) and light_squeezenet (39 folded nodes):
#  - the measurement repeats to within 4 KiB (two runs of mnist);
#  - with the default modes, the arena is no larger than ORT's run peak;
#  - with --runtime onnxruntime-cpu, the arena is within 20% of ORT's run
#    peak (the sweep's target is 10%; this check keeps a margin for malloc
#    noise on a busy machine);
#  - ORT's default options, the peak --runtime reports by default: its
#    runtime_reserved_bytes within 10% of what ORT holds after a first run,
#    and runtime_weights_bytes within 10% of what it holds after creating
#    the session, where that is at least 1 MiB (light_squeezenet);
#  - the process peak (session creation and the first run, default options):
#    peak_bytes within 10% and the phase it names, on both models;
# and on the probe models of probe_models.py (each isolates one measured rule
# of the profile: the output copy, in-place kernels, NCHWc chains and the
# block size's conditions, the loss scratch, Softmax's transposes),
# --runtime's arena + overhead within 5% of ORT's run peak.
set -euo pipefail
build=$(cd "$1" && pwd)
models=$2
ort_dir=${3:-$build/ground-truth}
here=$(cd "$(dirname "$0")" && pwd)
mnist="$models/microsoft_onnxruntime-inference-examples/mnist.onnx"
squeezenet="$models/onnx_onnx/light_squeezenet.onnx"
for model in "$mnist" "$squeezenet"; do
  [ -f "$model" ] || { echo "SKIP: needs the shared model corpus ($model is missing; tools/fetch_test_models.sh fetches it)"; exit 77; }
done
source "$here/needs_ort.sh" "$ort_dir"
status=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# A copy of the build's node_modules path, its own results file.
mkdir -p "$out/ground-truth"
ln -s "$ort_dir/node_modules" "$out/ground-truth/node_modules"
ln -s "$build/onnx-footprint" "$out/onnx-footprint"
bash "$here/run.sh" "$out" "$mnist" "$mnist" "$squeezenet" > "$out/table.txt"
cat "$out/table.txt"
results="$out/ground-truth/results.given.jsonl"
echo "host ISA (--runtime onnxruntime-cpu): $(jq -r '.runtime.isa // "unknown"' "$results" | head -1)"
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
# ORT's default options: what it holds after creating the session and after a first run.
held_checks=0
while IFS=$'\t' read -r model ort_weights ort_reserved weights reserved; do
  for pair in "weights after load:$ort_weights:$weights" "reserved after a first run:$ort_reserved:$reserved"; do
    IFS=: read -r what measured predicted <<< "$pair"
    [ "$measured" -ge 1048576 ] 2> /dev/null || continue
    held_checks=$((held_checks + 1))
    if [ $(( predicted * 10 )) -lt $(( measured * 9 )) ] || [ $(( predicted * 10 )) -gt $(( measured * 11 )) ]; then
      echo "FAIL: $model: --runtime onnxruntime-cpu $what $predicted is not within 10% of ORT's $measured (default options)"
      status=1
    fi
  done
done < <(jq -r 'select(.runtime.runtime_reserved_bytes != null) | [.model, .default_create_retained, .default_run_retained,
                 .runtime.runtime_weights_bytes, .runtime.runtime_reserved_bytes] | @tsv' "$results")
echo "$held_checks figures of ORT's default options checked (weights after load, reserved after a first run)"
if [ "$held_checks" -lt 3 ]; then
  echo "FAIL: only $held_checks figures of ORT's default options were measured (mnist's reserved, squeezenet's weights and reserved expected)"
  status=1
fi
# The process peak (process_peak.js, default options, warm): the heap's
# high-water over session creation and the first run. light_squeezenet peaks
# while ORT creates its session (folding, then NCHWc filters), mnist during
# the run; --runtime onnxruntime-cpu's peak_bytes within 10% of each, and the
# phase it names the one measured.
for model in "$squeezenet" "$mnist"; do
  pp=$(FOOTPRINT_ORT_MODULES="$ort_dir/node_modules" FOOTPRINT_HEAP_REPORT="$out/pp-report" \
       LD_PRELOAD="$out/ground-truth/heap_shim.so" timeout 300 node --expose-gc "$here/process_peak.js" "$model" 1 default --warm) || {
    echo "FAIL: $model: process_peak.js did not run"
    status=1
    continue
  }
  measured=$(jq -r .process_peak <<< "$pp")
  phase=$(jq -r .phase <<< "$pp")
  shape_flags=$(jq -r '.inputs | to_entries[] | "--input-shape=\(.key)=\(.value)"' <<< "$pp")
  read -r ours ours_phase < <("$build/onnx-footprint" analyze "$model" $shape_flags --dim-default 1 \
      --runtime onnxruntime-cpu --format json | jq -r '.memory | "\(.peak_bytes) \(.runtime_peak_phase)"' | tr -d '"')
  echo "process peak: $(basename "$model"): ORT $measured ($phase), ours $ours ($ours_phase)"
  if [ $(( ours * 10 )) -lt $(( measured * 9 )) ] || [ $(( ours * 10 )) -gt $(( measured * 11 )) ]; then
    echo "FAIL: $model: --runtime onnxruntime-cpu peak_bytes $ours is not within 10% of ORT's process peak $measured"
    status=1
  fi
  case "$phase:$ours_phase" in
    create:session*|run:first*) ;;
    *) echo "FAIL: $model: ORT peaks in phase '$phase', ours says '$ours_phase'"; status=1 ;;
  esac
done
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
expected=$(find "$out/probes" -name '*.onnx' | wc -l)
if [ "$probes" -lt "$expected" ]; then
  echo "FAIL: $probes probe models measured, $expected expected"
  cat "$out/probes.txt"
  status=1
fi
exit $status
