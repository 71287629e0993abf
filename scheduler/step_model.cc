#include "scheduler/step_model.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <span>

#include "scheduler/segments.h"

namespace footprint::scheduler {
namespace {

// StableTopologicalOrder from the model's lists: the nodes' own order when it
// is one, else Kahn's algorithm taking the ready node with the smallest index.
// Empty when there is a cycle.
std::vector<int> StableOrder(const StepModel& model) {
  const int num_nodes = model.num_nodes;
  std::vector<int> order;
  order.reserve(num_nodes);
  bool own_order = true;
  for (int n = 0; n < num_nodes && own_order; ++n) {
    const std::span<const int> predecessors = model.predecessors[n];
    own_order = predecessors.empty() || predecessors.back() < n;  // The list is increasing.
  }
  if (own_order) {
    for (int n = 0; n < num_nodes; ++n) order.push_back(n);
    return order;
  }
  std::vector<int> missing(num_nodes);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int n = 0; n < num_nodes; ++n) {
    missing[n] = static_cast<int>(model.predecessors[n].size());
    if (missing[n] == 0) ready.push(n);
  }
  while (!ready.empty()) {
    const int n = ready.top();
    ready.pop();
    order.push_back(n);
    for (int s : model.successors[n]) {
      if (--missing[s] == 0) ready.push(s);
    }
  }
  if (static_cast<int>(order.size()) != num_nodes) order.clear();
  return order;
}

}  // namespace

StepModel BuildStepModel(const FlatGraph& graph) {
  StepModel model;
  const int num_nodes = graph.num_nodes();
  const int num_values = graph.num_values();
  model.num_nodes = num_nodes;
  model.run_bytes.assign(num_nodes, 0);
  model.kept_bytes.assign(num_nodes, 0);
  model.local_bytes.assign(num_nodes, 0);
  model.value_bytes = graph.bytes;
  model.value_is_graph_output = graph.is_graph_output;

  // Room for every read, repeats included; AppendUnlessLast drops the
  // repeats, as each list is filled in increasing order.
  std::vector<int> reads_of_value(num_values, 0);
  std::vector<int> reads_of_node(num_nodes, 0);
  std::vector<int> reads_of_outputs(num_nodes, 0);  // Reads of the node's outputs.
  for (int n = 0; n < num_nodes; ++n) {
    reads_of_node[n] = static_cast<int>(graph.inputs[n].size());
    for (int v : graph.inputs[n]) {
      ++reads_of_value[v];
      if (graph.producer[v] != -1) ++reads_of_outputs[graph.producer[v]];
    }
  }
  model.readers = FlatLists(reads_of_value);
  model.inputs = FlatLists(reads_of_node);
  model.predecessors = FlatLists(reads_of_node);
  model.successors = FlatLists(reads_of_outputs);
  std::vector<int> scratch;
  for (int n = 0; n < num_nodes; ++n) {
    const std::span<const int> inputs = graph.inputs[n];
    for (int v : inputs) model.readers.AppendUnlessLast(v, n);
    scratch.assign(inputs.begin(), inputs.end());
    std::sort(scratch.begin(), scratch.end());
    for (int v : scratch) {
      if (graph.bytes[v] != 0) model.inputs.AppendUnlessLast(n, v);
    }
    scratch.clear();
    for (int v : inputs) {
      if (graph.producer[v] != -1) scratch.push_back(graph.producer[v]);
    }
    std::sort(scratch.begin(), scratch.end());
    for (int p : scratch) model.predecessors.AppendUnlessLast(n, p);
    for (int v : model.inputs[n]) model.local_bytes[n] += graph.bytes[v];
    model.run_bytes[n] = graph.extra_bytes[n];
  }
  // Readers in increasing order, so each successor list comes out sorted.
  for (int n = 0; n < num_nodes; ++n) {
    for (int p : model.predecessors[n]) model.successors.AppendUnlessLast(p, n);
  }
  for (int v = 0; v < num_values; ++v) {
    const bool outlives_producer = graph.is_graph_output[v] || !model.readers[v].empty();
    const int producer = graph.producer[v];
    if (producer == -1) {
      (outlives_producer ? model.initial_live : model.first_step_bytes) += graph.bytes[v];
    } else {
      model.run_bytes[producer] += graph.bytes[v];
      if (outlives_producer) model.kept_bytes[producer] += graph.bytes[v];
    }
  }
  for (int n = 0; n < num_nodes; ++n) model.local_bytes[n] += model.run_bytes[n];

  // Floating groups, found on the stable topological order (none in a cycle).
  const std::vector<int> order = StableOrder(model);
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
    if (model.floating_root[n] != -1) model.floating_members.Append(model.floating_root[n], n);
  }
  return model;
}

StepModel BuildStepModel(const DataflowGraph& graph) { return BuildStepModel(Flatten(graph)); }

namespace {

// Calls step(k, live bytes at step k) for every step of `order`.
template <typename StepFn>
void RunSteps(const StepModel& model, const std::vector<int>& order, StepFn step) {
  std::vector<int> remaining_readers(model.readers.size());
  for (int v = 0; v < model.readers.size(); ++v) {
    remaining_readers[v] = static_cast<int>(model.readers[v].size());
  }
  int64_t live = model.initial_live;
  for (size_t k = 0; k < order.size(); ++k) {
    const int n = order[k];
    step(k, live + model.run_bytes[n] + (k == 0 ? model.first_step_bytes : 0));
    live += model.kept_bytes[n];
    for (int v : model.inputs[n]) {
      if (--remaining_readers[v] == 0 && !model.value_is_graph_output[v]) live -= model.value_bytes[v];
    }
  }
}

}  // namespace

int64_t ModelPeak(const StepModel& model, const std::vector<int>& order) {
  int64_t peak = 0;
  RunSteps(model, order, [&peak](size_t, int64_t bytes) { peak = std::max(peak, bytes); });
  return peak;
}

std::vector<int64_t> ModelLiveBytesPerStep(const StepModel& model, const std::vector<int>& order) {
  std::vector<int64_t> live(order.size());
  RunSteps(model, order, [&live](size_t k, int64_t bytes) { live[k] = bytes; });
  return live;
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
