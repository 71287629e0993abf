#!/usr/bin/env bash
# The analysis under --runtime onnxruntime-cpu (ORT's tables of passes, its
# planner, arena and weights replayed on top of the plan) of the 18,000-node
# graph (bench/footprint-make-model) and of the largest shared CNN
# (light_densenet121, 910 nodes), at each CPU target, next to the same
# analysis without --runtime. With a second binary (a build of another
# commit), both are run in turn, A B A B ..., and the ratio of their medians
# is printed: a restructuring of the runtime's rules must not make it slower
# (exits 1 above 1.1x). CPU time of the whole process (user + system, both
# threads), median of RUNS: on a shared machine it moves far less with the
# load than wall time does.
# Usage: bench/runtime_rewrite.bench.sh BUILD_DIR [OTHER_BINARY]   (RUNS=7)
set -euo pipefail
build="$(cd "${1:?usage: $0 BUILD_DIR [OTHER_BINARY]}" && pwd)"
other="${2:-}"
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="$build/onnx-footprint"
maker="$build/bench/footprint-make-model"
runs="${RUNS:-7}"
work="$(mktemp -d "${TMPDIR:-/tmp}/runtime-bench.XXXXXX")"
trap 'rm -rf "$work"' EXIT

"$maker" --kind blocks-18k --output "$work/blocks18k.onnx" > /dev/null
models=("$work/blocks18k.onnx")
cnn="$here/../shared/models/onnx_onnx/light_densenet121.onnx"
if [ -f "$cnn" ]; then models+=("$cnn"); else echo "(light_densenet121 not beside the checkout: the 18,000-node graph only)"; fi

# The median CPU seconds of each command (words joined by \x1f) over RUNS
# runs taken in turn, on one line; a command that fails stops the bench.
median_pair() {
  python3 - "$runs" "$@" <<'PY'
import resource, statistics, subprocess, sys
runs = int(sys.argv[1])
commands = [c.split("\x1f") for c in sys.argv[2:]]
times = [[] for _ in commands]
def cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
for _ in range(runs):
    for i, command in enumerate(commands):
        start = cpu()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[i].append(cpu() - start)
print(" ".join(f"{statistics.median(t):.3f}" for t in times))
PY
}

status=0
printf '%-24s %-22s %10s %10s %8s\n' "model" "runtime" "this" "other" "ratio"
for model in "${models[@]}"; do
  name="$(basename "$model" .onnx)"
  for runtime in none onnxruntime-cpu:avx2 onnxruntime-cpu:avx512 onnxruntime-cpu:arm64; do
    flag=()
    [ "$runtime" = none ] || flag=(--runtime "$runtime")
    args=(analyze "$model" --format json --time-limit 0 --schedule-time-limit 0 "${flag[@]}")
    this_cmd="$(printf '%s\x1f' "$binary" "${args[@]}")"; this_cmd="${this_cmd%$'\x1f'}"
    if [ -n "$other" ]; then
      other_cmd="$(printf '%s\x1f' "$other" "${args[@]}")"; other_cmd="${other_cmd%$'\x1f'}"
      read -r t o < <(median_pair "$this_cmd" "$other_cmd")
      ratio=$(python3 -c "print(f'{$t / $o:.3f}')")
      printf '%-24s %-22s %10s %10s %8s\n' "$name" "$runtime" "$t" "$o" "$ratio"
      if python3 -c "import sys; sys.exit(0 if $t / $o > 1.1 else 1)"; then
        echo "FAIL: $name under $runtime takes ${ratio}x the other binary's time (at most 1.1x)"; status=1
      fi
    else
      read -r t < <(median_pair "$this_cmd")
      printf '%-24s %-22s %10s %10s %8s\n' "$name" "$runtime" "$t" "-" "-"
    fi
  done
done
exit $status
