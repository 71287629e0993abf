// ORT's Conv and MatMul fusions as chains: a Conv or MatMul (the head) takes
// in the nodes after it while each is its only reader. Level 1 folds a
// BatchNormalization, or a Mul or Add of a per-channel weight, into a Conv's
// weights (the Conv node stays); level 2 fuses an activation into a Conv
// (FusedConv) and an Add of a weight into a MatMul (Gemm); level 3, after
// NCHWc took the Convs it could, a Conv + Add (+ activation) writes its sum
// over the residual (GraphRewrite::writes_over). The tensors between become
// kFusedAway. ORT applies each rule until none matches, so a chain takes its
// nodes in any order those rules allow.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// A weight that scales or shifts each output channel of a Conv whose filter
// has `filter_rank` dims and `channels` filters: a scalar, or [C, 1, ...] with
// filter_rank - 1 dims, or [1, C, 1, ...] with filter_rank dims
// (core/optimizer/conv_mul_fusion.cc and conv_add_fusion.cc check the same).
bool IsPerChannelWeight(const IrGraph& graph, const PassContext& context, ValueId weight, ValueId filter) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, context, weight);
  const std::optional<ValueShape> filter_shape = ShapeOfValue(graph, context, filter);
  if (!shape.has_value() || !filter_shape.has_value() || filter_shape->dims.empty()) return false;
  const std::optional<int64_t> channels = filter_shape->dims[0];
  int64_t elements = 1;
  for (const std::optional<int64_t>& dim : shape->dims) {
    if (!dim.has_value()) return false;
    elements *= *dim;
  }
  if (elements == 1) return true;
  const size_t rank = filter_shape->dims.size();
  size_t channel_axis = 0;
  if (shape->dims.size() == rank - 1) {
    channel_axis = 0;
  } else if (shape->dims.size() == rank && shape->dims[0] == 1) {
    channel_axis = 1;
  } else {
    return false;
  }
  return channels.has_value() && shape->dims[channel_axis] == *channels && elements == *channels;
}

// What a fused chain has taken in so far, in the order ORT's passes apply.
// kLinear: BatchNormalization, or Mul or Add of a per-channel weight, folded
// into the Conv's weight and bias (any number, in any order).
enum class Absorbed { kNothing, kLinear, kAdd, kActivation };

// The activations ORT fuses into Conv on the CPU provider
// (core/optimizer/conv_activation_fusion.cc: Relu, Sigmoid, Tanh, LeakyRelu,
// Clip, HardSigmoid; the fused kernel is core/providers/cpu/fp16/.. and
// core/providers/cpu/nn/conv.cc's MLAS activation).
bool IsFusableActivation(const std::string& op) {
  return op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "LeakyRelu" || op == "Clip" ||
         op == "HardSigmoid";
}

// Whether `next` may join a chain whose head is `head` and that has taken
// in `absorbed`; sets what it has taken in after.
//  - Conv + BatchNormalization: core/optimizer/conv_bn_fusion.cc, when the
//    Conv's weight and the BatchNormalization's four parameters are weights;
//  - Conv + Mul or Add of a per-channel weight (input 1):
//    core/optimizer/conv_mul_fusion.cc, conv_add_fusion.cc (level 1, like
//    conv_bn_fusion.cc: rules applied until none matches, so in any order);
//  - Conv (+ BatchNormalization) + Add: core/optimizer/conv_add_act_fusion.cc
//    (the Add's other input becomes FusedConv's Z, the sum input);
//  - Conv (+ ...) + activation: core/optimizer/conv_activation_fusion.cc;
//  - MatMul + Add of a weight: core/optimizer/matmul_add_fusion.cc (Gemm).
bool JoinsChain(const IrGraph& graph, const PassContext& context, const IrNode& head, const IrNode& next,
                ValueId link, bool allow_conv_add, Absorbed& absorbed) {
  const std::string& head_op = head.proto->op_type();
  const std::string& op = next.proto->op_type();
  if (!IsDefaultDomain(*next.proto) || !next.bodies.empty()) return false;
  auto others_are_weights = [&]() {
    for (ValueId input : next.inputs) {
      if (input != link && !IsConstantWeight(graph, context.rewrite, input)) return false;
    }
    return true;
  };
  if (head_op == "Conv") {
    const bool linear_so_far = absorbed == Absorbed::kNothing || absorbed == Absorbed::kLinear;
    const bool constant_filter = head.inputs.size() >= 2 && IsConstantWeight(graph, context.rewrite, head.inputs[1]);
    if (op == "BatchNormalization" && linear_so_far && constant_filter && next.inputs.size() == 5 &&
        next.inputs[0] == link && next.outputs.size() == 1 && others_are_weights()) {
      absorbed = Absorbed::kLinear;
      return true;
    }
    if ((op == "Mul" || op == "Add") && linear_so_far && constant_filter && next.inputs.size() == 2 &&
        next.inputs[0] == link && IsConstantWeight(graph, context.rewrite, next.inputs[1]) &&
        IsPerChannelWeight(graph, context, next.inputs[1], head.inputs[1])) {
      absorbed = Absorbed::kLinear;
      return true;
    }
    // Level 3 only, after NCHWc took the Convs it could (NchwcLayout fuses
    // their Add or Sum itself).
    if (allow_conv_add && (op == "Add" || op == "Sum") && linear_so_far && next.inputs.size() == 2 &&
        next.inputs[0] != next.inputs[1]) {
      absorbed = Absorbed::kAdd;
      return true;
    }
    if (IsFusableActivation(op) && absorbed != Absorbed::kActivation && next.inputs[0] == link &&
        others_are_weights()) {
      absorbed = Absorbed::kActivation;
      return true;
    }
    return false;
  }
  if (head_op == "MatMul") {
    if (op == "Add" && absorbed == Absorbed::kNothing && next.inputs.size() == 2 && others_are_weights()) {
      absorbed = Absorbed::kAdd;
      return true;
    }
    return false;
  }
  return false;
}

