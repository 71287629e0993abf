// ORT's rules for quantized graphs (qdq_fusion.h). Paths are in
// github.com/microsoft/onnxruntime; "probe" means an ORT 1.30 optimized-model
// dump or heap measurement of bench/ground_truth/ (see
// docs/ground-truth.md, "Quantized copies").
#include "analyzer/runtimes/onnxruntime/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/cpu_isa.h"
#include "analyzer/runtimes/onnxruntime/runtime_profile.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

bool IsDefaultDomain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

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

std::optional<ValueId> ValueNamed(const IrGraph& graph, const std::string& name) {
  if (name.empty()) return std::nullopt;
  auto it = graph.value_by_name.find(name);
  if (it == graph.value_by_name.end()) return std::nullopt;
  return it->second;
}

int32_t QuantizedType(const IrGraph& graph, const onnx::NodeProto& proto);

std::optional<Dequantized> DequantizedFrom(const IrGraph& graph, ValueId id) {
  const IrValue& value = graph.values[id];
  const onnx::NodeProto* proto = nullptr;
  if (value.origin == ValueOrigin::kNodeOutput && value.producer >= 0) proto = graph.nodes[value.producer].proto;
  if (value.origin == ValueOrigin::kFolded) proto = value.folded_from;
  if (proto == nullptr || !IsDefaultDomain(*proto) || proto->op_type() != "DequantizeLinear" ||
      proto->input_size() < 1) {
    return std::nullopt;
  }
  std::optional<ValueId> quantized = ValueNamed(graph, proto->input(0));
  if (!quantized.has_value()) return std::nullopt;
  return Dequantized{.proto = proto, .quantized = *quantized, .type = QuantizedType(graph, *proto)};
}

// The constant tensor behind a value (an initializer or a Constant's value).
const onnx::TensorProto* ConstantTensor(const IrGraph& graph, ValueId id) {
  const IrValue& value = graph.values[id];
  if (value.origin == ValueOrigin::kInitializer) return value.initializer;
  if (value.origin == ValueOrigin::kConstant && value.constant != nullptr) {
    for (const onnx::AttributeProto& attribute : value.constant->attribute()) {
      if (attribute.name() == "value" && attribute.has_t()) return &attribute.t();
    }
  }
  return nullptr;
}

