// The rules of the onnxruntime-cpu profile (runtime_profile.h):
// ONNX Runtime's CPU execution provider at graph optimization level "all",
// one thread; the paths cited are in github.com/microsoft/onnxruntime.
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
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
#include "analyzer/runtimes/onnxruntime/fp16_casts.h"
#include "analyzer/runtimes/onnxruntime/fp16_function_bodies.h"
#include "analyzer/runtimes/onnxruntime/nchwc_layout.h"
#include "analyzer/runtimes/onnxruntime/shared_constants.h"
#include "analyzer/runtimes/onnxruntime/qdq_fusion.h"
#include "analyzer/runtimes/onnxruntime/quantized_workspaces.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

bool IsDefaultDomain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

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

int64_t Product(const std::vector<int64_t>& dims, size_t from) {
  int64_t product = 1;
  for (size_t i = from; i < dims.size(); ++i) product *= dims[i];
  return product;
}

// Conv's scratch on ORT's CPU provider (float32): core/providers/cpu/nn/conv.cc
// allocates MlasConvPrepare's WorkingBufferSize floats for the run, and
// core/mlas/lib/convolve.cpp (MlasConvPrepare) sizes it, with one thread:
//  - strides 1 and no padding, and a pointwise kernel (K == input channels
//    per group): none (GEMM straight on the input);
//  - filters per group > output spatial size: the whole im2col matrix,
//    OutputSize * K floats;
//  - otherwise segments of MLAS_CONV_WORKING_BUFFER_SIZE_PER_THREAD
//    (MLAS_SGEMM_STRIDEN * MLAS_SGEMM_STRIDEK = 128 * 128) floats, one
//    thread's. convolve.cpp asks, with more than one batch or group, for
//    max(OutputSize * K, filters * OutputSize, that) per thread, but ORT 1.30
//    with one thread measures the one segment (AVX-512 host, probes
//    nchwc_block_group8 and conv_group4_56 / conv_batch2_56 of
//    bench/ground_truth/probe_models.py: 32 channels in 4 groups, 3x3 on
//    56x56, 64 KiB above the tensors, where the larger rule says 882 KiB;
//    a batch of 2 likewise).
// ARM64's direct depthwise kernel (MlasConvPrepare, MLAS_TARGET_ARM64): a
// 2-D Conv of one input channel and one filter per group, 3x3, pads <= 1,
// strides and dilations 1, takes MlasConvAlgorithmDepthwise with a zero row
// of the input's width + 2 floats as its working buffer. Read, not measured
// (no ARM64 machine measured yet).
bool IsArm64DirectDepthwise(const IrNode& node, const KnownTensor& filter, int64_t input_channels,
                            int64_t filters) {
  if (filter.dims.size() != 4 || input_channels != 1 || filters != 1 || filter.dims[2] != 3 ||
      filter.dims[3] != 3) {
    return false;
  }
  for (const char* name : {"strides", "dilations"}) {
    if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, name)) {
      for (int64_t value : attribute->ints()) {
        if (value != 1) return false;
      }
    }
  }
  if (const onnx::AttributeProto* pads = FindAttribute(*node.proto, "pads")) {
    for (int64_t pad : pads->ints()) {
      if (pad > 1) return false;
    }
  }
  const onnx::AttributeProto* auto_pad = FindAttribute(*node.proto, "auto_pad");
  return auto_pad == nullptr || auto_pad->s() == "NOTSET" || auto_pad->s() == "VALID" ||
         auto_pad->s() == "SAME_UPPER" || auto_pad->s() == "SAME_LOWER";  // A 3x3 SAME pads 1 each side.
}

