#!/usr/bin/env bash
# The schedule optimizer on 18,000-node graphs: each must schedule in under a
# second (StableTopologicalOrder + OptimizeSchedule with its default 1 s limit).
# Usage: bench/scheduler.bench.sh BUILD_DIR
set -euo pipefail
build="${1:?usage: $0 BUILD_DIR}"
"$build/bench/scheduler_bench" --time_limit_ms=1000 --max_seconds=1