// The element type of the integer side of a Q or DQ node: its zero point's
// (the ONNX rule: x or y has the zero point's type), uint8 without one.
int32_t QuantizedType(const IrGraph& graph, const onnx::NodeProto& proto) {
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
    if (!IsDefaultDomain(proto) || proto.op_type() != "QuantizeLinear") return {};
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
void QuantizeFloatWeights(const IrGraph& graph, const FusionSummary& summary, const IrNode& target,
                          std::vector<std::optional<Dequantized>>& dequantized) {
  const std::string& op = target.proto->op_type();
  if ((op != "Conv" && op != "Gemm") || target.inputs.size() < 2 || !dequantized[0].has_value() ||
      target.outputs.size() != 1 || QuantizersOf(graph, target.outputs[0]).size() != 1) {
    return;
  }
  auto float_weight = [&](ValueId id) {
    if (!IsConstantWeight(graph, summary, id)) return false;
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

std::optional<Group> SelectGroup(const IrGraph& graph, const FusionSummary& summary, NodeId target_id) {
  const IrNode& target = graph.nodes[target_id];
  const onnx::NodeProto& proto = *target.proto;
  if (!IsDefaultDomain(proto) || !target.bodies.empty() || target.outputs.empty()) return std::nullopt;
  const std::optional<GroupKind> kind = KindOf(proto.op_type());
  if (!kind.has_value()) return std::nullopt;
  Group group{.target = target_id};
  int dequantized_inputs = 0;
  for (ValueId input : target.inputs) group.dequantized.push_back(DequantizedFrom(graph, input));
  QuantizeFloatWeights(graph, summary, target, group.dequantized);
  for (const std::optional<Dequantized>& input : group.dequantized) dequantized_inputs += input.has_value() ? 1 : 0;
  const int inputs = static_cast<int>(target.inputs.size());
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
  const bool one_output = target.outputs.size() == 1;
  auto input_type = [&](int slot) { return group.dequantized[slot]->type; };
  auto output_type = [&]() { return QuantizedType(graph, *graph.nodes[group.quantizers[0]].proto); };
  switch (*kind) {
    case GroupKind::kDrop:
    case GroupKind::kSplit: {
      // One DQ, on the data input; same type and parameters on both sides.
      if (dequantized_inputs != 1 || !group.dequantized[0].has_value() || !all_quantized) return std::nullopt;
      if (*kind == GroupKind::kDrop && !one_output) return std::nullopt;
      for (NodeId q : group.quantizers) {
        if (QuantizedType(graph, *graph.nodes[q].proto) != input_type(0)) return std::nullopt;
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
    case GroupKind::kConv: {
      // ConvNodeGroupSelector: X, W (and B) all dequantized, a Q; X and Y of
      // one type, int8 X only with an int8 W, an int32 B.
      if (inputs < 2 || dequantized_inputs != inputs || !all_quantized || !one_output) return std::nullopt;
      if (input_type(0) != output_type()) return std::nullopt;
      if (input_type(0) == onnx::TensorProto::INT8 && input_type(1) != onnx::TensorProto::INT8) return std::nullopt;
      if (inputs == 3 && input_type(2) != onnx::TensorProto::INT32) return std::nullopt;
      group.new_op = "QLinearConv";
      return group;
    }
    case GroupKind::kMatMul:
      // MatMulNodeGroupSelector with a Q: QLinearMatMul. (Without one,
      // MatMulIntegerToFloat only where the EP allows it: not modelled.)
      if (inputs != 2 || dequantized_inputs != 2 || !all_quantized || !one_output) return std::nullopt;
      if (input_type(0) != output_type()) return std::nullopt;
      group.new_op = "QLinearMatMul";
      return group;
    case GroupKind::kGemm: {
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
  }
  return std::nullopt;
}

void MarkFusedAway(IrGraph& graph, FusionSummary& summary, ValueId id) {
  IrValue& value = graph.values[id];
  value.origin = ValueOrigin::kFusedAway;
  value.producer = -1;
  value.consumers.clear();
  summary.fused_tensors.push_back(value.name);
}

void EraseConsumer(IrValue& value, NodeId node) {
  for (auto it = value.consumers.begin(); it != value.consumers.end();) {
    it = *it == node ? value.consumers.erase(it) : it + 1;
  }
}

// The target reads the DQs' inputs and writes the Qs' outputs; the Qs leave
// the graph (marked in `removed`).
void ApplyGroup(const Group& group, IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed) {
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
    MarkFusedAway(graph, summary, float_output);
    target.outputs[slot] = quantized_output;
    graph.values[quantized_output].producer = group.target;
    for (ValueId input : graph.nodes[q].inputs) {
      if (input != float_output) EraseConsumer(graph.values[input], q);
    }
    removed[q] = true;
    ++summary.fused_nodes;
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
      for (const std::string& name : {x.input(0), parameter(x, 1), parameter(x, 2), w_name,
                                      w != nullptr ? parameter(*w, 1) : std::string(),
                                      w != nullptr ? parameter(*w, 2) : std::string(), parameter(y, 1),
                                      parameter(y, 2)}) {
        proto->add_input(name);
      }
      if (group.dequantized.size() > 2) proto->add_input(graph.values[group.dequantized[2]->quantized].name);
    }
    target.proto = proto.get();
    graph.runtime_protos.push_back(std::move(proto));
  }
}

// DynamicQuantizeMatMulFusion (core/optimizer/dynamic_quantize_matmul_fusion.cc):
// DynamicQuantizeLinear -> MatMulInteger (constant B) -> Cast -> Mul by the
// product of the scales becomes one DynamicQuantizeMatMul reading the float A:
// the uint8 A, the int32 product and its float copy never exist. Probe: the
// dynamic copy of tiny-random-lfm2 keeps one DynamicQuantizeMatMul and no
// DynamicQuantizeLinear, Cast or Mul.
void FuseDynamicQuantizeMatMul(IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed) {
  auto sole_reader = [&](ValueId value, const char* op) -> NodeId {
    const IrValue& v = graph.values[value];
    if (v.is_graph_output || v.consumers.size() != 1) return -1;
    const NodeId reader = v.consumers[0];
    const onnx::NodeProto& proto = *graph.nodes[reader].proto;
    return !removed[reader] && IsDefaultDomain(proto) && proto.op_type() == op ? reader : -1;
  };
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    IrNode& matmul = graph.nodes[id];
    if (removed[id] || !IsDefaultDomain(*matmul.proto) || matmul.proto->op_type() != "MatMulInteger" ||
        matmul.inputs.size() < 2 || matmul.outputs.size() != 1) {
      continue;
    }
    const IrValue& a = graph.values[matmul.inputs[0]];
    if (a.origin != ValueOrigin::kNodeOutput || a.producer < 0) continue;
    const NodeId quantize_id = a.producer;
    IrNode& quantize = graph.nodes[quantize_id];
    if (removed[quantize_id] || quantize.proto->op_type() != "DynamicQuantizeLinear" || quantize.inputs.empty()) {
      continue;
    }
    const NodeId cast_id = sole_reader(matmul.outputs[0], "Cast");
    if (cast_id < 0) continue;
    const NodeId mul_id = sole_reader(graph.nodes[cast_id].outputs[0], "Mul");
    if (mul_id < 0) continue;
    // Every output of the DynamicQuantizeLinear read inside the group only:
    // by this MatMulInteger, or by the Mul of the scales feeding the last Mul.
    NodeId scale_mul_id = -1;
    bool inside = true;
    for (ValueId output : quantize.outputs) {
      for (NodeId reader : graph.values[output].consumers) {
        if (reader == static_cast<NodeId>(id)) continue;
        const IrNode& r = graph.nodes[reader];
        if (r.proto->op_type() == "Mul" && r.outputs.size() == 1 &&
            graph.values[r.outputs[0]].consumers.size() == 1 && graph.values[r.outputs[0]].consumers[0] == mul_id &&
            !graph.values[r.outputs[0]].is_graph_output) {
          scale_mul_id = reader;
          continue;
        }
        inside = false;
      }
      if (graph.values[output].is_graph_output) inside = false;
    }
    if (!inside) continue;
    // The fused node: float A and the weights in, the last Mul's output out.
    const ValueId float_a = quantize.inputs[0];
    std::vector<ValueId> inputs = {float_a};
    for (size_t slot = 1; slot < matmul.inputs.size(); ++slot) inputs.push_back(matmul.inputs[slot]);
    for (ValueId input : matmul.inputs) EraseConsumer(graph.values[input], static_cast<NodeId>(id));
    for (NodeId gone : {quantize_id, cast_id, mul_id, scale_mul_id}) {
      if (gone < 0) continue;
      for (ValueId input : graph.nodes[gone].inputs) EraseConsumer(graph.values[input], gone);
    }
    for (ValueId input : inputs) graph.values[input].consumers.push_back(static_cast<NodeId>(id));
    std::vector<ValueId> gone_values = quantize.outputs;
    gone_values.push_back(matmul.outputs[0]);
    gone_values.push_back(graph.nodes[cast_id].outputs[0]);
    if (scale_mul_id >= 0) gone_values.push_back(graph.nodes[scale_mul_id].outputs[0]);
    const ValueId result = graph.nodes[mul_id].outputs[0];
    for (ValueId value : gone_values) MarkFusedAway(graph, summary, value);
    matmul.inputs = inputs;
    matmul.outputs = {result};
    graph.values[result].producer = static_cast<NodeId>(id);
    auto proto = std::make_shared<onnx::NodeProto>(*matmul.proto);
    proto->set_op_type("DynamicQuantizeMatMul");
    proto->set_domain("com.microsoft");
    matmul.proto = proto.get();
    graph.runtime_protos.push_back(std::move(proto));
    for (NodeId gone : {quantize_id, cast_id, mul_id, scale_mul_id}) {
      if (gone < 0) continue;
      removed[gone] = true;
      ++summary.fused_nodes;
    }
  }
}

// CommonSubexpressionElimination (core/optimizer/common_subexpression_elimination.cc)
// for DynamicQuantizeLinear: quantize_dynamic writes one per reader of a
// tensor; ORT keeps the first and its readers all read it. Probe: the dynamic
// copy of FastestDet, 70 in the file, 63 in ORT's optimized model.
void MergeDynamicQuantizers(IrGraph& graph, FusionSummary& summary, std::vector<bool>& removed) {
  absl::flat_hash_map<ValueId, NodeId> first_of;
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    if (removed[id] || !IsDefaultDomain(*node.proto) || node.proto->op_type() != "DynamicQuantizeLinear" ||
        node.inputs.size() != 1) {
      continue;
    }
    auto [it, inserted] = first_of.try_emplace(node.inputs[0], static_cast<NodeId>(id));
    if (inserted) continue;
    const IrNode& first = graph.nodes[it->second];
    bool outputs_free = first.outputs.size() == node.outputs.size();
    for (ValueId output : node.outputs) outputs_free = outputs_free && !graph.values[output].is_graph_output;
    if (!outputs_free) continue;
    for (size_t slot = 0; slot < node.outputs.size(); ++slot) {
      const ValueId duplicate = node.outputs[slot];
      const ValueId kept = first.outputs[slot];
      for (NodeId reader : graph.values[duplicate].consumers) {
        for (ValueId& input : graph.nodes[reader].inputs) {
          if (input == duplicate) input = kept;
        }
        graph.values[kept].consumers.push_back(reader);
      }
      MarkFusedAway(graph, summary, duplicate);
    }
    EraseConsumer(graph.values[node.inputs[0]], static_cast<NodeId>(id));
    removed[id] = true;
    ++summary.fused_nodes;
  }
}

// ConstantFolding runs with skip_dequantize_linear while the QDQ rules are on
// (core/optimizer/graph_transformer_utils.cc, Level1; constant_folding.cc):
// a DequantizeLinear of a weight is never folded. Probe: a Conv whose weight
// is DequantizeLinear(int8 initializer) keeps the DequantizeLinear in ORT's
// optimized model, and its float output is allocated at every run. The
// analysis folded it: it becomes a node again, run last in the file order so
// that the scheduler runs it just before its first reader needs it.
void UnfoldDequantizedWeights(IrGraph& graph) {
  for (size_t id = 0; id < graph.values.size(); ++id) {
    IrValue& value = graph.values[id];
    if (value.origin != ValueOrigin::kFolded || value.consumers.empty() || value.is_graph_output) continue;
    const onnx::NodeProto* proto = value.folded_from;
    if (proto == nullptr || !IsDefaultDomain(*proto) || proto->op_type() != "DequantizeLinear" ||
        proto->output_size() != 1) {
      continue;
    }
    IrNode node;
    node.proto = proto;
    node.display_name = proto->name().empty() ? "DequantizeLinear_" + value.name : proto->name();
    node.proto_index = -1;
    bool inputs_known = true;
    for (const std::string& name : proto->input()) {
      if (name.empty()) continue;
      std::optional<ValueId> input = ValueNamed(graph, name);
      if (!input.has_value()) {
        inputs_known = false;
        break;
      }
      node.inputs.push_back(*input);
    }
    if (!inputs_known) continue;
    const NodeId node_id = static_cast<NodeId>(graph.nodes.size());
    for (ValueId input : node.inputs) graph.values[input].consumers.push_back(node_id);
    node.outputs = {static_cast<ValueId>(id)};
    value.origin = ValueOrigin::kNodeOutput;
    value.producer = node_id;
    value.folded_from = nullptr;
    graph.nodes.push_back(std::move(node));
  }
}

// NhwcTransformer (level 3, core/optimizer/nhwc_transformer.cc, with the
// layout transformer and transpose optimizer of core/optimizer/
// transpose_optimization/): the quantized Conv and pools run channels-last
// (QLinearConv channels_last, NhwcMaxPool for an 8-bit MaxPool,
// QLinearAveragePool, QLinearGlobalAveragePool); the transposes it wraps
// them in cancel between such nodes and move through the elementwise ops and
// Concat/Split between them, and stay where an NCHW op (Reshape, Resize,
// a float op...) reads or writes a channels-last tensor. Here: a node is
// channels-last if it is one of those 4-D kernels, or an elementwise op,
// Concat or Split whose 4-D inputs are all channels-last; a Transpose copies
// each NCHW tensor such a node reads (one per tensor) and each channels-last
// tensor another node or the caller reads, as a new value of the same bytes.
// Probe: FastestDet's QDQ copy keeps 43 Transposes in ORT's optimized model
// (+14 of its own), at its channel shuffles' Reshapes and its head.
bool IsChannelsLastKernel(const IrNode& node, const ShapeLookup& shape_of, const IrGraph& graph) {
  const onnx::NodeProto& proto = *node.proto;
  if (node.inputs.empty() || node.outputs.size() != 1) return false;
  const std::optional<ValueShape> input = ShapeOfValue(graph, shape_of, node.inputs[0]);
  if (!input.has_value() || input->dims.size() != 4) return false;
  if (proto.domain() == "com.microsoft") {
    return proto.op_type() == "QLinearConv" || proto.op_type() == "QLinearAveragePool" ||
           proto.op_type() == "QLinearGlobalAveragePool";
  }
  // QOperator-format models have ONNX's QLinearConv (the same inputs).
  if (IsDefaultDomain(proto) && proto.op_type() == "QLinearConv") return true;
  return IsDefaultDomain(proto) && proto.op_type() == "MaxPool" &&
         (input->data_type == onnx::TensorProto::UINT8 || input->data_type == onnx::TensorProto::INT8);
}

bool MovesTransposes(const onnx::NodeProto& proto) {
  static const auto* const kOps = new absl::flat_hash_set<std::string>{
      "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearConcat", "Add", "Sub", "Mul", "Div",
      "Sum", "Relu", "Sigmoid", "Tanh", "Clip", "LeakyRelu", "QuantizeLinear", "DequantizeLinear", "Cast", "Concat",
      "Split", "Identity"};
  return (IsDefaultDomain(proto) || proto.domain() == "com.microsoft") && kOps->contains(proto.op_type());
}

bool IsRankFour(const IrGraph& graph, const ShapeLookup& shape_of, ValueId id) {
  const std::optional<ValueShape> shape = ShapeOfValue(graph, shape_of, id);
  return shape.has_value() && shape->dims.size() == 4;
}

bool ProducedChannelsLast(const IrGraph& graph, const std::vector<bool>& channels_last, ValueId id) {
  const IrValue& value = graph.values[id];
  return value.origin == ValueOrigin::kNodeOutput && value.producer >= 0 && channels_last[value.producer];
}

// Per node: whether it runs channels-last (empty when no node does).
std::vector<bool> ChannelsLastNodes(const ShapeLookup& shape_of, const IrGraph& graph, const FusionSummary& summary) {
  const size_t node_count = graph.nodes.size();
  std::vector<bool> channels_last(node_count, false);
  bool any = false;
  for (size_t id = 0; id < node_count; ++id) {
    channels_last[id] = IsChannelsLastKernel(graph.nodes[id], shape_of, graph);
    any = any || channels_last[id];
  }
  if (!any) return {};
  auto rank_four = [&](ValueId id) { return IsRankFour(graph, shape_of, id); };
  auto produced_channels_last = [&](ValueId id) { return ProducedChannelsLast(graph, channels_last, id); };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t id = 0; id < node_count; ++id) {
      const IrNode& node = graph.nodes[id];
      if (channels_last[id] || !MovesTransposes(*node.proto) || node.outputs.empty()) continue;
      bool reads_channels_last = false;
      bool all = true;
      for (ValueId input : node.inputs) {
        if (IsConstantWeight(graph, summary, input) || !rank_four(input)) continue;
        if (produced_channels_last(input)) {
          reads_channels_last = true;
        } else {
          all = false;
        }
      }
      bool outputs_four = true;
      for (ValueId output : node.outputs) outputs_four = outputs_four && rank_four(output);
      if (reads_channels_last && all && outputs_four) {
        channels_last[id] = true;
        changed = true;
      }
    }
  }
  return channels_last;
}

