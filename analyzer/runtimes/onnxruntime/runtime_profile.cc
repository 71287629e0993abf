// The rules of the onnxruntime-cpu profile (runtime_profile.h):
// ONNX Runtime's CPU execution provider at graph optimization level "all",
// one thread; the paths cited are in github.com/microsoft/onnxruntime.
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/fp16_casts.h"
#include "analyzer/runtimes/onnxruntime/fp16_function_bodies.h"
#include "analyzer/runtimes/onnxruntime/nchwc_layout.h"
#include "analyzer/runtimes/onnxruntime/overridable_initializers.h"
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"
#include "analyzer/runtimes/onnxruntime/shared_constants.h"
#include "analyzer/runtimes/onnxruntime/pad_fusion.h"
#include "analyzer/runtimes/onnxruntime/qdq_fusion.h"
#include "analyzer/runtimes/onnxruntime/quick_gelu_fusion.h"
#include "analyzer/runtimes/onnxruntime/quantized_workspaces.h"
#include "analyzer/runtimes/onnxruntime/transformer_fusions.h"
#include "analyzer/runtimes/onnxruntime/unique_dequantizers.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// A weight that scales or shifts each output channel of a Conv whose filter
// has `filter_rank` dims and `channels` filters: a scalar, or [C, 1, ...] with
// filter_rank - 1 dims, or [1, C, 1, ...] with filter_rank dims
// (core/optimizer/conv_mul_fusion.cc and conv_add_fusion.cc check the same).
bool IsPerChannelWeight(const IrGraph& graph, const ShapeLookup& shape_of, ValueId weight, ValueId filter) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, weight);
  const std::optional<ValueShape> filter_shape = ShapeOfValue(graph, shape_of, filter);
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
bool JoinsChain(const IrGraph& graph, const FusionSummary& summary, const ShapeLookup& shape_of,
                const IrNode& head, const IrNode& next, ValueId link, bool allow_conv_add, Absorbed& absorbed) {
  const std::string& head_op = head.proto->op_type();
  const std::string& op = next.proto->op_type();
  if (!IsDefaultDomain(*next.proto) || !next.bodies.empty()) return false;
  auto others_are_weights = [&]() {
    for (ValueId input : next.inputs) {
      if (input != link && !IsConstantWeight(graph, summary, input)) return false;
    }
    return true;
  };
  if (head_op == "Conv") {
    const bool linear_so_far = absorbed == Absorbed::kNothing || absorbed == Absorbed::kLinear;
    const bool constant_filter = head.inputs.size() >= 2 && IsConstantWeight(graph, summary, head.inputs[1]);
    if (op == "BatchNormalization" && linear_so_far && constant_filter && next.inputs.size() == 5 &&
        next.inputs[0] == link && next.outputs.size() == 1 && others_are_weights()) {
      absorbed = Absorbed::kLinear;
      return true;
    }
    if ((op == "Mul" || op == "Add") && linear_so_far && constant_filter && next.inputs.size() == 2 &&
        next.inputs[0] == link && IsConstantWeight(graph, summary, next.inputs[1]) &&
        IsPerChannelWeight(graph, shape_of, next.inputs[1], head.inputs[1])) {
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

// One pass of chains (ApplyRuntimeFusions): each head in graph order takes in
// the nodes JoinsChain admits. `absorbed_of` (per node, kept in step with
// graph.nodes) is what each head has taken in, before and after.
// With `remake_fused`, a head that takes a node in becomes a new node, as
// ORT's fusions make one (FusedConv, Gemm: Graph::AddNode), which matters
// to the order ORT runs a graph in (execution_order.h).
// Without `float16_fusions`, a Conv that reads a float16 tensor takes in
// only level 1's linear nodes (ORT's level-2 fusions skip it until the Casts
// make it float32: fp16_casts.h).
void RunChains(bool allow_conv_add, bool remake_fused, bool float16_fusions, const ShapeLookup& shape_of,
               IrGraph& graph, FusionSummary& summary, std::vector<Absorbed>& absorbed_of) {
  std::vector<bool> removed(graph.nodes.size(), false);
  int64_t fused_before = summary.fused_nodes;
  // ORT's fusions walk GraphViewer's order: the order they make nodes in.
  std::vector<NodeId> heads(graph.nodes.size());
  for (size_t id = 0; id < heads.size(); ++id) heads[id] = static_cast<NodeId>(id);
  if (remake_fused) {
    if (std::optional<std::vector<NodeId>> walk = OrtExecutionOrder(graph, OrtNodeIndices(graph))) heads = *walk;
  }
  for (const NodeId head_id : heads) {
    if (removed[head_id]) continue;
    IrNode& head = graph.nodes[head_id];
    const std::string& head_op = head.proto->op_type();
    if (!IsDefaultDomain(*head.proto) || (head_op != "Conv" && head_op != "MatMul")) continue;
    Absorbed& absorbed = absorbed_of[head_id];
    bool remade = false;
    bool linear_only = false;
    if (!float16_fusions && head_op == "Conv" && !head.inputs.empty()) {
      const std::optional<ValueShape> input = ShapeOfValue(graph, shape_of, head.inputs[0]);
      linear_only = input.has_value() && input->data_type == onnx::TensorProto::FLOAT16;
    }
    while (head.outputs.size() == 1) {
      const ValueId link = head.outputs[0];
      IrValue& link_value = graph.values[link];
      if (link_value.is_graph_output || link_value.consumers.size() != 1) break;
      const NodeId next_id = link_value.consumers[0];
      if (removed[next_id] || next_id == static_cast<NodeId>(head_id)) break;
      IrNode& next = graph.nodes[next_id];
      Absorbed after = absorbed;
      if (!JoinsChain(graph, summary, shape_of, head, next, link, allow_conv_add, after)) break;
      if (linear_only && after != Absorbed::kLinear) break;
      if (after == Absorbed::kAdd && head_op == "Conv") {
        const ValueId residual = next.inputs[0] == link ? next.inputs[1] : next.inputs[0];
        if (summary.writes_over.empty()) summary.writes_over.assign(graph.values.size(), -1);
        summary.writes_over[next.outputs[0]] = residual;
      }
      if (absorbed == Absorbed::kAdd && after == Absorbed::kActivation && !summary.writes_over.empty() &&
          head.outputs.size() == 1 && summary.writes_over[head.outputs[0]] >= 0) {
        summary.writes_over[next.outputs[0]] = summary.writes_over[head.outputs[0]];  // Still the residual.
        summary.writes_over[head.outputs[0]] = -1;
      }
      absorbed = after;
      // Level 1's BatchNormalization, Mul and Add folds change the Conv's
      // weights in place (conv_bn_fusion.cc: the Conv node stays); the
      // activation and Add fusions replace it with a new node.
      if (remake_fused && !remade && after != Absorbed::kLinear) {
        UseRuntimeProto(graph, head, std::make_shared<onnx::NodeProto>(*head.proto));
        remade = true;
      }
      // The head reads the next node's other inputs and writes its outputs.
      for (ValueId input : next.inputs) {
        if (input == link) continue;
        head.inputs.push_back(input);
        graph.values[input].consumers.push_back(static_cast<NodeId>(head_id));
      }
      for (ValueId input : next.implicit_inputs) head.implicit_inputs.push_back(input);
      head.outputs = next.outputs;
      for (ValueId output : next.outputs) graph.values[output].producer = static_cast<NodeId>(head_id);
      MarkFusedAway(graph, summary, link);
      removed[next_id] = true;
      ++summary.fused_nodes;
    }
  }
  if (summary.fused_nodes == fused_before) return;
  std::vector<Absorbed> kept;
  for (size_t node_id = 0; node_id < removed.size(); ++node_id) {
    if (!removed[node_id]) kept.push_back(absorbed_of[node_id]);
  }
  absorbed_of = std::move(kept);
  RemoveNodes(removed, graph);
}


// The permutation of a Transpose (empty: the default reversal, or none).
std::vector<int64_t> PermOf(const onnx::NodeProto& node) {
  std::vector<int64_t> perm;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == "perm") perm.assign(attribute.ints().begin(), attribute.ints().end());
  }
  return perm;
}

// Level 1, ORT's transpose optimizer (core/optimizer/transpose_optimization/):
// a Transpose, a Softmax or LogSoftmax along one axis, and the inverse
// Transpose cancel; the op then works along the permuted axis of the first
// Transpose's input and writes the second's output. Measured (a [3, 5,
// 21600] tensor): Transpose, LogSoftmax(axis 2), inverse Transpose peaks
// exactly like LogSoftmax(axis 1) alone, whose kernel then transposes (see
// SoftmaxWorkspaceBytes).
void CancelTransposePairs(IrGraph& graph, FusionSummary& summary) {
  std::vector<bool> removed(graph.nodes.size(), false);
  auto single_reader = [&](ValueId value) -> NodeId {
    const IrValue& v = graph.values[value];
    return v.is_graph_output || v.consumers.size() != 1 ? -1 : v.consumers[0];
  };
  bool any = false;
  for (size_t first_id = 0; first_id < graph.nodes.size(); ++first_id) {
    const IrNode& first = graph.nodes[first_id];
    if (removed[first_id] || !IsDefaultDomain(*first.proto) || first.proto->op_type() != "Transpose" ||
        first.inputs.size() != 1 || first.outputs.size() != 1) {
      continue;
    }
    const std::vector<int64_t> perm = PermOf(*first.proto);
    const NodeId middle_id = single_reader(first.outputs[0]);
    if (perm.empty() || middle_id < 0 || removed[middle_id]) continue;
    IrNode& middle = graph.nodes[middle_id];
    const std::string& op = middle.proto->op_type();
    if (!IsDefaultDomain(*middle.proto) || (op != "Softmax" && op != "LogSoftmax") || middle.inputs.size() != 1 ||
        middle.outputs.size() != 1) {
      continue;
    }
    const NodeId last_id = single_reader(middle.outputs[0]);
    if (last_id < 0 || removed[last_id]) continue;
    const IrNode& last = graph.nodes[last_id];
    if (!IsDefaultDomain(*last.proto) || last.proto->op_type() != "Transpose" || last.outputs.size() != 1) continue;
    const std::vector<int64_t> back = PermOf(*last.proto);
    const int64_t rank = static_cast<int64_t>(perm.size());
    bool inverse = static_cast<int64_t>(back.size()) == rank;
    for (int64_t i = 0; inverse && i < rank; ++i) {
      inverse = perm[i] >= 0 && perm[i] < rank && back[perm[i]] == i;
    }
    const onnx::AttributeProto* axis_attribute = FindAttribute(*middle.proto, "axis");
    if (!inverse || axis_attribute == nullptr) continue;  // The default axis differs by opset.
    int64_t axis = axis_attribute->i();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) continue;
    auto proto = std::make_shared<onnx::NodeProto>(*middle.proto);
    for (onnx::AttributeProto& attribute : *proto->mutable_attribute()) {
      if (attribute.name() == "axis") attribute.set_i(perm[axis]);
    }
    UseRuntimeProto(graph, middle, std::move(proto));
    const ValueId source = first.inputs[0];
    for (ValueId gone : {first.outputs[0], middle.outputs[0]}) MarkFusedAway(graph, summary, gone);
    std::replace(graph.values[source].consumers.begin(), graph.values[source].consumers.end(),
                 static_cast<NodeId>(first_id), middle_id);
    middle.inputs = {source};
    middle.outputs = last.outputs;
    graph.values[last.outputs[0]].producer = middle_id;
    removed[first_id] = true;
    removed[last_id] = true;
    summary.fused_nodes += 2;
    any = true;
  }
  if (any) RemoveNodes(removed, graph);
}

}  // namespace

