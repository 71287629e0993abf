// libFuzzer target: bytes -> loader -> the whole analysis.
//
// Why: the analyzer parses files from strangers inside CI pipelines; any
// input must end in a report or a clear error, never a crash or a hang.
// Build with `make fuzz` (clang, ASan + UBSan); crashing inputs go to
// testdata/fuzz_regressions/, which robustness_test replays.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/time/time.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<footprint::LoadedModel> loaded = footprint::LoadModelFromBytes(bytes, "/nonexistent");
  if (!loaded.ok()) return 0;
  footprint::AnalyzeOptions options;
  options.planner_time_limit = absl::Milliseconds(1);  // A token search: the fuzzer wants many runs.
  // ONNX's inference runs in a forked child (slow under the fuzzer, and its
  // crashes are contained there): one input in eight takes that path, the
  // others exercise our own code on the shapes stored in the file.
  options.onnx_shape_inference = size > 0 && data[size - 1] % 8 == 0;
  absl::StatusOr<footprint::Analysis> analysis = footprint::AnalyzeModel(*loaded, options);
  if (!analysis.ok()) return 0;
  // Rendering reads every field: it must not trip on anything the analysis produced.
  const std::string text = footprint::RenderText(*analysis);
  const std::string json = footprint::RenderJson(*analysis);
  return text.empty() || json.empty() ? 0 : 0;
}
