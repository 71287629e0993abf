// The rules of each runtime profile (runtime_profile.h). onnxruntime-cpu is
// ONNX Runtime's CPU execution provider at graph optimization level "all",
// one thread; the paths cited are in github.com/microsoft/onnxruntime.
#include "analyzer/memory/runtime_profile.h"

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
#include "analyzer/memory/folding.h"
#include "onnx/onnx_pb.h"

namespace footprint {
namespace {

constexpr char kOnnxRuntimeCpu[] = "onnxruntime-cpu";
constexpr char kNchwcDomain[] = "com.microsoft.nchwc";  // ORT's kMSNchwcDomain.

bool IsDefaultDomain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

// A weight ORT treats as constant (see FusionSummary::overridable).
bool IsConstantWeight(const IrGraph& graph, const FusionSummary& summary, ValueId id) {
  const IrValue& value = graph.values[id];
  if (!summary.overridable.empty() && summary.overridable[id]) return false;
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant ||
         value.origin == ValueOrigin::kFolded;
}

// A value's element type and dims: a weight's from the model, others' from `shape_of`.
std::optional<ValueShape> ShapeOfValue(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const IrValue& value = graph.values[id];
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

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return &attribute;
  }
  return nullptr;
}

// Conv's scratch on ORT's CPU provider (float32): core/providers/cpu/nn/conv.cc
// allocates MlasConvPrepare's WorkingBufferSize floats for the run, and
// core/mlas/lib/convolve.cpp (MlasConvPrepare) sizes it, with one thread:
//  - strides 1 and no padding, and a pointwise kernel (K == input channels
//    per group): none (GEMM straight on the input);
//  - filters per group > output spatial size: the whole im2col matrix,
//    OutputSize * K floats;
//  - otherwise segments of MLAS_CONV_WORKING_BUFFER_SIZE_PER_THREAD
//    (MLAS_SGEMM_STRIDEN * MLAS_SGEMM_STRIDEK = 128 * 128) floats, or, with
//    more than one batch or group, max(OutputSize * K, filters * OutputSize,
//    that) floats.
int64_t ConvWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
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
  const int64_t batch = input->dims[0];
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
  } else if (batch > 1 || group > 1) {
    floats = std::max({output_size * k, filters * output_size, kSegmentFloats});
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

// ORT's NCHWc layout pass (core/optimizer/nchwc_transformer.cc, level 3 on
// x86-64), followed rule by rule on our graph; the names in comments are its
// methods. MlasNchwcGetBlockSize() is 8 with AVX2, this profile's machine (16
// with AVX-512F). What it changes in memory:
//  - a tensor an NCHWc node writes is a new value padded to whole blocks of
//    channels (the NCHW value it stands for is its `sized_as`);
//  - ReorderInput copies an NCHW tensor that an NCHWc Conv or pool reads
//    (once per tensor), ReorderOutput copies a blocked tensor back for the
//    consumers (and graph outputs) that need NCHW (once per tensor);
//  - the Add/Sum after a single-use NCHWc Conv is fused into it, written over
//    the other addend (NchwcConv's MayInplace(3, 0)); then an activation too.
class NchwcLayout {
 public:
  NchwcLayout(const ShapeLookup& shape_of, std::vector<Absorbed>& absorbed_of, FusionSummary& summary,
              IrGraph& graph)
      : shape_of_(shape_of), absorbed_of_(absorbed_of), summary_(summary), graph_(graph) {}

  void Run() {
    std::optional<std::vector<NodeId>> order = TopologicalOrder();
    if (!order.has_value()) return;  // The schedule reports the cycle.
    const size_t original_nodes = graph_.nodes.size();
    state_.assign(original_nodes, NodeState{});
    before_.assign(original_nodes, {});
    removed_.assign(original_nodes, false);
    for (NodeId node : *order) Transform(node);
    if (args_order_.empty()) return;
    Finalize();
    std::vector<NodeId> final_order;
    std::vector<std::vector<NodeId>> after(graph_.nodes.size());
    for (const auto& [node, reorder] : reorder_outputs_) after[node].push_back(reorder);
    for (NodeId node : *order) {
      for (NodeId reorder : before_[node]) final_order.push_back(reorder);
      if (!removed_[node]) final_order.push_back(node);
      for (NodeId reorder : after[node]) final_order.push_back(reorder);
    }
    Rebuild(final_order);
    // A Conv that took in a Sum reads the other addend, which may come later.
    if (std::optional<std::vector<NodeId>> sorted = TopologicalOrder(); sorted.has_value()) {
      bool in_order = true;
      for (size_t i = 0; i < sorted->size(); ++i) in_order = in_order && (*sorted)[i] == static_cast<NodeId>(i);
      if (!in_order) Rebuild(*sorted);
    }
  }

 private:
  struct Arg {                // NchwcArgument: a blocked tensor standing for an NCHW value.
    ValueId blocked = -1;     // The blocked tensor.
    ValueId logical = -1;     // The NCHW value it stands for.
    NodeId producer = -1;     // The NCHWc node that writes `blocked`.
    int64_t starting_uses = 0;
    int64_t remaining_uses = 0;  // Uses still reading `logical` in NCHW.
    int64_t channels = 0;        // Logical channels (the tensor is padded to the block).
  };
  struct NodeState {
    bool nchwc_conv = false;      // An NchwcConv (from a Conv or a BatchNormalization).
    bool has_activation = false;  // Its kernel applies an activation.
    bool has_sum = false;         // It sums into its Sum input.
  };

  static constexpr int64_t kBlock = 8;
  static constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

  std::optional<std::vector<NodeId>> TopologicalOrder() const {
    const size_t count = graph_.nodes.size();
    std::vector<int> pending(count, 0);
    for (size_t node = 0; node < count; ++node) {
      for (ValueId input : AllInputs(graph_.nodes[node])) {
        if (graph_.values[input].producer >= 0) ++pending[node];
      }
    }
    std::vector<NodeId> order;
    std::vector<NodeId> ready;
    for (size_t node = count; node-- > 0;) {
      if (pending[node] == 0) ready.push_back(static_cast<NodeId>(node));
    }
    while (!ready.empty()) {  // Smallest index first among the ready: file order where it is valid.
      std::sort(ready.begin(), ready.end(), std::greater<NodeId>());
      const NodeId node = ready.back();
      ready.pop_back();
      order.push_back(node);
      for (ValueId output : graph_.nodes[node].outputs) {
        for (NodeId consumer : graph_.values[output].consumers) {
          if (--pending[consumer] == 0) ready.push_back(consumer);
        }
      }
    }
    if (order.size() != count) return std::nullopt;
    return order;
  }

  static std::vector<ValueId> AllInputs(const IrNode& node) {
    std::vector<ValueId> inputs = node.inputs;
    inputs.insert(inputs.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
    return inputs;
  }

  std::optional<ValueShape> ShapeOf(ValueId id) const { return ShapeOfValue(graph_, shape_of_, id); }

  // Every dim known, as numbers; nullopt otherwise.
  std::optional<std::vector<int64_t>> KnownDims(ValueId id, int32_t data_type, size_t rank) const {
    std::optional<ValueShape> shape = ShapeOf(id);
    if (!shape.has_value() || shape->data_type != data_type || shape->dims.size() != rank) return std::nullopt;
    std::vector<int64_t> dims;
    for (const std::optional<int64_t>& dim : shape->dims) {
      if (!dim.has_value()) return std::nullopt;
      dims.push_back(*dim);
    }
    return dims;
  }

  bool IsConstant(ValueId id) const { return IsConstantWeight(graph_, summary_, id); }

  int64_t Uses(ValueId id) const {
    const IrValue& value = graph_.values[id];
    return static_cast<int64_t>(value.consumers.size()) + (value.is_graph_output ? 1 : 0);
  }

  Arg* FindArg(ValueId logical) {
    auto it = args_.find(logical);
    return it == args_.end() ? nullptr : &it->second;
  }

  ValueId AddBlockedValue(ValueId logical) {
    const ValueId id = static_cast<ValueId>(graph_.values.size());
    graph_.values.push_back(IrValue{.name = graph_.values[logical].name + ".nchwc",
                                    .origin = ValueOrigin::kNodeOutput,
                                    .sized_as = logical,
                                    .channel_block = kBlock});
    return id;
  }

  NodeId AddNode(const std::string& op, const std::string& display_name, ValueId input, ValueId output) {
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type(op);
    proto->set_domain(kNchwcDomain);
    proto->set_name(display_name);
    proto->add_input(graph_.values[input].name);
    proto->add_output(graph_.values[output].name);
    graph_.runtime_protos.push_back(proto);
    const NodeId id = static_cast<NodeId>(graph_.nodes.size());
    IrNode node;
    node.proto = proto.get();
    node.proto_index = -1;
    node.display_name = display_name;
    node.inputs = {input};
    node.outputs = {output};
    graph_.nodes.push_back(std::move(node));
    state_.push_back(NodeState{});
    absorbed_of_.push_back(Absorbed::kNothing);
    ++summary_.reorder_nodes;
    return id;
  }

  // The node now runs as `op` in the NCHWc domain (its attributes kept).
  void Rewrite(NodeId node_id, const std::string& op) {
    IrNode& node = graph_.nodes[node_id];
    auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
    proto->set_op_type(op);
    proto->set_domain(kNchwcDomain);
    node.proto = proto.get();
    graph_.runtime_protos.push_back(std::move(proto));
    if (op == "ReorderOutput") {
      ++summary_.reorder_nodes;
    } else {
      ++summary_.layout_nodes;
    }
  }

  // The node reads `arg`'s blocked tensor wherever it read the NCHW value.
  void UseBlocked(NodeId node_id, Arg& arg) {
    for (ValueId& input : graph_.nodes[node_id].inputs) {
      if (input != arg.logical) continue;
      input = arg.blocked;
      --arg.remaining_uses;
    }
  }

  // CreateNchwcArgument: the node's first output becomes a blocked tensor.
  void CreateArg(NodeId node_id, int64_t channels) {
    IrNode& node = graph_.nodes[node_id];
    const ValueId logical = node.outputs[0];
    const ValueId blocked = AddBlockedValue(logical);
    graph_.nodes[node_id].outputs[0] = blocked;
    const int64_t uses = Uses(logical);
    args_[logical] = Arg{.blocked = blocked, .logical = logical, .producer = node_id,
                         .starting_uses = uses, .remaining_uses = uses, .channels = channels};
    args_order_.push_back(logical);
  }

  // FuseNchwcArgument: the node is merged into `into`'s producer, whose
  // blocked tensor now stands for the node's output too.
  void FuseInto(NodeId node_id, const Arg& into) {
    const ValueId logical = graph_.nodes[node_id].outputs[0];
    const int64_t uses = Uses(logical);
    args_[logical] = Arg{.blocked = into.blocked, .logical = logical, .producer = into.producer,
                         .starting_uses = uses, .remaining_uses = uses, .channels = into.channels};
    args_order_.push_back(logical);
    removed_[node_id] = true;
    ++summary_.fused_nodes;
  }

  // InsertReorderInput: the node's input 0 is copied to the blocked layout
  // (one copy per tensor, shared by its NCHWc readers).
  void ReorderInput(NodeId node_id) {
    const ValueId logical = graph_.nodes[node_id].inputs[0];
    auto it = reorder_inputs_.find(logical);
    ValueId blocked;
    if (it != reorder_inputs_.end()) {
      blocked = it->second;
    } else {
      blocked = AddBlockedValue(logical);
      const NodeId reorder = AddNode("ReorderInput", "ReorderInput(" + graph_.values[logical].name + ")", logical,
                                     blocked);
      before_[node_id].push_back(reorder);
      reorder_inputs_[logical] = blocked;
    }
    graph_.nodes[node_id].inputs[0] = blocked;
  }

  // The node's input 0 in the blocked layout: the producer's, or a reorder.
  void TakeBlockedInput(NodeId node_id) {
    if (Arg* arg = FindArg(graph_.nodes[node_id].inputs[0])) {
      UseBlocked(node_id, *arg);
    } else {
      ReorderInput(node_id);
    }
  }

  void Transform(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    if (!IsDefaultDomain(*node.proto) || !node.bodies.empty() || node.inputs.empty() || node.outputs.empty()) {
      return;
    }
    const std::string& op = node.proto->op_type();
    if (op == "Conv") {
      TransformConv(node_id);
    } else if (op == "MaxPool" || op == "AveragePool") {
      TransformPool(node_id, /*needs_blocked_input=*/false);
    } else if (op == "GlobalMaxPool" || op == "GlobalAveragePool") {
      TransformPool(node_id, /*needs_blocked_input=*/true);
    } else if (op == "Add" || op == "Sum") {
      TransformBinary(node_id, /*add=*/true);
    } else if (op == "Mul") {
      TransformBinary(node_id, /*add=*/false);
    } else if (op == "Concat") {
      TransformConcat(node_id);
    } else if (op == "Relu" || op == "Sigmoid" || op == "Tanh") {
      TransformActivation(node_id);
    } else if (op == "BatchNormalization") {
      TransformBatchNormalization(node_id);
    } else if (op == "Transpose") {
      TransformTranspose(node_id);
    } else if (op == "Upsample" || op == "Resize") {
      TransformResize(node_id);
    }
  }

  void TransformConv(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    if (node.inputs.size() < 2 || node.outputs.size() != 1 || !IsConstant(node.inputs[1])) return;
    const std::optional<std::vector<int64_t>> filter = KnownDims(node.inputs[1], kFloat, 4);
    if (!filter.has_value()) return;
    const int64_t output_channels = (*filter)[0];
    const int64_t input_channels = (*filter)[1];
    int64_t group = 1;
    if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "group")) group = attribute->i();
    bool reorder_input = true;
    if (group > 1) {
      // A depthwise Conv of any width: measured, pytorch-converted
      // test_Conv2d_depthwise* (4 channels) run as NchwcConv in ORT 1.30's
      // optimized-model dump with no scratch (older nchwc_transformer.cc also
      // required whole blocks of output channels here).
      const bool depthwise = input_channels == 1 && output_channels == group;
      if (!depthwise && (input_channels % kBlock != 0 || output_channels % group != 0 ||
                         (output_channels / group) % kBlock != 0)) {
        return;
      }
    } else if (input_channels < kBlock) {
      reorder_input = false;  // NchwcConv reads the NCHW input directly.
    } else if (input_channels % kBlock != 0) {
      return;
    }
    if (node.proto->input_size() >= 3 && !node.proto->input(2).empty()) {
      const ValueId bias = node.inputs[2];
      const std::optional<std::vector<int64_t>> bias_dims = KnownDims(bias, kFloat, 1);
      if (!IsConstant(bias) || !bias_dims.has_value() || (*bias_dims)[0] != output_channels) return;
    }
    Rewrite(node_id, "Conv");
    state_[node_id] = NodeState{.nchwc_conv = true, .has_activation = absorbed_of_[node_id] == Absorbed::kActivation};
    if (reorder_input) TakeBlockedInput(node_id);
    CreateArg(node_id, output_channels);
  }

  void TransformPool(NodeId node_id, bool needs_blocked_input) {
    const IrNode& node = graph_.nodes[node_id];
    if (node.proto->output_size() > 1) return;  // MaxPool's Indices.
    if (needs_blocked_input && FindArg(node.inputs[0]) == nullptr) return;
    const std::optional<ValueShape> shape = ShapeOf(node.inputs[0]);
    if (!shape.has_value() || shape->data_type != kFloat || shape->dims.size() != 4) return;
    const std::optional<int64_t> channels = shape->dims[1];
    if (!channels.has_value() || *channels % kBlock != 0) return;
    Rewrite(node_id, node.proto->op_type());
    TakeBlockedInput(node_id);
    CreateArg(node_id, *channels);
  }

  // The inputs' blocked tensors when every input has one, nullptr otherwise.
  std::optional<std::vector<Arg*>> AllBlocked(const IrNode& node) {
    std::vector<Arg*> args;
    for (ValueId input : node.inputs) {
      Arg* arg = FindArg(input);
      if (arg == nullptr) return std::nullopt;
      args.push_back(arg);
    }
    return args;
  }

  void TransformBinary(NodeId node_id, bool add) {
    const IrNode& node = graph_.nodes[node_id];
    if (node.outputs.size() != 1 || node.inputs.size() != static_cast<size_t>(node.proto->input_size())) return;
    std::optional<std::vector<Arg*>> args = AllBlocked(node);
    if (!args.has_value()) {
      if (!add) TransformScale(node_id);
      return;
    }
    const int64_t channels = (*args)[0]->channels;
    bool shapes_match = true;
    const std::optional<std::vector<int64_t>> first = KnownDims((*args)[0]->logical, kFloat, 4);
    for (Arg* arg : *args) {
      if (arg->channels != channels) return;
      shapes_match = shapes_match && first.has_value() && KnownDims(arg->logical, kFloat, 4) == first;
    }
    if (!shapes_match && !add) return;  // Mul: only on proven equal shapes.
    for (Arg* arg : *args) UseBlocked(node_id, *arg);  // A repeated input is replaced at its first.
    if (shapes_match && add && args->size() == 2 && (*args)[0] != (*args)[1]) {
      for (int n = 0; n < 2; ++n) {
        const Arg& conv_arg = *(*args)[n];
        NodeState& conv = state_[conv_arg.producer];
        if (!conv.nchwc_conv || conv.has_sum || conv.has_activation || conv_arg.starting_uses != 1) continue;
        const ValueId addend = (*args)[1 - n]->blocked;
        graph_.nodes[conv_arg.producer].inputs.push_back(addend);  // NchwcConv's Sum input.
        if (summary_.writes_over.size() < graph_.values.size()) summary_.writes_over.resize(graph_.values.size(), -1);
        summary_.writes_over[conv_arg.blocked] = addend;
        conv.has_sum = true;
        FuseInto(node_id, conv_arg);
        return;
      }
    }
    CreateArg(node_id, channels);
  }

  // A Mul of a blocked tensor by a per-channel weight ([C, 1, 1] or
  // [1, C, 1, 1]) becomes a depthwise 1x1 NchwcConv, as a BatchNormalization
  // does. Measured: ORT 1.30's optimized light_densenet121 has such a
  // "<name>_mul_nchwc" Conv after each "_bn_nchwc" one (the Add of a
  // per-channel weight after it stays NCHW); the nchwc_transformer.cc we
  // read predates this rule.
  void TransformScale(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    if (node.inputs.size() != 2) return;
    Arg* arg = FindArg(node.inputs[0]);
    const ValueId scale = node.inputs[1];
    if (arg == nullptr || !IsConstant(scale)) return;
    const std::optional<ValueShape> shape = ShapeOf(scale);
    if (!shape.has_value() || shape->data_type != kFloat) return;
    std::vector<int64_t> dims;
    for (const std::optional<int64_t>& dim : shape->dims) {
      if (!dim.has_value()) return;
      dims.push_back(*dim);
    }
    const bool per_channel = (dims.size() == 3 && dims[0] == arg->channels && dims[1] == 1 && dims[2] == 1) ||
                             (dims.size() == 4 && dims[0] == 1 && dims[1] == arg->channels && dims[2] == 1 &&
                              dims[3] == 1);
    if (!per_channel) return;
    Rewrite(node_id, "Conv");
    state_[node_id] = NodeState{.nchwc_conv = true};
    UseBlocked(node_id, *arg);
    CreateArg(node_id, arg->channels);
  }

  void TransformConcat(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    const onnx::AttributeProto* axis = FindAttribute(*node.proto, "axis");
    if (axis == nullptr || axis->i() != 1 || node.outputs.size() != 1) return;
    std::optional<std::vector<Arg*>> args = AllBlocked(node);
    if (!args.has_value()) return;
    int64_t channels = 0;
    for (Arg* arg : *args) {
      if (arg->channels % kBlock != 0) return;
      channels += arg->channels;
    }
    for (Arg* arg : *args) UseBlocked(node_id, *arg);
    CreateArg(node_id, channels);
  }

  void TransformActivation(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    Arg* arg = FindArg(node.inputs[0]);
    if (arg == nullptr || node.outputs.size() != 1) return;
    UseBlocked(node_id, *arg);
    NodeState& conv = state_[arg->producer];
    if (conv.nchwc_conv && arg->starting_uses == 1 && !conv.has_activation) {
      conv.has_activation = true;
      FuseInto(node_id, *arg);
      return;
    }
    CreateArg(node_id, arg->channels);
  }

  // A BatchNormalization on a blocked tensor becomes a depthwise 1x1 NchwcConv.
  void TransformBatchNormalization(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    if (node.proto->output_size() > 1 || node.inputs.size() != 5) return;
    Arg* arg = FindArg(node.inputs[0]);
    if (arg == nullptr) return;
    if (const onnx::AttributeProto* spatial = FindAttribute(*node.proto, "spatial"); spatial && spatial->i() != 1) {
      return;
    }
    for (size_t i = 1; i < 5; ++i) {
      const std::optional<std::vector<int64_t>> dims = KnownDims(node.inputs[i], kFloat, 1);
      if (!IsConstant(node.inputs[i]) || !dims.has_value() || (*dims)[0] != arg->channels) return;
    }
    Rewrite(node_id, "Conv");
    state_[node_id] = NodeState{.nchwc_conv = true};
    UseBlocked(node_id, *arg);
    CreateArg(node_id, arg->channels);
  }

  // A Transpose to NHWC of a blocked tensor is ReorderOutput(channels_last).
  void TransformTranspose(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    Arg* arg = FindArg(node.inputs[0]);
    const onnx::AttributeProto* perm = FindAttribute(*node.proto, "perm");
    if (arg == nullptr || perm == nullptr || perm->ints_size() != 4) return;
    if (perm->ints(0) != 0 || perm->ints(1) != 2 || perm->ints(2) != 3 || perm->ints(3) != 1) return;
    Rewrite(node_id, "ReorderOutput");
    UseBlocked(node_id, *arg);
  }

  // Nearest, integral, spatial-only scaling of a blocked tensor.
  void TransformResize(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    Arg* arg = FindArg(node.inputs[0]);
    if (arg == nullptr || node.outputs.size() != 1) return;
    if (const onnx::AttributeProto* mode = FindAttribute(*node.proto, "mode"); mode && mode->s() != "nearest") return;
    const int inputs = node.proto->input_size();
    int scales_input = 1;
    if (node.proto->op_type() == "Resize" && inputs >= 3) {  // Resize-11 and later.
      if (inputs != 3) return;                                 // "sizes" given.
      scales_input = 2;
      const onnx::AttributeProto* transform = FindAttribute(*node.proto, "coordinate_transformation_mode");
      const onnx::AttributeProto* nearest = FindAttribute(*node.proto, "nearest_mode");
      if (transform == nullptr || transform->s() != "asymmetric" || nearest == nullptr || nearest->s() != "floor") {
        return;
      }
    }
    if (inputs <= scales_input || node.proto->input(scales_input).empty()) return;
    const auto scales_id = graph_.value_by_name.find(node.proto->input(scales_input));
    if (scales_id == graph_.value_by_name.end() || !IsConstant(scales_id->second)) return;
    const IrValue& scales = graph_.values[scales_id->second];
    if (scales.origin != ValueOrigin::kInitializer) return;
    const std::optional<std::vector<float>> values = FloatData(*scales.initializer);
    if (!values.has_value() || values->size() != 4 || (*values)[0] != 1.0f || (*values)[1] != 1.0f) return;
    for (float value : *values) {
      if (value < 1.0f || static_cast<float>(static_cast<int64_t>(value)) != value) return;
    }
    Rewrite(node_id, "Upsample");
    UseBlocked(node_id, *arg);
    CreateArg(node_id, arg->channels);
  }

  static std::optional<std::vector<float>> FloatData(const onnx::TensorProto& tensor) {
    if (tensor.data_type() != kFloat || tensor.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
    if (tensor.float_data_size() > 0) return std::vector<float>(tensor.float_data().begin(), tensor.float_data().end());
    const std::string& raw = tensor.raw_data();
    if (raw.size() % sizeof(float) != 0) return std::nullopt;
    std::vector<float> values(raw.size() / sizeof(float));
    std::memcpy(values.data(), raw.data(), raw.size());  // Little-endian, as ONNX stores it.
    return values;
  }

  // Finalize: a ReorderOutput back to NCHW for every blocked tensor that
  // still has NCHW readers or is a graph output; the NCHW value of one that
  // has none never exists.
  void Finalize() {
    for (ValueId logical : args_order_) {
      const Arg& arg = args_.at(logical);
      IrValue& value = graph_.values[logical];
      if (arg.remaining_uses > 0) {
        const NodeId reorder = AddNode("ReorderOutput", "ReorderOutput(" + value.name + ")", arg.blocked, logical);
        reorder_outputs_.emplace_back(arg.producer, reorder);
      } else {
        value.origin = ValueOrigin::kFusedAway;
        summary_.fused_tensors.push_back(value.name);
      }
    }
  }

  // Puts graph.nodes in `order` (the removed ones left out) and recomputes
  // every producer and consumer from the nodes.
  void Rebuild(const std::vector<NodeId>& order) {
    std::vector<IrNode> nodes;
    std::vector<Absorbed> absorbed;
    nodes.reserve(order.size());
    for (NodeId node : order) {
      nodes.push_back(std::move(graph_.nodes[node]));
      absorbed.push_back(absorbed_of_[node]);
    }
    graph_.nodes = std::move(nodes);
    absorbed_of_ = std::move(absorbed);
    for (IrValue& value : graph_.values) {
      value.consumers.clear();
      if (value.origin == ValueOrigin::kNodeOutput || value.origin == ValueOrigin::kFusedAway) value.producer = -1;
    }
    for (size_t node_id = 0; node_id < graph_.nodes.size(); ++node_id) {
      const IrNode& node = graph_.nodes[node_id];
      for (ValueId input : AllInputs(node)) graph_.values[input].consumers.push_back(static_cast<NodeId>(node_id));
      for (ValueId output : node.outputs) graph_.values[output].producer = static_cast<NodeId>(node_id);
    }
    if (!summary_.writes_over.empty()) summary_.writes_over.resize(graph_.values.size(), -1);
    if (!summary_.overridable.empty()) summary_.overridable.resize(graph_.values.size(), false);
  }

  const ShapeLookup& shape_of_;
  std::vector<Absorbed>& absorbed_of_;
  FusionSummary& summary_;
  IrGraph& graph_;
  std::vector<NodeState> state_;                        // Per node.
  std::vector<std::vector<NodeId>> before_;             // Per original node: the ReorderInputs it needs first.
  std::vector<bool> removed_;                           // Per original node: fused into an NchwcConv.
  absl::flat_hash_map<ValueId, Arg> args_;              // By the NCHW value they stand for.
  std::vector<ValueId> args_order_;                     // args_' keys, as created.
  absl::flat_hash_map<ValueId, ValueId> reorder_inputs_;  // NCHW value -> its ReorderInput copy.
  std::vector<std::pair<NodeId, NodeId>> reorder_outputs_;  // (producer, ReorderOutput) pairs.
};

// NegativeLogLikelihoodLoss's scratch (float32): measured (bench/ground_truth,
// inputs [3, C, D] for C 5 and 10, D 2160 and 4320), ORT holds 4 bytes per
// sample (N * d1 * ... * dk) for each of: the per-sample loss unless the
// reduction is "none" (then the output is it), the per-sample weight when
// a weight is given, and one more; the class count does not matter.
int64_t NllLossWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  if (!input || input->dtype != "float32" || input->dims.size() < 2) return 0;
  const int64_t samples = input->dims[0] * Product(input->dims, 2);
  const bool weighted = node.proto->input_size() >= 3 && !node.proto->input(2).empty();
  std::string reduction = "mean";
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "reduction")) reduction = attribute->s();
  return 4 * samples * ((reduction == "none" ? 1 : 2) + (weighted ? 1 : 0));
}

}  // namespace