int64_t ConvWorkspaceBytes(CpuIsa isa, const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2 || node.outputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> filter = tensor_of(node.inputs[1]);
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (!input || !filter || !output || input->dtype != "float32") return 0;
  const size_t rank = input->dims.size();
  if (rank < 3 || filter->dims.size() != rank || output->dims.size() != rank) return 0;
  int64_t group = 1;
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "group")) group = attribute->i();
  if (group <= 0) return 0;
  const int64_t input_channels = input->dims[1] / group;
  const int64_t filters = filter->dims[0] / group;
  const int64_t kernel = Product(filter->dims, 2);
  const int64_t k = input_channels * kernel;
  const int64_t output_size = Product(output->dims, 2);
  bool strides_one = true;
  bool no_padding = true;
  if (const onnx::AttributeProto* strides = FindAttribute(*node.proto, "strides")) {
    for (int64_t stride : strides->ints()) strides_one = strides_one && stride == 1;
  }
  if (const onnx::AttributeProto* pads = FindAttribute(*node.proto, "pads")) {
    for (int64_t pad : pads->ints()) no_padding = no_padding && pad == 0;
  }
  if (const onnx::AttributeProto* auto_pad = FindAttribute(*node.proto, "auto_pad")) {
    // SAME_* pads whenever the kernel is larger than one element.
    if ((auto_pad->s() == "SAME_UPPER" || auto_pad->s() == "SAME_LOWER") && kernel > 1) no_padding = false;
  }
  // The Convs NCHWc takes run NchwcConv, a direct kernel with no working
  // buffer: they are in the NCHWc domain here and never reach this rule.
  // Measured (bench/ground_truth): pytorch-converted test_Conv2d (4 filters)
  // and test_Conv2d_depthwise run as NchwcConv in ORT's optimized-model dump
  // with no scratch, while the 1-D test_Conv1d_* keep ORT's Conv.
  constexpr int64_t kSegmentFloats = 128 * 128;
  int64_t floats = 0;
  if (strides_one && no_padding && k == input_channels) {
    floats = 0;
  } else if (filters > output_size) {
    floats = output_size * k;
  } else if (isa == CpuIsa::kArm64 && IsArm64DirectDepthwise(node, *filter, input_channels, filters)) {
    floats = input->dims[3] + 2;
  } else {
    floats = kSegmentFloats;
  }
  return floats * 4;
}

// LRN's scratch (float32, 4-D): core/providers/cpu/nn/lrn.cc allocates a
// scale buffer of the input's size and a padded square of (C + size - 1) *
// H * W floats from the temp-space allocator for the run.
int64_t LrnWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dtype != "float32" || input->dims.size() != 4) return 0;
  int64_t size = 0;
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "size")) size = attribute->i();
  if (size <= 0) return 0;
  const std::vector<int64_t>& d = input->dims;
  return 4 * (d[0] * d[1] * d[2] * d[3] + (d[1] + size - 1) * d[2] * d[3]);
}

// One pass of chains (ApplyRuntimeFusions): each head in graph order takes in
// the nodes JoinsChain admits. `absorbed_of` (per node, kept in step with
// graph.nodes) is what each head has taken in, before and after.
void RunChains(bool allow_conv_add, const ShapeLookup& shape_of, IrGraph& graph, FusionSummary& summary,
               std::vector<Absorbed>& absorbed_of) {
  std::vector<bool> removed(graph.nodes.size(), false);
  int64_t fused_before = summary.fused_nodes;
  for (size_t head_id = 0; head_id < graph.nodes.size(); ++head_id) {
    if (removed[head_id]) continue;
    IrNode& head = graph.nodes[head_id];
    const std::string& head_op = head.proto->op_type();
    if (!IsDefaultDomain(*head.proto) || (head_op != "Conv" && head_op != "MatMul")) continue;
    Absorbed& absorbed = absorbed_of[head_id];
    while (head.outputs.size() == 1) {
      const ValueId link = head.outputs[0];
      IrValue& link_value = graph.values[link];
      if (link_value.is_graph_output || link_value.consumers.size() != 1) break;
      const NodeId next_id = link_value.consumers[0];
      if (removed[next_id] || next_id == static_cast<NodeId>(head_id)) break;
      IrNode& next = graph.nodes[next_id];
      Absorbed after = absorbed;
      if (!JoinsChain(graph, summary, shape_of, head, next, link, allow_conv_add, after)) break;
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
      // The head reads the next node's other inputs and writes its outputs.
      for (ValueId input : next.inputs) {
        if (input == link) continue;
        head.inputs.push_back(input);
        graph.values[input].consumers.push_back(static_cast<NodeId>(head_id));
      }
      for (ValueId input : next.implicit_inputs) head.implicit_inputs.push_back(input);
      head.outputs = next.outputs;
      for (ValueId output : next.outputs) graph.values[output].producer = static_cast<NodeId>(head_id);
      link_value.origin = ValueOrigin::kFusedAway;
      link_value.producer = -1;
      link_value.consumers.clear();
      summary.fused_tensors.push_back(link_value.name);
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


// NegativeLogLikelihoodLoss's scratch (float32): measured (bench/ground_truth,
// inputs [3, C, D] for C 5 and 10, D 2160 and 4320), ORT holds 4 bytes per
// sample (N * d1 * ... * dk) for each of: the per-sample loss unless the
// reduction is "none" (then the output is it), the per-sample weight when
// a weight is given, and one more; the class count does not matter. With an
// ignore_index attribute ORT runs the op as its ONNX function body instead
// (its optimized model holds Unsqueeze, Cast, Equal, Where, GatherElements,
// Neg, Slice, Squeeze and Mul in its place), whose per-sample tensors
// (int64 targets, a mask, gathered losses) peak higher: measured at 6,480
// and 12,960 samples and 5 or 10 classes (probe_models.py nll_*_ii),
// 24.9-25.1 bytes per sample for "none" and "sum", 29.1-29.3 for "mean",
// 21.0 for "mean" with a weight; rounded up to 26, 30 and 22, held at the
// node's step.
int64_t NllLossWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dtype != "float32" || input->dims.size() < 2) return 0;
  const int64_t samples = input->dims[0] * Product(input->dims, 2);
  const bool weighted = node.proto->input_size() >= 3 && !node.proto->input(2).empty();
  std::string reduction = "mean";
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "reduction")) reduction = attribute->s();
  int64_t ignore_index_bytes = 0;
  if (FindAttribute(*node.proto, "ignore_index") != nullptr) {
    ignore_index_bytes = reduction != "mean" ? 26 : weighted ? 22 : 30;
  }
  return samples * (4 * ((reduction == "none" ? 1 : 2) + (weighted ? 1 : 0)) + ignore_index_bytes);
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
    middle.proto = proto.get();
    graph.runtime_protos.push_back(std::move(proto));
    const ValueId source = first.inputs[0];
    for (ValueId gone : {first.outputs[0], middle.outputs[0]}) {
      IrValue& value = graph.values[gone];
      value.origin = ValueOrigin::kFusedAway;
      value.producer = -1;
      value.consumers.clear();
      summary.fused_tensors.push_back(value.name);
    }
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

