// A weight's DequantizeLinear run at every run, in ORT's order (unfolded_weights.h).
#include "analyzer/runtimes/onnxruntime/unfolded_weights.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/onnxruntime/execution_order.h"
#include "analyzer/runtimes/onnxruntime/quantized_graph.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

void UnfoldDequantizedWeights(IrGraph& graph) {
  const size_t node_count = graph.nodes.size();
  absl::flat_hash_map<const onnx::NodeProto*, int> index_of;
  for (int i = 0; i < graph.proto->node_size(); ++i) index_of[&graph.proto->node(i)] = i;
  for (size_t id = 0; id < graph.values.size(); ++id) {
    IrValue& value = graph.values[id];
    if (value.origin != ValueOrigin::kFolded || value.consumers.empty() || value.is_graph_output) continue;
    const onnx::NodeProto* proto = value.folded_from;
    if (proto == nullptr || !IsDequantizeLinear(*proto) || proto->output_size() != 1) {
      continue;
    }
    IrNode node;
    node.proto = proto;
    node.display_name = proto->name().empty() ? "DequantizeLinear_" + value.name : proto->name();
    auto it = index_of.find(proto);
    node.proto_index = it != index_of.end() ? it->second : -1;
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
  // A weight's DequantizeLinear the analysis never folded (com.microsoft's)
  // runs in ORT's order too.
  bool weight_dequantizers = graph.nodes.size() != node_count;
  for (size_t id = 0; id < node_count && !weight_dequantizers; ++id) {
    const IrNode& node = graph.nodes[id];
    weight_dequantizers = IsDequantizeLinear(*node.proto) && !node.inputs.empty() &&
                          ConstantTensor(graph, node.inputs[0]) != nullptr;
  }
  if (!weight_dequantizers) return;
  // ORT's node indices: a node of the file keeps its position; a node ORT's
  // rules made comes after all of them, in the order made.
  std::vector<int64_t> ort_index(graph.nodes.size());
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    auto it = index_of.find(graph.nodes[id].proto);
    ort_index[id] = it != index_of.end() ? it->second : graph.proto->node_size() + static_cast<int64_t>(id);
  }
  // ORT's walk with those indices; on a cycle the file's order stays.
  ApplyOrtExecutionOrder(graph, ort_index);
}

}  // namespace footprint::ort
