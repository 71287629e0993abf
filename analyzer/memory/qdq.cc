// The qdq mode (qdq.h).
#include "analyzer/memory/qdq.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "analyzer/loader/onnx_domain.h"
#include "analyzer/memory/quantization.h"

namespace footprint {
namespace {

// A QuantizeLinear or DequantizeLinear (`op_type`) of ONNX's domain or of
// com.microsoft's, which ORT's quantizer writes for 16-bit and where its
// option UseQDQContribOps asks (the same op, more types): a group is a group
// whichever domain its quantizers have.
bool IsOp(const IrNode& node, std::string_view op_type) {
  return (IsDefaultDomain(*node.proto) || node.proto->domain() == "com.microsoft") &&
         node.proto->op_type() == op_type;
}

bool IsWeight(const IrValue& value) {
  return value.origin == ValueOrigin::kInitializer || value.origin == ValueOrigin::kConstant;
}

// How many of the op's inputs carry its data: the others are shapes,
// scales or bounds, read as they are.
size_t DataInputs(const IrNode& node, QuantizedForm form) {
  const std::string& op = node.proto->op_type();
  if (form == QuantizedForm::kDataMovement || op == "Resize" || op == "Upsample" || op == "Clip") return 1;
  return node.inputs.size();
}

// The DequantizeLinear that writes `value`, or -1.
NodeId DequantizerOf(const IrGraph& graph, ValueId value) {
  const NodeId producer = graph.values[value].producer;
  if (producer < 0 || graph.values[value].origin != ValueOrigin::kNodeOutput) return -1;
  return IsOp(graph.nodes[producer], "DequantizeLinear") ? producer : -1;
}

}  // namespace

QdqGroups FuseQdqGroups(IrGraph& graph) {
  QdqGroups result;
  std::vector<bool> removed(graph.nodes.size(), false);
  std::vector<NodeId> dequantizers;  // Those a group read from: they go once nothing else reads them.
  for (size_t op_id = 0; op_id < graph.nodes.size(); ++op_id) {
    IrNode& op = graph.nodes[op_id];
    if (removed[op_id] || !IsDefaultDomain(*op.proto) || op.outputs.size() != 1 || op.inputs.empty()) continue;
    const QuantizedForm form = QuantizedFormOf(op.proto->domain(), op.proto->op_type());
    if (form == QuantizedForm::kFloat) continue;
    const IrValue& float_output = graph.values[op.outputs[0]];
    if (float_output.is_graph_output || float_output.consumers.size() != 1) continue;
    const NodeId quantizer = float_output.consumers[0];
    if (removed[quantizer] || !IsOp(graph.nodes[quantizer], "QuantizeLinear") ||
        graph.nodes[quantizer].outputs.size() != 1 || graph.nodes[quantizer].inputs[0] != op.outputs[0]) {
      continue;
    }
    bool quantized_inputs = true;
    bool any_dequantized = false;
    for (size_t i = 0; i < std::min(DataInputs(op, form), op.inputs.size()); ++i) {
      if (DequantizerOf(graph, op.inputs[i]) >= 0) {
        any_dequantized = true;
      } else if (!IsWeight(graph.values[op.inputs[i]])) {
        quantized_inputs = false;
      }
    }
    if (!quantized_inputs || !any_dequantized) continue;
    // The op reads the quantized tensors...
    for (ValueId& input : op.inputs) {
      const NodeId dequantizer = DequantizerOf(graph, input);
      if (dequantizer < 0) continue;
      std::vector<NodeId>& readers = graph.values[input].consumers;
      readers.erase(std::find(readers.begin(), readers.end(), static_cast<NodeId>(op_id)));
      input = graph.nodes[dequantizer].inputs[0];
      graph.values[input].consumers.push_back(static_cast<NodeId>(op_id));
      dequantizers.push_back(dequantizer);
    }
    // ...and writes the quantized output.
    const ValueId float_id = op.outputs[0];
    const ValueId quantized_output = graph.nodes[quantizer].outputs[0];
    op.outputs = {quantized_output};
    graph.values[quantized_output].producer = static_cast<NodeId>(op_id);
    IrValue& gone = graph.values[float_id];
    gone.origin = ValueOrigin::kFusedAway;
    gone.producer = -1;
    gone.consumers.clear();
    result.fused_tensors.push_back(gone.name);
    removed[quantizer] = true;
    ++result.groups;
  }
  std::sort(dequantizers.begin(), dequantizers.end());
  dequantizers.erase(std::unique(dequantizers.begin(), dequantizers.end()), dequantizers.end());
  for (NodeId dequantizer : dequantizers) {
    IrValue& output = graph.values[graph.nodes[dequantizer].outputs[0]];
    if (output.is_graph_output || !output.consumers.empty()) continue;
    output.origin = ValueOrigin::kFusedAway;
    output.producer = -1;
    result.fused_tensors.push_back(output.name);
    removed[dequantizer] = true;
  }
  if (result.groups > 0) RemoveNodes(removed, graph);
  return result;
}

}  // namespace footprint
