// What the quantized-graph rules ask of the graph (quantized_graph.h).
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"

namespace footprint::ort {

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

onnx::NodeProto& UseRuntimeProto(IrGraph& graph, IrNode& node, std::shared_ptr<onnx::NodeProto> proto) {
  onnx::NodeProto& used = *proto;
  node.proto = proto.get();
  graph.runtime_protos.push_back(std::move(proto));
  return used;
}

void EraseConsumer(IrValue& value, NodeId node) {
  for (auto it = value.consumers.begin(); it != value.consumers.end();) {
    it = *it == node ? value.consumers.erase(it) : it + 1;
  }
}

bool MergeIntoFirst(NodeId duplicate, NodeId first, IrGraph& graph, FusionSummary& summary,
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
    MarkFusedAway(graph, summary, gone);
  }
  for (ValueId input : node.inputs) EraseConsumer(graph.values[input], duplicate);
  removed[duplicate] = true;
  ++summary.fused_nodes;
  return true;
}

}  // namespace footprint::ort
