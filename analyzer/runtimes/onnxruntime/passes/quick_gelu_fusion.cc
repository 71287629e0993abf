// ORT's QuickGeluFusion (core/optimizer/quick_gelu_fusion.cc, a level-2 pass
// on the CPU provider): x * Sigmoid(x), the SiLU or Swish of every YOLO,
// EfficientNet and Llama MLP, and x * Sigmoid(alpha * x) with alpha a
// constant scalar, become one com.microsoft QuickGelu node. The Sigmoid's
// output (and the alpha Mul's) never exists: at a SiLU, ORT holds the input
// and the output where the unfused pair holds three tensors. Measured (ORT
// 1.30, AVX-512, 1 MiB probes): Neg -> SiLU -> Neg and Conv -> SiLU -> Conv
// peak at three tensors, not four; a Sigmoid read by another node too is
// not fused.
//
// QuickGelu's CPU kernel is float32 only (the contrib registration), so
// only float32 pairs are fused: a float16 SiLU is fused when the Casts made
// it float32 and ORT runs level 2 again after them (fp16_casts.cc; measured:
// the float16 copies of the YOLO-shaped detectors run QuickGelu nodes).
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

constexpr int32_t kFloat = 1;  // TensorProto.FLOAT.

// A constant weight of one element (ORT's IsScalar and
// GetConstantInitializer): the alpha of x * Sigmoid(alpha * x).
bool IsScalarConstant(const IrGraph& graph, const PassContext& context, ValueId id) {
  if (!IsConstantWeight(graph, context.rewrite, id)) return false;
  const std::optional<ValueShape> shape = ShapeOfValue(graph, context, id);
  if (!shape.has_value() || shape->dims.size() > 1) return false;
  return shape->dims.empty() || shape->dims[0] == 1;
}

// A value is float32 by the element type the Casts hold it in (HeldValue::
// data_type) when set, else by the model.
bool IsFloat32(const IrGraph& graph, const PassContext& context, ValueId id) {
  const int32_t held = HeldAs(context.rewrite, id).data_type;
  if (held != 0) return held == kFloat;
  const std::optional<ValueShape> shape = ShapeOfValue(graph, context, id);
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
std::optional<QuickGelu> MatchAt(const IrGraph& graph, const PassContext& context, NodeId sigmoid) {
  const IrNode& sig = graph.nodes[sigmoid];
  if (!IsOp(sig, "Sigmoid") || sig.inputs.size() != 1 || sig.outputs.size() != 1) return std::nullopt;
  QuickGelu match{.sigmoid = sigmoid, .x = sig.inputs[0]};
  const NodeId producer = graph.values[match.x].producer;
  if (producer >= 0 && IsOp(graph.nodes[producer], "Mul") && graph.nodes[producer].inputs.size() == 2 &&
      SoleReader(graph, match.x) == sigmoid) {
    const IrNode& scale = graph.nodes[producer];
    for (int i = 0; i < 2; ++i) {
      if (IsScalarConstant(graph, context, scale.inputs[i])) {
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
  if (other != match.x || !IsFloat32(graph, context, match.x) || !IsFloat32(graph, context, mul.outputs[0])) {
    return std::nullopt;
  }
  return match;
}

// Fuses each float32 [Mul(x, alpha) ->] Sigmoid -> Mul(x, .) whose Sigmoid
// (and alpha Mul) has that one reader into a QuickGelu node (a new proto)
// that writes the last Mul's output; the values between become kFusedAway.
PassChange FuseQuickGelu(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (removed[id]) continue;
    const std::optional<QuickGelu> match = MatchAt(graph, context, static_cast<NodeId>(id));
    if (!match.has_value() || removed[match->mul] || (match->alpha_mul >= 0 && removed[match->alpha_mul])) continue;
    IrNode& mul = graph.nodes[match->mul];
    auto proto = NewNodeProto("QuickGelu", "com.microsoft", "QuickGeluFusion/" + mul.display_name,
                              {graph.values[match->x].name}, {graph.values[mul.outputs[0]].name});
    mul.display_name = proto->name();
    mul.inputs = {match->x};
    UseRuntimeProto(context.rewrite, mul, std::move(proto));
    MarkFusedAway(graph, context.rewrite, graph.nodes[match->sigmoid].outputs[0]);
    if (match->alpha_mul >= 0) MarkFusedAway(graph, context.rewrite, graph.nodes[match->alpha_mul].outputs[0]);
    removed[match->sigmoid] = true;
    ++change.fused_nodes;
    if (match->alpha_mul >= 0) {
      removed[match->alpha_mul] = true;
      ++change.fused_nodes;
    }
  }
  if (change.fused_nodes == 0) return change;
  RemoveNodes(removed, graph);
  RelinkValues(graph);
  return change;
}

}  // namespace

const Pass kQuickGeluFusion = {.name = "QuickGeluFusion",
                               .stage = OrtStage::kLevel2,
                               .source = "core/optimizer/quick_gelu_fusion.cc",
                               .apply = &FuseQuickGelu};

}  // namespace footprint::ort
