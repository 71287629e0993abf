// The runtimes --runtime knows (registry.h): each one's folder gives a
// factory that takes the options of its --runtime value.
#include "analyzer/runtimes/registry.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "analyzer/runtimes/onnxruntime/onnxruntime_cpu.h"

namespace footprint {

std::vector<std::string> KnownRuntimes() { return {std::string(kOnnxRuntimeCpuName)}; }

absl::StatusOr<RuntimeSpec> ParseRuntimeSpec(const std::string& text) {
  RuntimeSpec spec;
  const size_t colon = text.find(':');
  spec.name = text.substr(0, colon);
  if (colon == std::string::npos) return spec;
  for (absl::string_view option : absl::StrSplit(absl::string_view(text).substr(colon + 1), ',')) {
    if (option.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("has an empty option in '", text, "'"));
    }
    spec.options.emplace_back(option);
  }
  return spec;
}

absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeRuntimeModel(const std::string& text) {
  if (text.empty()) return std::unique_ptr<const RuntimeModel>();
  absl::StatusOr<RuntimeSpec> spec = ParseRuntimeSpec(text);
  if (!spec.ok()) return spec.status();
  if (spec->name == kOnnxRuntimeCpuName) return MakeOnnxRuntimeCpu(spec->options);
  return absl::InvalidArgumentError(
      absl::StrCat("must be one of ", absl::StrJoin(KnownRuntimes(), ", "), ", got '", text, "'"));
}

}  // namespace footprint
