#!/usr/bin/env bash
# Writes the reports of a set of models under a set of configurations into one
# folder, with the figures that change from run to run (wall times) masked, so
# that two builds can be compared byte for byte: a restructuring must leave
# this unchanged.
#
# Usage:
#   tools/report_snapshot.sh [OPTIONS] BINARY OUT_DIR
#     --configs LIST  comma-separated configuration names or shell patterns
#                     ('shared8,*-avx2'); default: all of them (--list-configs)
#     --copies DIR    the folder of quantized copies (below; default
#                     $FOOTPRINT_SNAPSHOT_COPIES); without one, the copies'
#                     configurations are skipped with a one-line note
#     --only FILE     only the models whose path (absolute, or from the current
#                     folder) is a line of FILE, for a quick or stability run;
#                     each still under every configuration of its set
#     --jobs N        runs at once (default $SNAPSHOT_JOBS, else 2)
#     --timings FILE  also write "CONFIG MODEL SECONDS" per model and
#                     configuration (all its formats) to FILE
#   tools/report_snapshot.sh --list-configs
#   tools/report_snapshot.sh --make-copies DIR
#     writes the copies into DIR: tools/make_quantized_copies.py's fp16, qdq and
#     dynamic copies of the shared models, and its variants listed below (needs
#     Debian's /usr/bin/python3 with python3-onnx); make them once and give the
#     same DIR to both snapshots, since the model paths are in the reports
#   tools/report_snapshot.sh --compare OLD_DIR NEW_DIR
#     counts the files that differ and those on one side only, in all and per
#     configuration; exit 0 when the two are the same, 1 otherwise (diff -r
#     OLD_DIR NEW_DIR shows the differences). A snapshot of fewer models or
#     configurations (--only, --configs) matches a full one when it has 0
#     files that differ and 0 only in it.
#   tools/report_snapshot.sh --remask DIR
#     re-masks the reports of a folder written by an older version of this script
#
# Models (sets): shared: every *.onnx of ../shared/models (FOOTPRINT_SHARED_DIR
# names another shared folder); debian: every *.onnx of Debian's
# libonnx-testdata; copies: every *.onnx of the --copies folder.
# OUT_DIR/CONFIG/NAME.FORMAT is a report (NAME: the model's path below its set's
# folder, '/' as '_'), OUT_DIR/CONFIG/NAME.FORMAT.err its stderr followed by
# "exit N" (124: it ran past $SNAPSHOT_TIMEOUT seconds, default 300).
#
# Every run is given --time-limit 0 --schedule-time-limit 0, so that the
# figures do not depend on the machine's load. By default the planner and the
# schedule optimizer search for 0.3 s each beyond their heuristics, and what a
# search finds in that time varies with load (planner/README.md: "The exact
# search is time-limited, so its figures on hard instances vary with load").
# At 0, the planner runs its heuristics and then a bounded dive limited by
# node count (5000 nodes, not by time: "results do not depend on the
# machine"), and the schedule optimizer its greedy passes only, with no
# search; the subgraphs' and device tiers' plans already use 0. What is left
# on the clock: ONNX's shape inference runs under an 8 s deadline, far above
# the models here, and the wall times, which are masked. (With the default
# budgets, 53 of 58 copies' reports under --runtime onnxruntime-cpu:avx512
# differ from these: the schedule search proved 52 optimal within its 0.3 s
# at load 5, and their orders, offsets, "proven_optimal" and, for 2, the
# figures differ from the greedy ones. Such a report depends on whether the
# search finished in time.) Checked: the shared models and a sample of 29
# copies under their configurations, twice each, with 1 and with 2 jobs at
# load 5-8, and a second run of ~100 models under every configuration
# against the full snapshot: no file differs.
#
# Cost: 6878 model-configurations with the 226 copies (27 shared models x 6
# configurations, 1072 Debian x 5, 226 copies x 6), 37872 files, 500 MB.
# With 2 jobs on the 2-core machine beside a build (load 5-8), all four
# formats everywhere ran at about 1.4 model-configurations a second, about
# 85 minutes (stopped after 31); hence text and JSON only for the Debian
# models' runtime configurations, which made it 48 minutes under a like
# load. Mean seconds per model-configuration, its formats one after another:
# shared 0.3 plain, 1.0 with --runtime; Debian 0.66 plain (4 formats), 0.5
# with --runtime (2); copies 1.3-1.5 plain, 1.9-2.3 with --runtime. A quick
# check: --only a list of ~100 models (every shared one, every 8th copy,
# every 24th Debian model) under every configuration, 561
# model-configurations, 3 minutes.
set -uo pipefail
{ # Read whole before it runs: editing or checking out this file during a run changes nothing.
here="$(cd "$(dirname "$0")/.." && pwd)"
shared="${FOOTPRINT_SHARED_DIR:-$here/../shared}"
debian=/usr/share/libonnx-testdata/data
all_formats=text,json,md,html
export SNAPSHOT_TIMEOUT="${SNAPSHOT_TIMEOUT:-300}"

# The configurations: NAME SET FORMATS ARGS... (the args after the model; the
# determinism flags above are added to every run). The runtime ones model ONNX
# Runtime at each ISA it is told, never the host's (which would differ from
# machine to machine).
configurations() {
  local set dims formats config isa
  cat <<EOF
shared8 shared $all_formats --dim-default 8
shared1stm shared $all_formats --dim-default 1 --device stm32h743
debian1 debian $all_formats --dim-default 1
copies8 copies $all_formats --dim-default 8
copies1stm copies $all_formats --dim-default 1 --device stm32h743
EOF
  # The Debian models' runtime reports in text and JSON only (what the JSON
  # holds is all the analysis; Markdown and HTML render the same): 1072
  # models under four ISAs are most of the runs, and all four formats made
  # the full snapshot longer than an hour with 2 jobs beside a build.
  for set in shared:8:$all_formats debian:1:text,json copies:8:$all_formats; do
    IFS=: read -r set dims formats <<< "$set"
    for isa in avx2 avx512 arm64 avx512,noarena; do
      config="$set$dims-ort-${isa/,/-}"
      echo "$config $set $formats --dim-default $dims --runtime onnxruntime-cpu:$isa"
    done
  done
}

# The copies of --make-copies: SUFFIX OPTIONS of make_quantized_copies.py
# (an empty suffix: its three default kinds). Each variant is a way ORT's
# quantizers or converters write models that the runtime's rules treat apart.
copy_variants() {
  cat <<'EOF'
- --kinds fp16,qdq,dynamic
-s8 --kinds qdq --activation-type int8
-u16 --kinds qdq --activation-type uint16
-qat --kinds qdq --float-weights
-dedicated --kinds qdq --dedicated-qdq-pair
-ortops --kinds qdq --op-list ort
-u8pertensor --kinds qdq --weight-type uint8 --per-tensor
-contrib --kinds qdq --qdq-contrib-ops
-perchannel --kinds dynamic --per-channel
-u8 --kinds dynamic --weight-type uint8
-io --kinds fp16 --no-keep-io-types
EOF
}

# Wall times are the only figures allowed to differ: JSON "seconds" and
# "timings" members, and the "N.NNN s" of the text, Markdown and HTML reports.
mask() {  # [-i FILE...]: in place; else standard input to output.
  sed -E -e 's/("seconds": )[0-9.e+-]+/\1T/g' \
         -e '/"timings": \{/,/\}/ s/(": )[0-9.e+-]+/\1T/' \
         -e 's/[0-9]+\.[0-9]+ s\b/T s/g' -e 's/[0-9]+\.[0-9]+s\b/Ts/g' "$@"
}
export -f mask

case "${1:-}" in
  --remask)
    find "${2:?usage: --remask DIR}" -type f \( -name '*.json' -o -name '*.text' -o -name '*.md' -o -name '*.html' \) |
      while read -r f; do mask < "$f" > "$f.tmp" && mv "$f.tmp" "$f"; done
    exit 0 ;;
  --list-configs)
    configurations | awk '{ printf "%-28s %-7s %s", $1, $2, $3; for (i = 4; i <= NF; i++) printf " %s", $i; print "" }'
    exit 0 ;;
  --make-copies)
    dir="${2:?usage: --make-copies DIR}"
    mkdir -p "$dir"
    mapfile -t models < <(find "$(realpath "$shared")/models" -name '*.onnx' -type f | sort)
    status=0
    while read -r suffix options; do
      [ "$suffix" = - ] && suffix=
      echo "== make_quantized_copies.py --suffix '$suffix' $options"
      # shellcheck disable=SC2086
      /usr/bin/python3 "$here/tools/make_quantized_copies.py" --out "$dir" --suffix="$suffix" $options "${models[@]}" ||
        status=1
    done < <(copy_variants)
    echo "copies: $(find "$dir" -name '*.onnx' | wc -l) models in $dir"
    exit $status ;;
  --compare)
    old="${2:?usage: --compare OLD_DIR NEW_DIR}"; new="${3:?usage: --compare OLD_DIR NEW_DIR}"
    old="${old%/}"; new="${new%/}"
    report="$(diff -rq "$old" "$new")"
    # One line per file: CONFIG (its folder below OLD_DIR or NEW_DIR) and what.
    while read -r line; do
      case "$line" in
        "Files "*" differ") path="${line#Files }"; path="${path%% and *}"; what="differ" ;;
        "Only in "*) path="${line#Only in }"; path="${path%%: *}/${path#*: }"; what="only-in-new" ;;
        *) continue ;;
      esac
      files=1
      [ -d "$path" ] && files=$(find "$path" -type f | wc -l)  # A folder on one side only: its files.
      if [[ $path == "$old/"* ]]; then
        path="${path#"$old/"}"
        [ "$what" = differ ] || what="only-in-old"
      else
        path="${path#"$new/"}"
      fi
      for ((k = 0; k < files; k++)); do echo "${path%%/*} $what"; done
    done <<< "$report" > "${TMPDIR:-/tmp}/snapshot-compare.$$"
    count() { grep -c " $1\$" "${TMPDIR:-/tmp}/snapshot-compare.$$"; }
    echo "compare: $(find "$old" -type f | wc -l) files in $old, $(find "$new" -type f | wc -l) in $new:" \
         "$(count differ) differ, $(count only-in-old) only in $old, $(count only-in-new) only in $new"
    sort "${TMPDIR:-/tmp}/snapshot-compare.$$" | uniq -c | sed 's/^ */  /'
    [ -z "$report" ]; status=$?
    rm -f "${TMPDIR:-/tmp}/snapshot-compare.$$"
    exit $status ;;
