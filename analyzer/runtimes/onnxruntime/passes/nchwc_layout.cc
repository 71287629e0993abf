// ORT's NCHWc layout pass: the level-3 rewrite of
// core/optimizer/nchwc_transformer.cc, which runs 2-D Convs, pools and the
// ops around them on tensors in a blocked channel layout. It changes which
// tensors exist and their sizes, so it is a graph rewrite like the fusions:
//  - a tensor an NCHWc node writes is a new value (NAME.nchwc) sized after
//    the NCHW value it stands for (HeldValue::sized_as), its channels padded
//    to whole blocks (HeldValue::channel_block): 8 channels with AVX2, 16
//    with AVX-512F (the target's facts; ARM64's table has no NCHWc row);
//  - ReorderInput and ReorderOutput nodes copy between the layouts where a
//    reader needs the other one, once per tensor;
//  - an Add/Sum of a single-use NchwcConv is fused into it, written over the
//    other addend (GraphRewrite::writes_over), then an activation.
// What it does not model: the NchwcArgument shape tracking ORT uses to prove
// symbolic shapes equal (we compare known dims), and MLAS's Strassen 1x1
// path at block 16 (snchwc_strassen.cpp: only when explicitly enabled).
//
// Followed rule by rule from core/optimizer/nchwc_transformer.cc; the names
// in comments are its methods, and the rules ORT 1.30 applies beyond that
// file are marked "measured" with what was measured.
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

constexpr char kNchwcDomain[] = "com.microsoft.nchwc";  // ORT's kMSNchwcDomain.

// ORT's NCHWc layout pass (core/optimizer/nchwc_transformer.cc, level 3 on
// x86-64), followed rule by rule on our graph; the names in comments are its
// methods. The block is MlasNchwcGetBlockSize() of the target ISA (8 with
// AVX2, 16 with AVX-512F: the target's facts, ../targets.cc). What it changes in memory:
//  - a tensor an NCHWc node writes is a new value padded to whole blocks of
//    channels (the NCHW value it stands for is its `sized_as`);
//  - ReorderInput copies an NCHW tensor that an NCHWc Conv or pool reads
//    (once per tensor), ReorderOutput copies a blocked tensor back for the
//    consumers (and graph outputs) that need NCHW (once per tensor);
//  - the Add/Sum after a single-use NCHWc Conv is fused into it, written over
//    the other addend (NchwcConv's MayInplace(3, 0)); then an activation too.
class NchwcLayout {
 public:
  NchwcLayout(PassContext& context, IrGraph& graph)
      : block_(context.target.nchwc_block), context_(context), graph_(graph) {}

