#!/usr/bin/env bash
# Runs `onnx-footprint analyze` on every model it is given (files or folders,
# searched for *.onnx) and fails on anything but a clean ending:
#   - exit 0, 1 or 2 only (no crash, no sanitizer report, no hang past 10 s);
#   - exit 2 always with a one-line message on stderr, and nothing on stdout.
# Usage: tools/sweep_models.sh BINARY PATH... [-- EXTRA ANALYZE FLAGS]
set -uo pipefail
binary="$1"; shift
paths=(); extra=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; extra=("$@"); break; fi
  paths+=("$1"); shift
done
list=$(mktemp); results=$(mktemp -d)
trap 'rm -rf "$list" "$results"' EXIT
for p in "${paths[@]}"; do
  [ -e "$p" ] || continue
  find "$p" -name '*.onnx' -type f >> "$list"
done
sort -o "$list" "$list"
total=$(wc -l < "$list")
if [ "$total" -eq 0 ]; then echo "sweep: no models found"; exit 0; fi

check_one() {
  local model="$1" binary="$2"; shift 2
  local out err rc
  out=$(mktemp); err=$(mktemp)
  timeout 10 "$binary" analyze "$model" --format json "$@" > "$out" 2> "$err"
  rc=$?
  local verdict="ok"
  if [ $rc -eq 124 ]; then verdict="HANG (over 10 s)"
  elif [ $rc -gt 2 ]; then verdict="CRASH (exit $rc)"
  elif grep -qE 'Sanitizer|runtime error' "$err"; then verdict="SANITIZER REPORT"
  elif [ $rc -eq 2 ]; then
    if [ "$(wc -l < "$err")" -ne 1 ]; then verdict="exit 2 without a one-line message"
    elif [ -s "$out" ]; then verdict="exit 2 with output on stdout"; fi
  fi
  echo "$rc $verdict $model"
  if [ "$verdict" != "ok" ]; then head -c 2000 "$err" | sed 's/^/    /'; fi
  rm -f "$out" "$err"
}
export -f check_one
xargs -a "$list" -d '\n' -P "${SWEEP_JOBS:-2}" -I{} bash -c 'check_one "$@"' _ {} "$binary" "${extra[@]}" > "$results/log"

bad=$(grep -E '^[0-9]+ ' "$results/log" | grep -vcE '^[012] ok ')
for code in 0 1 2; do
  printf 'exit %s: %s\n' "$code" "$(grep -cE "^$code ok " "$results/log")"
done
if [ "$bad" -ne 0 ]; then
  echo "sweep: $bad of $total models did not end cleanly:"
  grep -vE '^[012] ok ' "$results/log"
  echo "0 passed, $bad failed"
  exit 1
fi
echo "sweep: all $total models ended cleanly"
exit 0
