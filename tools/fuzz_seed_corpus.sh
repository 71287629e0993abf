#!/usr/bin/env bash
# Seeds the fuzz corpus with the Debian test models, ../shared/models and testdata/
# (models under 2 MB: the fuzzer mutates faster on small inputs).
set -euo pipefail
corpus="$1"
mkdir -p "$corpus"
here="$(cd "$(dirname "$0")/.." && pwd)"
for dir in /usr/share/libonnx-testdata/data "$here/../shared/models" "$here/testdata"; do
  [ -d "$dir" ] || continue
  find "$dir" -name '*.onnx' -size -2M -type f | while read -r model; do
    cp "$model" "$corpus/$(sha1sum "$model" | cut -c1-16)"
  done
done
echo "fuzz corpus: $(ls "$corpus" | wc -l) inputs in $corpus"