esac

patterns=()
copies="${FOOTPRINT_SNAPSHOT_COPIES:-}"
only=
jobs="${SNAPSHOT_JOBS:-2}"
timings=
while [ $# -gt 0 ]; do
  case "$1" in
    --configs) IFS=, read -ra patterns <<< "$2"; shift 2 ;;
    --copies) copies="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --timings) timings="$(realpath -m "$2")"; shift 2 ;;
    -*) echo "report_snapshot.sh: unknown option $1 (see the top of the script)" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -ne 2 ]; then
  echo "usage: tools/report_snapshot.sh [--configs LIST] [--copies DIR] [--only FILE] [--jobs N] [--timings FILE] BINARY OUT_DIR" >&2
  exit 2
fi
binary="$(realpath "$1")"; out="$2"
[ ${#patterns[@]} -eq 0 ] && patterns=('*')
mapfile -t names < <(configurations | awk '{ print $1 }')
for pattern in "${patterns[@]}"; do  # A misspelt name would quietly snapshot less.
  matched=
  for name in "${names[@]}"; do
    # shellcheck disable=SC2053
    [[ $name == $pattern ]] && matched=1
  done
  if [ -z "$matched" ]; then
    echo "report_snapshot.sh: no configuration is '$pattern' (--list-configs)" >&2
    exit 2
  fi
done
[ -d "$debian" ] || echo "snapshot: no $debian (Debian's libonnx-testdata): its configurations are skipped" >&2
[ -n "$(ls -A "$out" 2>/dev/null)" ] && echo "snapshot: $out is not empty: files of earlier runs stay beside this run's" >&2

# The models of a set, by canonical path (the same folder reached through
# another checkout names the same files and reports).
models_of() {
  local dir
  case "$1" in
    shared) dir="$shared/models" ;;
    debian) dir="$debian" ;;
    copies) dir="$copies" ;;
  esac
  [ -n "$dir" ] && [ -d "$dir" ] || return 0
  dir="$(realpath "$dir")"
  find "$dir" -name '*.onnx' -type f | sort | { if [ -n "$only" ]; then grep -xFf "$only_file"; else cat; fi; } |
    awk -v dir="$dir" '{ print dir "|" substr($0, length(dir) + 2) }'
}