bool IsConstantWeight(const IrGraph& graph, const FusionSummary& summary, ValueId id) {
  const IrValue& value = graph.values[id];
  if (!summary.overridable.empty() && summary.overridable[id]) return false;
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant ||
         value.origin == ValueOrigin::kFolded;
}

namespace {

// A value's element type and dims as the model gives them.
std::optional<ValueShape> ShapeInModel(const IrValue& value, const ShapeLookup& shape_of) {
  if (value.origin == ValueOrigin::kInitializer) {
    ValueShape shape{.data_type = value.initializer->data_type()};
    for (int64_t dim : value.initializer->dims()) shape.dims.push_back(dim);
    return shape;
  }
  if (value.origin == ValueOrigin::kConstant) {
    for (const onnx::AttributeProto& attribute : value.constant->attribute()) {
      if (attribute.name() != "value" || !attribute.has_t()) continue;
      ValueShape shape{.data_type = attribute.t().data_type()};
      for (int64_t dim : attribute.t().dims()) shape.dims.push_back(dim);
      return shape;
    }
    return std::nullopt;
  }
  if (!shape_of) return std::nullopt;
  return shape_of(value.name);
}

}  // namespace

std::optional<ValueShape> ShapeOfValue(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const IrValue& value = graph.values[id];
  // A plain copy (EnsureUniqueDequantizers' outputs): the dims and type of
  // the value it stands for.
  if (value.runtime_data_type == 0 && value.sized_as >= 0 && value.channel_block <= 1 && !value.channels_last) {
    return ShapeOfValue(graph, shape_of, value.sized_as);
  }
  if (value.runtime_data_type == 0) return ShapeInModel(value, shape_of);
  // Held in another element type (fp16_casts.h), with the dims of the value it stands for.
  std::optional<ValueShape> shape =
      value.sized_as >= 0 ? ShapeOfValue(graph, shape_of, value.sized_as) : ShapeInModel(value, shape_of);
  if (shape.has_value()) shape->data_type = value.runtime_data_type;
  return shape;
}

