#!/usr/bin/env bash
# End-to-end checks of footprint-plan: $1 is the binary, $2 this folder.
set -u
plan="$1"
data="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Bad input: exit 2, one line "FILE:LINE: problem" on stderr, nothing on stdout, no output file.
check_bad() {
  local name="$1" content="$2" expected="$3"
  printf '%b' "$content" > "$work/$name.csv"
  "$plan" "$work/$name.csv" --time-limit 0 --output "$work/$name.out" > "$work/stdout" 2> "$work/stderr"
  local code=$?
  [ "$code" -eq 2 ] || fail "$name: exit code $code, expected 2"
  [ ! -s "$work/stdout" ] || fail "$name: wrote to stdout"
  [ ! -e "$work/$name.out" ] || fail "$name: left an output file"
  [ "$(wc -l < "$work/stderr")" -eq 1 ] || fail "$name: stderr is not one line: $(cat "$work/stderr")"
  grep -qF "$work/$name.csv:$expected" "$work/stderr" || fail "$name: stderr '$(cat "$work/stderr")' lacks '$expected'"
  "$plan" "$work/$name.csv" --time-limit 0 > "$work/stdout" 2> /dev/null
  [ ! -s "$work/stdout" ] || fail "$name: wrote to stdout without --output"
}
check_bad missing_column 'id,lower,upper,size\n0,0,4,8\n1,2,4\n' '3: expected 4 fields'
check_bad negative_size 'id,lower,upper,size\n0,0,4,-8\n' '2: size is negative'
check_bad empty_lifespan 'id,lower,upper,size\n0,0,4,8\n1,4,4,8\n' '3: upper (4) must be greater than lower (4)'
check_bad duplicate_id 'id,lower,upper,size\nx,0,4,8\nx,1,2,8\n' '3: duplicate id'
check_bad not_a_number 'id,lower,upper,size\n0,0,four,8\n' '2: upper is not an integer'
check_bad bad_header 'id,start,upper,size\n' '1: unknown column'

# Usage errors.
"$plan" > /dev/null 2>&1; [ $? -eq 2 ] || fail "no arguments: expected exit 2"
"$plan" "$data/staircase.csv" --time-limit soon > /dev/null 2>&1; [ $? -eq 2 ] || fail "bad --time-limit: expected 2"
"$plan" "$work/absent.csv" > /dev/null 2>&1; [ $? -eq 2 ] || fail "absent file: expected 2"
"$plan" --help | grep -q "usage: onnx-footprint plan" || fail "--help"

# A good problem: the golden offsets, the summary on stderr, and --output.
"$plan" "$data/staircase.csv" --time-limit 5 > "$work/out.csv" 2> "$work/summary" || fail "staircase: nonzero exit"
diff -u "$data/staircase.expected.csv" "$work/out.csv" || fail "staircase: offsets differ from the golden file"
grep -q "arena 7 bytes, lower bound 7 bytes, ratio 1.000, proven optimal" "$work/summary" ||
  fail "staircase: summary '$(cat "$work/summary")'"
"$plan" "$data/staircase.csv" --time-limit 0 --output "$work/written.csv" > "$work/stdout" 2> /dev/null ||
  fail "--output: nonzero exit"
[ ! -s "$work/stdout" ] || fail "--output: also wrote to stdout"
head -1 "$work/written.csv" | grep -q "^id,lower,upper,size,offset$" || fail "--output: bad header"

[ "$failures" -eq 0 ] && echo "all plan command checks passed"
exit $((failures > 0))
