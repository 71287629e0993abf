// The initializers a caller may override, and the dims ORT then cannot
// infer (overridable_initializers.h).
#include "analyzer/runtimes/onnxruntime/passes/overridable_initializers.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

std::vector<bool> OverridableInitializers(int64_t ir_version, const IrGraph& graph) {
  std::vector<bool> overridable;
  if (ir_version < 4) return overridable;
  overridable.assign(graph.values.size(), false);
  for (const onnx::ValueInfoProto& input : graph.proto->input()) {
    auto it = graph.value_by_name.find(input.name());
    if (it != graph.value_by_name.end() && graph.values[it->second].origin == ValueOrigin::kInitializer) {
      overridable[it->second] = true;
    }
  }
  return overridable;
}

namespace {

// A Reshape's stored target dims name every dim (no 0 to copy, no -1 to
// infer): its output's dims are known whatever its input's are.
bool ReshapesToStoredDims(const IrGraph& graph, const GraphRewrite& rewrite, const IrNode& node) {
  if (!IsDefaultDomain(*node.proto) || node.proto->op_type() != "Reshape" || node.inputs.size() < 2) return false;
  const ValueId shape = node.inputs[1];
  if (!IsConstantWeight(graph, rewrite, shape) || graph.values[shape].origin != ValueOrigin::kInitializer) return false;
  const onnx::TensorProto& tensor = *graph.values[shape].initializer;
  if (tensor.data_type() != onnx::TensorProto::INT64) return false;
  std::vector<int64_t> dims(tensor.int64_data().begin(), tensor.int64_data().end());
  if (dims.empty() && tensor.has_raw_data()) {
    dims.resize(tensor.raw_data().size() / sizeof(int64_t));
    std::memcpy(dims.data(), tensor.raw_data().data(), dims.size() * sizeof(int64_t));
  }
  return !dims.empty() && std::all_of(dims.begin(), dims.end(), [](int64_t dim) { return dim > 0; });
}

// The first input whose data (not only its dims) sizes the op's output in
// ONNX's shape inference; -1 for an op sized by dims alone.
int FirstDataInput(const onnx::NodeProto& node) {
  if (!IsDefaultDomain(node)) return -1;
  const std::string& op = node.op_type();
  if (op == "ConstantOfShape" || op == "Range") return 0;
  if (op == "Slice" || op == "Reshape" || op == "Expand" || op == "Tile" || op == "Pad" || op == "Resize" ||
      op == "Upsample" || op == "OneHot" || op == "TopK" || op == "Unsqueeze" || op == "Squeeze" || op == "Split" ||
      op.rfind("Reduce", 0) == 0) {
    return 1;
  }
  return -1;
}

// Ops whose output takes its dims from input 0 alone (ONNX's
// propagateShapeAndTypeFromFirstInput and the like): a hidden scale or
// zero point does not hide the output.
bool SizedByFirstInput(const onnx::NodeProto& node) {
  if (!IsDefaultDomain(node)) return false;
  const std::string& op = node.op_type();
  return op == "BatchNormalization" || op == "InstanceNormalization" || op == "LayerNormalization" ||
         op == "QuantizeLinear" || op == "DequantizeLinear" || op == "PRelu" || op == "Dropout" || op == "Clip";
}

// The values the file itself gives every dim of (value_info, graph outputs).
absl::flat_hash_set<std::string_view> DeclaredStatic(const onnx::GraphProto* file_graph) {
  absl::flat_hash_set<std::string_view> names;
  if (file_graph == nullptr) return names;
  for (const auto* infos : {&file_graph->value_info(), &file_graph->output()}) {
    for (const onnx::ValueInfoProto& info : *infos) {
      if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) continue;
      const onnx::TensorShapeProto& shape = info.type().tensor_type().shape();
      bool all_values = true;
      for (const onnx::TensorShapeProto::Dimension& dim : shape.dim()) all_values = all_values && dim.has_dim_value();
      if (all_values) names.insert(info.name());
    }
  }
  return names;
}

// ORT's shape inference takes only constant initializers as data
// (graph.cc, InferenceContextImpl::getInputData: GetConstantInitializer; no
// partial data propagation): an op sized by the data of an overridable
// initializer (graph inputs too), such as a Slice's bounds, a Reshape's
// shape or a ConstantOfShape's shape, gets an output of unknown dims, and so
// does every node whose output dims follow from a value of unknown dims, up
// to a Reshape to stored dims or a value whose dims the file itself gives
// (value_info, graph outputs: ORT keeps the file's shape where its
// inference has none). Its planner never hands such a value a freed buffer
// nor its buffer to another (allocation_planner.cc: SameSize needs known
// dims): each is freed at its last use. fit --emit-model writes the
// patches so (patching/rewrite.h). Measured: the generated ResNet-50
// patched 3x3 (written by main before this: 8,620,408; with overridable
// bounds 4,852,840); QDQ copies of light_* models whose weights are
// ConstantOfShape of overridable shapes, with no value_info
// (light_resnet50 1.771 -> 0.998 of ORT); the fp16 copy with value_info
// for every value keeps its reuse (1.000).
PassChange MarkShapesOrtCannotInfer(IrGraph& graph, PassContext& context) {
  const GraphRewrite& rewrite = context.rewrite;
  if (rewrite.overridable.empty()) return {};
  const absl::flat_hash_set<std::string_view> declared_static = DeclaredStatic(context.model.file_graph);
  // Only what these ops hide: other values without a planner shape (an
  // inlined body's) end where their own rule says.
  std::vector<bool> hidden(graph.values.size(), false);
  auto is_hidden = [&](ValueId id) { return id >= 0 && id < static_cast<ValueId>(hidden.size()) && hidden[id]; };
  for (const IrNode& node : graph.nodes) {
    const int first_data = FirstDataInput(*node.proto);
    const size_t dims_from = SizedByFirstInput(*node.proto) ? 1 : node.inputs.size();
    bool unknown = false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ValueId input = node.inputs[i];
      if (i < dims_from) unknown = unknown || is_hidden(input);
      unknown = unknown || (first_data >= 0 && static_cast<int>(i) >= first_data && IsOverridable(rewrite, input));
    }
    if (!unknown || ReshapesToStoredDims(graph, rewrite, node)) continue;
    for (ValueId output : node.outputs) {
      if (output >= static_cast<ValueId>(hidden.size()) || declared_static.contains(graph.values[output].name)) continue;
      hidden[output] = true;
      MutableHeld(graph, context.rewrite, output).planner_shape = PlannerShape::kUnknown;
    }
  }
  return {};
}

PassChange FindOverridableInitializers(IrGraph& graph, PassContext& context) {
  context.rewrite.overridable = OverridableInitializers(context.model.ir_version, graph);
  return {};
}

}  // namespace

const Pass kOverridableInitializers = {.name = "overridable initializers (also graph inputs)",
                                       .stage = OrtStage::kLoad,
                                       .source = "core/graph/graph.cc (CanOverrideInitializer)",
                                       .apply = &FindOverridableInitializers};

const Pass kShapesOrtCannotInfer = {.name = "no static shape behind an overridable initializer",
                                    .stage = OrtStage::kSessionState,
                                    .source = "core/graph/graph.cc (InferenceContextImpl::getInputData)",
                                    .apply = &MarkShapesOrtCannotInfer};

}  // namespace footprint::ort
