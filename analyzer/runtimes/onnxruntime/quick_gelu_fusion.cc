// ORT's QuickGeluFusion on float32 SiLU / Swish pairs (quick_gelu_fusion.h).
#include "analyzer/runtimes/onnxruntime/quick_gelu_fusion.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

constexpr int32_t kFloat = 1;  // TensorProto.FLOAT.

bool IsOp(const IrNode& node, const char* op) {
  return IsDefaultDomain(*node.proto) && node.proto->op_type() == op;
}

// The node that alone reads `value`, or -1 (a graph output, no reader or
// several).
NodeId SoleReader(const IrGraph& graph, ValueId value) {
  const IrValue& v = graph.values[value];
  return v.is_graph_output || v.consumers.size() != 1 ? -1 : v.consumers[0];
}

// A constant weight of one element (ORT's IsScalar and
// GetConstantInitializer): the alpha of x * Sigmoid(alpha * x).
bool IsScalarConstant(const IrGraph& graph, const ShapeLookup& shape_of, const FusionSummary& summary, ValueId id) {
  if (!IsConstantWeight(graph, summary, id)) return false;
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
  if (!shape.has_value() || shape->dims.size() > 1) return false;
  return shape->dims.empty() || shape->dims[0] == 1;
}

bool IsFloat32(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  if (graph.values[id].runtime_data_type != 0) return graph.values[id].runtime_data_type == kFloat;
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
  return shape.has_value() && shape->data_type == kFloat;
}

// One match: the nodes fused (the alpha Mul, if any, the Sigmoid, the last
// Mul) and x.
struct QuickGelu {
  NodeId alpha_mul = -1;  // Mul(x, alpha), or -1 for x * Sigmoid(x).
  NodeId sigmoid = -1;    // Its output read by the last Mul only.
  NodeId mul = -1;        // Mul(x, sigmoid): its output is QuickGelu's.
  ValueId x = -1;         // The input.
};

// The match that starts at `sigmoid`, or nullopt.
std::optional<QuickGelu> MatchAt(const IrGraph& graph, const ShapeLookup& shape_of, const FusionSummary& summary,
                                 NodeId sigmoid) {
  const IrNode& sig = graph.nodes[sigmoid];
  if (!IsOp(sig, "Sigmoid") || sig.inputs.size() != 1 || sig.outputs.size() != 1) return std::nullopt;
  QuickGelu match{.sigmoid = sigmoid, .x = sig.inputs[0]};
  const NodeId producer = graph.values[match.x].producer;
  if (producer >= 0 && IsOp(graph.nodes[producer], "Mul") && graph.nodes[producer].inputs.size() == 2 &&
      SoleReader(graph, match.x) == sigmoid) {
    const IrNode& scale = graph.nodes[producer];
    for (int i = 0; i < 2; ++i) {
      if (IsScalarConstant(graph, shape_of, summary, scale.inputs[i])) {
        match.alpha_mul = producer;
        match.x = scale.inputs[1 - i];
        break;
      }
    }
  }
  match.mul = SoleReader(graph, sig.outputs[0]);
  if (match.mul < 0) return std::nullopt;
  const IrNode& mul = graph.nodes[match.mul];
  if (!IsOp(mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) return std::nullopt;
  const ValueId other = mul.inputs[0] == sig.outputs[0] ? mul.inputs[1] : mul.inputs[0];
  if (other != match.x || !IsFloat32(graph, shape_of, match.x) || !IsFloat32(graph, shape_of, mul.outputs[0])) {
    return std::nullopt;
  }
  return match;
}

}  // namespace

void FuseQuickGelu(const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph, std::vector<bool>* per_node) {
  std::vector<bool> removed(graph.nodes.size(), false);
  bool any = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (removed[id]) continue;
    const std::optional<QuickGelu> match = MatchAt(graph, shape_of, summary, static_cast<NodeId>(id));
    if (!match.has_value() || removed[match->mul] || (match->alpha_mul >= 0 && removed[match->alpha_mul])) continue;
    IrNode& mul = graph.nodes[match->mul];
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("QuickGelu");
    proto->set_domain("com.microsoft");
    proto->set_name("QuickGeluFusion/" + mul.display_name);
    proto->add_input(graph.values[match->x].name);
    proto->add_output(graph.values[mul.outputs[0]].name);
    mul.display_name = proto->name();
    mul.inputs = {match->x};
    UseRuntimeProto(graph, mul, std::move(proto));
    MarkFusedAway(graph, summary, graph.nodes[match->sigmoid].outputs[0]);
    if (match->alpha_mul >= 0) MarkFusedAway(graph, summary, graph.nodes[match->alpha_mul].outputs[0]);
    removed[match->sigmoid] = true;
    ++summary.fused_nodes;
    if (match->alpha_mul >= 0) {
      removed[match->alpha_mul] = true;
      ++summary.fused_nodes;
    }
    any = true;
  }
  if (!any) return;
  if (per_node != nullptr) {
    std::vector<bool> kept;
    for (size_t id = 0; id < removed.size(); ++id) {
      if (!removed[id]) kept.push_back((*per_node)[id]);
    }
    *per_node = std::move(kept);
  }
  RemoveNodes(removed, graph);
  RelinkValues(graph);
}

}  // namespace footprint::ort
