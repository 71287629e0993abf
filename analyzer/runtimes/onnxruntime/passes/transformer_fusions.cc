// Two of ORT's level-2 fusions on the CPU provider that transformer blocks
// (ViT, SegFormer, BERT-like encoders as torch.onnx.export writes them)
// meet at every layer; each removes full-size activations:
//  - GeluFusion (core/optimizer/gelu_fusion.cc): Div(x, sqrt 2) -> Erf ->
//    Add(1) -> Mul with x -> Mul(0.5), or Mul(x, 0.5) times (Erf + 1), is one
//    com.microsoft Gelu reading x; the four tensors between never exist.
//    Its CPU kernel is float32 only (contrib_ops/cpu/activations.cc), so only
//    float32 chains are fused here; it does not run in place.
//  - MatMulScaleFusion (core/optimizer/matmul_scale_fusion.cc): a float32
//    MatMul's input that is a Mul or Div by a constant scalar, or its one
//    reader that is, folds into FusedMatMul's alpha: the scaled tensor never
//    exists (attention's q * scale or scores / sqrt(d), 1 x heads x N x N).
//    A MatMul whose one reader is an Add of a weight became a Gemm at level 1
//    (matmul_add_fusion.cc) and is left to that chain rule.
// Measured (ORT 1.30, AVX-512): the ViT-like model of
// bench/ground_truth/vision_models.py runs Gelu and FusedMatMul nodes
// (profile), and the probes vit_gelu_* and vit_scale_* of probe_models.py.
#include <cmath>
#include <cstdint>
#include <cstring>
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

bool IsFloat32(const IrGraph& graph, const PassContext& context, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, context, id);
  return shape.has_value() && shape->data_type == onnx::TensorProto::FLOAT;
}

// The value of a constant weight of one element whose rank is at most
// `max_rank` (ORT's GetScalarConstantInitializer), float or double.
std::optional<double> ScalarOf(const IrGraph& graph, const PassContext& context, ValueId id, size_t max_rank) {
  if (!IsConstantWeight(graph, context.rewrite, id)) return std::nullopt;
  const onnx::TensorProto* tensor = ConstantTensor(graph, id);
  if (tensor == nullptr || static_cast<size_t>(tensor->dims_size()) > max_rank) return std::nullopt;
  for (int64_t dim : tensor->dims()) {
    if (dim != 1) return std::nullopt;
  }
  const std::string& raw = tensor->raw_data();
  if (tensor->data_type() == onnx::TensorProto::FLOAT) {
    if (raw.size() == sizeof(float)) {
      float value;
      std::memcpy(&value, raw.data(), sizeof(value));
      return value;
    }
    if (raw.empty() && tensor->float_data_size() == 1) return tensor->float_data(0);
  }
  if (tensor->data_type() == onnx::TensorProto::DOUBLE) {
    if (raw.size() == sizeof(double)) {
      double value;
      std::memcpy(&value, raw.data(), sizeof(value));
      return value;
    }
    if (raw.empty() && tensor->double_data_size() == 1) return tensor->double_data(0);
  }
  return std::nullopt;
}

// ORT's IsInitializerWithExpectedValue: equal within float's tolerance.
bool IsScalarNear(const IrGraph& graph, const PassContext& context, ValueId id, double expected) {
  const std::optional<double> value = ScalarOf(graph, context, id, /*max_rank=*/8);
  return value.has_value() && std::abs(*value - expected) <= 1e-5 * std::abs(expected) + 1e-8;
}

// A new proto for `node` (ORT's fusions make a new node: Graph::AddNode,
// which execution_order.h numbers after the file's).
onnx::NodeProto& Remake(PassContext& context, IrNode& node, const char* op, const std::string& name) {
  auto proto = NewNodeProto(op, "com.microsoft", name, {}, {});
  node.display_name = name;
  return UseRuntimeProto(context.rewrite, node, std::move(proto));
}

// One GELU chain: the nodes that go, the node that becomes Gelu, x.
struct GeluChain {
  std::vector<NodeId> gone;
  NodeId last = -1;
  ValueId x = -1;
};

