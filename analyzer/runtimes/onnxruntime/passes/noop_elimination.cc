// ORT's NoopElimination (core/optimizer/noop_elimination.cc, a level-1
// rewrite rule; graph_utils.cc's CanRemoveNode and RemoveNode): an Add, Sub,
// Mul or Div that adds 0 or multiplies by 1 is taken out, and its readers
// read its other input. Its output, as large as that input, never exists.
// Measured (ORT 1.30, AVX-512, the probes noop_* of
// bench/ground_truth/probe_models.py): 1 MiB through Neg -> Add(a, 0), read
// with a by an Add, peaks at 3,148,168 bytes; predicted 4,196,464 without
// the rule (1.333), 3,147,680 with it (1.000).
//
// The conditions, as ORT 1.30 checks them (each a probe, its optimized
// model and run peak):
//  - exactly one input a constant weight: an initializer that is not also a
//    graph input (an overridable one stays), a Constant's value (ORT makes it
//    an initializer when it loads the graph: `value`, `value_float`,
//    `value_int`, `value_floats`, `value_ints`) or a value its constant
//    folding made (x + Cast(0) goes: level 1 repeats until nothing changes;
//    here a folded Cast or Identity of such a constant, any other folded
//    value stays);
//  - x+0, 0+x, x-0, x*1, 1*x, x/1: the constant the second input of a Sub or
//    Div; its one element of type float, float16, double, int32 or int64
//    (uint8 stays), compared as a float (-0 is 0; a double 1 + 1e-12 is 1);
//    a constant of two elements stays, and so does one of none (which an
//    older snapshot of the rule took out);
//  - the constant's rank no larger than the other input's (a [1, 1, 1, 1, 1]
//    zero on a rank-4 tensor stays), whose shape ORT must know;
//  - the other input the output of a node (CanRemoveNode: one input edge; x
//    + 0 on a graph input stays);
//  - its output no graph output.
// Any opset (7, 13 and 17 measured). ORT runs its level-1 rewrite rules
// first of all level 1 (graph_transformer_utils.cc), NoopElimination among
// the eliminations before the fusion rules (ConvAddFusion, ConvMulFusion).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_attributes.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/runtimes/onnxruntime/graph_editing.h"
#include "analyzer/runtimes/onnxruntime/passes/passes.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {
namespace {

// An IEEE half's value (ORT's math::halfToFloat), exactly.
double HalfToDouble(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f;
  const int mantissa = bits & 0x3ff;
  double magnitude = std::ldexp(mantissa, -24);  // Subnormal.
  if (exponent == 0x1f) magnitude = mantissa == 0 ? INFINITY : NAN;
  if (exponent > 0 && exponent < 0x1f) magnitude = std::ldexp(mantissa + 1024, exponent - 25);
  return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

// The first element of `raw`, stored as T (little-endian, as ONNX stores it).
template <typename T>
std::optional<T> RawElement(const std::string& raw) {
  if (raw.size() != sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, raw.data(), sizeof(T));
  return value;
}

// The one element of a tensor of one element, of the types NoopElimination
// reads; nullopt for any other type, or data not in the model.
std::optional<double> OneElementValue(const onnx::TensorProto& tensor) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  const std::string& raw = tensor.raw_data();
  const bool typed = raw.empty();
  switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (typed && tensor.float_data_size() == 1) return tensor.float_data(0);
      return RawElement<float>(raw);
    case onnx::TensorProto::FLOAT16:
      if (typed && tensor.int32_data_size() == 1) return HalfToDouble(static_cast<uint16_t>(tensor.int32_data(0)));
      if (std::optional<uint16_t> bits = RawElement<uint16_t>(raw)) return HalfToDouble(*bits);
      return std::nullopt;
    case onnx::TensorProto::DOUBLE:
      if (typed && tensor.double_data_size() == 1) return tensor.double_data(0);
      return RawElement<double>(raw);
    case onnx::TensorProto::INT32:
      if (typed && tensor.int32_data_size() == 1) return tensor.int32_data(0);
      return RawElement<int32_t>(raw);
    case onnx::TensorProto::INT64:
      if (typed && tensor.int64_data_size() == 1) return static_cast<double>(tensor.int64_data(0));
      if (std::optional<int64_t> value = RawElement<int64_t>(raw)) return static_cast<double>(*value);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// A constant of one element as NoopElimination reads it.
struct OneElement {
  int rank = 0;
  double value = 0;  // Compared as static_cast<float>(value), as ORT does.
};

// `value` cast by ONNX's Cast to `to`, for the types NoopElimination reads
// (integers truncate); nullopt for another type, or a float16 cast of a value
// other than 0 or 1 (its rounding is not modelled; keeps the node).
std::optional<double> CastTo(double value, int64_t to) {
  switch (to) {
    case onnx::TensorProto::FLOAT:
      return static_cast<float>(value);
    case onnx::TensorProto::DOUBLE:
      return value;
    case onnx::TensorProto::FLOAT16:
      if (value == 0 || value == 1) return value;
      return std::nullopt;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64:
      if (!(std::fabs(value) < 0x1p31)) return std::nullopt;
      return std::trunc(value);
    default:
      return std::nullopt;
  }
}

// A Constant's value given as a number or a list of one (`value_float`,
// `value_int`, `value_floats`, `value_ints`); nullopt for `value` and any
// other.
std::optional<OneElement> ListedConstant(const onnx::NodeProto& constant) {
  if (const onnx::AttributeProto* number = FindAttribute(constant, "value_float")) return OneElement{0, number->f()};
  if (const onnx::AttributeProto* number = FindAttribute(constant, "value_int")) {
    return OneElement{0, static_cast<double>(number->i())};
  }
  const onnx::AttributeProto* floats = FindAttribute(constant, "value_floats");
  if (floats != nullptr && floats->floats_size() == 1) return OneElement{1, floats->floats(0)};
  const onnx::AttributeProto* ints = FindAttribute(constant, "value_ints");
  if (ints != nullptr && ints->ints_size() == 1) return OneElement{1, static_cast<double>(ints->ints(0))};
  return std::nullopt;
}

// The constant weight `id` when it has one element, and its value: an
// initializer, a Constant's value (ORT's graph holds each as an
// initializer), or a value the analysis folded from a Cast or Identity of
// one (ORT's constant folding makes it an initializer too).
std::optional<OneElement> OneElementConstant(const IrGraph& graph, const PassContext& context, ValueId id) {
  if (!IsConstantWeight(graph, context.rewrite, id)) return std::nullopt;
  const IrValue& value = graph.values[id];
  if (value.origin == ValueOrigin::kFolded) {
    const onnx::NodeProto* from = value.folded_from;
    if (from == nullptr || !IsDefaultDomain(*from) || from->input_size() != 1 ||
        (from->op_type() != "Cast" && from->op_type() != "Identity")) {
      return std::nullopt;
    }
    const std::optional<ValueId> source = ValueNamed(graph, from->input(0));
    std::optional<OneElement> element = source.has_value() ? OneElementConstant(graph, context, *source) : std::nullopt;
    if (!element.has_value() || from->op_type() == "Identity") return element;
    const std::optional<double> cast = CastTo(element->value, IntAttribute(*from, "to", 0));
    if (!cast.has_value()) return std::nullopt;
    element->value = *cast;
    return element;
  }
  if (value.origin == ValueOrigin::kConstant && value.constant != nullptr) {
    if (std::optional<OneElement> listed = ListedConstant(*value.constant)) return listed;
  }
  const onnx::TensorProto* tensor = ConstantTensor(graph, id);
  if (tensor == nullptr) return std::nullopt;
  int64_t elements = 1;
  for (int64_t dim : tensor->dims()) elements *= dim;
  if (elements != 1) return std::nullopt;  // ORT 1.30 keeps a constant of no element too (measured).
  const std::optional<double> element = OneElementValue(*tensor);
  if (!element.has_value()) return std::nullopt;
  return OneElement{tensor->dims_size(), *element};
}

// The input whose value `node`'s output is, when NoopElimination takes the
// node out; -1 when it stays.
ValueId NoopInput(const IrGraph& graph, const PassContext& context, const IrNode& node) {
  const bool adds = IsOp(node, "Add") || IsOp(node, "Sub");
  const bool multiplies = IsOp(node, "Mul") || IsOp(node, "Div");
  if ((!adds && !multiplies) || node.inputs.size() != 2 || node.outputs.size() != 1 ||
      graph.values[node.outputs[0]].is_graph_output) {
    return -1;
  }
  const bool first_constant = IsConstantWeight(graph, context.rewrite, node.inputs[0]);
  if (first_constant == IsConstantWeight(graph, context.rewrite, node.inputs[1])) return -1;
  if (first_constant && (IsOp(node, "Sub") || IsOp(node, "Div"))) return -1;  // 0 - x, 1 / x.
  const std::optional<OneElement> constant = OneElementConstant(graph, context, node.inputs[first_constant ? 0 : 1]);
  const ValueId other = node.inputs[first_constant ? 1 : 0];
  if (!constant.has_value() || static_cast<float>(constant->value) != (adds ? 0.0f : 1.0f)) return -1;
  // One input edge: the other input a node's output (not a graph input).
  if (graph.values[other].origin != ValueOrigin::kNodeOutput) return -1;
  const std::optional<ValueShape> shape = ShapeOfValue(graph, context, other);
  if (!shape.has_value() || constant->rank > static_cast<int>(shape->dims.size())) return -1;
  return other;
}

// Takes out each node NoopInput names an input of; its readers read that
// input instead (explicitly or inside their bodies), its output is
// kFusedAway.
PassChange EliminateNoops(IrGraph& graph, PassContext& context) {
  PassChange change;
  std::vector<bool> removed(graph.nodes.size(), false);
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    const IrNode& node = graph.nodes[id];
    const ValueId kept = NoopInput(graph, context, node);
    if (kept < 0) continue;
    const ValueId gone = node.outputs[0];
    for (ValueId input : node.inputs) EraseConsumer(graph.values[input], static_cast<NodeId>(id));
    for (NodeId reader : graph.values[gone].consumers) {
      for (ValueId& input : graph.nodes[reader].inputs) input = input == gone ? kept : input;
      for (ValueId& input : graph.nodes[reader].implicit_inputs) input = input == gone ? kept : input;
      graph.values[kept].consumers.push_back(reader);
    }
    MarkFusedAway(graph, context.rewrite, gone);
    removed[id] = true;
    ++change.fused_nodes;
  }
  if (change.fused_nodes == 0) return change;
  RemoveNodes(removed, graph);
  RelinkValues(graph);
  return change;
}

}  // namespace

const Pass kNoopElimination = {.name = "NoopElimination",
                               .stage = OrtStage::kLevel1,
                               .source = "core/optimizer/noop_elimination.cc",
                               .apply = &EliminateNoops};

}  // namespace footprint::ort
