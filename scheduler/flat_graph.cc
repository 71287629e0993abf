#include "scheduler/flat_graph.h"

namespace footprint::scheduler {

FlatGraph Flatten(const DataflowGraph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const int num_values = static_cast<int>(graph.values.size());
  FlatGraph flat;
  flat.inputs.Reset(num_nodes, [&](int n) { return static_cast<int>(graph.nodes[n].inputs.size()); });
  flat.outputs.Reset(num_nodes, [&](int n) { return static_cast<int>(graph.nodes[n].outputs.size()); });
  flat.extra_bytes.resize(num_nodes);
  for (int n = 0; n < num_nodes; ++n) {
    const Node& node = graph.nodes[n];
    for (int v : node.inputs) flat.inputs.Append(n, v);
    for (int v : node.outputs) flat.outputs.Append(n, v);
    flat.extra_bytes[n] = node.extra_bytes;
  }
  flat.consumers.Reset(num_values,
                       [&](int v) { return static_cast<int>(graph.values[v].consumers.size()); });
  flat.bytes.resize(num_values);
  flat.producer.resize(num_values);
  flat.is_graph_output.resize(num_values);
  for (int v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    for (int c : value.consumers) flat.consumers.Append(v, c);
    flat.bytes[v] = value.bytes;
    flat.producer[v] = value.producer;
    flat.is_graph_output[v] = value.is_graph_output;
  }
  return flat;
}

DataflowGraph Unflatten(const FlatGraph& flat) {
  DataflowGraph graph;
  graph.nodes.resize(flat.num_nodes());
  for (int n = 0; n < flat.num_nodes(); ++n) {
    Node& node = graph.nodes[n];
    node.inputs.assign(flat.inputs[n].begin(), flat.inputs[n].end());
    node.outputs.assign(flat.outputs[n].begin(), flat.outputs[n].end());
    node.extra_bytes = flat.extra_bytes[n];
  }
  graph.values.resize(flat.num_values());
  for (int v = 0; v < flat.num_values(); ++v) {
    Value& value = graph.values[v];
    value.bytes = flat.bytes[v];
    value.producer = flat.producer[v];
    value.consumers.assign(flat.consumers[v].begin(), flat.consumers[v].end());
    value.is_graph_output = flat.is_graph_output[v];
  }
  return graph;
}

}  // namespace footprint::scheduler