mkdir -p "$out"
jobs_file="$(mktemp)"; only_file="$(mktemp)"
trap 'rm -f "$jobs_file" "$only_file"' EXIT
[ -n "$only" ] && grep -v '^$' "$only" | xargs -d '\n' realpath -m > "$only_file"
declare -A listed=()
noted_copies=
while read -r config set formats args; do
  chosen=
  for pattern in "${patterns[@]}"; do
    # shellcheck disable=SC2053
    [[ $config == $pattern ]] && chosen=1
  done
  [ -n "$chosen" ] || continue
  if [ "$set" = copies ] && { [ -z "$copies" ] || [ ! -d "$copies" ]; }; then
    [ -z "$noted_copies" ] && echo "snapshot: no copies folder (--copies DIR, made by --make-copies DIR): the copies' configurations are skipped" >&2
    noted_copies=1
    continue
  fi
  [ -n "${listed[$set]:-}" ] || listed[$set]="$(models_of "$set")"
  [ -n "${listed[$set]}" ] || continue
  mkdir -p "$out/$config"
  while IFS='|' read -r dir relative; do
    echo "$config|$formats|$dir/$relative|${relative//\//_}|${args// /|}"
  done <<< "${listed[$set]}"
done < <(configurations) > "$jobs_file"

# shellcheck disable=SC2317 # Run by xargs.
one() {  # BINARY OUT TIMINGS CONFIG FORMATS MODEL NAME ARGS...
  local binary="$1" out="$2" timings="$3" config="$4" formats="$5" model="$6" name="$7" format start
  shift 7
  start=${EPOCHREALTIME/./}  # Microseconds.
  local files=()
  for format in ${formats//,/ }; do
    local file="$out/$config/$name.$format"
    timeout "$SNAPSHOT_TIMEOUT" "$binary" analyze "$model" --format "$format" --time-limit 0 --schedule-time-limit 0 "$@" \
      > "$file" 2> "$file.err"
    echo "exit $?" >> "$file.err"
    files+=("$file")
  done
  mask -i "${files[@]}"  # One sed for all the formats: the runs of tiny models are mostly process starts.
  if [ -n "$timings" ]; then
    local took=$(( ${EPOCHREALTIME/./} - start ))
    printf '%s %s %d.%03d\n' "$config" "$model" $((took / 1000000)) $((took / 1000 % 1000)) >> "$timings"
  fi
}
export -f one

echo "snapshot: $(wc -l < "$jobs_file") model-configurations, $jobs at once" >&2
# shellcheck disable=SC2016 # $1... are the inner bash's.
xargs -d '\n' -P "$jobs" -I{} bash -c 'IFS="|" read -ra a <<< "$1"; one "$2" "$3" "$4" "${a[@]}"' _ {} "$binary" "$out" "$timings" \
  < "$jobs_file"
echo "snapshot: $(find "$out" -type f | wc -l) files in $out"
exit
}
