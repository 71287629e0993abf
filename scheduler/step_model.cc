#include "scheduler/step_model.h"

#include <algorithm>

#include "scheduler/schedule.h"
#include "scheduler/segments.h"

namespace footprint::scheduler {

FlatLists::FlatLists(const std::vector<int>& capacities)
    : starts_(capacities.size()), ends_(capacities.size()) {
  int total = 0;
  for (size_t i = 0; i < capacities.size(); ++i) {
    starts_[i] = ends_[i] = total;
    total += capacities[i];
  }
  items_.resize(total);
}

StepModel BuildStepModel(const DataflowGraph& graph) {
  StepModel model;
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const int num_values = static_cast<int>(graph.values.size());
  model.num_nodes = num_nodes;
  model.run_bytes.assign(num_nodes, 0);
  model.kept_bytes.assign(num_nodes, 0);
  model.local_bytes.assign(num_nodes, 0);
  model.value_bytes.resize(num_values);
  model.value_is_graph_output.resize(num_values);

  // Room for every read, repeats included; Add drops the repeats, as each
  // list is filled in increasing order.
  std::vector<int> reads_of_value(num_values, 0);
  std::vector<int> reads_of_node(num_nodes, 0);
  std::vector<int> reads_of_outputs(num_nodes, 0);  // Reads of the node's outputs.
  for (int n = 0; n < num_nodes; ++n) {
    reads_of_node[n] = static_cast<int>(graph.nodes[n].inputs.size());
    for (int v : graph.nodes[n].inputs) {
      ++reads_of_value[v];
      if (graph.values[v].producer != -1) ++reads_of_outputs[graph.values[v].producer];
    }
  }
  model.readers = FlatLists(reads_of_value);
  model.inputs = FlatLists(reads_of_node);
  model.predecessors = FlatLists(reads_of_node);
  model.successors = FlatLists(reads_of_outputs);
  std::vector<int> scratch;
  for (int n = 0; n < num_nodes; ++n) {
    const Node& node = graph.nodes[n];
    for (int v : node.inputs) model.readers.Add(v, n);
    scratch.assign(node.inputs.begin(), node.inputs.end());
    std::sort(scratch.begin(), scratch.end());
    int64_t input_bytes = 0;
    for (size_t i = 0; i < scratch.size(); ++i) {
      const int v = scratch[i];
      if (graph.values[v].bytes == 0 || (i > 0 && scratch[i - 1] == v)) continue;
      model.inputs.Add(n, v);
      input_bytes += graph.values[v].bytes;
    }
    scratch.clear();
    for (int v : node.inputs) {
      if (graph.values[v].producer != -1) scratch.push_back(graph.values[v].producer);
    }
    std::sort(scratch.begin(), scratch.end());
    for (int p : scratch) {
      model.predecessors.Add(n, p);
    }
    model.run_bytes[n] += node.extra_bytes;
    model.local_bytes[n] = input_bytes;  // run_bytes is added once the values are counted.
  }
  // Readers in increasing order, so each successor list comes out sorted.
  for (int n = 0; n < num_nodes; ++n) {
    for (int p : model.predecessors[n]) model.successors.Add(p, n);
  }
  for (int v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    model.value_bytes[v] = value.bytes;
    model.value_is_graph_output[v] = value.is_graph_output;
    const bool outlives_producer = value.is_graph_output || !model.readers[v].empty();
    if (value.producer == -1) {
      (outlives_producer ? model.initial_live : model.first_step_bytes) += value.bytes;
    } else {
      model.run_bytes[value.producer] += value.bytes;
      if (outlives_producer) model.kept_bytes[value.producer] += value.bytes;
    }
  }
  for (int n = 0; n < num_nodes; ++n) model.local_bytes[n] += model.run_bytes[n];

  // Floating groups, found on the stable topological order: the nodes' own
  // order when every node comes after its predecessors (always so for a
  // segment), which spares the sort.
  bool own_order_is_topological = true;
  for (int n = 0; n < num_nodes && own_order_is_topological; ++n) {
    const std::span<const int> predecessors = model.predecessors[n];
    own_order_is_topological = predecessors.empty() || predecessors.back() < n;
  }
  std::vector<int> order;
  if (own_order_is_topological) {
    order.resize(num_nodes);
    for (int n = 0; n < num_nodes; ++n) order[n] = n;
  } else if (absl::StatusOr<std::vector<int>> sorted = StableTopologicalOrder(graph); sorted.ok()) {
    order = *std::move(sorted);
  }
  std::vector<int> group_sizes(num_nodes, 0);
  if (order.empty()) {
    model.floating_root.assign(num_nodes, -1);
  } else {
    model.floating_root = FindFloatingGroups(graph, order);
    for (int n : order) {
      if (model.floating_root[n] != -1) ++group_sizes[model.floating_root[n]];
    }
  }
  model.floating_members = FlatLists(group_sizes);
  for (int n : order) {
    if (model.floating_root[n] != -1) model.floating_members.Add(model.floating_root[n], n);
  }
  return model;
}

int64_t ModelPeak(const StepModel& model, const std::vector<int>& order) {
  std::vector<int> remaining_readers(model.readers.size());
  for (int v = 0; v < model.readers.size(); ++v) {
    remaining_readers[v] = static_cast<int>(model.readers[v].size());
  }
  int64_t live = model.initial_live;
  int64_t peak = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const int n = order[k];
    peak = std::max(peak, live + model.run_bytes[n] + (k == 0 ? model.first_step_bytes : 0));
    live += model.kept_bytes[n];
    for (int v : model.inputs[n]) {
      if (--remaining_readers[v] == 0 && !model.value_is_graph_output[v]) live -= model.value_bytes[v];
    }
  }
  return peak;
}

int64_t FreedBytes(const StepModel& model, int node, const std::vector<bool>& done) {
  int64_t freed = 0;
  for (int v : model.inputs[node]) {
    if (model.value_is_graph_output[v]) continue;
    bool last = true;
    for (int reader : model.readers[v]) {
      if (reader != node && !done[reader]) {
        last = false;
        break;
      }
    }
    if (last) freed += model.value_bytes[v];
  }
  return freed;
}

}  // namespace footprint::scheduler