// What a chain's head has taken in before the pass: an activation when its
// kernel already applies one (a FusedConv of an earlier pass).
Absorbed AbsorbedBefore(const IrNode& head, const PassContext& context) {
  return context.activation_fused.contains(head.proto) ? Absorbed::kActivation : Absorbed::kNothing;
}

// The residual a fused Conv + Add writes its sum over (writes_over), kept
// on the chain's new output when an activation follows the Add.
void TrackResidual(IrGraph& graph, PassContext& context, const IrNode& head, const IrNode& next, ValueId link,
                   Absorbed before, Absorbed after) {
  if (after == Absorbed::kAdd && head.proto->op_type() == "Conv") {
    const ValueId residual = next.inputs[0] == link ? next.inputs[1] : next.inputs[0];
    MutableWritesOver(graph, context.rewrite)[next.outputs[0]] = residual;
  }
  std::vector<ValueId>& writes_over = context.rewrite.writes_over;
  if (before == Absorbed::kAdd && after == Absorbed::kActivation && !writes_over.empty() &&
      head.outputs.size() == 1 && writes_over[head.outputs[0]] >= 0) {
    writes_over[next.outputs[0]] = writes_over[head.outputs[0]];  // Still the residual.
    writes_over[head.outputs[0]] = -1;
  }
}

// The head takes `next` in: it reads next's other inputs and writes its
// outputs; the link between them never exists.
void TakeIn(NodeId head_id, NodeId next_id, ValueId link, IrGraph& graph, PassContext& context) {
  IrNode& head = graph.nodes[head_id];
  const IrNode& next = graph.nodes[next_id];
  for (ValueId input : next.inputs) {
    if (input == link) continue;
    head.inputs.push_back(input);
    graph.values[input].consumers.push_back(head_id);
  }
  for (ValueId input : next.implicit_inputs) head.implicit_inputs.push_back(input);
  head.outputs = next.outputs;
  for (ValueId output : next.outputs) graph.values[output].producer = head_id;
  MarkFusedAway(graph, context.rewrite, link);
}

// The options of one pass of chains.
struct ChainOptions {
  bool allow_conv_add = false;   // Level 3's Conv + Add, for the Convs NCHWc left.
  bool float16_fusions = false;  // A Conv reading float16 takes in more than level 1's linear nodes.
};

