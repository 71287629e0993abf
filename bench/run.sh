#!/usr/bin/env bash
# Runs every benchmark script bench/*.bench.sh with the build folder as $1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
status=0
for script in "$here"/*.bench.sh; do
  [ -e "$script" ] || continue
  echo "== $(basename "$script")"
  bash "$script" "$build" || status=1
done
exit $status
