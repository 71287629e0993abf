#!/usr/bin/env bash
# The ground truth: what ONNX Runtime (onnxruntime-node 1.30.0, CPU, one
# thread, sequential, optimizations "all", CPU arena and memory pattern off)
# really allocates, next to onnx-footprint's figures, model by model.
#   bash bench/ground_truth/run.sh BUILD_DIR [MODEL.onnx|DIR ...]
# Without models: every model of ../shared/models and the Debian test models
# (pytorch-converted, pytorch-operator, simple, and every 4th node test), and
# the static-QDQ and dynamic-quantized copies tools/make_quantized_copies.py
# makes of the shared models (into BUILD_DIR/ground-truth/quantized, and
# QDQ with int8 activations into BUILD_DIR/ground-truth/quantized-int8);
# FOOTPRINT_SHARED_MODELS names another folder of shared models. Plain
# --runtime onnxruntime-cpu is the host's ISA, the one ORT runs with here;
# each result line names it (runtime.isa).
# Needs onnxruntime-node in BUILD_DIR/ground-truth/node_modules (make
# ground-truth installs it); models ORT refuses are listed and skipped.
# Prints one table (table.py) and keeps BUILD_DIR/ground-truth/results.jsonl
# (results.given.jsonl when models are given); a full sweep also writes
# bench/ground_truth/results/ISA.jsonl and ISA.md (write_results.sh).
#   bash bench/ground_truth/run.sh BUILD_DIR --reanalyze
# keeps ORT's figures of the last results.jsonl and runs only onnx-footprint
# again (to try a rule without measuring ORT again).
set -euo pipefail
build=$(cd "${1:?usage: run.sh BUILD_DIR [MODEL ...]}" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work="$build/ground-truth"
tool="$build/onnx-footprint"
modules="$work/node_modules"
if [ ! -d "$modules/onnxruntime-node" ]; then
  echo "run.sh: $modules/onnxruntime-node is missing (make ground-truth installs it)" >&2
  exit 2
fi
mkdir -p "$work"
gcc -O2 -shared -fPIC -Wall -o "$work/heap_shim.so" "$here/heap_shim.c"

analyze() {  # MODEL ORT_JSON: the line of results.jsonl.
  local model=$1 ort=$2 shape_flags default runtime
  shape_flags=$(jq -r '.inputs | to_entries[] | "--input-shape=\(.key)=\(.value)"' <<< "$ort")
  default=$("$tool" analyze "$model" $shape_flags --dim-default 1 --format json 2>/dev/null |
            jq -c '.memory | {weights_bytes, folded_weights_bytes, arena_bytes, peak_bytes, workspace_bytes, runtime_overhead_bytes}') ||
    default=null
  runtime=$("$tool" analyze "$model" $shape_flags --dim-default 1 --runtime onnxruntime-cpu --format json 2>/dev/null |
            jq -c '.memory + {isa: .modes.runtime.isa} | {isa, weights_bytes, folded_weights_bytes, arena_bytes, peak_bytes, workspace_bytes, runtime_tensor_bytes, runtime_overhead_bytes, runtime_reserved_bytes, runtime_weights_bytes}') ||
    runtime=null
  jq -c --argjson d "$default" --argjson r "$runtime" '. + {default: $d, runtime: $r}' <<< "$ort"
}

results="$work/results.jsonl"
if [ "${1:-}" = "--reanalyze" ]; then
  previous="$work/results.previous.jsonl"
  cp "$results" "$previous"
  : > "$results"
  while IFS= read -r line; do
    if jq -e 'has("skipped")' <<< "$line" > /dev/null; then echo "$line" >> "$results"; continue; fi
    analyze "$(jq -r .model <<< "$line")" "$(jq -c 'del(.default, .runtime)' <<< "$line")" >> "$results"
  done < "$previous"
  python3 "$here/table.py" "$results"
  exit 0
fi

models=()
if [ $# -gt 0 ]; then
  results="$work/results.given.jsonl"  # The sweep's results.jsonl (and --reanalyze) stay as they are.
  for arg in "$@"; do
    if [ -d "$arg" ]; then while IFS= read -r f; do models+=("$f"); done < <(find "$arg" -name '*.onnx' | sort)
    else models+=("$arg"); fi
  done
else
  shared=${FOOTPRINT_SHARED_MODELS:-$root/../shared/models}
  if [ ! -d "$shared" ]; then
    echo "run.sh: $shared is missing (the shared models; set FOOTPRINT_SHARED_MODELS to their folder)" >&2
    exit 2
  fi
  while IFS= read -r f; do models+=("$f"); done < <(find "$shared" -name '*.onnx' | sort)
  debian=/usr/share/libonnx-testdata/data
  for d in pytorch-converted pytorch-operator simple; do
    while IFS= read -r f; do models+=("$f"); done < <(find "$debian/$d" -name model.onnx | sort)
  done
  while IFS= read -r f; do models+=("$f"); done < <(find "$debian/node" -name model.onnx | sort | awk 'NR % 4 == 1')
  # The static-QDQ and dynamic-quantized copies of the shared models (issue 23),
  # made as ORT's quantizer writes them; the script's log says which it skips.
  quantized="$work/quantized"
  rm -rf "$quantized"
  /usr/bin/python3 "$root/tools/make_quantized_copies.py" --out "$quantized" --kinds qdq,dynamic \
    $(find "$shared" -name '*.onnx' | sort) > "$work/quantized.log" 2>&1 ||
    echo "run.sh: tools/make_quantized_copies.py failed, see $work/quantized.log" >&2
  while IFS= read -r f; do models+=("$f"); done < <(find "$quantized" -name '*.onnx' | sort)
  # The same with int8 activations, quantize_static's default.
  quantized_int8="$work/quantized-int8"
  rm -rf "$quantized_int8"
  /usr/bin/python3 "$root/tools/make_quantized_copies.py" --out "$quantized_int8" --kinds qdq --activation-type int8 \
    $(find "$shared" -name '*.onnx' | sort) > "$work/quantized-int8.log" 2>&1 ||
    echo "run.sh: tools/make_quantized_copies.py --activation-type int8 failed, see $work/quantized-int8.log" >&2
  while IFS= read -r f; do models+=("$f"); done < <(find "$quantized_int8" -name '*.onnx' | sort)
fi

: > "$results"
report="$work/heap-report.$$"
for model in "${models[@]}"; do
  ort=$(FOOTPRINT_ORT_MODULES="$modules" FOOTPRINT_HEAP_REPORT="$report" LD_PRELOAD="$work/heap_shim.so" \
        timeout 120 node --expose-gc "$here/ort_driver.js" "$model" 1 2>"$work/ort.err") || {
    echo "{\"model\": \"$model\", \"skipped\": $(jq -Rs . < "$work/ort.err")}" >> "$results"
    continue
  }
  analyze "$model" "$ort" >> "$results"  # The same input shapes ORT ran with.
done
rm -f "$report" "$report.ack"
python3 "$here/table.py" "$results"
# A full sweep's results are committed: results/ISA.jsonl and its page results/ISA.md.
[ $# -gt 0 ] || bash "$here/write_results.sh" "$results"