std::optional<GeluChain> MatchGelu(const IrGraph& graph, const PassContext& context,
                                   NodeId div_id) {
  const IrNode& div = graph.nodes[div_id];
  if (!IsOp(div, "Div") || div.inputs.size() != 2 || div.outputs.size() != 1) return std::nullopt;
  const ValueId x = div.inputs[0];
  // gelu_fusion.cc takes sqrt(2) and BERT's approximation 1.4142099618911743.
  if (!IsFloat32(graph, context, x) || (!IsScalarNear(graph, context, div.inputs[1], std::sqrt(2.0)) &&
                                         !IsScalarNear(graph, context, div.inputs[1], 1.4142099618911743))) {
    return std::nullopt;
  }
  const NodeId erf_id = SoleReader(graph, div.outputs[0]);
  if (erf_id < 0 || !IsOp(graph.nodes[erf_id], "Erf")) return std::nullopt;
  const IrNode& erf = graph.nodes[erf_id];
  const NodeId add_id = SoleReader(graph, erf.outputs[0]);
  if (add_id < 0 || !IsOp(graph.nodes[add_id], "Add") || graph.nodes[add_id].inputs.size() != 2) return std::nullopt;
  const IrNode& add = graph.nodes[add_id];
  const ValueId one = add.inputs[0] == erf.outputs[0] ? add.inputs[1] : add.inputs[0];
  if (!IsScalarNear(graph, context, one, 1.0)) return std::nullopt;
  const NodeId mul_id = SoleReader(graph, add.outputs[0]);
  if (mul_id < 0 || !IsOp(graph.nodes[mul_id], "Mul") || graph.nodes[mul_id].inputs.size() != 2) return std::nullopt;
  const IrNode& mul = graph.nodes[mul_id];
  const ValueId other = mul.inputs[0] == add.outputs[0] ? mul.inputs[1] : mul.inputs[0];
  const NodeId other_producer = graph.values[other].producer;
  if (other_producer >= 0 && IsOp(graph.nodes[other_producer], "Mul")) {
    // x * 0.5 first (pattern 1): that Mul read by this one only.
    const IrNode& half = graph.nodes[other_producer];
    if (half.inputs.size() != 2 || SoleReader(graph, other) != mul_id) return std::nullopt;
    const int x_slot = half.inputs[0] == x ? 0 : half.inputs[1] == x ? 1 : -1;
    if (x_slot < 0 || !IsScalarNear(graph, context, half.inputs[1 - x_slot], 0.5)) return std::nullopt;
    return GeluChain{.gone = {div_id, erf_id, add_id, other_producer}, .last = mul_id, .x = x};
  }
  // x * (Erf + 1), then * 0.5 (pattern 2, torch.onnx.export's).
  if (other != x) return std::nullopt;
  const NodeId half_id = SoleReader(graph, mul.outputs[0]);
  if (half_id < 0 || !IsOp(graph.nodes[half_id], "Mul") || graph.nodes[half_id].inputs.size() != 2) {
    return std::nullopt;
  }
  const IrNode& half = graph.nodes[half_id];
  const ValueId constant = half.inputs[0] == mul.outputs[0] ? half.inputs[1] : half.inputs[0];
  if (!IsScalarNear(graph, context, constant, 0.5)) return std::nullopt;
  return GeluChain{.gone = {div_id, erf_id, add_id, mul_id}, .last = half_id, .x = x};
}

// The input of a Mul or Div by a constant scalar that it scales, or -1
// (matmul_scale_fusion.cc, GetScaleFromNode: a Div's divisor is input 1; the
// scalar's rank is at most the other input's).
ValueId ScaledInput(const IrGraph& graph, const PassContext& context,
                    const IrNode& node) {
  const bool is_div = IsOp(node, "Div");
  if ((!is_div && !IsOp(node, "Mul")) || node.inputs.size() != 2 || node.outputs.size() != 1) return -1;
  for (int scale_slot = is_div ? 1 : 0; scale_slot < 2; ++scale_slot) {
    const ValueId other = node.inputs[1 - scale_slot];
    const std::optional<ValueShape> shape = ShapeOfValue(graph, context, other);
    if (!shape.has_value() || shape->dims.empty()) continue;  // A scalar is no MatMul operand.
    if (ScalarOf(graph, context, node.inputs[scale_slot], shape->dims.size()).has_value()) return other;
  }
  return -1;
}

