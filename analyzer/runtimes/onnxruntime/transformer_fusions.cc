// ORT's GeluFusion and MatMulScaleFusion on float32 graphs (transformer_fusions.h).
#include "analyzer/runtimes/onnxruntime/transformer_fusions.h"

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
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

bool IsOp(const IrNode& node, const char* op) {
  return IsDefaultDomain(*node.proto) && node.proto->op_type() == op;
}

// The node that alone reads `value`, or -1 (a graph output, no reader or
// several): ORT's CheckOutputEdges(node, 1).
NodeId SoleReader(const IrGraph& graph, ValueId value) {
  const IrValue& v = graph.values[value];
  return v.is_graph_output || v.consumers.size() != 1 ? -1 : v.consumers[0];
}

bool IsFloat32(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
  return shape.has_value() && shape->data_type == onnx::TensorProto::FLOAT;
}

// The value of a constant weight of one element whose rank is at most
// `max_rank` (ORT's GetScalarConstantInitializer), float or double.
std::optional<double> ScalarOf(const IrGraph& graph, const FusionSummary& summary, ValueId id, size_t max_rank) {
  if (!IsConstantWeight(graph, summary, id)) return std::nullopt;
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
bool IsScalarNear(const IrGraph& graph, const FusionSummary& summary, ValueId id, double expected) {
  const std::optional<double> value = ScalarOf(graph, summary, id, /*max_rank=*/8);
  return value.has_value() && std::abs(*value - expected) <= 1e-5 * std::abs(expected) + 1e-8;
}

// A new proto for `node` (ORT's fusions make a new node: Graph::AddNode,
// which execution_order.h numbers after the file's).
onnx::NodeProto& Remake(IrGraph& graph, IrNode& node, const char* op, const std::string& name) {
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_op_type(op);
  proto->set_domain("com.microsoft");
  proto->set_name(name);
  node.display_name = name;
  return UseRuntimeProto(graph, node, std::move(proto));
}

// One GELU chain: the nodes that go, the node that becomes Gelu, x.
struct GeluChain {
  std::vector<NodeId> gone;
  NodeId last = -1;
  ValueId x = -1;
};

std::optional<GeluChain> MatchGelu(const IrGraph& graph, const ShapeLookup& shape_of, const FusionSummary& summary,
                                   NodeId div_id) {
  const IrNode& div = graph.nodes[div_id];
  if (!IsOp(div, "Div") || div.inputs.size() != 2 || div.outputs.size() != 1) return std::nullopt;
  const ValueId x = div.inputs[0];
  // gelu_fusion.cc takes sqrt(2) and BERT's approximation 1.4142099618911743.
  if (!IsFloat32(graph, shape_of, x) || (!IsScalarNear(graph, summary, div.inputs[1], std::sqrt(2.0)) &&
                                         !IsScalarNear(graph, summary, div.inputs[1], 1.4142099618911743))) {
    return std::nullopt;
  }
  const NodeId erf_id = SoleReader(graph, div.outputs[0]);
  if (erf_id < 0 || !IsOp(graph.nodes[erf_id], "Erf")) return std::nullopt;
  const IrNode& erf = graph.nodes[erf_id];
  const NodeId add_id = SoleReader(graph, erf.outputs[0]);
  if (add_id < 0 || !IsOp(graph.nodes[add_id], "Add") || graph.nodes[add_id].inputs.size() != 2) return std::nullopt;
  const IrNode& add = graph.nodes[add_id];
  const ValueId one = add.inputs[0] == erf.outputs[0] ? add.inputs[1] : add.inputs[0];
  if (!IsScalarNear(graph, summary, one, 1.0)) return std::nullopt;
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
    if (x_slot < 0 || !IsScalarNear(graph, summary, half.inputs[1 - x_slot], 0.5)) return std::nullopt;
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
  if (!IsScalarNear(graph, summary, constant, 0.5)) return std::nullopt;
  return GeluChain{.gone = {div_id, erf_id, add_id, mul_id}, .last = half_id, .x = x};
}

// The input of a Mul or Div by a constant scalar that it scales, or -1
// (matmul_scale_fusion.cc, GetScaleFromNode: a Div's divisor is input 1; the
// scalar's rank is at most the other input's).
ValueId ScaledInput(const IrGraph& graph, const ShapeLookup& shape_of, const FusionSummary& summary,
                    const IrNode& node) {
  const bool is_div = IsOp(node, "Div");
  if ((!is_div && !IsOp(node, "Mul")) || node.inputs.size() != 2 || node.outputs.size() != 1) return -1;
  for (int scale_slot = is_div ? 1 : 0; scale_slot < 2; ++scale_slot) {
    const ValueId other = node.inputs[1 - scale_slot];
    const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, other);
    if (!shape.has_value() || shape->dims.empty()) continue;  // A scalar is no MatMul operand.
    if (ScalarOf(graph, summary, node.inputs[scale_slot], shape->dims.size()).has_value()) return other;
  }
  return -1;
}

}  // namespace