// Softmax and LogSoftmax along an axis that is not the last (opset 13's
// meaning): core/providers/cpu/math/softmax.cc transposes the input so that
// the axis is last and transposes the result back, holding both transposed
// copies for the run. Measured: LogSoftmax(axis 1) of [3, 5, 21600] floats
// peaks at 4 x the input (input, output and the two copies); along the last
// axis at 2 x. With no axis attribute the default is the last (opset 13) or
// a 2-D coercion without a transpose (earlier opsets): no scratch either way.
int64_t SoftmaxWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  const onnx::AttributeProto* axis_attribute = FindAttribute(*node.proto, "axis");
  if (node.inputs.empty() || axis_attribute == nullptr) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dims.empty()) return 0;
  const int64_t rank = static_cast<int64_t>(input->dims.size());
  int64_t axis = axis_attribute->i();
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1) return 0;
  const int64_t element = input->dtype == "float64" ? 8 : input->dtype == "float16" ? 2 : 4;
  return 2 * element * Product(input->dims, 0);
}

// Where's scratch (core/providers/cpu/tensor/where_op.cc): it selects the
// true values into a tensor of the broadcast shape of the condition and X,
// the false values into one of the condition and Y, both from the kernel's
// allocator and live together, then merges them into the output. Measured:
// a float16 LeakyRelu inlined at opset 16 (Mul, Less, Where in float32 on a
// 1 MiB tensor) peaks 2 MiB above its tensors. An input left out (a scalar
// constant of an inlined body, fp16_function_bodies.h) broadcasts as a scalar.
// The width of the element types Where's kernels take (float16 runs in
// float32), by KnownTensor::dtype; 0 for others (strings).
int ElementBitsOfName(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 32;
  if (dtype == "float64" || dtype == "int64") return 64;
  if (dtype == "uint8" || dtype == "bool") return 8;
  return 0;
}

int64_t WhereWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2 || node.outputs.size() != 1) return 0;
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  const std::optional<KnownTensor> condition = tensor_of(node.inputs[0]);
  if (!output || !condition) return 0;
  const int bits = ElementBitsOfName(output->dtype);
  if (bits <= 0) return 0;
  int64_t bytes = 0;
  for (size_t slot = 1; slot <= 2; ++slot) {
    std::vector<int64_t> dims = condition->dims;
    if (slot < node.inputs.size()) {
      const std::optional<KnownTensor> values = tensor_of(node.inputs[slot]);
      if (!values) return 0;
      const size_t rank = std::max(dims.size(), values->dims.size());
      std::vector<int64_t> broadcast(rank, 1);
      for (size_t axis = 0; axis < rank; ++axis) {
        const int64_t a = axis + dims.size() >= rank ? dims[axis + dims.size() - rank] : 1;
        const int64_t b = axis + values->dims.size() >= rank ? values->dims[axis + values->dims.size() - rank] : 1;
        broadcast[axis] = a == 1 ? b : a;
      }
      dims = std::move(broadcast);
    }
    bytes += (Product(dims, 0) * bits + 7) / 8;
  }
  return bytes;
}

