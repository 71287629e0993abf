// ORT's rules for dynamically quantized graphs (ONNX Runtime's
// quantize_dynamic output): equal DynamicQuantizeLinear nodes on one input
// merged (its level-1 CSE), and DynamicQuantizeLinear -> MatMulInteger ->
// Cast -> Mul fused into DynamicQuantizeMatMul (level 2). Paths are in
// github.com/microsoft/onnxruntime; "probe" means an ORT 1.30
// optimized-model dump or heap measurement of bench/ground_truth/.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// The nodes of one DynamicQuantizeMatMulFusion (-1: absent).
struct DynamicMatMulGroup {
  NodeId matmul = -1;     // The MatMulInteger: becomes the DynamicQuantizeMatMul.
  NodeId quantize = -1;   // The DynamicQuantizeLinear of A.
  NodeId cast = -1;       // The Cast of the int32 product.
  NodeId mul = -1;        // The Mul by the product of the scales.
  NodeId scale_mul = -1;  // The Mul of A's scale and B's, when the file has one.
  NodeId bias_add = -1;   // The Add of the bias after `mul`, when it is taken in.
  ValueId bias = -1;      // That bias.
};

// The only reader of `value` when it is a live `op` of the default domain
// and the value no graph output; -1 otherwise.
NodeId SoleReaderOp(const IrGraph& graph, const std::vector<bool>& removed, ValueId value, const char* op) {
  const NodeId reader = SoleReader(graph, value);
  return reader >= 0 && !removed[reader] && IsOp(graph.nodes[reader], op) ? reader : -1;
}

// Whether every output of the DynamicQuantizeLinear is read inside the group
// only: by the MatMulInteger, or by the Mul of the scales feeding the last
// Mul (which it records).
bool QuantizerReadInsideGroup(const IrGraph& graph, DynamicMatMulGroup& group) {
  for (ValueId output : graph.nodes[group.quantize].outputs) {
    if (graph.values[output].is_graph_output) return false;
    for (NodeId reader : graph.values[output].consumers) {
      if (reader == group.matmul) continue;
      const IrNode& r = graph.nodes[reader];
      if (r.proto->op_type() != "Mul" || r.outputs.size() != 1) return false;
      const IrValue& product = graph.values[r.outputs[0]];
      if (product.consumers.size() != 1 || product.consumers[0] != group.mul || product.is_graph_output) return false;
      group.scale_mul = reader;
    }
  }
  return true;
}

// The bias: an Add of a constant [N] (or [1, ..., N]) after the last Mul, N
// the weight's last dim (the fusion's CheckBiasShape), is taken in too.
// Probe: the dynamic copy of vision_models.py's ViT, whose Add(bias, product)
// nodes (bias first, as torch writes a Linear) ORT's optimized model has as
// DynamicQuantizeMatMul's fifth input.
void TakeBias(const IrGraph& graph, const PassContext& context, const std::vector<bool>& removed,
              DynamicMatMulGroup& group) {
  const ValueId product = graph.nodes[group.mul].outputs[0];
  const NodeId add_id = SoleReaderOp(graph, removed, product, "Add");
  if (add_id < 0 || graph.nodes[add_id].inputs.size() != 2) return;
  const IrNode& add = graph.nodes[add_id];
  const ValueId bias = add.inputs[0] == product ? add.inputs[1] : add.inputs[0];
  const onnx::TensorProto* bias_tensor =
      IsConstantWeight(graph, context.rewrite, bias) ? ConstantTensor(graph, bias) : nullptr;
  const onnx::TensorProto* weight = ConstantTensor(graph, graph.nodes[group.matmul].inputs[1]);
  bool fits = bias_tensor != nullptr && weight != nullptr && bias_tensor->dims_size() >= 1 && weight->dims_size() >= 2;
  for (int axis = 0; fits && axis + 1 < bias_tensor->dims_size(); ++axis) fits = bias_tensor->dims(axis) == 1;
  fits = fits && bias_tensor->dims(bias_tensor->dims_size() - 1) == weight->dims(weight->dims_size() - 1);
  if (!fits) return;
  group.bias_add = add_id;
  group.bias = bias;
}

// The group whose MatMulInteger is node `id`, when the fusion takes it.
std::optional<DynamicMatMulGroup> MatchGroup(const IrGraph& graph, const PassContext& context,
                                             const std::vector<bool>& removed, NodeId id) {
  const IrNode& matmul = graph.nodes[id];
  if (removed[id] || !IsDefaultDomain(*matmul.proto) || matmul.proto->op_type() != "MatMulInteger" ||
      matmul.inputs.size() < 2 || matmul.outputs.size() != 1) {
    return std::nullopt;
  }
  const IrValue& a = graph.values[matmul.inputs[0]];
  if (a.origin != ValueOrigin::kNodeOutput || a.producer < 0) return std::nullopt;
  DynamicMatMulGroup group{.matmul = id, .quantize = a.producer};
  const IrNode& quantize = graph.nodes[group.quantize];
  if (removed[group.quantize] || quantize.proto->op_type() != "DynamicQuantizeLinear" || quantize.inputs.empty()) {
    return std::nullopt;
  }
  group.cast = SoleReaderOp(graph, removed, matmul.outputs[0], "Cast");
  if (group.cast < 0) return std::nullopt;
  group.mul = SoleReaderOp(graph, removed, graph.nodes[group.cast].outputs[0], "Mul");
  if (group.mul < 0 || !QuantizerReadInsideGroup(graph, group)) return std::nullopt;
  TakeBias(graph, context, removed, group);
  return group;
}

