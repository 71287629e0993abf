#!/usr/bin/env bash
# Writes every report format of a set of models into one folder, with the
# figures that change from run to run (wall times) masked, so that two builds
# can be compared byte for byte: a restructuring must leave this unchanged.
#
# Usage: tools/report_snapshot.sh BINARY OUT_DIR
#   Models: every *.onnx of ../shared/models (with --dim-default 8, and with
#   --dim-default 1 --device stm32h743) and of Debian's libonnx-testdata
#   (--dim-default 1), each as text, json, md and html, with stderr and the
#   exit code beside them.
# Compare: diff -r OLD_DIR NEW_DIR (no output: same behaviour).
# Re-mask a folder written by an older version of this script:
#   tools/report_snapshot.sh --remask DIR
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${FOOTPRINT_SHARED_DIR:-$here/../shared}"
debian=/usr/share/libonnx-testdata/data

# Wall times are the only figures allowed to differ: JSON "seconds" and
# "timings" members, and the "N.NNN s" of the text, Markdown and HTML reports.
mask() {
  sed -E -e 's/("seconds": )[0-9.e+-]+/\1T/g' \
         -e '/"timings": \{/,/\}/ s/(": )[0-9.e+-]+/\1T/' \
         -e 's/[0-9]+\.[0-9]+ s\b/T s/g' -e 's/[0-9]+\.[0-9]+s\b/Ts/g'
}
export -f mask

if [ "${1:-}" = "--remask" ]; then
  for f in "$2"/*.json "$2"/*.text "$2"/*.md "$2"/*.html; do mask < "$f" > "$f.tmp" && mv "$f.tmp" "$f"; done
  exit 0
fi
binary="$(realpath "$1")"; out="$2"
mkdir -p "$out"

one() {
  local binary="$1" model="$2" tag="$3" out="$4"; shift 4
  local name
  name="$(echo "$tag:$model" | sed 's#[/ ]#_#g')"
  for format in text json md html; do
    timeout 60 "$binary" analyze "$model" --format "$format" "$@" > "$out/$name.$format.raw" 2> "$out/$name.$format.err"
    echo "exit $?" >> "$out/$name.$format.err"
    mask < "$out/$name.$format.raw" > "$out/$name.$format"
    rm -f "$out/$name.$format.raw"
  done
}
export -f one

{
  find "$shared/models" -name '*.onnx' -type f | sort | sed 's/^/shared8 /'
  find "$shared/models" -name '*.onnx' -type f | sort | sed 's/^/shared1stm /'
  [ -d "$debian" ] && find "$debian" -name '*.onnx' -type f | sort | sed 's/^/debian1 /'
} > "$out/.list"

while read -r tag model; do
  case "$tag" in
    shared8) echo "$binary|$model|$tag|--dim-default|8" ;;
    shared1stm) echo "$binary|$model|$tag|--dim-default|1|--device|stm32h743" ;;
    debian1) echo "$binary|$model|$tag|--dim-default|1" ;;
  esac
done < "$out/.list" |
  xargs -d '\n' -P "${SNAPSHOT_JOBS:-2}" -I{} bash -c 'IFS="|" read -ra a <<< "$1"; one "${a[0]}" "${a[1]}" "${a[2]}" "'"$out"'" "${a[@]:3}"' _ {}
rm -f "$out/.list"
echo "snapshot: $(ls "$out" | wc -l) files in $out"
