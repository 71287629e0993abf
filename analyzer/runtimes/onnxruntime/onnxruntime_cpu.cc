// onnxruntime-cpu as a RuntimeModel (onnxruntime_cpu.h): each hook is one of
// this folder's rules.
#include "analyzer/runtimes/onnxruntime/onnxruntime_cpu.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "analyzer/runtimes/onnxruntime/runtime_buffers.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"

namespace footprint {
namespace {

class OnnxRuntimeCpu : public RuntimeModel {
 public:
  std::string name() const override { return std::string(kOnnxRuntimeCpuName); }

  FusionSummary RewriteGraph(int64_t ir_version, const ShapeLookup& shape_of, IrGraph& graph) const override {
    return ort::ApplyRewrites(ir_version, shape_of, graph);
  }

  bool RunsInPlace(const onnx::NodeProto& node) const override { return ort::RunsInPlace(node); }

  int64_t KernelWorkspaceBytes(const IrGraph& graph, const FusionSummary& fusions, const IrNode& node,
                               const TensorLookup& tensor_of) const override {
    return ort::KernelWorkspaceBytes(graph, fusions, node, tensor_of);
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
};

}  // namespace

absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeOnnxRuntimeCpu(const std::vector<std::string>& options) {
  if (!options.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kOnnxRuntimeCpuName, " takes no option, got '", options.front(), "'"));
  }
  return std::unique_ptr<const RuntimeModel>(std::make_unique<OnnxRuntimeCpu>());
}

}  // namespace footprint