// The fused node: float A and the weights (and the bias) in, the last Mul's
// (or the bias Add's) output out; the group's other nodes go.
int64_t FuseGroup(const DynamicMatMulGroup& group, IrGraph& graph, PassContext& context, std::vector<bool>& removed) {
  IrNode& matmul = graph.nodes[group.matmul];
  const IrNode& quantize = graph.nodes[group.quantize];
  std::vector<ValueId> inputs = {quantize.inputs[0]};
  for (size_t slot = 1; slot < matmul.inputs.size(); ++slot) inputs.push_back(matmul.inputs[slot]);
  if (group.bias_add >= 0) inputs.push_back(group.bias);
  const NodeId others[] = {group.quantize, group.cast, group.mul, group.scale_mul, group.bias_add};
  for (ValueId input : matmul.inputs) EraseConsumer(graph.values[input], group.matmul);
  for (NodeId gone : others) {
    if (gone < 0) continue;
    for (ValueId input : graph.nodes[gone].inputs) EraseConsumer(graph.values[input], gone);
  }
  for (ValueId input : inputs) graph.values[input].consumers.push_back(group.matmul);
  std::vector<ValueId> gone_values = quantize.outputs;
  gone_values.push_back(matmul.outputs[0]);
  gone_values.push_back(graph.nodes[group.cast].outputs[0]);
  if (group.scale_mul >= 0) gone_values.push_back(graph.nodes[group.scale_mul].outputs[0]);
  if (group.bias_add >= 0) gone_values.push_back(graph.nodes[group.mul].outputs[0]);
  const ValueId result = graph.nodes[group.bias_add >= 0 ? group.bias_add : group.mul].outputs[0];
  for (ValueId value : gone_values) MarkFusedAway(graph, context.rewrite, value);
  matmul.inputs = inputs;
  matmul.outputs = {result};
  graph.values[result].producer = group.matmul;
  auto proto = std::make_shared<onnx::NodeProto>(*matmul.proto);
  proto->set_op_type("DynamicQuantizeMatMul");
  proto->set_domain("com.microsoft");
  UseRuntimeProto(context.rewrite, matmul, std::move(proto));
  int64_t fused = 0;
  for (NodeId gone : others) {
    if (gone < 0) continue;
    removed[gone] = true;
    ++fused;
  }
  return fused;
}

// DynamicQuantizeMatMulFusion (core/optimizer/dynamic_quantize_matmul_fusion.cc):
// DynamicQuantizeLinear -> MatMulInteger (constant B) -> Cast -> Mul by the
// product of the scales becomes one DynamicQuantizeMatMul reading the float A:
// the uint8 A, the int32 product and its float copy never exist. Probe: the
// dynamic copy of tiny-random-lfm2 keeps one DynamicQuantizeMatMul and no
// DynamicQuantizeLinear, Cast or Mul.
PassChange FuseDynamicQuantizeMatMul(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (std::optional<DynamicMatMulGroup> group = MatchGroup(graph, context, removed, static_cast<NodeId>(id))) {
      change.fused_nodes += FuseGroup(*group, graph, context, removed);
    }
  }
  if (change.fused_nodes > 0) RemoveNodes(removed, graph);
  return change;
}

// CommonSubexpressionElimination (core/optimizer/common_subexpression_elimination.cc)
// for DynamicQuantizeLinear: quantize_dynamic writes one per reader of a
// tensor; ORT keeps the first and its readers all read it. Probe: the dynamic
// copy of FastestDet, 70 in the file, 63 in ORT's optimized model.
PassChange MergeDynamicQuantizers(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  absl::flat_hash_map<ValueId, NodeId> first_of;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    if (!IsDefaultDomain(*node.proto) || node.proto->op_type() != "DynamicQuantizeLinear" || node.inputs.size() != 1) {
      continue;
    }
    auto [it, inserted] = first_of.try_emplace(node.inputs[0], static_cast<NodeId>(id));
    if (inserted) continue;
    if (MergeIntoFirst(static_cast<NodeId>(id), it->second, graph, context.rewrite, removed)) ++change.fused_nodes;
  }
  if (change.fused_nodes > 0) RemoveNodes(removed, graph);
  return change;
}

}  // namespace

const Pass kDynamicQuantizerCse = {.name = "CommonSubexpressionElimination (DynamicQuantizeLinear)",
                                   .stage = OrtStage::kLevel1,
                                   .source = "core/optimizer/common_subexpression_elimination.cc",
                                   .apply = &MergeDynamicQuantizers};

const Pass kDynamicQuantizeMatMulFusion = {.name = "DynamicQuantizeMatMulFusion",
                                           .stage = OrtStage::kLevel2,
                                           .source = "core/optimizer/dynamic_quantize_matmul_fusion.cc",
                                           .apply = &FuseDynamicQuantizeMatMul};

}  // namespace footprint::ort
