# Sourced by the ctest scripts that run ONNX Runtime (ground_truth_test.sh,
# patch_test.sh): the tools the driver needs, then onnxruntime-node installed
# into ORT_DIR (install_ort.sh). Leaves the caller with exit 77 and one line
# saying why when either cannot be had, and with install_ort.sh's status when
# the install fails.
#   source "$here/needs_ort.sh" ORT_DIR
for tool in node gcc jq; do
  if ! command -v $tool > /dev/null; then
    echo "SKIP: $tool is not installed (make test-deps installs it)"
    exit 77
  fi
done
needs_ort_status=0
bash "$(dirname "${BASH_SOURCE[0]}")/install_ort.sh" "$1" || needs_ort_status=$?
[ $needs_ort_status -eq 0 ] || exit $needs_ort_status  # 77: the line install_ort.sh printed says why.
