#!/usr/bin/env bash
# The schedule optimizer on 18,000-22,000-node graphs: each must schedule in
# under a second (StableTopologicalOrder + OptimizeSchedule with its default
# 1 s limit), and its linear passes alone (no search: validation, splitting,
# step models, the four greedy rules, the final check) in under 0.03 s, the
# fastest of 3 runs.
# Usage: bench/scheduler.bench.sh BUILD_DIR
set -euo pipefail
build="${1:?usage: $0 BUILD_DIR}"
status=0
"$build/bench/scheduler_bench" --time_limit_ms=1000 --max_seconds=1 || status=1
echo "-- linear passes only (--time_limit_ms=0), fastest of 3:"
"$build/bench/scheduler_bench" --time_limit_ms=0 --max_seconds=0.03 --repeat=3 || status=1
exit $status