// Puts the Transposes of `before` (per node: those it needs first; the last
// entry: after every node) into graph.nodes and recomputes every producer and
// consumer from the nodes.
void InsertBefore(std::vector<std::vector<IrNode>>& before, IrGraph& graph, FusionSummary& summary) {
  const size_t node_count = graph.nodes.size();
  std::vector<IrNode> nodes;
  for (size_t id = 0; id <= node_count; ++id) {
    for (IrNode& transpose : before[id]) nodes.push_back(std::move(transpose));
    if (id < node_count) nodes.push_back(std::move(graph.nodes[id]));
  }
  graph.nodes = std::move(nodes);
  for (IrValue& value : graph.values) {
    value.consumers.clear();
    if (value.origin == ValueOrigin::kNodeOutput) value.producer = -1;
  }
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    for (ValueId input : node.inputs) graph.values[input].consumers.push_back(static_cast<NodeId>(id));
    for (ValueId input : node.implicit_inputs) graph.values[input].consumers.push_back(static_cast<NodeId>(id));
    for (ValueId output : node.outputs) graph.values[output].producer = static_cast<NodeId>(id);
  }
  if (!summary.writes_over.empty()) summary.writes_over.resize(graph.values.size(), -1);
  if (!summary.overridable.empty()) summary.overridable.resize(graph.values.size(), false);
}

