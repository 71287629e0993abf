// ORT's execution order (execution_order.h). Paths cited are in
// github.com/microsoft/onnxruntime.
#include "analyzer/runtimes/onnxruntime/execution_order.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/loader/graph_ir.h"
#include "onnx/onnx_pb.h"

namespace footprint::ort {

std::vector<int64_t> OrtNodeIndices(const IrGraph& graph, const GraphRewrite& rewrite) {
  absl::flat_hash_map<const onnx::NodeProto*, int64_t> index_of;
  const int64_t file_nodes = graph.proto->node_size();
  for (int i = 0; i < graph.proto->node_size(); ++i) index_of[&graph.proto->node(i)] = i;
  for (size_t made = 0; made < rewrite.made_nodes.size(); ++made) {
    index_of[rewrite.made_nodes[made].get()] = file_nodes + static_cast<int64_t>(made);
  }
  const int64_t unknown = file_nodes + static_cast<int64_t>(rewrite.made_nodes.size());
  std::vector<int64_t> index(graph.nodes.size());
  for (size_t id = 0; id < graph.nodes.size(); ++id) {
    auto it = index_of.find(graph.nodes[id].proto);
    index[id] = it != index_of.end() ? it->second : unknown + static_cast<int64_t>(id);
  }
  return index;
}

std::optional<std::vector<NodeId>> OrtExecutionOrder(const IrGraph& graph, const std::vector<int64_t>& index) {
  const size_t count = graph.nodes.size();
  auto by_index = [&](NodeId a, NodeId b) { return index[a] < index[b]; };
  std::vector<NodeId> nodes(count);
  for (size_t id = 0; id < count; ++id) nodes[id] = static_cast<NodeId>(id);
  std::sort(nodes.begin(), nodes.end(), by_index);
  // The leaves (no output edge: nothing reads their outputs, a graph output
  // is no edge), in index order: the last pushed is explored first.
  std::vector<std::pair<NodeId, bool>> stack;  // (node, leaving)
  for (NodeId id : nodes) {
    bool read = false;
    for (ValueId output : graph.nodes[id].outputs) read = read || !graph.values[output].consumers.empty();
    if (!read) stack.emplace_back(id, false);
  }
  std::vector<bool> visited(count, false);
  std::vector<NodeId> order;
  order.reserve(count);
  std::vector<NodeId> producers;
  while (!stack.empty()) {
    const auto [id, leaving] = stack.back();
    stack.pop_back();
    if (leaving) {
      order.push_back(id);
      continue;
    }
    if (visited[id]) continue;
    visited[id] = true;
    stack.emplace_back(id, true);
    producers.clear();
    for (const std::vector<ValueId>* inputs : {&graph.nodes[id].inputs, &graph.nodes[id].implicit_inputs}) {
      for (ValueId input : *inputs) {
        const NodeId producer = graph.values[input].producer;
        if (graph.values[input].origin == ValueOrigin::kNodeOutput && producer >= 0) producers.push_back(producer);
      }
    }
    std::sort(producers.begin(), producers.end(), by_index);
    for (NodeId producer : producers) {
      if (!visited[producer]) stack.emplace_back(producer, false);
    }
  }
  if (order.size() != count) return std::nullopt;
  return order;
}

void ApplyOrtExecutionOrder(IrGraph& graph, const GraphRewrite& rewrite) {
  ApplyOrtExecutionOrder(graph, OrtNodeIndices(graph, rewrite));
}

void ApplyOrtExecutionOrder(IrGraph& graph, const std::vector<int64_t>& index) {
  const std::optional<std::vector<NodeId>> order = OrtExecutionOrder(graph, index);
  if (!order.has_value()) return;
  bool same = true;
  for (size_t i = 0; i < order->size(); ++i) same = same && (*order)[i] == static_cast<NodeId>(i);
  if (same) return;
  std::vector<IrNode> nodes;
  nodes.reserve(graph.nodes.size());
  for (NodeId id : *order) nodes.push_back(std::move(graph.nodes[id]));
  graph.nodes = std::move(nodes);
  RelinkValues(graph);
}

}  // namespace footprint::ort
