// onnxruntime-cpu as a RuntimeModel (onnxruntime_cpu.h): each hook is one of
// this folder's rules.
#include "analyzer/runtimes/onnxruntime/onnxruntime_cpu.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/runtime_buffers.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"

namespace footprint {
namespace {

class OnnxRuntimeCpu : public RuntimeModel {
 public:
  explicit OnnxRuntimeCpu(ort::CpuIsa isa) : isa_(isa) {}

  std::string name() const override { return std::string(kOnnxRuntimeCpuName); }

  std::string isa() const override { return std::string(ort::CpuIsaName(isa_)); }

  FusionSummary RewriteGraph(int64_t ir_version, const ShapeLookup& shape_of, IrGraph& graph) const override {
    return ort::ApplyRewrites(isa_, ir_version, shape_of, graph);
  }

  bool RunsInPlace(const onnx::NodeProto& node) const override { return ort::RunsInPlace(node); }

  int64_t KernelWorkspaceBytes(const IrGraph& graph, const FusionSummary& fusions, const IrNode& node,
                               const TensorLookup& tensor_of) const override {
    return ort::KernelWorkspaceBytes(isa_, graph, fusions, node, tensor_of);
  }

  int64_t TensorPeakBytes(const IrGraph& graph, const std::vector<NodeId>& order,
                          const std::vector<RuntimeValue>& values, const std::vector<ValueId>& writes_over,
                          const std::vector<int64_t>& step_extra_of) const override {
    return ort::TensorPeakBytes(graph, order, values, writes_over, step_extra_of);
  }

  int64_t OverheadBytes(int64_t tensor_bytes, int64_t input_bytes, int64_t output_bytes,
                        int64_t bindings) const override {
    return ort::RunOverheadBytes(tensor_bytes, input_bytes, output_bytes, bindings);
  }

 private:
  const ort::CpuIsa isa_;  // Named in the option, or the host's.
};

}  // namespace

absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeOnnxRuntimeCpu(const std::vector<std::string>& options) {
  std::optional<ort::CpuIsa> isa;
  for (const std::string& option : options) {
    std::optional<ort::CpuIsa> named = ort::ParseCpuIsa(option);
    if (!named.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(kOnnxRuntimeCpuName, " takes an ISA, one of ",
                                                     absl::StrJoin(ort::KnownCpuIsaNames(), ", "), ", got '",
                                                     option, "'"));
    }
    if (isa.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(kOnnxRuntimeCpuName, " takes one ISA, got '",
                                                     ort::CpuIsaName(*isa), "' and '", option, "'"));
    }
    isa = named;
  }
  if (!isa.has_value()) {  // Plain onnxruntime-cpu: the machine this runs on, as ORT's MLAS picks.
    absl::StatusOr<ort::CpuIsa> host = ort::HostCpuIsa();
    if (!host.ok()) return absl::InvalidArgumentError(absl::StrCat(kOnnxRuntimeCpuName, ": ", host.status().message()));
    isa = *host;
  }
  return std::unique_ptr<const RuntimeModel>(std::make_unique<OnnxRuntimeCpu>(*isa));
}

}  // namespace footprint