std::vector<std::string> KnownRuntimes() { return {kOnnxRuntimeCpu}; }

bool IsKnownRuntime(const std::string& name) {
  const std::vector<std::string> names = KnownRuntimes();
  return std::find(names.begin(), names.end(), name) != names.end();
}

FusionSummary ApplyRuntimeFusions(const std::string& runtime, int64_t ir_version, const ShapeLookup& shape_of,
                                  IrGraph& graph) {
  FusionSummary summary;
  if (runtime != kOnnxRuntimeCpu) return summary;
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
  std::vector<Absorbed> absorbed_of(graph.nodes.size(), Absorbed::kNothing);
  RunChains(/*allow_conv_add=*/false, shape_of, graph, summary, absorbed_of);
  NchwcLayout(shape_of, absorbed_of, summary, graph).Run();
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
bool RuntimeRunsInPlace(const std::string& runtime, const onnx::NodeProto& node) {
  if (runtime != kOnnxRuntimeCpu || !IsDefaultDomain(node)) return false;
  static const auto* const kInPlace = new absl::flat_hash_set<std::string>{
      "Relu", "Sigmoid", "Tanh", "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid", "Softplus", "Softsign",
      "ThresholdedRelu", "Clip", "Dropout"};
  return kInPlace->contains(node.op_type());
}

int64_t KernelWorkspaceBytes(const std::string& runtime, const IrGraph& graph, const FusionSummary& fusions,
                             const IrNode& node, const TensorLookup& tensor_of) {
  if (runtime != kOnnxRuntimeCpu || !IsDefaultDomain(*node.proto)) return 0;
  if (node.proto->op_type() == "Conv") return ConvWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "LRN") return LrnWorkspaceBytes(node, tensor_of);
  if (node.proto->op_type() == "NegativeLogLikelihoodLoss") return NllLossWorkspaceBytes(node, tensor_of);
  return 0;
}