void ApplyNhwcLayout(const ShapeLookup& shape_of, IrGraph& graph, FusionSummary& summary) {
  const std::vector<bool> channels_last = ChannelsLastNodes(shape_of, graph, summary);
  if (channels_last.empty()) return;
  const size_t node_count = graph.nodes.size();
  auto rank_four = [&](ValueId id) { return IsRankFour(graph, shape_of, id); };
  auto produced_channels_last = [&](ValueId id) { return ProducedChannelsLast(graph, channels_last, id); };
  // New values and Transposes; `before` holds the Transposes each node needs first.
  std::vector<std::vector<IrNode>> before(node_count + 1);
  auto add_transpose = [&](ValueId from, ValueId to, const char* perm_name, std::vector<IrNode>& where) {
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("Transpose");
    proto->set_name(std::string(perm_name) + "(" + graph.values[from].name + ")");
    proto->add_input(graph.values[from].name);
    proto->add_output(graph.values[to].name);
    IrNode node;
    node.proto = proto.get();
    node.proto_index = -1;
    node.display_name = proto->name();
    node.inputs = {from};
    node.outputs = {to};
    graph.runtime_protos.push_back(std::move(proto));
    where.push_back(std::move(node));
    ++summary.reorder_nodes;
  };
  auto add_value = [&](ValueId like, const char* suffix) {
    const ValueId id = static_cast<ValueId>(graph.values.size());
    graph.values.push_back(IrValue{.name = graph.values[like].name + suffix, .origin = ValueOrigin::kNodeOutput,
                                   .sized_as = like});
    return id;
  };
  absl::flat_hash_map<ValueId, ValueId> to_nhwc;  // NCHW value -> its channels-last copy.
  for (size_t id = 0; id < node_count; ++id) {
    if (!channels_last[id]) continue;
    for (size_t slot = 0; slot < graph.nodes[id].inputs.size(); ++slot) {
      const ValueId input = graph.nodes[id].inputs[slot];
      if (IsConstantWeight(graph, summary, input) || !rank_four(input) || produced_channels_last(input)) continue;
      if (IsChannelsLastKernel(graph.nodes[id], shape_of, graph) && slot > 0) continue;  // Only X is an image.
      auto it = to_nhwc.find(input);
      if (it == to_nhwc.end()) {
        const ValueId copy = add_value(input, ".nhwc");
        add_transpose(input, copy, "TransposeToNhwc", before[id]);
        it = to_nhwc.emplace(input, copy).first;
      }
      graph.nodes[id].inputs[slot] = it->second;
    }
  }
  for (size_t id = 0; id < node_count; ++id) {
    if (!channels_last[id]) continue;
    for (ValueId& output : graph.nodes[id].outputs) {
      // Copies: add_value below grows graph.values, which may move them.
      const std::vector<NodeId> consumers = graph.values[output].consumers;
      const bool is_graph_output = graph.values[output].is_graph_output;
      std::optional<size_t> first_outside;
      for (NodeId reader : consumers) {
        if (!channels_last[reader] && (!first_outside || static_cast<size_t>(reader) < *first_outside)) {
          first_outside = reader;
        }
      }
      if (!first_outside && !is_graph_output) continue;
      // The node writes a channels-last copy; a Transpose writes the NCHW
      // value the outside readers (and the caller) read.
      const ValueId nchw = output;
      const ValueId nhwc = add_value(nchw, ".nhwc");
      for (NodeId reader : consumers) {
        if (!channels_last[reader]) continue;
        for (ValueId& input : graph.nodes[reader].inputs) {
          if (input == nchw) input = nhwc;
        }
      }
      output = nhwc;
      add_transpose(nhwc, nchw, "TransposeToNchw", before[first_outside.value_or(node_count)]);
    }
  }
  InsertBefore(before, graph, summary);
}

