// The passes' graph-editing toolkit (graph_editing.h).
#include "analyzer/runtimes/onnxruntime/graph_editing.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/loader/onnx_attributes.h"

namespace footprint::ort {
namespace {

// A value's element type and dims as the model gives them.
std::optional<ValueShape> ShapeInModel(const IrValue& value, const ShapeLookup& shape_of) {
  if (value.origin == ValueOrigin::kInitializer) {
    ValueShape shape{.data_type = value.initializer->data_type()};
    for (int64_t dim : value.initializer->dims()) shape.dims.push_back(dim);
    return shape;
  }
  if (value.origin == ValueOrigin::kConstant) {
    const onnx::TensorProto* tensor = TensorAttribute(*value.constant, "value");
    if (tensor == nullptr) return std::nullopt;
    ValueShape shape{.data_type = tensor->data_type()};
    for (int64_t dim : tensor->dims()) shape.dims.push_back(dim);
    return shape;
  }
  if (!shape_of) return std::nullopt;
  return shape_of(value.name);
}

}  // namespace

std::optional<std::vector<NodeId>> NodeTopologicalOrder(const IrGraph& graph) {
  const size_t count = graph.nodes.size();
  std::vector<int> pending(count, 0);
  for (size_t node = 0; node < count; ++node) {
    for (const std::vector<ValueId>* inputs : {&graph.nodes[node].inputs, &graph.nodes[node].implicit_inputs}) {
      for (ValueId input : *inputs) {
        if (graph.values[input].producer >= 0) ++pending[node];
      }
    }
  }
  std::vector<NodeId> order;
  std::vector<NodeId> ready;
  for (size_t node = count; node-- > 0;) {
    if (pending[node] == 0) ready.push_back(static_cast<NodeId>(node));
  }
  while (!ready.empty()) {
    std::sort(ready.begin(), ready.end(), std::greater<NodeId>());
    const NodeId node = ready.back();
    ready.pop_back();
    order.push_back(node);
    for (ValueId output : graph.nodes[node].outputs) {
      for (NodeId consumer : graph.values[output].consumers) {
        if (--pending[consumer] == 0) ready.push_back(consumer);
      }
    }
  }
  if (order.size() != count) return std::nullopt;
  return order;
}

std::optional<std::vector<float>> InlineFloats(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT || tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    return std::nullopt;
  }
  if (tensor.float_data_size() > 0) return std::vector<float>(tensor.float_data().begin(), tensor.float_data().end());
  const std::string& raw = tensor.raw_data();
  if (raw.size() % sizeof(float) != 0) return std::nullopt;
  std::vector<float> values(raw.size() / sizeof(float));
  std::memcpy(values.data(), raw.data(), raw.size());
  return values;
}

bool IsQuantizeLinear(const onnx::NodeProto& node) {
  return node.op_type() == "QuantizeLinear" && (IsDefaultDomain(node) || node.domain() == "com.microsoft");
}

bool IsDequantizeLinear(const onnx::NodeProto& node) {
  return node.op_type() == "DequantizeLinear" && (IsDefaultDomain(node) || node.domain() == "com.microsoft");
}

std::optional<ValueId> ValueNamed(const IrGraph& graph, const std::string& name) {
  if (name.empty()) return std::nullopt;
  auto it = graph.value_by_name.find(name);
  if (it == graph.value_by_name.end()) return std::nullopt;
  return it->second;
}

bool IsOp(const IrNode& node, std::string_view op) { return IsDefaultDomain(*node.proto) && node.proto->op_type() == op; }

bool HasDequantizeLinear(const IrGraph& graph) {
  for (const IrNode& node : graph.nodes) {
    if (IsDequantizeLinear(*node.proto)) return true;
  }
  for (const IrValue& value : graph.values) {
    if (value.origin == ValueOrigin::kFolded && value.folded_from != nullptr && IsDequantizeLinear(*value.folded_from)) {
      return true;
    }
  }
  return false;
}

NodeId SoleReader(const IrGraph& graph, ValueId value) {
  const IrValue& v = graph.values[value];
  return v.is_graph_output || v.consumers.size() != 1 ? -1 : v.consumers[0];
}

const onnx::TensorProto* ConstantTensor(const IrGraph& graph, ValueId id) {
  const IrValue& value = graph.values[id];
  if (value.origin == ValueOrigin::kInitializer) return value.initializer;
  if (value.origin == ValueOrigin::kConstant && value.constant != nullptr) {
    return TensorAttribute(*value.constant, "value");
  }
  return nullptr;
}

bool IsOverridable(const GraphRewrite& rewrite, ValueId id) {
  return id >= 0 && static_cast<size_t>(id) < rewrite.overridable.size() && rewrite.overridable[id];
}

bool IsConstantWeight(const IrGraph& graph, const GraphRewrite& rewrite, ValueId id) {
  const IrValue& value = graph.values[id];
  if (IsOverridable(rewrite, id)) return false;
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant ||
         value.origin == ValueOrigin::kFolded;
}

