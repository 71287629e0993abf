#include "scheduler/step_model.h"

#include <algorithm>

#include "scheduler/schedule.h"
#include "scheduler/segments.h"

namespace footprint::scheduler {
namespace {

void SortUnique(std::vector<int>& items) {
  std::sort(items.begin(), items.end());
  items.erase(std::unique(items.begin(), items.end()), items.end());
}

}  // namespace

StepModel BuildStepModel(const DataflowGraph& graph) {
  StepModel model;
  const int num_nodes = static_cast<int>(graph.nodes.size());
  const int num_values = static_cast<int>(graph.values.size());
  model.num_nodes = num_nodes;
  model.predecessors.resize(num_nodes);
  model.successors.resize(num_nodes);
  model.inputs.resize(num_nodes);
  model.run_bytes.assign(num_nodes, 0);
  model.kept_bytes.assign(num_nodes, 0);
  model.local_bytes.assign(num_nodes, 0);
  model.value_bytes.resize(num_values);
  model.value_is_graph_output.resize(num_values);
  model.readers.resize(num_values);
  for (int v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    model.value_bytes[v] = value.bytes;
    model.value_is_graph_output[v] = value.is_graph_output;
    model.readers[v] = value.consumers;
    SortUnique(model.readers[v]);
    const bool outlives_producer = value.is_graph_output || !model.readers[v].empty();
    if (value.producer == -1) {
      (outlives_producer ? model.initial_live : model.first_step_bytes) += value.bytes;
    } else {
      model.run_bytes[value.producer] += value.bytes;
      if (outlives_producer) model.kept_bytes[value.producer] += value.bytes;
      for (int reader : model.readers[v]) {
        model.successors[value.producer].push_back(reader);
        model.predecessors[reader].push_back(value.producer);
      }
    }
  }
  for (int n = 0; n < num_nodes; ++n) {
    SortUnique(model.predecessors[n]);
    SortUnique(model.successors[n]);
    std::vector<int> inputs = graph.nodes[n].inputs;
    SortUnique(inputs);
    int64_t input_bytes = 0;
    for (int v : inputs) {
      if (graph.values[v].bytes == 0) continue;
      model.inputs[n].push_back(v);
      input_bytes += graph.values[v].bytes;
    }
    model.run_bytes[n] += graph.nodes[n].extra_bytes;
    model.local_bytes[n] = input_bytes + model.run_bytes[n];
  }
  model.floating_members.resize(num_nodes);
  if (absl::StatusOr<std::vector<int>> order = StableTopologicalOrder(graph); order.ok()) {
    model.floating_root = FindFloatingGroups(graph, *order);
    for (int n : *order) {
      if (model.floating_root[n] != -1) model.floating_members[model.floating_root[n]].push_back(n);
    }
  } else {
    model.floating_root.assign(num_nodes, -1);
  }
  return model;
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