// Measured, not derived from ORT's source (bench/ground_truth/README.md,
// "Per-run overhead"). Two figures, as the run peak shows two shapes:
//  - at the run's end, with the inputs (the caller's) and outputs live, the
//    outputs are copied out of ORT's buffers (by the binding: onnxruntime-node,
//    as Python's, returns its own arrays) next to some fixed allocations: the
//    peak is inputs + outputs + max(13 KiB, outputs + 4.5 KiB). A 1-float
//    Identity, Relu or Add, or 4 chained Relus, peak 13,440-13,560 bytes
//    above their tensors whatever the node count (the median of the 275
//    models below 64 KiB is 13,528); Relu, AveragePool, MaxPool and
//    InstanceNormalization with outputs of 30-390 KB peak 4.7-5.7 KB above
//    inputs + 2 x outputs;
//  - while kernels run: an im2col Conv (64 KiB workspace) peaks only
//    1,616-2,272 bytes above its tensors and workspace (16 models), so the
//    fixed part is not live then. 1.5 KiB, below that minimum.
constexpr int64_t kOnnxRuntimeCpuRunEndBytes = 13 * 1024;
constexpr int64_t kOnnxRuntimeCpuOutputCopySlackBytes = 4608;
constexpr int64_t kOnnxRuntimeCpuDuringKernelsBytes = 1536;

int64_t RuntimeOverheadBytes(const std::string& runtime, int64_t arena_bytes, int64_t input_bytes,
                             int64_t output_bytes) {
  if (runtime != kOnnxRuntimeCpu) return 0;
  const int64_t run_end = input_bytes + output_bytes +
                          std::max(kOnnxRuntimeCpuRunEndBytes, output_bytes + kOnnxRuntimeCpuOutputCopySlackBytes);
  return std::max(kOnnxRuntimeCpuDuringKernelsBytes, run_end - arena_bytes);
}

}  // namespace footprint
