// What the quantized-graph rules ask of the graph (quantized_graph.h).
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"

namespace footprint::ort {

bool IsDefaultDomain(const onnx::NodeProto& node) { return node.domain().empty() || node.domain() == "ai.onnx"; }

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

}  // namespace footprint::ort