int64_t Product(const std::vector<int64_t>& dims, size_t from) {
  int64_t product = 1;
  for (size_t i = from; i < dims.size(); ++i) product *= dims[i];
  return product;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

FusionSummary ApplyRewrites(CpuIsa isa, int64_t ir_version, int64_t opset, const ShapeLookup& shape_of,
                            IrGraph& graph) {
  FusionSummary summary;
  summary.overridable = OverridableInitializers(ir_version, graph);
  // The graph's inputs are the caller's buffers: ORT never frees or reuses
  // them during a run (core/framework/allocation_planner.cc plans them as
  // pre-existing values). Measured: pytorch-operator test_operator_conv's
  // run peak, 7,457,128 bytes, is its input, the input's NCHWc copy and the
  // blocked output together (7,454,720), the input alive after its reorder.
  for (IrValue& value : graph.values) {
    if (value.origin == ValueOrigin::kGraphInput) value.live_to_end = true;
  }
  // ORT refuses a bfloat16 op it has no bfloat16 kernel for (it inserts
  // Casts for float16 only): no figure then (fp16_casts.h).
  summary.refused = RefusedBfloat16Node(shape_of, graph);
  if (!summary.refused.empty()) return summary;
  // Before level 1: every reader of a DequantizeLinear gets its own copy
  // (unique_dequantizers.h), new nodes ahead of any other rule's.
  EnsureUniqueDequantizers(graph);
  // Level 1: equal small constants, and equal ConstantOfShape values, are
  // one weight (shared_constants.h).
  ShareEqualSmallConstants(summary, graph);
  ShareEqualConstantsOfShape(summary, graph);
  // Level 1: a zero Pad is taken into the Conv or MaxPool it feeds (pad_fusion.h).
  FusePads(opset, summary, graph);
  // Level 2's QDQ and dynamic-quantization rules come before the float
  // fusions below can see the float ops they replace.
  ApplyQuantizedRewrites(isa, shape_of, graph, summary);
  CancelTransposePairs(graph, summary);
  // Partitioning, after level 1 and before the Casts: float16 ops with no
  // float16 kernel and a function body ORT takes at this opset become the
  // body's nodes (fp16_function_bodies.h), which no fusion below sees as
  // the op (a Conv + LeakyRelu is not fused then).
  InlineFloat16FunctionBodies(opset, shape_of, summary, graph);
  // Level 2: float32 SiLU / Swish pairs become QuickGelu (quick_gelu_fusion.h).
  FuseQuickGelu(shape_of, summary, graph);
  // Level 2: float32 Erf-form GELU and MatMul scaling (transformer_fusions.h).
  FuseGelu(shape_of, summary, graph);
  FuseMatMulScale(shape_of, summary, graph);
  std::vector<Absorbed> absorbed_of(graph.nodes.size(), Absorbed::kNothing);
  RunChains(/*allow_conv_add=*/false, /*remake_fused=*/true, /*float16_fusions=*/false, shape_of, graph, summary,
            absorbed_of);
  std::vector<bool> has_activation(absorbed_of.size());
  for (size_t node = 0; node < absorbed_of.size(); ++node) has_activation[node] = absorbed_of[node] == Absorbed::kActivation;
  // Float16 ops without a float16 kernel run in float32 behind Casts; ORT
  // 1.30 inserts them after its level-1 passes, before levels 2 and 3
  // (fp16_casts.h).
  const Float16CastsApplied float16 = ApplyFloat16Casts(shape_of, summary, graph, has_activation);
  // Without Casts, or after them when ORT runs levels 2 and 3 again.
  const bool later_levels = !float16.casts || float16.converted_at_load;
  if (float16.casts && later_levels) {
    // Level 2 again: SiLU pairs the Casts made float32 become QuickGelu;
    // the Convs the Casts made float32 take their activations in, each a
    // new node (FusedConv) in ORT's order.
    FuseQuickGelu(shape_of, summary, graph, &has_activation);
    absorbed_of.assign(has_activation.size(), Absorbed::kNothing);
    for (size_t node = 0; node < has_activation.size(); ++node) {
      if (has_activation[node]) absorbed_of[node] = Absorbed::kActivation;
    }
    RunChains(/*allow_conv_add=*/false, /*remake_fused=*/true, /*float16_fusions=*/true, shape_of, graph, summary,
              absorbed_of);
    has_activation.assign(absorbed_of.size(), false);
    for (size_t node = 0; node < absorbed_of.size(); ++node) has_activation[node] = absorbed_of[node] == Absorbed::kActivation;
  }
  if (later_levels) {
    // Registered only where MLAS has a block (graph_transformer_utils.cc,
    // GenerateTransformers, Level3: MlasNchwcGetBlockSize() > 1).
    if (const int64_t block = NchwcBlockSize(isa); block > 1) {
      ApplyNchwcLayout(block, shape_of, summary, graph, has_activation);
    }
    absorbed_of.assign(has_activation.size(), Absorbed::kNothing);
    for (size_t node = 0; node < has_activation.size(); ++node) {
      if (has_activation[node]) absorbed_of[node] = Absorbed::kActivation;
    }
    RunChains(/*allow_conv_add=*/true, /*remake_fused=*/true, /*float16_fusions=*/true, shape_of, graph, summary,
              absorbed_of);
  }
  // Every graph runs in ORT's order (execution_order.h): a float16 graph's
  // Casts, an inlined body's nodes (in the body's own order, which ORT's
  // indices follow), the nodes computing weights from overridable
  // initializers (NonConstantWeights: just before their readers, where the
  // file often lists them first), and where two branches meet, the one from
  // the later node first. Measured: the U2Net-like segmenter of
  // vision_models.py (0.809 in the file's order, 0.999 in ORT's), the uint8
  // QDQ U-Net (0.927 -> 1.000) and U2Net (0.865 -> 0.974), the dynamic
  // YOLOv5-like detector (0.918 -> 0.998), the probes
  // transformer_float32_order and order_fused_branch_first; with each
  // further reader's copy of a DequantizeLinear (unique_dequantizers.h) run
  // where its new index puts it, the QDQ copies of light_resnet50 1.063 ->
  // 0.999 and the probe qdq_shared_dequantize_copy_first 0.697 -> 1.000.
  ApplyOrtExecutionOrder(graph);
  MarkShapesOrtCannotInfer(summary, graph);
  return summary;
}

// Measured (bench/ground_truth, a 1 MiB tensor through each op between a Neg
// and a ReduceSum): ORT 1.30 reuses the input's buffer for the activations
// of core/providers/cpu/activation/activations.cc, registered with
// MayInplace(0, 0), and for Dropout (removed at level 1: an alias); not for
// the math ops of core/providers/cpu/math/element_wise_ops.cc (Abs, Neg,
// Sqrt, Exp, Log, Floor, Erf, Sin, ..., and Add, Sub, Mul, Div, Pow, Max,
// Min, Sum, Mean even with a same-shape input), nor for PRelu or
// BatchNormalization (core/providers/cpu/nn/batch_norm.cc).
bool RunsInPlace(const onnx::NodeProto& node) {
  if (!IsDefaultDomain(node)) return false;
  static const auto* const kInPlace = new absl::flat_hash_set<std::string>{
      "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "Softplus", "Softsign",
      "ThresholdedRelu", "Clip", "Dropout"};
  return kInPlace->contains(node.op_type());
}

// Measured, not derived from ORT's source (bench/ground_truth/README.md,
// "Per-run overhead"). Two figures, as the run peak shows two shapes:
//  - at the run's end, with the inputs (the caller's) and outputs live, the
//    outputs are copied out of ORT's buffers (by the binding: onnxruntime-node,
//    as Python's, returns its own arrays) next to some fixed allocations and
//    some per input and output bound: the peak is inputs + outputs +
//    max(12.5 KiB + 448 B per binding, outputs + 4.5 KiB). Over the 278
//    models whose peak the fixed part decides, the part above the tensors
//    has a median of 13,560 bytes with 2 bindings, 13,976 with 3, 14,400 with
//    4, 14,888 with 5 and 15,256 with 6 (424 per binding, 12,712 plus); a
//    1-float Identity, Relu or Add, or 4 chained Relus, peak 13,440-13,560
//    bytes above their tensors whatever the node count; Relu, AveragePool,
//    MaxPool and InstanceNormalization with outputs of 30-390 KB peak
//    4.7-5.7 KB above inputs + 2 x outputs;
//  - while kernels run: an im2col Conv (64 KiB workspace) peaks only
//    1,616-2,272 bytes above its tensors and workspace (16 models), so the
//    fixed part is not live then. 1.5 KiB, below that minimum, and the run
//    frame's objects for the tensors at the worst step (frame_bytes:
//    runtime_buffers.h, FrameObjectsBytes).
constexpr int64_t kOnnxRuntimeCpuRunEndBytes = 12800;
constexpr int64_t kOnnxRuntimeCpuRunEndBytesPerBinding = 448;
constexpr int64_t kOnnxRuntimeCpuOutputCopySlackBytes = 4608;
constexpr int64_t kOnnxRuntimeCpuDuringKernelsBytes = 1536;

int64_t RunOverheadBytes(int64_t tensor_bytes, int64_t frame_bytes, int64_t input_bytes, int64_t output_bytes,
                         int64_t bindings) {
  const int64_t fixed = kOnnxRuntimeCpuRunEndBytes + kOnnxRuntimeCpuRunEndBytesPerBinding * bindings;
  const int64_t run_end =
      input_bytes + output_bytes + std::max(fixed, output_bytes + kOnnxRuntimeCpuOutputCopySlackBytes);
  // While kernels run, the frame's objects for the tensors come on top
  // (runtime_buffers.h, FrameObjectsBytes); the frame is gone by the run's end.
  return std::max(kOnnxRuntimeCpuDuringKernelsBytes + frame_bytes, run_end - tensor_bytes);
}

}  // namespace footprint::ort