// com.microsoft MultiHeadAttention's scratch on its float32 FlashAttention
// path (contrib_ops/cpu/bert/multihead_attention.cc: float32, no mask, no
// attention bias, no past, no present outputs, not unidirectional, 3-D key
// and value): BNSH copies of the query, key and value, and one thread's FlashAttention
// buffer, (2 Br + Br Bc + Br Hv) floats with Bc = L2 / (16 (Hqk + Hv)) at
// most the kv length and Br = min(Bc, Hqk + Hv) at most the query length.
// L2 is the host's (HostL2CacheBytes, read as ORT reads it: 1 MiB on the
// AMD EPYC measured, float32 MHA of S 64 to 256, hidden 64 and 128, 1 and 4
// heads: 0.98-0.997 of ORT's run peak). The other path (a mask, bias or past) below.
int64_t MultiHeadAttentionWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  const onnx::NodeProto& proto = *node.proto;
  auto given = [&](int slot) { return slot < proto.input_size() && !proto.input(slot).empty(); };
  if (!given(0) || !given(1) || !given(2) || node.inputs.size() < 3) return 0;
  bool flash = true;
  for (int slot = 4; slot < proto.input_size(); ++slot) flash = flash && !given(slot);
  for (int slot = 1; slot < proto.output_size(); ++slot) flash = flash && proto.output(slot).empty();
  const onnx::AttributeProto* unidirectional = FindAttribute(proto, "unidirectional");
  const onnx::AttributeProto* heads_attribute = FindAttribute(proto, "num_heads");
  if (heads_attribute == nullptr) return 0;
  flash = flash && (unidirectional == nullptr || unidirectional->i() == 0);
  const std::optional<KnownTensor> query = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> key = tensor_of(node.inputs[1]);
  const std::optional<KnownTensor> value = tensor_of(node.inputs[2]);
  if (!query || !key || !value || query->dtype != "float32" || query->dims.size() != 3 || key->dims.size() != 3 ||
      value->dims.size() != 3) {
    return 0;
  }
  const int64_t heads = heads_attribute->i();
  if (heads <= 0 || key->dims[2] % heads != 0 || value->dims[2] % heads != 0) return 0;
  const int64_t q_length = query->dims[1];
  const int64_t kv_length = key->dims[1];
  const int64_t qk_head = key->dims[2] / heads;
  const int64_t v_head = value->dims[2] / heads;
  const int64_t copies = 4 * (Product(query->dims, 0) + Product(key->dims, 0) + Product(value->dims, 0));
  if (!flash) {
    // ApplyAttention (contrib_ops/cpu/bert/attention_cpu_base.h): the
    // attention probabilities, [B, N, S, past + L] floats, and the output
    // before its transpose, [B, N, S, Hv]. Measured (float32, attention
    // bias or none, past 0 to 1024, S 1 to 128): 0.985-0.998 of ORT's run peak.
    int64_t past_length = 0;
    if (given(6)) {
      size_t index = 0;  // node.inputs holds the given inputs in order.
      for (int slot = 0; slot < 6; ++slot) index += given(slot) ? 1 : 0;
      const std::optional<KnownTensor> past_key =
          index < node.inputs.size() ? tensor_of(node.inputs[index]) : std::nullopt;
      if (past_key && past_key->dims.size() == 4) past_length = past_key->dims[2];
    }
    const int64_t batch = query->dims[0];
    return copies + 4 * batch * heads * q_length * (past_length + kv_length + v_head);
  }
  int64_t kv_block = std::max<int64_t>(HostL2CacheBytes() / (4 * 4 * (qk_head + v_head)), 1);
  int64_t q_block = std::min(kv_block, qk_head + v_head);
  kv_block = std::min(kv_block, kv_length);
  q_block = std::min(q_block, q_length);
  return copies + 4 * (2 * q_block + q_block * kv_block + q_block * v_head);
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
  if (value.runtime_data_type == 0) return ShapeInModel(value, shape_of);
  // Held in another element type (fp16_casts.h), with the dims of the value it stands for.
  std::optional<ValueShape> shape =
      value.sized_as >= 0 ? ShapeOfValue(graph, shape_of, value.sized_as) : ShapeInModel(value, shape_of);
  if (shape.has_value()) shape->data_type = value.runtime_data_type;
  return shape;
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
  if (ir_version >= 4) {
    summary.overridable.assign(graph.values.size(), false);
    for (const onnx::ValueInfoProto& input : graph.proto->input()) {
      auto it = graph.value_by_name.find(input.name());
      if (it != graph.value_by_name.end() && graph.values[it->second].origin == ValueOrigin::kInitializer) {
        summary.overridable[it->second] = true;
      }
    }
  }
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
  // Level 1: equal ConstantOfShape values are one weight (shared_constants.h).
  ShareEqualConstantsOfShape(summary, graph);
  // Level 2's QDQ and dynamic-quantization rules come before the float
  // fusions below can see the float ops they replace.
  ApplyQuantizedRewrites(isa, shape_of, graph, summary);
  CancelTransposePairs(graph, summary);
  // Partitioning, after level 1 and before the Casts: float16 ops with no
  // float16 kernel and a function body ORT takes at this opset become the
  // body's nodes (fp16_function_bodies.h), which no fusion below sees as
  // the op (a Conv + LeakyRelu is not fused then).
  InlineFloat16FunctionBodies(opset, shape_of, summary, graph);
  std::vector<Absorbed> absorbed_of(graph.nodes.size(), Absorbed::kNothing);
  RunChains(/*allow_conv_add=*/false, shape_of, graph, summary, absorbed_of);
  std::vector<bool> has_activation(absorbed_of.size());
  for (size_t node = 0; node < absorbed_of.size(); ++node) has_activation[node] = absorbed_of[node] == Absorbed::kActivation;
  // Float16 ops without a float16 kernel run in float32 behind Casts; ORT
  // 1.30 inserts them after its level-1 passes, before levels 2 and 3
  // (fp16_casts.h).
  ApplyFloat16Casts(shape_of, summary, graph, has_activation);
  // Registered only where MLAS has a block (graph_transformer_utils.cc,
  // GenerateTransformers, Level3: MlasNchwcGetBlockSize() > 1).
  if (const int64_t block = NchwcBlockSize(isa); block > 1) ApplyNchwcLayout(block, shape_of, summary, graph, has_activation);
  absorbed_of.assign(has_activation.size(), Absorbed::kNothing);
  for (size_t node = 0; node < has_activation.size(); ++node) {
    if (has_activation[node]) absorbed_of[node] = Absorbed::kActivation;
  }
  RunChains(/*allow_conv_add=*/true, shape_of, graph, summary, absorbed_of);
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