int64_t Product(const std::vector<int64_t>& dims, size_t from) {
  int64_t product = 1;
  for (size_t i = from; i < dims.size(); ++i) product *= dims[i];
  return product;
}

bool StridesOneNoPadding(const onnx::NodeProto& proto) {
  if (const onnx::AttributeProto* strides = FindAttribute(proto, "strides")) {
    for (int64_t stride : strides->ints()) {
      if (stride != 1) return false;
    }
  }
  if (const onnx::AttributeProto* pads = FindAttribute(proto, "pads")) {
    for (int64_t pad : pads->ints()) {
      if (pad != 0) return false;
    }
  }
  if (const onnx::AttributeProto* auto_pad = FindAttribute(proto, "auto_pad")) {
    if (auto_pad->s() == "SAME_UPPER" || auto_pad->s() == "SAME_LOWER") return false;
  }
  return true;
}

// ConvInteger (core/providers/cpu/quantization/conv_integer.cc): an im2col
// buffer of kernel_dim * output_image_size bytes (one group at a time),
// unless the kernel is 1 with strides 1 and no padding.
int64_t ConvIntegerWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.size() < 2 || node.outputs.empty()) return 0;
  const std::optional<KnownTensor> input = tensor_of(node.inputs[0]);
  const std::optional<KnownTensor> filter = tensor_of(node.inputs[1]);
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (!input || !filter || !output || input->dims.size() < 3 || filter->dims.size() != input->dims.size()) return 0;
  int64_t group = 1;
  if (const onnx::AttributeProto* attribute = FindAttribute(*node.proto, "group")) group = attribute->i();
  if (group <= 0) return 0;
  const int64_t kernel_size = Product(filter->dims, 2);
  if (kernel_size == 1 && StridesOneNoPadding(*node.proto)) return 0;
  return input->dims[1] / group * kernel_size * Product(output->dims, 2);
}

