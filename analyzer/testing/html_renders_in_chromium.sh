#!/usr/bin/env bash
# Renders the HTML report of a bundled model in headless Chromium and checks
# the page the browser built: one <rect> per planned tensor, the tensor table
# filled in, and the inline script run to its end (data-ready="1").
# Exits 77 (ctest SKIP_RETURN_CODE) when Chromium is not installed.
#   html_renders_in_chromium.sh ONNX_FOOTPRINT MODEL.onnx
set -euo pipefail
tool="$1"
model="$2"
browser="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$browser" ]; then
  echo "SKIP: chromium is not installed (apt-get install chromium)"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$tool" analyze "$model" --format html --output "$work/report.html"
"$tool" analyze "$model" --format json --output "$work/report.json"
planned="$(grep -c '"offset": [0-9]' "$work/report.json" || true)"
tensors="$(grep -c '"aligned_bytes":' "$work/report.json" || true)"

# --dump-dom prints the DOM after the page's scripts ran. No network: the page
# has no external reference, and these flags keep Chromium itself offline.
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --dump-dom "file://$work/report.html" >"$work/dom.html" 2>"$work/chromium.log" || {
  echo "FAIL: chromium could not render the page"; tail -5 "$work/chromium.log"; exit 1; }

rects="$(grep -o '<rect' "$work/dom.html" | wc -l)"
rows="$(grep -o '<tr id="m0-r' "$work/dom.html" | wc -l)"
echo "planned tensors: $planned, rects rendered: $rects; tensors: $tensors, table rows: $rows"
[ "$planned" -gt 0 ] || { echo "FAIL: no planned tensor in the report"; exit 1; }
[ "$rects" -eq "$planned" ] || { echo "FAIL: expected one <rect> per planned tensor"; exit 1; }
[ "$rows" -eq "$tensors" ] || { echo "FAIL: expected one table row per tensor"; exit 1; }
grep -q 'data-ready="1"' "$work/dom.html" || { echo "FAIL: the inline script did not run to its end"; exit 1; }
if grep -Eq '(src|href)="(https?:)?//' "$work/dom.html"; then echo "FAIL: network reference"; exit 1; fi
echo "PASS"
