#!/usr/bin/env bash
# Installs the pinned onnxruntime-node (onnxruntime-node.version) into
# NODE_MODULES_PARENT/node_modules with npm (--ignore-scripts: its install
# script would fetch GPU binaries), once: nothing is done when that version
# is already there. npm's own cache (~/.npm) keeps the download.
#   bash install_ort.sh NODE_MODULES_PARENT
# Exit 0: installed (or already there). Exit 77, with one line saying why:
# npm is missing or the npm registry cannot be reached (the caller skips).
# Exit 1: npm reached the registry and still failed (a real error).
set -euo pipefail
parent=${1:?usage: install_ort.sh NODE_MODULES_PARENT}
version=$(cat "$(dirname "$0")/onnxruntime-node.version")
package="$parent/node_modules/onnxruntime-node/package.json"
if [ -f "$package" ] && grep -q "\"version\": \"$version\"" "$package"; then
  exit 0
fi
if ! command -v npm > /dev/null; then
  echo "SKIP: npm is not installed, so onnxruntime-node@$version cannot be installed"
  exit 77
fi
# One quick look at the registry first, so that an offline machine skips in
# seconds instead of waiting through npm's retries; a registry that answers
# but has no such version is an error (a typo in the pin), not a skip.
if ! npm ping --fetch-retries=0 --fetch-timeout=20000 > /dev/null 2>&1; then
  echo "SKIP: the npm registry ($(npm config get registry)) cannot be reached, so onnxruntime-node@$version is not installed"
  exit 77
fi
if [ -z "$(npm view --fetch-retries=0 --fetch-timeout=20000 "onnxruntime-node@$version" version 2> /dev/null)" ]; then
  echo "install_ort.sh: the npm registry has no onnxruntime-node@$version (bench/ground_truth/onnxruntime-node.version)" >&2
  exit 1
fi
mkdir -p "$parent"
log="$parent/npm-install.log"
if ! (cd "$parent" && npm install --no-save --no-audit --no-fund --ignore-scripts "onnxruntime-node@$version") \
     > "$log" 2>&1; then
  echo "install_ort.sh: npm install onnxruntime-node@$version into $parent failed (log: $log):" >&2
  tail -5 "$log" >&2
  exit 1
fi
