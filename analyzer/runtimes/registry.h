// The runtimes --runtime knows, and the one model the analysis uses for a
// given --runtime value: NAME, or NAME:OPTION[,OPTION...] where each runtime
// says which options it takes (a target ISA, a configuration).
//
// Usage:
//   absl::StatusOr<std::unique_ptr<const RuntimeModel>> runtime = MakeRuntimeModel("onnxruntime-cpu");
//   if (!runtime.ok()) return runtime.status();  // "must be one of onnxruntime-cpu, got 'tflite'"
//   // *runtime is nullptr for "": the runtime-independent plan.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_REGISTRY_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint {

// The names --runtime takes, in the order --help lists them.
std::vector<std::string> KnownRuntimes();

// A --runtime value split into its runtime's name and its options.
struct RuntimeSpec {
  std::string name;                  // "onnxruntime-cpu".
  std::vector<std::string> options;  // What follows the ':', split at ','; empty when none.
};

// "onnxruntime-cpu:avx2,noarena" -> {onnxruntime-cpu, {avx2, noarena}}.
// Errors: an empty option ("NAME:" or "a,,b"). The name is not checked.
absl::StatusOr<RuntimeSpec> ParseRuntimeSpec(const std::string& text);

// The model of the runtime `text` names with its options; nullptr for "".
// Errors are InvalidArgument with a message that reads after "--runtime ":
// "must be one of onnxruntime-cpu, got 'tflite'", or the runtime's own
// message for an option it does not take.
absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeRuntimeModel(const std::string& text);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_REGISTRY_H_
