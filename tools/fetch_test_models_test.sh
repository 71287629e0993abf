#!/usr/bin/env bash
# ctest fetch_test_models: tools/fetch_test_models.sh against local mirrors only, never the network.
#   fetch_test_models_test.sh SOURCE_DIR [SHARED_MODELS_DIR]
# On two small files it writes itself: a file:// mirror in the raw layout, then a --mirror folder;
# a second run keeps what is there; a file with another sha256 fails, named, and leaves nothing.
# When the shared corpus is there, it is fetched whole from a file:// mirror of it, so that
# testdata/shared_corpus.tsv's sha256 column stays the corpus's.
set -uo pipefail
source_dir=$1
shared=${2:-}
fetch="$source_dir/tools/fetch_test_models.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# Two files in the raw layout: BASE/REPOSITORY/COMMIT/PATH.
mkdir -p "$work/raw/owner/repo/0123abcd/models/sub"
printf 'first model bytes\n' > "$work/raw/owner/repo/0123abcd/models/a.onnx"
printf 'second model bytes\n' > "$work/raw/owner/repo/0123abcd/models/sub/b.onnx"
sha_a=$(sha256sum < "$work/raw/owner/repo/0123abcd/models/a.onnx" | cut -d' ' -f1)
sha_b=$(sha256sum < "$work/raw/owner/repo/0123abcd/models/sub/b.onnx" | cut -d' ' -f1)
{
  printf 'file\trepository\tcommit\tpath_in_repository\tlicense\tsha256\n'
  printf 'owner_repo/a.onnx\towner/repo\t0123abcd\tmodels/a.onnx\tMIT\t%s\n' "$sha_a"
  printf 'owner_repo/deep/b.onnx\towner/repo\t0123abcd\tmodels/sub/b.onnx\tMIT\t%s\n' "$sha_b"
} > "$work/list.tsv"

bash "$fetch" --sources "$work/list.tsv" --base-url "file://$work/raw" "$work/out" > "$work/log" 2>&1 \
  || fail "file:// mirror: exit $?: $(cat "$work/log")"
cmp -s "$work/out/owner_repo/a.onnx" "$work/raw/owner/repo/0123abcd/models/a.onnx" || fail "a.onnx not fetched"
cmp -s "$work/out/owner_repo/deep/b.onnx" "$work/raw/owner/repo/0123abcd/models/sub/b.onnx" || fail "b.onnx not fetched"
grep -q "2 fetched, 0 already there, 0 failed" "$work/log" || fail "first run: $(cat "$work/log")"

bash "$fetch" --sources "$work/list.tsv" --base-url "file://$work/raw" "$work/out" > "$work/log" 2>&1 \
  || fail "second run: exit $?"
grep -q "0 fetched, 2 already there, 0 failed" "$work/log" || fail "second run: $(cat "$work/log")"

# --mirror: a folder laid out like the output (the first run's).
bash "$fetch" --sources "$work/list.tsv" --mirror "$work/out" "$work/copy" > "$work/log" 2>&1 \
  || fail "--mirror: exit $?: $(cat "$work/log")"
cmp -s "$work/copy/owner_repo/deep/b.onnx" "$work/out/owner_repo/deep/b.onnx" || fail "--mirror: b.onnx not copied"

# Other bytes at the source: exit 1, the file named, nothing left behind.
printf 'tampered\n' > "$work/raw/owner/repo/0123abcd/models/a.onnx"
bash "$fetch" --sources "$work/list.tsv" --base-url "file://$work/raw" "$work/bad" > "$work/log" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "tampered file: exit $rc, not 1"
grep -q "FAIL owner_repo/a.onnx: sha256" "$work/log" || fail "tampered file not named: $(cat "$work/log")"
[ ! -e "$work/bad/owner_repo/a.onnx" ] && [ ! -e "$work/bad/owner_repo/a.onnx.part" ] || fail "tampered file left behind"
[ -f "$work/bad/owner_repo/deep/b.onnx" ] || fail "the good file was not fetched beside the bad one"
bash "$fetch" --sources "$work/list.tsv" --no-such-flag "$work/x" > /dev/null 2>&1
[ $? -eq 2 ] || fail "an unknown flag does not exit 2"
echo "small mirror: checked"

# The real corpus, from a file:// mirror of it in the raw layout (symlinks).
if [ -n "$shared" ] && [ -d "$shared" ]; then
  list="$source_dir/testdata/shared_corpus.tsv"
  while IFS=$'\t' read -r file repo commit path _; do
    mkdir -p "$(dirname "$work/corpus_raw/$repo/$commit/$path")"
    ln -s "$shared/$file" "$work/corpus_raw/$repo/$commit/$path"
  done < <(tail -n +2 "$list")
  if bash "$fetch" --base-url "file://$work/corpus_raw" "$work/corpus" > "$work/log" 2>&1; then
    cat "$work/log"
  else
    fail "the corpus against testdata/shared_corpus.tsv: $(cat "$work/log")"
  fi
else
  echo "the whole corpus not checked: needs the shared model corpus, not found at ${shared:-(none given)}"
fi
exit $status