// Fuses each float32 Erf-form GELU into one com.microsoft Gelu node (a new
// proto, on the last Mul) that reads x and writes the last Mul's output; the
// values between become kFusedAway.
PassChange FuseGelu(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  bool any = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (removed[id]) continue;
    const std::optional<GeluChain> chain = MatchGelu(graph, context, static_cast<NodeId>(id));
    if (!chain.has_value() || removed[chain->last]) continue;
    bool taken = false;
    for (NodeId node : chain->gone) taken = taken || removed[node];
    IrNode& last = graph.nodes[chain->last];
    if (taken || !IsFloat32(graph, context, last.outputs[0])) continue;
    onnx::NodeProto& gelu = Remake(context, last, "Gelu", "GeluFusion/" + last.display_name);
    gelu.add_input(graph.values[chain->x].name);
    gelu.add_output(graph.values[last.outputs[0]].name);
    last.inputs = {chain->x};
    for (NodeId node : chain->gone) {
      MarkFusedAway(graph, context.rewrite, graph.nodes[node].outputs[0]);
      removed[node] = true;
      ++change.fused_nodes;
    }
    any = true;
  }
  if (!any) return change;
  RemoveNodes(removed, graph);
  RelinkValues(graph);
  return change;
}

// Folds Mul / Div by constant scalars around float32 MatMuls into a
// com.microsoft FusedMatMul (a new proto on the MatMul): the MatMul reads the
// unscaled input (the scaling node goes when the MatMul was its only reader)
// and writes its scaling reader's output.
PassChange FuseMatMulScale(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  bool any = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    IrNode& matmul = graph.nodes[id];
    if (removed[id] || !IsOp(matmul, "MatMul") || matmul.inputs.size() != 2 || matmul.outputs.size() != 1 ||
        !IsFloat32(graph, context, matmul.inputs[0]) || !IsFloat32(graph, context, matmul.inputs[1])) {
      continue;
    }
    const NodeId reader = SoleReader(graph, matmul.outputs[0]);
    if (reader >= 0 && IsOp(graph.nodes[reader], "Add") && graph.nodes[reader].inputs.size() == 2) {
      const IrNode& add = graph.nodes[reader];
      const ValueId bias = add.inputs[0] == matmul.outputs[0] ? add.inputs[1] : add.inputs[0];
      if (IsConstantWeight(graph, context.rewrite, bias)) continue;  // A Gemm since level 1.
    }
    std::vector<ValueId> inputs = matmul.inputs;
    std::vector<NodeId> gone;
    for (ValueId& input : inputs) {
      const NodeId producer = graph.values[input].producer;
      if (producer < 0 || removed[producer]) continue;
      const ValueId unscaled = ScaledInput(graph, context, graph.nodes[producer]);
      if (unscaled < 0) continue;
      // The scaling node goes when this MatMul was its output's only reader.
      if (SoleReader(graph, input) == static_cast<NodeId>(id)) gone.push_back(producer);
      input = unscaled;
    }
    NodeId scaled_output = -1;
    if (reader >= 0 && !removed[reader] &&
        ScaledInput(graph, context, graph.nodes[reader]) == matmul.outputs[0]) {
      scaled_output = reader;
    }
    if (inputs == matmul.inputs && scaled_output < 0) continue;
    onnx::NodeProto& fused = Remake(context, matmul, "FusedMatMul", matmul.display_name + "/MatMulScaleFusion/");
    for (ValueId input : inputs) fused.add_input(graph.values[input].name);
    for (NodeId node : gone) {
      MarkFusedAway(graph, context.rewrite, graph.nodes[node].outputs[0]);
      removed[node] = true;
      ++change.fused_nodes;
    }
    matmul.inputs = inputs;
    if (scaled_output >= 0) {
      MarkFusedAway(graph, context.rewrite, matmul.outputs[0]);
      matmul.outputs = graph.nodes[scaled_output].outputs;
      removed[scaled_output] = true;
      ++change.fused_nodes;
    }
    fused.add_output(graph.values[matmul.outputs[0]].name);
    any = true;
  }
  if (!any) return change;
  RemoveNodes(removed, graph);
  RelinkValues(graph);
  return change;
}

}  // namespace

const Pass kGeluFusion = {
    .name = "GeluFusion", .stage = OrtStage::kLevel2, .source = "core/optimizer/gelu_fusion.cc", .apply = &FuseGelu};

const Pass kMatMulScaleFusion = {.name = "MatMulScaleFusion",
                                 .stage = OrtStage::kLevel2,
                                 .source = "core/optimizer/matmul_scale_fusion.cc",
                                 .apply = &FuseMatMulScale};

}  // namespace footprint::ort
