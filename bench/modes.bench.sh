#!/usr/bin/env bash
# What each mode beyond the baseline saves on every model of ../shared/models,
# and how long the schedule takes, from one `onnx-footprint analyze` run per
# model with every mode on (its JSON "modes" block):
#   given LB      the baseline lower bound (file order, no sharing)
#   optimized LB  after --schedule optimized, with the reduction in percent
#   + alias       after aliasing on that order
#   + inplace     after in-place reuse on top
#   sched s       time the schedule optimizer took; total s: the whole analysis
# Symbolic input dims are bound (those named like a sequence length to 128,
# the others to 1, shown in the "dims" column); a model that still has unsized
# tensors is marked "incomplete" (figures over its sized tensors). Then an 18,000-node model built at run
# time (bench/footprint-make-model) must schedule in under a second.
# Exits 1 when optimized is above given anywhere, or the large model takes 1 s or more.
# Usage: bench/modes.bench.sh BUILD_DIR [MODELS_DIR]
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [MODELS_DIR]}" && pwd)"
here="$(cd "$(dirname "$0")/.." && pwd)"
models="${2:-$here/../shared/models}"
binary="$build/onnx-footprint"
work="$(mktemp -d "${TMPDIR:-/tmp}/modes-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT
status=0

row() {  # MODEL_LABEL JSON_FILE SECONDS DIMS
  jq -r --arg name "$1" --arg total "$3" --arg dims "$4" '
    def pct(a; b): if a == 0 then "0.0" else ((a - b) * 1000 / a | round / 10 | tostring) end;
    .modes as $m | .memory.baseline.lower_bound_bytes as $given |
    [$name, $given, $m.schedule.lower_bound_bytes, pct($given; $m.schedule.lower_bound_bytes) + "%",
     $m.alias.lower_bound_bytes, $m.inplace.lower_bound_bytes,
     pct($given; $m.inplace.lower_bound_bytes) + "%",
     ($m.schedule.seconds * 1000 | round / 1000), $total,
     $m.schedule.algorithm + (if $m.schedule.proven_optimal then " (optimal)" else "" end)
       + (if .memory.complete then "" else ", incomplete" end), $dims]
    | @tsv' "$2"
}

header=$'model\tgiven LB\toptimized LB\treduction\t+ alias\t+ inplace\ttotal reduction\tsched s\ttotal s\tschedule\tdims'
{
  echo "$header"
  while IFS= read -r model; do
    label="${model#"$models"/}"
    dims=()
    if "$binary" analyze "$model" --baseline --time-limit 0 --format json > "$work/probe.json" 2> /dev/null; then
      while IFS= read -r symbol; do
        case "$symbol" in
          *seq*|*len*|*token*|*step*) dims+=(--dim "$symbol=128") ;;
          *) dims+=(--dim "$symbol=1") ;;
        esac
      done < <(jq -r '[.tensors[] | select(.role == "graph_input") | .shape // [] | .[] | strings
                       | select(startswith("unk__") | not)] | unique | .[]' "$work/probe.json")
    fi
    start=$(date +%s.%N)
    rc=0
    "$binary" analyze "$model" "${dims[@]}" --format json > "$work/out.json" 2> "$work/err.txt" || rc=$?
    end=$(date +%s.%N)
    seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    if [ "$rc" -eq 2 ] || [ ! -s "$work/out.json" ]; then
      printf '%s\terror: %s\n' "$label" "$(head -c 120 "$work/err.txt")"
      continue
    fi
    row "$label" "$work/out.json" "$seconds" "$(printf '%s ' "${dims[@]}" | sed 's/--dim //g; s/ $//')"
    if jq -e '.modes.schedule.lower_bound_bytes > .memory.baseline.lower_bound_bytes' "$work/out.json" > /dev/null; then
      echo "FAIL: optimized above given on $label" >&2
      status=1
    fi
  done < <(find "$models" -name '*.onnx' -type f | sort)

  "$build/bench/footprint-make-model" --kind blocks-18k --output "$work/blocks-18k.onnx" > /dev/null
  start=$(date +%s.%N)
  "$binary" analyze "$work/blocks-18k.onnx" --format json > "$work/out.json"
  end=$(date +%s.%N)
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  row "blocks-18k (18,000 nodes, built)" "$work/out.json" "$seconds" ""
  if ! jq -e '.modes.schedule.seconds < 1' "$work/out.json" > /dev/null; then
    echo "FAIL: the 18,000-node model took 1 s or more to schedule" >&2
    status=1
  fi
} > "$work/table.tsv"
column -t -s $'\t' "$work/table.tsv"
exit "$status"