int64_t KernelWorkspaceBytes(CpuIsa isa, const IrGraph& graph, const FusionSummary& fusions, const IrNode& node,
                             const TensorLookup& tensor_of) {
  if (std::optional<int64_t> quantized = QuantizedKernelWorkspaceBytes(isa, graph, node, tensor_of)) return *quantized;
  if (node.proto->domain() == "com.microsoft" && node.proto->op_type() == "MultiHeadAttention") {
    return MultiHeadAttentionWorkspaceBytes(node, tensor_of);
  }
  if (!IsDefaultDomain(*node.proto)) return 0;
  if (node.proto->op_type() == "Conv") return ConvWorkspaceBytes(isa, node, tensor_of);
  if (node.proto->op_type() == "LRN") return LrnWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "NegativeLogLikelihoodLoss") return NllLossWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "Where") return WhereWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "Softmax" || node.proto->op_type() == "LogSoftmax") {
    return SoftmaxWorkspaceBytes(node, tensor_of);
  }
  return 0;
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
//    fixed part is not live then. 1.5 KiB, below that minimum.
constexpr int64_t kOnnxRuntimeCpuRunEndBytes = 12800;
constexpr int64_t kOnnxRuntimeCpuRunEndBytesPerBinding = 448;
constexpr int64_t kOnnxRuntimeCpuOutputCopySlackBytes = 4608;
constexpr int64_t kOnnxRuntimeCpuDuringKernelsBytes = 1536;

int64_t RunOverheadBytes(int64_t tensor_bytes, int64_t input_bytes, int64_t output_bytes, int64_t bindings) {
  const int64_t fixed = kOnnxRuntimeCpuRunEndBytes + kOnnxRuntimeCpuRunEndBytesPerBinding * bindings;
  const int64_t run_end =
      input_bytes + output_bytes + std::max(fixed, output_bytes + kOnnxRuntimeCpuOutputCopySlackBytes);
  return std::max(kOnnxRuntimeCpuDuringKernelsBytes, run_end - tensor_bytes);
}

}  // namespace footprint::ort