// Whether every element of the weight zero point `name` is 0 ("" means 0).
bool ZeroPointIsZero(const IrGraph& graph, const std::string& name) {
  if (name.empty()) return true;
  std::optional<ValueId> id = ValueNamed(graph, name);
  if (!id.has_value()) return false;
  const onnx::TensorProto* tensor = ConstantTensor(graph, *id);
  if (tensor == nullptr || tensor->data_location() == onnx::TensorProto::EXTERNAL) return false;
  if (tensor->has_raw_data()) {
    for (char byte : tensor->raw_data()) {
      if (byte != 0) return false;
    }
    return true;
  }
  for (int32_t value : tensor->int32_data()) {
    if (value != 0) return false;
  }
  return true;
}

// The int8 zero point WeightBiasQuantization gives a float weight is 0:
// GetQuantizationParameter<int8_t> (core/util/qmath.h) takes the range
// [min(w, 0), max(w, 0)], scale (max - min) / 255 (1 when max == min) and
// zero point round(-128 - min / scale), clamped: 0 only for a range close to
// symmetric. A weight whose values are not in the file (a folded one) is
// taken as not symmetric. Probe: light_vgg19's QDQ copy (weights folded
// ConstantOfShape outputs of one value) runs its 3x3 QLinearConvs on the
// GEMM path (48,776,424 bytes at 64 -> 64 channels on 224 x 224).
bool QuantizedWeightIsSymmetric(const IrGraph& graph, const std::string& name) {
  std::optional<ValueId> id = ValueNamed(graph, name);
  if (!id.has_value()) return false;
  const onnx::TensorProto* tensor = ConstantTensor(graph, *id);
  if (tensor == nullptr || tensor->data_type() != onnx::TensorProto::FLOAT ||
      tensor->data_location() == onnx::TensorProto::EXTERNAL) {
    return false;
  }
  float low = 0.0f;
  float high = 0.0f;
  auto see = [&](float value) {
    low = std::min(low, value);
    high = std::max(high, value);
  };
  if (tensor->has_raw_data()) {
    const std::string& raw = tensor->raw_data();
    for (size_t offset = 0; offset + sizeof(float) <= raw.size(); offset += sizeof(float)) {
      float value;
      std::memcpy(&value, raw.data() + offset, sizeof(float));
      see(value);
    }
  } else {
    for (float value : tensor->float_data()) see(value);
  }
  if (high == low) return false;  // Scale 1, zero point -128.
  const float scale = (high - low) / 255.0f;
  const float zero_point = std::clamp(-128.0f - low / scale, -128.0f, 127.0f);
  return std::nearbyint(zero_point) == 0.0f;
}