  PassChange Run() {
    std::optional<std::vector<NodeId>> order = OrtExecutionOrder(graph_, OrtNodeIndices(graph_, context_.rewrite));
    if (!order.has_value()) return {};  // The schedule reports the cycle.
    const size_t original_nodes = graph_.nodes.size();
    state_.assign(original_nodes, NodeState{});
    before_.assign(original_nodes, {});
    removed_.assign(original_nodes, false);
    for (NodeId node : *order) Transform(node);
    if (args_order_.empty()) return change_;
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
    if (std::optional<std::vector<NodeId>> sorted = NodeTopologicalOrder(graph_); sorted.has_value()) {
      bool in_order = true;
      for (size_t i = 0; i < sorted->size(); ++i) in_order = in_order && (*sorted)[i] == static_cast<NodeId>(i);
      if (!in_order) Rebuild(*sorted);
    }
    return change_;
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

  // MlasReorderInputNchw copies whole groups of 4 channels: ORT's
  // ReorderInput enforces channels % 4 == 0 (contrib_ops/cpu/nchwc_ops.cc,
  // ReorderInput::Compute; microsoft/onnxruntime#14392), so a Conv whose
  // input would need it with another count stays NCHW.
  static constexpr int64_t kReorderChannels = 4;
  static constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

  std::optional<ValueShape> ShapeOf(ValueId id) const { return ShapeOfValue(graph_, context_, id); }

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

  bool IsConstant(ValueId id) const { return IsConstantWeight(graph_, context_.rewrite, id); }

  int64_t Uses(ValueId id) const {
    const IrValue& value = graph_.values[id];
    return static_cast<int64_t>(value.consumers.size()) + (value.is_graph_output ? 1 : 0);
  }

  Arg* FindArg(ValueId logical) {
    auto it = args_.find(logical);
    return it == args_.end() ? nullptr : &it->second;
  }

  ValueId AddBlockedValue(ValueId logical) {
    return AddValue(graph_, context_.rewrite,
                    IrValue{.name = graph_.values[logical].name + ".nchwc", .origin = ValueOrigin::kNodeOutput},
                    HeldValue{.sized_as = logical, .channel_block = block_});
  }

  // A ReorderInput or ReorderOutput (linked when the graph is rebuilt).
  NodeId AddReorder(const std::string& op, const std::string& display_name, ValueId input, ValueId output) {
    auto proto =
        NewNodeProto(op, kNchwcDomain, display_name, {graph_.values[input].name}, {graph_.values[output].name});
    const NodeId id = static_cast<NodeId>(graph_.nodes.size());
    graph_.nodes.push_back(MadeNode(context_.rewrite, std::move(proto), {input}, {output}));
    state_.push_back(NodeState{});
    ++change_.reorder_nodes;
    return id;
  }

  // The node now runs as `op` in the NCHWc domain (its attributes kept).
  void Rewrite(NodeId node_id, const std::string& op) {
    IrNode& node = graph_.nodes[node_id];
    onnx::NodeProto& proto = UseRuntimeProto(context_.rewrite, node, std::make_shared<onnx::NodeProto>(*node.proto));
    proto.set_op_type(op);
    proto.set_domain(kNchwcDomain);
    if (op == "ReorderOutput") {
      ++change_.reorder_nodes;
    } else {
      ++change_.layout_nodes;
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
  void FuseInto(NodeId node_id, const Arg& into_ref) {
    // A copy: `into_ref` may live in args_, which the insertion below may rehash.
    const Arg into = into_ref;
    const ValueId logical = graph_.nodes[node_id].outputs[0];
    const int64_t uses = Uses(logical);
    args_[logical] = Arg{.blocked = into.blocked, .logical = logical, .producer = into.producer,
                         .starting_uses = uses, .remaining_uses = uses, .channels = into.channels};
    args_order_.push_back(logical);
    removed_[node_id] = true;
    ++change_.fused_nodes;
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
      const NodeId reorder = AddReorder("ReorderInput", "ReorderInput(" + graph_.values[logical].name + ")", logical,
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
    if (!node.bodies.empty() || node.inputs.empty() || node.outputs.empty()) return;
    const std::string& op = node.proto->op_type();
    // QuickGelu (a fused SiLU, quick_gelu_fusion.cc) runs on the blocked
    // tensor, not fused into the Conv: ORT 1.30's optimized YOLOv5-shaped
    // model has NchwcConv -> QuickGelu -> NchwcConv with no reorder between.
    if (node.proto->domain() == "com.microsoft" && op == "QuickGelu") {
      TransformActivation(node_id, /*fusable=*/false);
      return;
    }
    if (hardswish_muls_.contains(node_id)) {
      FuseHardSwishMul(node_id);
      return;
    }
    if (!IsDefaultDomain(*node.proto)) return;
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
      TransformActivation(node_id, /*fusable=*/true);
    } else if (op == "HardSigmoid") {
      TransformHardSigmoid(node_id);
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
    // TransformConv's conditions as ORT 1.30 applies them: measured on its
    // optimized-model dumps (optimizedModelFilePath) at block 8 (AVX2: node
    // under qemu -cpu Haswell) and 16 (an AVX-512 host), the same rules at
    // both (the nchwc_block_* probes of bench/ground_truth/probe_models.py).
    // The nchwc_transformer.cc we could read predates the input padding:
    //  - a depthwise Conv of C % 4 == 0 channels, any block count (padded);
    //    C 6 or 18 stays NCHW even after a blocked producer;
    //  - another grouped Conv: whole blocks of input and of output channels
    //    per group (nchwc_transformer.cc, TransformConv);
    //  - ungrouped: Cin < block reads the NCHW input as it is (the filter
    //    OIHWBo), Cin >= block needs Cin % 4 == 0 (ReorderInput pads it up
    //    to whole blocks); any Cout, padded.
    if (group > 1) {
      const bool depthwise = input_channels == 1 && output_channels == group;
      if (depthwise) {
        if (output_channels % kReorderChannels != 0) return;
      } else if (input_channels % block_ != 0 || output_channels % group != 0 ||
                 (output_channels / group) % block_ != 0) {
        return;
      }
    } else if (input_channels < block_) {
      reorder_input = false;  // NchwcConv reads the NCHW input directly.
    } else if (input_channels % kReorderChannels != 0) {
      return;
    }
    if (node.proto->input_size() >= 3 && !node.proto->input(2).empty()) {
      const ValueId bias = node.inputs[2];
      const std::optional<std::vector<int64_t>> bias_dims = KnownDims(bias, kFloat, 1);
      if (!IsConstant(bias) || !bias_dims.has_value() || (*bias_dims)[0] != output_channels) return;
    }
    const bool has_activation = context_.activation_fused.contains(node.proto);
    Rewrite(node_id, "Conv");
    state_[node_id] = NodeState{.nchwc_conv = true, .has_activation = has_activation};
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
    if (!channels.has_value() || *channels % block_ != 0) return;
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
        MutableWritesOver(graph_, context_.rewrite)[conv_arg.blocked] = addend;
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
    BecomeDepthwiseConv(node_id, *arg);
  }

  // The node runs as a depthwise 1x1 NchwcConv of `arg`'s blocked tensor
  // (its scale and bias are weights), writing a new blocked tensor.
  void BecomeDepthwiseConv(NodeId node_id, Arg& arg) {
    Rewrite(node_id, "Conv");
    state_[node_id] = NodeState{.nchwc_conv = true};
    UseBlocked(node_id, arg);
    CreateArg(node_id, arg.channels);
  }

  void TransformConcat(NodeId node_id) {
    const IrNode& node = graph_.nodes[node_id];
    const onnx::AttributeProto* axis = FindAttribute(*node.proto, "axis");
    if (axis == nullptr || axis->i() != 1 || node.outputs.size() != 1) return;
    std::optional<std::vector<Arg*>> args = AllBlocked(node);
    if (!args.has_value()) return;
    int64_t channels = 0;
    for (Arg* arg : *args) {
      if (arg->channels % block_ != 0) return;
      channels += arg->channels;
    }
    for (Arg* arg : *args) UseBlocked(node_id, *arg);
    CreateArg(node_id, channels);
  }

  // An elementwise op on a blocked tensor; `fusable`: one MLAS can run as
  // the Conv's activation when the Conv is its only producer and reader.
  void TransformActivation(NodeId node_id, bool fusable) {
    const IrNode& node = graph_.nodes[node_id];
    Arg* arg = FindArg(node.inputs[0]);
    if (arg == nullptr || node.outputs.size() != 1) return;
    UseBlocked(node_id, *arg);
    NodeState& conv = state_[arg->producer];
    if (fusable && conv.nchwc_conv && arg->starting_uses == 1 && !conv.has_activation) {
      conv.has_activation = true;
      FuseInto(node_id, *arg);
      return;
    }
    CreateArg(node_id, arg->channels);
  }

  // HardSigmoid is one of TransformActivation's ops (nchwc_transformer.cc,
  // Transform, can_fuse_activation; microsoft/onnxruntime#27821). Measured,
  // not in the nchwc_transformer.cc we read: x * HardSigmoid(x) after an
  // NchwcConv runs as its "HardSwish" activation (ORT 1.30's optimized
  // ppocr_cls and dbnet of bench/ground_truth/heldout_standins.py: 18 and 20
  // such Convs; its hardswish_* probes: alpha 1/6, beta 0.5, either Mul input
  // order, after a fused Sum too; not with alpha 0.2, nor with a third reader
  // of the Conv's output: then both ops run on blocked tensors).
  void TransformHardSigmoid(NodeId node_id) {
    Arg* arg = FindArg(graph_.nodes[node_id].inputs[0]);
    if (arg == nullptr || !FuseHardSwish(node_id, *arg)) TransformActivation(node_id, /*fusable=*/true);
  }

  bool FuseHardSwish(NodeId node_id, Arg& arg) {
    const IrNode& node = graph_.nodes[node_id];
    const NodeState& conv = state_[arg.producer];
    if (!conv.nchwc_conv || conv.has_activation || arg.starting_uses != 2 || node.outputs.size() != 1) return false;
    const onnx::AttributeProto* alpha = FindAttribute(*node.proto, "alpha");
    const onnx::AttributeProto* beta = FindAttribute(*node.proto, "beta");
    if (alpha == nullptr || std::abs(alpha->f() - 1.0f / 6.0f) > 1e-6f || (beta != nullptr && beta->f() != 0.5f)) {
      return false;  // HardSigmoid's defaults are alpha 0.2, beta 0.5.
    }
    const ValueId gate = node.outputs[0];
    const IrValue& gate_value = graph_.values[gate];
    if (gate_value.is_graph_output || gate_value.consumers.size() != 1) return false;
    const NodeId mul = gate_value.consumers[0];
    const IrNode& mul_node = graph_.nodes[mul];
    if (!IsDefaultDomain(*mul_node.proto) || mul_node.proto->op_type() != "Mul" || mul_node.inputs.size() != 2) {
      return false;
    }
    const std::vector<ValueId>& factors = mul_node.inputs;
    if (!((factors[0] == arg.logical && factors[1] == gate) || (factors[0] == gate && factors[1] == arg.logical))) {
      return false;
    }
    UseBlocked(node_id, arg);
    state_[arg.producer].has_activation = true;
    FuseInto(node_id, arg);  // The gate stands on the Conv's tensor, read only by the Mul.
    hardswish_muls_.insert(mul);
    return true;
  }

  // The Mul of a HardSwish fused into its Conv: its output is the Conv's.
  void FuseHardSwishMul(NodeId node_id) {
    const std::vector<ValueId> factors = graph_.nodes[node_id].inputs;
    for (ValueId factor : factors) UseBlocked(node_id, *FindArg(factor));
    FuseInto(node_id, *FindArg(factors[0]));
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
    BecomeDepthwiseConv(node_id, *arg);
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
    const std::optional<std::vector<float>> values = InlineFloats(*scales.initializer);
    if (!values.has_value() || values->size() != 4 || (*values)[0] != 1.0f || (*values)[1] != 1.0f) return;
    for (float value : *values) {
      if (value < 1.0f || static_cast<float>(static_cast<int64_t>(value)) != value) return;
    }
    Rewrite(node_id, "Upsample");
    UseBlocked(node_id, *arg);
    CreateArg(node_id, arg->channels);
  }

  // Finalize: a ReorderOutput back to NCHW for every blocked tensor that
  // still has NCHW readers or is a graph output; the NCHW value of one that
  // has none never exists.
  void Finalize() {
    for (ValueId logical : args_order_) {
      const Arg& arg = args_.at(logical);
      IrValue& value = graph_.values[logical];
      if (arg.remaining_uses > 0) {
        const NodeId reorder = AddReorder("ReorderOutput", "ReorderOutput(" + value.name + ")", arg.blocked, logical);
        reorder_outputs_.emplace_back(arg.producer, reorder);
      } else {
        MarkFusedAway(graph_, context_.rewrite, logical);
      }
    }
  }

  // Puts graph.nodes in `order` (the removed ones left out) and recomputes
  // every producer and consumer from the nodes.
  void Rebuild(const std::vector<NodeId>& order) {
    std::vector<IrNode> nodes;
    nodes.reserve(order.size());
    for (NodeId node : order) nodes.push_back(std::move(graph_.nodes[node]));
    graph_.nodes = std::move(nodes);
    RelinkValues(graph_);
  }

  const int64_t block_;  // Channels per NCHWc block (MlasNchwcGetBlockSize()).
  PassContext& context_;
  IrGraph& graph_;
  PassChange change_;
  std::vector<NodeState> state_;                        // Per node.
  std::vector<std::vector<NodeId>> before_;             // Per original node: the ReorderInputs it needs first.
  std::vector<bool> removed_;                           // Per original node: fused into an NchwcConv.
  absl::flat_hash_map<ValueId, Arg> args_;              // By the NCHW value they stand for.
  std::vector<ValueId> args_order_;                     // args_' keys, as created.
  absl::flat_hash_map<ValueId, ValueId> reorder_inputs_;  // NCHW value -> its ReorderInput copy.
  absl::flat_hash_set<NodeId> hardswish_muls_;            // The Muls of HardSwishes fused into a Conv.
  std::vector<std::pair<NodeId, NodeId>> reorder_outputs_;  // (producer, ReorderOutput) pairs.
};

// Rewrites `graph` in place (nodes reordered topologically, removed and
// added; values added). A Conv whose kernel already applies an activation
// (ORT's level-2 fusion: FusedActivation) takes in no Sum. The nodes are
// taken in ORT's own order (execution_order.h; NchwcTransformer walks
// GraphViewer's order), so the nodes made are numbered as ORT numbers them.
PassChange ApplyNchwcLayout(IrGraph& graph, PassContext& context) { return NchwcLayout(context, graph).Run(); }

}  // namespace

const Pass kNchwcTransformer = {.name = "NchwcTransformer",
                                .stage = OrtStage::kLevel3,
                                .source = "core/optimizer/nchwc_transformer.cc",
                                .apply = &ApplyNchwcLayout};

}  // namespace footprint::ort
