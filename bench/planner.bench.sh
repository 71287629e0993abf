#!/usr/bin/env bash
# The planner on MiniMalloc's "challenging" suite (11 production instances):
# per instance the lower bound, the portfolio alone, heuristics only
# (--time-limit 0) and --time-limit 10; then a synthetic problem of the
# analyzer's size. $1: the build folder. Reference figures (MiniMalloc):
# ../shared/benchmarks/minimalloc/README.md.
set -euo pipefail
build="${1:-build}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
suite="${FOOTPRINT_SHARED_DIR:-$repo/../shared}/benchmarks/minimalloc/challenging"
echo "load: $(uptime)"
"$build/bench/planner_bench" "$suite" --time-limit "${PLANNER_TIME_LIMIT:-10}"
echo
"$build/bench/planner_bench" --synthetic 40000 --time-limit 1
