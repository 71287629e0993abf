#!/usr/bin/env bash
# The proof of `fit --emit-model` (issue 25, docs/patching.md) in ctest: on a
# few small shared CNNs, the patched model onnx-footprint writes runs in ONNX
# Runtime with the original's outputs (within 1e-4, relative to each
# output's largest value) on the same random inputs, and ORT's measured run
# peak (patch_compare.js: heap_shim.so, arena off) is lower than the
# original's; `analyze` of the written model gives the option's arena within 5%.
# The upsampling segmenters (upsampling_segmenter.py, written here with
# Debian's /usr/bin/python3) need two assembled segments: the first stage
# (a chain: its first segment's output kept in pieces for the next) and the
# Resize/ConvTranspose head. detector_ssd (detector_models.py) is an
# SSD-MobileNet-shaped detector: its first stage's TF-style Pads, Relu6
# (Clip) and HardSwish are patched too, a chain of five segments;
# detector_retinaface's MobileNet-0.25
# stage (depthwise convs, LeakyRelu) on a 16x16 grid beside its 640x640 input.
# detector_resnet50 (ResNet-50 v1 as light_resnet50, random weights) and
# light_resnet50 itself: a first segment and a chain of ten bottleneck
# blocks, the case ORT ran above the original before the written patches hid
# their dims from its planner and a barrier made it run link after link
# (docs/patching.md, "What ONNX Runtime does with the written model").
# detector_yolo (YOLOv8n-like) needs a segment with two inputs in its neck
# (the upsampled stride-16 branch and the stride-8 skip), sliced per patch each.
# detector_yolov5 (YOLOv5-s-like) is patched for ORT (`--runtime
# onnxruntime-cpu`): ORT's planner peaks in its neck, where buffers the
# backbone freed wait for the neck's tensors of their shape; the stem alone
# left ORT's run peak where it was (6,686,592 -> 6,699,168). It needs a
# segment with several inputs there, chosen by the runtime's figure.
# detector_dbnet (PP-OCRv4 det-like: PPLCNetV3 stem, RSEFPN neck with SE
# gates, DBHead's ConvTranspose x2) needs two segments with several inputs:
# the neck's 1/4 stage (its lateral recomputed from the 12 channels it comes
# from) and the head, each reading SE gates whole.
# Installs onnxruntime-node into ORT_DIR first when it is not there
# (install_ort.sh); skipped (exit 77, one line saying why) only when it cannot
# be installed or a tool is missing.
#   bash patch_test.sh BUILD_DIR MODELS_DIR [ORT_DIR]
set -euo pipefail
build=$(cd "$1" && pwd)
models=$2
ort_dir=${3:-$build/ground-truth}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/needs_ort.sh" "$ort_dir"
status=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O2 -shared -fPIC -Wall -o "$out/heap_shim.so" "$here/heap_shim.c"
tool="$build/onnx-footprint"
host_isa=unknown
if grep -qw avx512f /proc/cpuinfo; then host_isa=avx512; elif grep -qw avx2 /proc/cpuinfo; then host_isa=avx2; fi
echo "host ISA: $host_isa ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
checked=0
while read -r name file flags; do
  model="$models/$file"
  if [[ "$file" == @* ]]; then
    # @SCRIPT:VARIANT: a model written here, with random weights.
    script=${file#@}
    model="$out/$name.onnx"
    /usr/bin/python3 "$here/${script%%:*}.py" "$model" "${script#*:}" || rm -f "$model"
  fi
  if [ ! -f "$model" ]; then
    echo "missing: $model (not checked)"
    continue
  fi
  patched="$out/$name.patched.onnx"
  # shellcheck disable=SC2086
  "$tool" fit "$model" $flags --device generic-cpu --max-peak 1MB --format json --emit-model "$patched" \
    > "$out/$name.fit.json" || [ $? -eq 1 ]
  option_arena=$(jq '.options[] | select(.kind == "patch") | .arena_bytes' "$out/$name.fit.json")
  given_arena=$(jq '.arena_bytes' "$out/$name.fit.json")
  # shellcheck disable=SC2086
  written_arena=$("$tool" analyze "$patched" $flags --format json | jq '.memory.arena_bytes')
  if [ $(( written_arena * 100 )) -gt $(( option_arena * 105 )) ] || [ $(( written_arena * 100 )) -lt $(( option_arena * 95 )) ]; then
    echo "FAIL: $name: analyze of the written model gives arena $written_arena, the option said $option_arena"
    status=1
  fi
  line=$(FOOTPRINT_ORT_MODULES="$ort_dir/node_modules" FOOTPRINT_HEAP_REPORT="$out/heap.report" \
         LD_PRELOAD="$out/heap_shim.so" timeout 300 node --expose-gc "$here/patch_compare.js" "$model" "$patched")
  read -r original_peak patched_peak relative ok <<< "$(jq -r '[.original_run_peak, .patched_run_peak, .relative_diff,
      (.relative_diff <= 1e-4)] | @tsv' <<< "$line")"
  segments=$(jq -r '[.options[] | select(.kind == "patch") | .segments[] | "\(.first_node)..\(.last_node) \(.patches[0])x\(.patches[1])"] | join("; ")' "$out/$name.fit.json")
  printf '%s: arena %s -> %s (patched, %s written; %s); ORT run peak %s -> %s; relative output difference %s\n' \
    "$name" "$given_arena" "$option_arena" "$written_arena" "$segments" "$original_peak" "$patched_peak" "$relative"
  if [[ "$name" == segmenter_* ]] && [ "$(jq '[.options[] | select(.kind == "patch") | .segments[] | select(.output_in_pieces | not)] | length' "$out/$name.fit.json")" -ne 2 ]; then
    echo "FAIL: $name: the patch option has not the two assembled segments (first stage and head) it needs"
    status=1
  fi
  if [[ "$name" == detector_yolo* ]] && [ "$(jq '[.options[] | select(.kind == "patch") | .segments[] | select(.inputs)] | length' "$out/$name.fit.json")" -ne 1 ]; then
    echo "FAIL: $name: the patch option has no segment with several inputs (the neck)"
    status=1
  fi
  if [[ "$name" == detector_dbnet ]] && [ "$(jq '[.options[] | select(.kind == "patch") | .segments[] | select(.inputs)] | length' "$out/$name.fit.json")" -lt 2 ]; then
    echo "FAIL: $name: the patch option has not the two segments with several inputs (the neck at 1/4 and the head) it needs"
    status=1
  fi
  if [ "$ok" != "true" ]; then
    echo "FAIL: $name: outputs differ by $relative relative (limit 1e-4)"
    status=1
  fi
  if [ "$patched_peak" -ge "$original_peak" ]; then
    echo "FAIL: $name: ORT's run peak of the patched model $patched_peak is not below the original's $original_peak"
    status=1
  fi
  checked=$((checked + 1))
done <<'MODELS'
slim-320 Linzaer_Ultra-Light-Fast-Generic-Face-Detector-1MB/version-slim-320_simplified.onnx
fastestdet microsoft_onnxruntime-extensions/FastestDet.onnx
super_resolution microsoft_onnxruntime-extensions/pytorch_super_resolution.onnx --dim batch_size=1
segmenter_resize_last @upsampling_segmenter:resize_last
segmenter_deconv_last @upsampling_segmenter:deconv_last
detector_ssd @detector_models:ssd
detector_retinaface @detector_models:retinaface
detector_resnet50 @detector_models:resnet50
light_resnet50 onnx_onnx/light_resnet50.onnx
detector_yolo @detector_models:yolo
detector_yolov5 @detector_models:yolov5 --runtime onnxruntime-cpu
detector_dbnet @detector_models:dbnet
MODELS
if [ $checked -eq 0 ]; then
  echo "SKIP: needs the shared model corpus (none of its CNNs is in $models; tools/fetch_test_models.sh fetches it)"
  exit 77
fi
exit $status