void FuseGelu(const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph) {
  std::vector<bool> removed(graph.nodes.size(), false);
  bool any = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (removed[id]) continue;
    const std::optional<GeluChain> chain = MatchGelu(graph, shape_of, summary, static_cast<NodeId>(id));
    if (!chain.has_value() || removed[chain->last]) continue;
    bool taken = false;
    for (NodeId node : chain->gone) taken = taken || removed[node];
    IrNode& last = graph.nodes[chain->last];
    if (taken || !IsFloat32(graph, shape_of, last.outputs[0])) continue;
    onnx::NodeProto& gelu = Remake(graph, last, "Gelu", "GeluFusion/" + last.display_name);
    gelu.add_input(graph.values[chain->x].name);
    gelu.add_output(graph.values[last.outputs[0]].name);
    last.inputs = {chain->x};
    for (NodeId node : chain->gone) {
      MarkFusedAway(graph, summary, graph.nodes[node].outputs[0]);
      removed[node] = true;
      ++summary.fused_nodes;
    }
    any = true;
  }
  if (!any) return;
  RemoveNodes(removed, graph);
  RelinkValues(graph);
}

void FuseMatMulScale(const ShapeLookup& shape_of, FusionSummary& summary, IrGraph& graph) {
  std::vector<bool> removed(graph.nodes.size(), false);
  bool any = false;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    IrNode& matmul = graph.nodes[id];
    if (removed[id] || !IsOp(matmul, "MatMul") || matmul.inputs.size() != 2 || matmul.outputs.size() != 1 ||
        !IsFloat32(graph, shape_of, matmul.inputs[0]) || !IsFloat32(graph, shape_of, matmul.inputs[1])) {
      continue;
    }
    const NodeId reader = SoleReader(graph, matmul.outputs[0]);
    if (reader >= 0 && IsOp(graph.nodes[reader], "Add") && graph.nodes[reader].inputs.size() == 2) {
      const IrNode& add = graph.nodes[reader];
      const ValueId bias = add.inputs[0] == matmul.outputs[0] ? add.inputs[1] : add.inputs[0];
      if (IsConstantWeight(graph, summary, bias)) continue;  // A Gemm since level 1.
    }
    std::vector<ValueId> inputs = matmul.inputs;
    std::vector<NodeId> gone;
    for (ValueId& input : inputs) {
      const NodeId producer = graph.values[input].producer;
      if (producer < 0 || removed[producer]) continue;
      const ValueId unscaled = ScaledInput(graph, shape_of, summary, graph.nodes[producer]);
      if (unscaled < 0) continue;
      // The scaling node goes when this MatMul was its output's only reader.
      if (SoleReader(graph, input) == static_cast<NodeId>(id)) gone.push_back(producer);
      input = unscaled;
    }
    NodeId scaled_output = -1;
    if (reader >= 0 && !removed[reader] &&
        ScaledInput(graph, shape_of, summary, graph.nodes[reader]) == matmul.outputs[0]) {
      scaled_output = reader;
    }
    if (inputs == matmul.inputs && scaled_output < 0) continue;
    onnx::NodeProto& fused = Remake(graph, matmul, "FusedMatMul", matmul.display_name + "/MatMulScaleFusion/");
    for (ValueId input : inputs) fused.add_input(graph.values[input].name);
    for (NodeId node : gone) {
      MarkFusedAway(graph, summary, graph.nodes[node].outputs[0]);
      removed[node] = true;
      ++summary.fused_nodes;
    }
    matmul.inputs = inputs;
    if (scaled_output >= 0) {
      MarkFusedAway(graph, summary, matmul.outputs[0]);
      matmul.outputs = graph.nodes[scaled_output].outputs;
      removed[scaled_output] = true;
      ++summary.fused_nodes;
    }
    fused.add_output(graph.values[matmul.outputs[0]].name);
    any = true;
  }
  if (!any) return;
  RemoveNodes(removed, graph);
  RelinkValues(graph);
}

}  // namespace footprint::ort
