#!/usr/bin/env bash
# Fetches the shared model corpus, the real models some tests and examples read
# (they skip without them), into OUT_DIR, each checked against the sha256 that
# testdata/shared_corpus.tsv records for it. Point the build at the result:
#   tools/fetch_test_models.sh ../shared/models        # where a checkout looks by default
#   cmake -S . -B build -DFOOTPRINT_SHARED_DIR=DIR     # or OUT_DIR=DIR/models anywhere else
#
# Usage: fetch_test_models.sh [--sources TSV] [--base-url URL | --mirror DIR] OUT_DIR
#   --sources TSV   the list (default: testdata/shared_corpus.tsv): a header line, then one model a
#                   line, tab-separated; the columns used are `file` (its path in OUT_DIR),
#                   `repository` (owner/name), `commit`, `path_in_repository` and `sha256`
#   --base-url URL  where a file is URL/REPOSITORY/COMMIT/PATH_IN_REPOSITORY (default: GitHub's raw
#                   file host); file:///DIR reads a local folder of that layout, no network
#   --mirror DIR    a folder laid out like OUT_DIR itself (DIR/FILE), e.g. another copy of the corpus
# A file already in OUT_DIR with the right sha256 is kept. A file is written whole or not at all:
# downloaded to FILE.part, checked, then renamed. Exit 0 when every file is there and checked,
# 1 when some could not be fetched or had another sha256 (each named on stderr), 2 on bad usage.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sources="$here/../testdata/shared_corpus.tsv"
base_url="https://raw.githubusercontent.com"
mirror=""
out=""
usage() { echo "usage: fetch_test_models.sh [--sources TSV] [--base-url URL | --mirror DIR] OUT_DIR" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --sources) [ $# -ge 2 ] || usage; sources=$2; shift 2 ;;
    --base-url) [ $# -ge 2 ] || usage; base_url=${2%/}; shift 2 ;;
    --mirror) [ $# -ge 2 ] || usage; mirror=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fetch_test_models.sh: unknown option $1" >&2; usage ;;
    *) [ -z "$out" ] || usage; out=$1; shift ;;
  esac
done
[ -n "$out" ] || usage
[ -f "$sources" ] || { echo "fetch_test_models.sh: no list at $sources" >&2; exit 2; }
[ -z "$mirror" ] || [ -d "$mirror" ] || { echo "fetch_test_models.sh: no mirror folder $mirror" >&2; exit 2; }

# Column numbers by name, from the header.
header=$(head -1 "$sources")
column() {
  local n
  n=$(printf '%s\n' "$header" | tr '\t' '\n' | grep -nx "$1" | cut -d: -f1)
  [ -n "$n" ] || { echo "fetch_test_models.sh: $sources has no column $1" >&2; exit 2; }
  echo "$n"
}
c_file=$(column file); c_repo=$(column repository); c_commit=$(column commit)
c_path=$(column path_in_repository); c_sha=$(column sha256)

# Copies or downloads $1 (a URL or a path) to $2.
get() {
  case "$1" in
    file://*) cp -- "${1#file://}" "$2" 2> /dev/null ;;
    http://*|https://*)
      if command -v curl > /dev/null; then curl -fsSL --retry 2 -o "$2" -- "$1"
      elif command -v wget > /dev/null; then wget -q -O "$2" -- "$1"
      else echo "fetch_test_models.sh: neither curl nor wget is installed" >&2; return 1; fi ;;
    *) cp -- "$1" "$2" 2> /dev/null ;;
  esac
}

mkdir -p "$out" || exit 1
fetched=0; kept=0; failed=0
# The five columns, split on a separator that is not white space (read would merge empty fields).
while IFS=$'\x1f' read -r file repo commit path sha; do
  [ -n "$file" ] || continue
  case "$file" in /*|*..*) echo "FAIL $file: not a path inside OUT_DIR" >&2; failed=$((failed + 1)); continue ;; esac
  target="$out/$file"
  if [ -f "$target" ] && [ "$(sha256sum < "$target" | cut -d' ' -f1)" = "$sha" ]; then
    kept=$((kept + 1)); continue
  fi
  if [ -n "$mirror" ]; then from="$mirror/$file"; else from="$base_url/$repo/$commit/$path"; fi
  mkdir -p "$(dirname "$target")"
  if ! get "$from" "$target.part"; then
    echo "FAIL $file: could not fetch $from" >&2; rm -f "$target.part"; failed=$((failed + 1)); continue
  fi
  actual=$(sha256sum < "$target.part" | cut -d' ' -f1)
  if [ "$actual" != "$sha" ]; then
    echo "FAIL $file: sha256 $actual, not $sha (from $from)" >&2; rm -f "$target.part"; failed=$((failed + 1)); continue
  fi
  mv -f "$target.part" "$target" && fetched=$((fetched + 1))
done < <(tail -n +2 "$sources" | tr -d '\r' | awk -F'\t' -v OFS=$'\x1f' -v f="$c_file" -v r="$c_repo" \
           -v c="$c_commit" -v p="$c_path" -v s="$c_sha" '{ print $f, $r, $c, $p, $s }')
cp -f "$sources" "$out/SOURCES.tsv" 2> /dev/null || true
echo "$out: $fetched fetched, $kept already there, $failed failed (sha256 checked against $(basename "$sources"))"
[ "$failed" -eq 0 ]