// QLinearConv (core/providers/cpu/quantization/qlinearconv.cc, Compute), ORT
// having made it channels-last (NhwcTransformer: no transpose buffers in the
// kernel). Its scratch for the run:
//  - the symmetric path (PrePack's TryConvSymPrepack: int8 weights whose zero
//    points are all 0, uint8 activations; MLAS's ConvSymU8S8Dispatch,
//    core/mlas/lib/convsym.cpp MlasConvSymPackWSize): an indirection buffer
//    of kernel_size * output_image_size pointers, unless the kernel is
//    pointwise with strides 1 and no padding (then none). It applies to
//    group 1 when Cout >= 16, Cin % 4 == 0 and Cout % 8 (AVX2) or 4
//    (AVX-512) == 0, on ARM64 only with Cin >= 64 and a kernel above 1; to
//    depthwise when the group count is a multiple of 16 (8 on ARM64);
//  - otherwise an int32 GEMM output of M * output_image_size, and an im2col
//    buffer of kernel_dim * output_image_size bytes (or, depthwise, the
//    indirection buffer).
// Probes (bench/ground_truth, uint8 in and out, 128x128, this host's
// AVX-512): 3x3 16->32 symmetric peaks 1,179,648 (9 x 16,384 x 8) above its
// tensors; with weight zero point 3, or uint8 weights, 4,456,448 (GEMM
// 2,097,152 + im2col 2,359,296); 3x3 3->24 stride 2 (Cin 3) GEMM + im2col;
// 1x1 16->32: nothing. int8 activations (no ConvSymS8S8Dispatch on x86)
// measured 2,443,000 over the tensors for 3x3 16->32: not derived, the
// GEMM rule is used.
int64_t QLinearConvWorkspaceBytes(CpuIsa isa, const IrGraph& graph, const IrNode& node,
                                  const TensorLookup& tensor_of) {
  const onnx::NodeProto& proto = *node.proto;
  if (proto.input_size() < 8 || node.outputs.empty()) return 0;
  std::optional<ValueId> x_id = ValueNamed(graph, proto.input(0));
  std::optional<ValueId> w_id = ValueNamed(graph, proto.input(3));
  if (!x_id || !w_id) return 0;
  const std::optional<KnownTensor> input = tensor_of(*x_id);
  const std::optional<KnownTensor> filter = tensor_of(*w_id);
  const std::optional<KnownTensor> output = tensor_of(node.outputs[0]);
  if (!input || !filter || !output || input->dims.size() < 3 || filter->dims.size() != input->dims.size()) return 0;
  int64_t group = 1;
  if (const onnx::AttributeProto* attribute = FindAttribute(proto, "group")) group = attribute->i();
  if (group <= 0) return 0;
  const int64_t batch = input->dims[0];
  const int64_t output_channels = filter->dims[0];
  const int64_t group_input_channels = filter->dims[1];
  const int64_t group_output_channels = output_channels / group;
  const int64_t kernel_size = Product(filter->dims, 2);
  const int64_t output_image_size = Product(output->dims, 2);
  const bool depthwise = group_input_channels == 1 && group_output_channels == 1;
  const bool pointwise = kernel_size == 1 && StridesOneNoPadding(proto);
  // A float filter here is one ORT quantized itself (int8).
  const bool symmetric_weights = filter->dtype == "float32"
                                     ? QuantizedWeightIsSymmetric(graph, proto.input(3))
                                     : filter->dtype == "int8" && ZeroPointIsZero(graph, proto.input(5));
  bool symmetric_conv = symmetric_weights && input->dtype == "uint8";
  if (symmetric_conv) {
    if (group > 1) {
      symmetric_conv = depthwise && group % (isa == CpuIsa::kArm64 ? 8 : 16) == 0;
    } else if (isa == CpuIsa::kArm64) {
      symmetric_conv = kernel_size > 1 && group_input_channels >= 64 && output_channels >= 8 &&
                       group_input_channels % 8 == 0 && output_channels % 8 == 0;
    } else {
      symmetric_conv = output_channels >= 16 && group_input_channels % 4 == 0 &&
                       output_channels % (isa == CpuIsa::kAvx2 ? 8 : 4) == 0;
    }
  }
  constexpr int64_t kPointerBytes = 8;
  const int64_t indirection = kernel_size * output_image_size * kPointerBytes;
  if (symmetric_conv) return depthwise || !pointwise ? indirection : 0;
  const int64_t gemm_output = 4 * output_channels * output_image_size;
  if (depthwise) return gemm_output + indirection;
  if (pointwise) return gemm_output;
  const int64_t col_buffer = group_input_channels * kernel_size * output_image_size *
                             (filter->dims.size() > 4 ? group : 1);
  (void)batch;
  return gemm_output + col_buffer;
}