std::optional<ValueShape> ShapeOfValue(const IrGraph& graph, const GraphRewrite& rewrite, const ShapeLookup& shape_of,
                                       ValueId id) {
  const IrValue& value = graph.values[id];
  const HeldValue& held = HeldAs(rewrite, id);
  // A plain copy (EnsureUniqueDQForNodeUnit's outputs): the dims and type of
  // the value it stands for.
  if (held.data_type == 0 && held.sized_as >= 0 && held.channel_block <= 1 && !held.channels_last) {
    return ShapeOfValue(graph, rewrite, shape_of, held.sized_as);
  }
  if (held.data_type == 0) return ShapeInModel(value, shape_of);
  // Held in another element type (passes/fp16_casts.h), with the dims of the value it stands for.
  std::optional<ValueShape> shape =
      held.sized_as >= 0 ? ShapeOfValue(graph, rewrite, shape_of, held.sized_as) : ShapeInModel(value, shape_of);
  if (shape.has_value()) shape->data_type = held.data_type;
  return shape;
}

int64_t Product(const std::vector<int64_t>& dims, size_t from) {
  int64_t product = 1;
  for (size_t i = from; i < dims.size(); ++i) product *= dims[i];
  return product;
}

HeldValue& MutableHeld(const IrGraph& graph, GraphRewrite& rewrite, ValueId id) {
  if (rewrite.held.size() < graph.values.size()) rewrite.held.resize(graph.values.size());
  return rewrite.held[id];
}

ValueId AddValue(IrGraph& graph, GraphRewrite& rewrite, IrValue value, HeldValue held) {
  const ValueId id = static_cast<ValueId>(graph.values.size());
  graph.values.push_back(std::move(value));
  if (!rewrite.writes_over.empty()) rewrite.writes_over.resize(graph.values.size(), -1);
  if (!rewrite.overridable.empty()) rewrite.overridable.resize(graph.values.size(), false);
  MutableHeld(graph, rewrite, id) = held;
  return id;
}

std::shared_ptr<onnx::NodeProto> NewNodeProto(const std::string& op, const std::string& domain,
                                              const std::string& name, const std::vector<std::string>& inputs,
                                              const std::vector<std::string>& outputs) {
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_op_type(op);
  proto->set_domain(domain);
  proto->set_name(name);
  for (const std::string& input : inputs) proto->add_input(input);
  for (const std::string& output : outputs) proto->add_output(output);
  return proto;
}

void RecordMadeNode(GraphRewrite& rewrite, std::shared_ptr<onnx::NodeProto> proto) {
  rewrite.made_nodes.push_back(std::move(proto));
}

IrNode MadeNode(GraphRewrite& rewrite, std::shared_ptr<onnx::NodeProto> proto, std::vector<ValueId> inputs,
                std::vector<ValueId> outputs) {
  IrNode node = NodeRunning(*proto, std::move(inputs), std::move(outputs));
  RecordMadeNode(rewrite, std::move(proto));
  return node;
}

std::vector<ValueId>& MutableWritesOver(const IrGraph& graph, GraphRewrite& rewrite) {
  if (rewrite.writes_over.size() < graph.values.size()) rewrite.writes_over.resize(graph.values.size(), -1);
  return rewrite.writes_over;
}

IrNode NodeRunning(const onnx::NodeProto& proto, std::vector<ValueId> inputs, std::vector<ValueId> outputs) {
  IrNode node;
  node.proto = &proto;
  node.proto_index = -1;
  node.display_name = proto.name();
  node.inputs = std::move(inputs);
  node.outputs = std::move(outputs);
  return node;
}

onnx::NodeProto& UseRuntimeProto(GraphRewrite& rewrite, IrNode& node, std::shared_ptr<onnx::NodeProto> proto) {
  onnx::NodeProto& used = *proto;
  node.proto = proto.get();
  RecordMadeNode(rewrite, std::move(proto));
  return used;
}

void SetIntsAttribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* attribute = FindAttribute(node, name);
  if (attribute == nullptr) {
    attribute = node.add_attribute();
    attribute->set_name(name);
    attribute->set_type(onnx::AttributeProto::INTS);
  }
  attribute->clear_ints();
  for (int64_t value : values) attribute->add_ints(value);
}

void MarkFusedAway(IrGraph& graph, GraphRewrite& rewrite, ValueId id) {
  IrValue& value = graph.values[id];
  value.origin = ValueOrigin::kFusedAway;
  value.producer = -1;
  value.consumers.clear();
  rewrite.fused_tensors.push_back(value.name);
}

void EraseConsumer(IrValue& value, NodeId node) {
  for (auto it = value.consumers.begin(); it != value.consumers.end();) {
    it = *it == node ? value.consumers.erase(it) : it + 1;
  }
}

bool MergeIntoFirst(NodeId duplicate, NodeId first, IrGraph& graph, GraphRewrite& rewrite,
                    std::vector<bool>& removed) {
  const IrNode& node = graph.nodes[duplicate];
  const IrNode& kept_node = graph.nodes[first];
  if (kept_node.outputs.size() != node.outputs.size()) return false;
  for (ValueId output : node.outputs) {
    if (graph.values[output].is_graph_output) return false;
  }
  for (size_t slot = 0; slot < node.outputs.size(); ++slot) {
    const ValueId gone = node.outputs[slot];
    const ValueId kept = kept_node.outputs[slot];
    for (NodeId reader : graph.values[gone].consumers) {
      for (ValueId& input : graph.nodes[reader].inputs) {
        if (input == gone) input = kept;
      }
      graph.values[kept].consumers.push_back(reader);
    }
    MarkFusedAway(graph, rewrite, gone);
  }
  for (ValueId input : node.inputs) EraseConsumer(graph.values[input], duplicate);
  removed[duplicate] = true;
  return true;
}

}  // namespace footprint::ort
