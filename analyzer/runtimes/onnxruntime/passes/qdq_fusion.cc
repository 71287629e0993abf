// ORT's QDQ rules for quantized graphs at level 2: QDQS8ToU8Transformer
// (int8 Q -> DQ pairs made uint8 on x86-64) and QDQSelectorActionTransformer
// (each DequantizeLinear -> op -> QuantizeLinear group a selector of
// core/optimizer/qdq_transformer/selectors_actions/ takes becomes one node:
// QLinearConv, QLinearMatMul, QGemm, QLinearAdd/Mul, QLinearConcat, QLinear
// pools and activations; or the op itself on the quantized tensor for
// data-movement ops, whose Q/DQ are dropped; it reads the DequantizeLinear
// inputs and writes the QuantizeLinear outputs, the float tensors inside
// become kFusedAway, weights stay quantized). The other quantized rules are
// passes of their own (passes.h): the CSE of quantizers, the dynamic
// quantization fusions, the unfolded weight DequantizeLinear, NHWC. Paths
// are in github.com/microsoft/onnxruntime; "probe" means an ORT 1.30
// optimized-model dump or heap measurement of bench/ground_truth/ (see
// docs/ground-truth.md, "Quantized copies").

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {


// How a selector of qdq_selector_action_transformer.cc groups an op.
enum class GroupKind {
  kDrop,      // DropQDQNodesRules: the op runs on the quantized tensor, Q and DQ dropped.
  kUnary,     // UnaryOpQDQRules: QLinear<op> (com.microsoft).
  kBinary,    // BinaryOpQDQRules: QLinearAdd, QLinearMul.
  kVariadic,  // VariadicOpQDQRules: QLinearConcat.
  kConv,      // ConvQDQRules: QLinearConv.
  kMatMul,    // MatMulQDQRules: QLinearMatMul (with a Q).
  kGemm,      // GemmQDQRules: QGemm (Q optional).
  kSplit,     // SplitQDQRules: Split on the quantized tensor.
};

std::optional<GroupKind> KindOf(const std::string& op) {
  static const auto* const kKinds = new absl::flat_hash_map<std::string, GroupKind>{
      {"Expand", GroupKind::kDrop},        {"Flatten", GroupKind::kDrop},    {"Gather", GroupKind::kDrop},
      {"GatherElements", GroupKind::kDrop}, {"Reshape", GroupKind::kDrop},   {"Slice", GroupKind::kDrop},
      {"Squeeze", GroupKind::kDrop},       {"Tile", GroupKind::kDrop},       {"Transpose", GroupKind::kDrop},
      {"Unsqueeze", GroupKind::kDrop},     {"Resize", GroupKind::kDrop},     {"MaxPool", GroupKind::kDrop},
      {"ReduceMax", GroupKind::kDrop},     {"ReduceMin", GroupKind::kDrop},  {"AveragePool", GroupKind::kUnary},
      {"LeakyRelu", GroupKind::kUnary},    {"GlobalAveragePool", GroupKind::kUnary},
      {"Sigmoid", GroupKind::kUnary},      {"Softmax", GroupKind::kUnary},   {"Add", GroupKind::kBinary},
      {"Mul", GroupKind::kBinary},         {"Concat", GroupKind::kVariadic}, {"Conv", GroupKind::kConv},
      {"MatMul", GroupKind::kMatMul},      {"Gemm", GroupKind::kGemm},       {"Split", GroupKind::kSplit}};
  auto it = kKinds->find(op);
  if (it == kKinds->end()) return std::nullopt;
  return it->second;
}

// A DequantizeLinear's output: the node (or, for a weight's, the node the
// analysis folded at load) and the quantized value it reads.
struct Dequantized {
  const onnx::NodeProto* proto = nullptr;  // nullptr: a float weight ORT quantizes itself (WeightBiasQuantization).
  ValueId quantized = -1;
  int32_t type = 0;  // The quantized element type (TensorProto.DataType).
};


int32_t QuantizedType(const IrGraph& graph, const GraphRewrite& rewrite, const onnx::NodeProto& proto);

std::optional<Dequantized> DequantizedFrom(const IrGraph& graph, const GraphRewrite& rewrite, ValueId id) {
  const IrValue& value = graph.values[id];
  const onnx::NodeProto* proto = nullptr;
  if (value.origin == ValueOrigin::kNodeOutput && value.producer >= 0) proto = graph.nodes[value.producer].proto;
  if (value.origin == ValueOrigin::kFolded) proto = value.folded_from;
  if (proto == nullptr || !IsDequantizeLinear(*proto) || proto->input_size() < 1) {
    return std::nullopt;
  }
  // A node's input as the graph links it now (MergeEqualQuantizers may have
  // given it the output of an equal QuantizeLinear); a folded one's by name.
  std::optional<ValueId> quantized = ValueNamed(graph, proto->input(0));
  if (value.origin == ValueOrigin::kNodeOutput && !graph.nodes[value.producer].inputs.empty()) {
    quantized = graph.nodes[value.producer].inputs[0];
  }
  if (!quantized.has_value()) return std::nullopt;
  return Dequantized{.proto = proto, .quantized = *quantized, .type = QuantizedType(graph, rewrite, *proto)};
}


// The element type of the integer side of a Q or DQ node: the type ORT runs
// that tensor in when a rule changed it (QDQS8ToU8: HeldValue::data_type),
// else its zero point's (the ONNX rule: x or y has the zero point's type),
// uint8 without one.
int32_t QuantizedType(const IrGraph& graph, const GraphRewrite& rewrite, const onnx::NodeProto& proto) {
  const bool dequantize = proto.op_type() == "DequantizeLinear";
  const std::string integer_side = dequantize ? (proto.input_size() > 0 ? proto.input(0) : std::string())
                                              : (proto.output_size() > 0 ? proto.output(0) : std::string());
  if (std::optional<ValueId> value = ValueNamed(graph, integer_side)) {
    if (HeldAs(rewrite, *value).data_type != 0) return HeldAs(rewrite, *value).data_type;
  }
  if (proto.input_size() >= 3) {
    if (std::optional<ValueId> zero_point = ValueNamed(graph, proto.input(2))) {
      if (const onnx::TensorProto* tensor = ConstantTensor(graph, *zero_point)) return tensor->data_type();
    }
  }
  if (proto.op_type() == "DequantizeLinear") {
    if (std::optional<ValueId> x = ValueNamed(graph, proto.input(0))) {
      if (const onnx::TensorProto* tensor = ConstantTensor(graph, *x)) return tensor->data_type();
    }
  }
  return onnx::TensorProto::UINT8;
}

bool SameConstant(const IrGraph& graph, const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::optional<ValueId> va = ValueNamed(graph, a);
  std::optional<ValueId> vb = ValueNamed(graph, b);
  if (!va || !vb) return false;
  const onnx::TensorProto* ta = ConstantTensor(graph, *va);
  const onnx::TensorProto* tb = ConstantTensor(graph, *vb);
  if (ta == nullptr || tb == nullptr) return false;
  onnx::TensorProto ca = *ta;
  onnx::TensorProto cb = *tb;
  ca.clear_name();
  cb.clear_name();
  return ca.SerializeAsString() == cb.SerializeAsString();
}

// IsQDQPairSupported (qdq_util.cc): the Q and the DQ use the same scale and
// zero point, so that dropping both leaves the values unchanged.
bool SameParameters(const IrGraph& graph, const onnx::NodeProto& q, const onnx::NodeProto& dq) {
  if (q.input_size() < 2 || dq.input_size() < 2) return false;
  if (!SameConstant(graph, q.input(1), dq.input(1))) return false;
  const std::string q_zero = q.input_size() >= 3 ? q.input(2) : "";
  const std::string dq_zero = dq.input_size() >= 3 ? dq.input(2) : "";
  if (q_zero.empty() || dq_zero.empty()) return q_zero.empty() && dq_zero.empty();
  return SameConstant(graph, q_zero, dq_zero);
}

// The QuantizeLinear nodes that read `value`, when they are all its readers
// (CheckQDQNodes: q_nodes.size() == the node's output edges) and it is no
// graph output; empty otherwise.
std::vector<NodeId> QuantizersOf(const IrGraph& graph, ValueId value) {
  const IrValue& v = graph.values[value];
  if (v.is_graph_output || v.consumers.empty()) return {};
  std::vector<NodeId> quantizers;
  for (NodeId consumer : v.consumers) {
    const onnx::NodeProto& proto = *graph.nodes[consumer].proto;
    if (!IsQuantizeLinear(proto)) return {};
    quantizers.push_back(consumer);
  }
  return quantizers;
}

// A group a selector takes: the target node, for each explicit input its
// DequantizeLinear (or none), and for each output its QuantizeLinear (or -1
// when the group has no Q, QGemm only).
struct Group {
  NodeId target = -1;
  std::vector<std::optional<Dequantized>> dequantized;
  std::vector<NodeId> quantizers;
  std::string new_op;  // The op ORT runs instead ("" keeps the op: kDrop, kSplit).
};

// WeightBiasQuantization (level 2, before the selectors; core/optimizer/
// qdq_transformer/weight_bias_quantization.cc): a Conv, ConvTranspose or
// Gemm whose input is dequantized and whose output goes to a Q alone, with a
// float weight or a 1-D float bias that is a constant initializer (after
// folding), gets them quantized by ORT: the weight int8 per tensor,
// symmetric; the bias int32. Probe: the QDQ copies of the light_* models,
// whose Conv weights and biases are folded ConstantOfShape outputs with no
// DequantizeLinear, run QLinearConv and QGemm in ORT's optimized model.
void QuantizeFloatWeights(const IrGraph& graph, const PassContext& context, const IrNode& target,
                          std::vector<std::optional<Dequantized>>& dequantized) {
  const std::string& op = target.proto->op_type();
  if ((op != "Conv" && op != "Gemm") || target.inputs.size() < 2 || !dequantized[0].has_value() ||
      target.outputs.size() != 1 || QuantizersOf(graph, target.outputs[0]).size() != 1) {
    return;
  }
  auto float_weight = [&](ValueId id) {
    if (!IsConstantWeight(graph, context.rewrite, id)) return false;
    const IrValue& value = graph.values[id];
    if (value.origin == ValueOrigin::kInitializer) return value.initializer->data_type() == onnx::TensorProto::FLOAT;
    return true;  // A Constant or a folded value of a float model: the rest of the group checks the types.
  };
  if (!dequantized[1].has_value() && float_weight(target.inputs[1])) {
    dequantized[1] = Dequantized{.quantized = target.inputs[1], .type = onnx::TensorProto::INT8};
  }
  if (target.inputs.size() >= 3 && !dequantized[2].has_value() && float_weight(target.inputs[2])) {
    dequantized[2] = Dequantized{.quantized = target.inputs[2], .type = onnx::TensorProto::INT32};
  }
}

bool Is16BitType(int32_t type) { return type == onnx::TensorProto::INT16 || type == onnx::TensorProto::UINT16; }

// Whether a DequantizeLinear of the group reads, or a QuantizeLinear writes,
// a 16-bit integer.
bool Has16BitSide(const IrGraph& graph, const GraphRewrite& rewrite, const Group& group) {
  for (const std::optional<Dequantized>& input : group.dequantized) {
    if (input.has_value() && Is16BitType(input->type)) return true;
  }
  for (NodeId q : group.quantizers) {
    if (q >= 0 && Is16BitType(QuantizedType(graph, rewrite, *graph.nodes[q].proto))) return true;
  }
  return false;
}

// 16-bit Q/DQ groups (qdq_selector_action_transformer.cc): ORT's CPU rules
// allow them only where the Q/DQ are dropped around data movement (the
// "drop" selector: Expand Flatten Gather GatherElements Reshape Slice
// Squeeze Tile Transpose Unsqueeze) and around Split (SplitNodeGroupSelector
// checks no bit width). Resize and MaxPool/ReduceMax/ReduceMin have their
// own drop selectors without 16-bit; the Unary, Binary, Variadic, Conv,
// MatMul, Gemm and Where selectors are registered with allow_16bit false
// (no 16-bit QLinear kernels): those groups run DQ -> float op -> Q.
bool Allows16Bit(const std::string& op, GroupKind kind) {
  if (kind == GroupKind::kSplit) return true;
  if (kind != GroupKind::kDrop) return false;
  return op != "Resize" && op != "MaxPool" && op != "ReduceMax" && op != "ReduceMin";
}

// The group a selector of kind `kind` takes at `group.target`, whose
// dequantized inputs and quantizers are found (`all_quantized`: every output
// has its one QuantizeLinear), or nullopt: the checks of each
// NodeGroupSelector and its types.
std::optional<Group> CheckGroup(const IrGraph& graph, const GraphRewrite& rewrite, bool int8_allowed, GroupKind kind,
                                bool all_quantized, Group group) {
  const IrNode& target = graph.nodes[group.target];
  const onnx::NodeProto& proto = *target.proto;
  const int inputs = static_cast<int>(target.inputs.size());
  int dequantized_inputs = 0;
  for (const std::optional<Dequantized>& input : group.dequantized) dequantized_inputs += input.has_value() ? 1 : 0;
  const bool one_output = target.outputs.size() == 1;
  auto input_type = [&](int slot) { return group.dequantized[slot]->type; };
  auto output_type = [&]() { return QuantizedType(graph, rewrite, *graph.nodes[group.quantizers[0]].proto); };
  // X, W (and B) of a Conv or MatMul: int8 X only where int8 is allowed and
  // with an int8 W.
  auto int8_refused = [&]() {
    return input_type(0) == onnx::TensorProto::INT8 && (!int8_allowed || input_type(1) != onnx::TensorProto::INT8);
  };
  switch (kind) {
    case GroupKind::kDrop:
    case GroupKind::kSplit: {
      // One DQ, on the data input; same type and parameters on both sides.
      if (dequantized_inputs != 1 || !group.dequantized[0].has_value() || !all_quantized) return std::nullopt;
      if (kind == GroupKind::kDrop && !one_output) return std::nullopt;
      for (NodeId q : group.quantizers) {
        if (QuantizedType(graph, rewrite, *graph.nodes[q].proto) != input_type(0)) return std::nullopt;
        if (group.dequantized[0]->proto == nullptr ||
            !SameParameters(graph, *graph.nodes[q].proto, *group.dequantized[0]->proto)) {
          return std::nullopt;
        }
      }
      return group;
    }
    case GroupKind::kUnary:
      if (inputs != 1 || dequantized_inputs != 1 || !all_quantized || !one_output) return std::nullopt;
      if (input_type(0) != output_type()) return std::nullopt;
      group.new_op = "QLinear" + proto.op_type();
      return group;
    case GroupKind::kBinary:
    case GroupKind::kVariadic:
      if (dequantized_inputs != inputs || !all_quantized || !one_output) return std::nullopt;
      for (int slot = 0; slot < inputs; ++slot) {
        if (input_type(slot) != output_type()) return std::nullopt;
      }
      group.new_op = "QLinear" + proto.op_type();
      return group;
    case GroupKind::kConv:
      // ConvNodeGroupSelector: X, W (and B) all dequantized, a Q; X and Y of
      // one type, an int32 B.
      if (inputs < 2 || dequantized_inputs != inputs || !all_quantized || !one_output) return std::nullopt;
      if (input_type(0) != output_type() || int8_refused()) return std::nullopt;
      if (inputs == 3 && input_type(2) != onnx::TensorProto::INT32) return std::nullopt;
      group.new_op = "QLinearConv";
      return group;
    case GroupKind::kMatMul:
      // MatMulNodeGroupSelector with a Q: QLinearMatMul. (Without one,
      // MatMulIntegerToFloat only where the EP allows it: not modelled.)
      if (inputs != 2 || dequantized_inputs != 2 || !all_quantized || !one_output) return std::nullopt;
      if (input_type(0) != output_type() || int8_refused()) return std::nullopt;
      group.new_op = "QLinearMatMul";
      return group;
    case GroupKind::kGemm:
      // GemmNodeGroupSelector: every input dequantized, the Q optional.
      if (inputs < 2 || dequantized_inputs != inputs || !one_output) return std::nullopt;
      if (!all_quantized) {
        if (!QuantizersOf(graph, target.outputs[0]).empty()) return std::nullopt;
        group.quantizers.assign(1, -1);
      } else if (input_type(0) != output_type()) {
        return std::nullopt;
      }
      if (inputs == 3 && input_type(2) != onnx::TensorProto::INT32) return std::nullopt;
      group.new_op = "QGemm";
      return group;
  }
  return std::nullopt;
}

// The group whose target is node `target_id`, when a selector takes it.
std::optional<Group> SelectGroup(const IrGraph& graph, const PassContext& context, bool int8_allowed,
                                 NodeId target_id) {
  const IrNode& target = graph.nodes[target_id];
  const onnx::NodeProto& proto = *target.proto;
  if (!IsDefaultDomain(proto) || !target.bodies.empty() || target.outputs.empty()) return std::nullopt;
  const std::optional<GroupKind> kind = KindOf(proto.op_type());
  if (!kind.has_value()) return std::nullopt;
  Group group{.target = target_id};
  for (ValueId input : target.inputs) group.dequantized.push_back(DequantizedFrom(graph, context.rewrite, input));
  QuantizeFloatWeights(graph, context, target, group.dequantized);
  // Each output read by QuantizeLinear only, one Q per output.
  bool all_quantized = true;
  for (ValueId output : target.outputs) {
    std::vector<NodeId> quantizers = QuantizersOf(graph, output);
    if (quantizers.size() != 1) {
      all_quantized = false;
      break;
    }
    group.quantizers.push_back(quantizers[0]);
  }
  if (Has16BitSide(graph, context.rewrite, group) && !Allows16Bit(proto.op_type(), *kind)) return std::nullopt;
  return CheckGroup(graph, context.rewrite, int8_allowed, *kind, all_quantized, std::move(group));
}

// The target reads the DQs' inputs and writes the Qs' outputs; the Qs leave
// the graph (marked in `removed`).
int64_t ApplyGroup(const Group& group, IrGraph& graph, PassContext& context, std::vector<bool>& removed) {
  int64_t fused = 0;
  IrNode& target = graph.nodes[group.target];
  for (size_t slot = 0; slot < target.inputs.size(); ++slot) {
    if (!group.dequantized[slot].has_value()) continue;
    const ValueId dequantized = target.inputs[slot];
    EraseConsumer(graph.values[dequantized], group.target);
    target.inputs[slot] = group.dequantized[slot]->quantized;
    graph.values[target.inputs[slot]].consumers.push_back(group.target);
  }
  for (size_t slot = 0; slot < target.outputs.size(); ++slot) {
    const NodeId q = group.quantizers[slot];
    if (q < 0) continue;  // QGemm without a Q writes the float output itself.
    const ValueId float_output = target.outputs[slot];
    const ValueId quantized_output = graph.nodes[q].outputs[0];
    MarkFusedAway(graph, context.rewrite, float_output);
    target.outputs[slot] = quantized_output;
    graph.values[quantized_output].producer = group.target;
    for (ValueId input : graph.nodes[q].inputs) {
      if (input != float_output) EraseConsumer(graph.values[input], q);
    }
    removed[q] = true;
    ++fused;
  }
  if (!group.new_op.empty()) {
    auto proto = std::make_shared<onnx::NodeProto>(*target.proto);
    proto->set_op_type(group.new_op);
    proto->set_domain("com.microsoft");
    if (group.new_op == "QLinearConv") {
      // ORT's inputs (contrib_defs.cc, QLinearConv): x, x_scale, x_zero_point,
      // w, w_scale, w_zero_point, y_scale, y_zero_point, B; the kernel's rules
      // read the weight's zero point by position.
      auto parameter = [](const onnx::NodeProto& q_or_dq, int slot) {
        return q_or_dq.input_size() > slot ? q_or_dq.input(slot) : std::string();
      };
      const onnx::NodeProto& x = *group.dequantized[0]->proto;
      const onnx::NodeProto& y = *graph.nodes[group.quantizers[0]].proto;
      // A weight ORT quantized itself: int8, zero point 0 ("" here).
      const onnx::NodeProto* w = group.dequantized[1]->proto;
      const std::string w_name = w != nullptr ? w->input(0) : graph.values[group.dequantized[1]->quantized].name;
      proto->clear_input();
      const std::string x_name = graph.values[group.dequantized[0]->quantized].name;
      for (const std::string& name : {x_name, parameter(x, 1), parameter(x, 2), w_name,
                                      w != nullptr ? parameter(*w, 1) : std::string(),
                                      w != nullptr ? parameter(*w, 2) : std::string(), parameter(y, 1),
                                      parameter(y, 2)}) {
        proto->add_input(name);
      }
      if (group.dequantized.size() > 2) proto->add_input(graph.values[group.dequantized[2]->quantized].name);
    }
    UseRuntimeProto(context.rewrite, target, std::move(proto));
  }
  return fused;
}

// The value of a one-element int8 zero point (a constant tensor), or
// nullopt for anything else.
std::optional<int8_t> ScalarInt8ZeroPoint(const IrGraph& graph, const std::string& name) {
  std::optional<ValueId> id = ValueNamed(graph, name);
  if (!id.has_value()) return std::nullopt;
  const onnx::TensorProto* tensor = ConstantTensor(graph, *id);
  if (tensor == nullptr || tensor->data_type() != onnx::TensorProto::INT8 ||
      tensor->data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  int64_t elements = 1;
  for (int64_t dim : tensor->dims()) elements *= dim;
  if (elements != 1) return std::nullopt;
  if (tensor->has_raw_data()) {
    if (tensor->raw_data().size() != 1) return std::nullopt;
    return static_cast<int8_t>(tensor->raw_data()[0]);
  }
  if (tensor->int32_data_size() != 1) return std::nullopt;
  return static_cast<int8_t>(tensor->int32_data(0));
}

// QDQS8ToU8Transformer (level 2, before the selectors, registered when int8
// QDQ is not allowed: x86-64, core/optimizer/graph_transformer_utils.cc;
// core/optimizer/qdq_transformer/qdq_s8_to_u8.cc): a QuantizeLinear whose
// only reader is a DequantizeLinear, both with the same one-element int8
// zero point (a constant), runs in uint8 with the zero point + 128; the
// tensor between them is uint8 (same bytes). The selectors then see uint8
// activations. EnsureUniqueDQForNodeUnit gave every reader of a
// DequantizeLinear its own copy first (unique_dequantizers.cc), so a Q whose
// DQ had several readers has several readers itself: it stays int8, and the int8 Conv or MatMul
// reading it is not fused on x86-64 (QDQIsInt8Allowed() is false there).
// Probe: the QDQ copies with int8 activations (make_quantized_copies.py
// --activation-type int8; ORT's quantize_static writes them by default):
// in ORT's optimized model every QLinearConv reads and writes uint8, and
// each Conv whose input or output tensor has several readers stays a float
// Conv between DequantizeLinear and QuantizeLinear (FastestDet: 55 and 15).
PassChange ConvertInt8PairsToUint8(IrGraph& graph, PassContext& context) {
  for (const IrNode& node : graph.nodes) {
    const onnx::NodeProto& q = *node.proto;
    if (!IsQuantizeLinear(q) || q.input_size() != 3 || node.outputs.size() != 1) {
      continue;
    }
    const ValueId quantized = node.outputs[0];
    const IrValue& value = graph.values[quantized];
    if (value.is_graph_output || value.consumers.size() != 1) continue;
    const IrNode& reader = graph.nodes[value.consumers[0]];
    const onnx::NodeProto& dq = *reader.proto;
    if (!IsDequantizeLinear(dq) || dq.input_size() != 3 ||
        reader.outputs.size() != 1) {
      continue;
    }
    // One edge from the DQ after EnsureUniqueDQForNodeUnit: at most one
    // reader, and no graph output beside a reader.
    const IrValue& dequantized = graph.values[reader.outputs[0]];
    if (dequantized.consumers.size() > 1 || (dequantized.consumers.size() == 1 && dequantized.is_graph_output)) {
      continue;
    }
    const std::optional<int8_t> q_zero_point = ScalarInt8ZeroPoint(graph, q.input(2));
    const std::optional<int8_t> dq_zero_point = ScalarInt8ZeroPoint(graph, dq.input(2));
    if (!q_zero_point.has_value() || !dq_zero_point.has_value() || *q_zero_point != *dq_zero_point) continue;
    MutableHeld(graph, context.rewrite, quantized).data_type = onnx::TensorProto::UINT8;
  }
  return {};
}

// QDQSelectorActionTransformer (level 2), node by node in GraphViewer's
// order (selector_action_transformer.cc, ApplyImpl), which is the order the
// nodes it makes take their indices in (execution_order.h). Each
// DequantizeLinear has one reader by now (unique_dequantizers.cc). int8
// groups are fused as they are only where QDQIsInt8Allowed()
// (qdq_selector_action_transformer.h: ARM), else they were made uint8 first.
PassChange ApplyQdqSelectors(IrGraph& graph, PassContext& context) {
  PassChange change;
  if (!HasDequantizeLinear(graph)) return change;  // Every group starts at a DequantizeLinear.
  const bool int8_allowed = context.target.int8_qdq;
  std::vector<bool> removed(graph.nodes.size(), false);
  std::vector<NodeId> walk(graph.nodes.size());
  for (size_t id = 0; id < walk.size(); ++id) walk[id] = static_cast<NodeId>(id);
  if (std::optional<std::vector<NodeId>> ort_order = OrtExecutionOrder(graph, OrtNodeIndices(graph, context.rewrite))) {
    walk = *std::move(ort_order);
  }
  for (const NodeId id : walk) {
    if (removed[id]) continue;
    if (std::optional<Group> group = SelectGroup(graph, context, int8_allowed, id)) {
      change.fused_nodes += ApplyGroup(*group, graph, context, removed);
    }
  }
  // Activation DequantizeLinear nodes no reader is left for go too.
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    if (removed[id] || !IsDequantizeLinear(*node.proto) || node.outputs.size() != 1) continue;
    const IrValue& output = graph.values[node.outputs[0]];
    if (!output.consumers.empty() || output.is_graph_output) continue;
    for (ValueId input : node.inputs) EraseConsumer(graph.values[input], static_cast<NodeId>(id));
    MarkFusedAway(graph, context.rewrite, node.outputs[0]);
    removed[id] = true;
    ++change.fused_nodes;
  }
  if (change.fused_nodes > 0) RemoveNodes(removed, graph);
  return change;
}

}  // namespace

const Pass kQdqS8ToU8 = {.name = "QDQS8ToU8Transformer",
                         .stage = OrtStage::kLevel2,
                         .source = "core/optimizer/qdq_transformer/qdq_s8_to_u8.cc",
                         .apply = &ConvertInt8PairsToUint8};

const Pass kQdqSelectorActions = {
    .name = "QDQSelectorActionTransformer",
    .stage = OrtStage::kLevel2,
    .source = "core/optimizer/qdq_transformer/selectors_actions/qdq_selector_action_transformer.cc",
    .apply = &ApplyQdqSelectors};

}  // namespace footprint::ort