// Grows the chain of `head_id` while JoinsChain admits its only reader; the
// nodes taken in are marked in `removed`. Returns how many.
int64_t GrowChain(NodeId head_id, const ChainOptions& options, IrGraph& graph, PassContext& context,
                  std::vector<bool>& removed) {
  IrNode& head = graph.nodes[head_id];
  const std::string& head_op = head.proto->op_type();
  Absorbed absorbed = AbsorbedBefore(head, context);
  onnx::NodeProto* remade = nullptr;
  bool linear_only = false;
  if (!options.float16_fusions && head_op == "Conv" && !head.inputs.empty()) {
    const std::optional<ValueShape> input = ShapeOfValue(graph, context, head.inputs[0]);
    linear_only = input.has_value() && input->data_type == onnx::TensorProto::FLOAT16;
  }
  int64_t taken = 0;
  while (head.outputs.size() == 1) {
    const ValueId link = head.outputs[0];
    const IrValue& link_value = graph.values[link];
    if (link_value.is_graph_output || link_value.consumers.size() != 1) break;
    const NodeId next_id = link_value.consumers[0];
    if (removed[next_id] || next_id == head_id) break;
    const IrNode& next = graph.nodes[next_id];
    Absorbed after = absorbed;
    if (!JoinsChain(graph, context, head, next, link, options.allow_conv_add, after)) break;
    if (linear_only && after != Absorbed::kLinear) break;
    TrackResidual(graph, context, head, next, link, absorbed, after);
    absorbed = after;
    // Level 1's BatchNormalization, Mul and Add folds change the Conv's
    // weights in place (conv_bn_fusion.cc: the Conv node stays); the
    // activation and Add fusions replace it with a new node (FusedConv,
    // Gemm: Graph::AddNode), which matters to the order ORT runs a graph in
    // (execution_order.h).
    if (remade == nullptr && after != Absorbed::kLinear) {
      remade = &UseRuntimeProto(context.rewrite, head, std::make_shared<onnx::NodeProto>(*head.proto));
    }
    if (after == Absorbed::kActivation) context.activation_fused.insert(remade);
    TakeIn(head_id, next_id, link, graph, context);
    removed[next_id] = true;
    ++taken;
  }
  return taken;
}

// One pass of chains: each Conv or MatMul head, in GraphViewer's order
// (ORT's fusions walk it: the order they make nodes in), takes in the nodes
// JoinsChain admits. Without `float16_fusions`, a Conv that reads a float16
// tensor takes in only level 1's linear nodes (ORT's level-2 fusions skip it
// until the Casts make it float32: fp16_casts.cc).
PassChange RunChains(const ChainOptions& options, IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  std::vector<NodeId> heads(graph.nodes.size());
  for (size_t id = 0; id < heads.size(); ++id) heads[id] = static_cast<NodeId>(id);
  if (std::optional<std::vector<NodeId>> walk =
          OrtExecutionOrder(graph, OrtNodeIndices(graph, context.rewrite))) {
    heads = *walk;
  }
  for (const NodeId head_id : heads) {
    if (removed[head_id]) continue;
    const onnx::NodeProto& head = *graph.nodes[head_id].proto;
    if (!IsDefaultDomain(head) || (head.op_type() != "Conv" && head.op_type() != "MatMul")) continue;
    change.fused_nodes += GrowChain(head_id, options, graph, context, removed);
  }
  if (change.fused_nodes > 0) RemoveNodes(removed, graph);
  return change;
}

PassChange ApplyConvFusions(IrGraph& graph, PassContext& context) {
  return RunChains({.allow_conv_add = false, .float16_fusions = false}, graph, context);
}

PassChange ApplyConvFusionsAfterCasts(IrGraph& graph, PassContext& context) {
  return RunChains({.allow_conv_add = false, .float16_fusions = true}, graph, context);
}

PassChange ApplyConvAddActivationFusion(IrGraph& graph, PassContext& context) {
  return RunChains({.allow_conv_add = true, .float16_fusions = true}, graph, context);
}

}  // namespace

const Pass kConvFusions = {
    .name = "ConvBNFusion, ConvMulFusion, ConvAddFusion, ConvActivationFusion, MatMulAddFusion",
    .stage = OrtStage::kLevel2,
    .source = "core/optimizer/conv_bn_fusion.cc, conv_activation_fusion.cc, matmul_add_fusion.cc",
    .apply = &ApplyConvFusions};

const Pass kConvFusionsAfterCasts = {
    .name = "ConvBNFusion, ConvMulFusion, ConvAddFusion, ConvActivationFusion, MatMulAddFusion (after the Casts)",
    .stage = OrtStage::kLevel2,
    .source = "core/optimizer/conv_bn_fusion.cc, conv_activation_fusion.cc, matmul_add_fusion.cc",
    .apply = &ApplyConvFusionsAfterCasts};

const Pass kConvAddActivationFusion = {
    .name = "ConvAddActivationFusion",
    .stage = OrtStage::kLevel3,
    .source = "core/optimizer/conv_add_act_fusion.cc",
    .apply = &ApplyConvAddActivationFusion};

}  // namespace footprint::ort
