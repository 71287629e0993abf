#!/usr/bin/env bash
# Speed of the whole analysis on an 18,000-node graph, then shape coverage: fraction of arena tensors sized by ONNX 1.12's inference
# alone and by ours (same bindings: --dim-default 8), and by ours with no
# binding (sized or a formula), on ../shared/models and Debian's ONNX test
# models. Usage: bench/shapes.bench.sh BUILD_DIR
set -euo pipefail
build="${1:-build}"
here="$(cd "$(dirname "$0")" && pwd)"
shared="${FOOTPRINT_SHARED_DIR:-$here/../../shared}"
tool="$build/bench/shape_coverage"
[ -x "$tool" ] || { echo "missing $tool: build first (cmake --build $build)" >&2; exit 2; }
status=0
echo "# speed: the whole analysis of an 18,000-node graph with computed shapes"
"$tool" --synthetic 18000 || status=1
if [ -d "$shared/models" ]; then
  echo "# ../shared/models (--dim-default 8)"
  find "$shared/models" -name '*.onnx' | sort > "$build/bench/shapes_shared.txt"
  "$tool" --dim-default 8 --list "$build/bench/shapes_shared.txt" || status=1
fi
testdata=/usr/share/libonnx-testdata/data
if [ -d "$testdata" ]; then
  echo "# $testdata (--dim-default 1): totals only"
  ls "$testdata"/*/*/model.onnx > "$build/bench/shapes_testdata.txt"
  # --compare: every tensor both size must have the same size (else exit 1).
  "$tool" --compare --dim-default 1 --list "$build/bench/shapes_testdata.txt" > "$build/bench/shapes_testdata.tsv" || status=1
  grep -E '^MISMATCH|mismatches' "$build/bench/shapes_testdata.tsv" || true
  head -1 "$build/bench/shapes_testdata.tsv"
  grep '^TOTAL' "$build/bench/shapes_testdata.tsv"
  echo "# models not fully sized by ours:"
  awk -F'\t' 'NR > 1 && $4 != "100.0%" && $1 !~ /^(TOTAL|MISMATCH)/ && $1 !~ /mismatches/' \
    "$build/bench/shapes_testdata.tsv" | cut -f1,2,3,4 | sed 's|.*/data/||'
fi
exit $status
