#!/usr/bin/env bash
# The ground truth's committed results: bench/ground_truth/results/ISA.jsonl, one line per model
# (run.sh's results.jsonl of a full sweep on a host of that ISA), and results/ISA.md, the table
# table.py makes of it, which docs/ground-truth.md links.
#   bash write_results.sh RESULTS.jsonl   keeps a sweep's results as results/ISA.jsonl (ISA from its
#                                         rows' runtime.isa), then writes every results/*.md
#   bash write_results.sh                 writes every results/*.md from the committed .jsonl
#   bash write_results.sh --check         exit 1 when a results/*.md is not what its .jsonl gives
#                                         (ctest ground_truth_results)
# run.sh calls the first form at the end of a full sweep.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results="$here/results"
check=0
if [ "${1:-}" = "--check" ]; then check=1
elif [ $# -gt 0 ]; then
  isa=$(jq -r 'select(.runtime.isa != null) | .runtime.isa' "$1" | sort -u | head -1)
  [ -n "$isa" ] || { echo "write_results.sh: no runtime.isa in $1" >&2; exit 2; }
  mkdir -p "$results"
  grep -v '^$' "$1" > "$results/$isa.jsonl"
fi
page() {  # ISA: the page of results/ISA.jsonl
  cat <<MD
# Ground truth results, ISA $1

Written by \`bench/ground_truth/write_results.sh\` from \`$1.jsonl\` beside it (\`table.py --markdown\`):
do not edit; a full \`make ground-truth\` on a host of this ISA writes both again. How the figures
are measured, what each column means, and what the rows show: [docs/ground-truth.md](../../../docs/ground-truth.md).

MD
  python3 "$here/table.py" "$results/$1.jsonl" --markdown
}
status=0
for jsonl in "$results"/*.jsonl; do
  isa=$(basename "$jsonl" .jsonl)
  if [ $check -eq 1 ]; then
    if ! page "$isa" | cmp -s - "$results/$isa.md"; then
      echo "FAIL: bench/ground_truth/results/$isa.md is not what $isa.jsonl gives: run bash bench/ground_truth/write_results.sh"
      status=1
    fi
  else
    page "$isa" > "$results/$isa.md"
    echo "bench/ground_truth/results/$isa.md"
  fi
done
exit $status