// DynamicQuantizeMatMul (contrib_ops/cpu/quantization/dynamic_quantize_matmul.cc):
// A quantized to uint8 in a buffer of A's elements for the run.
int64_t DynamicQuantizeMatMulWorkspaceBytes(const IrNode& node, const TensorLookup& tensor_of) {
  if (node.inputs.empty()) return 0;
  const std::optional<KnownTensor> a = tensor_of(node.inputs[0]);
  return a.has_value() ? Product(a->dims, 0) : 0;
}

}  // namespace

void ApplyQuantizedRewrites(const ShapeLookup& shape_of, IrGraph& graph, FusionSummary& summary) {
  bool any_quantized = false;
  for (const IrNode& node : graph.nodes) {
    const std::string& op = node.proto->op_type();
    any_quantized = any_quantized || op == "QuantizeLinear" || op == "DequantizeLinear" ||
                    op == "DynamicQuantizeLinear" || op == "MatMulInteger" || op == "QLinearConv";
  }
  for (const IrValue& value : graph.values) {
    any_quantized = any_quantized || (value.origin == ValueOrigin::kFolded && value.folded_from != nullptr &&
                                      value.folded_from->op_type() == "DequantizeLinear");
  }
  if (!any_quantized) return;
  std::vector<bool> removed(graph.nodes.size(), false);
  // QDQSelectorActionTransformer (level 2), node by node in graph order; a
  // DequantizeLinear read by several nodes serves each (level 1's
  // EnsureUniqueDQForNodeUnit gives every reader its own copy).
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    if (removed[id]) continue;
    if (std::optional<Group> group = SelectGroup(graph, summary, static_cast<NodeId>(id))) {
      ApplyGroup(*group, graph, summary, removed);
    }
  }
  // Activation DequantizeLinear nodes no reader is left for go too.
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    if (removed[id] || !IsDefaultDomain(*node.proto) || node.proto->op_type() != "DequantizeLinear" ||
        node.outputs.size() != 1) {
      continue;
    }
    const IrValue& output = graph.values[node.outputs[0]];
    if (!output.consumers.empty() || output.is_graph_output) continue;
    for (ValueId input : node.inputs) EraseConsumer(graph.values[input], static_cast<NodeId>(id));
    MarkFusedAway(graph, summary, node.outputs[0]);
    removed[id] = true;
    ++summary.fused_nodes;
  }
  MergeDynamicQuantizers(graph, summary, removed);
  FuseDynamicQuantizeMatMul(graph, summary, removed);
  RemoveNodes(removed, graph);
  UnfoldDequantizedWeights(graph);
  ApplyNhwcLayout(shape_of, graph, summary);
}

std::optional<int64_t> QuantizedKernelWorkspaceBytes(CpuIsa isa, const IrGraph& graph, const IrNode& node,
                                                     const TensorLookup& tensor_of) {
  const std::string& op = node.proto->op_type();
  if (IsDefaultDomain(*node.proto) && op == "ConvInteger") return ConvIntegerWorkspaceBytes(node, tensor_of);
  if (IsDefaultDomain(*node.proto) && op == "QLinearConv") return QLinearConvWorkspaceBytes(isa, graph, node, tensor_of);
  if (node.proto->domain() != "com.microsoft") return std::nullopt;
  if (op == "DynamicQuantizeMatMul") return DynamicQuantizeMatMulWorkspaceBytes(node, tensor_of);
  if (op == "QLinearConv") return QLinearConvWorkspaceBytes(isa, graph, node, tensor_of);
  return std::nullopt;
}

}  // namespace footprint::ort
