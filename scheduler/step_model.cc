#include "scheduler/step_model.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <span>

#include "scheduler/segments.h"

namespace footprint::scheduler {
namespace {

// StableTopologicalOrder from the model's lists, into `order`: the nodes'
// own order when it is one, else Kahn's algorithm taking the ready node with
// the smallest index. Empty when there is a cycle.
void StableOrder(const StepModel& model, std::vector<int>& order) {
  const int num_nodes = model.num_nodes;
  order.clear();
  bool own_order = true;
  for (int n = 0; n < num_nodes && own_order; ++n) {
    const std::span<const int> predecessors = model.predecessors[n];
    own_order = predecessors.empty() || predecessors.back() < n;  // The list is increasing.
  }
  if (own_order) {
    for (int n = 0; n < num_nodes; ++n) order.push_back(n);
    return;
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
}

}  // namespace

const StepModel& StepModelBuilder::Build(const FlatGraph& graph) {
  StepModel& model = model_;
  const int num_nodes = graph.num_nodes();
  const int num_values = graph.num_values();
  model.num_nodes = num_nodes;
  model.run_bytes.assign(num_nodes, 0);
  model.kept_bytes.assign(num_nodes, 0);
  model.local_bytes.assign(num_nodes, 0);
  model.value_bytes = graph.bytes;
  model.value_is_graph_output = graph.is_graph_output;
  model.initial_live = 0;
  model.first_step_bytes = 0;

  // Room for every read, repeats included; AppendUnlessLast drops the
  // repeats, as each list is filled in increasing order.
  reads_.assign(num_values, 0);
  for (int n = 0; n < num_nodes; ++n) {
    for (int v : graph.inputs[n]) ++reads_[v];
  }
  model.readers.Reset(reads_);
  auto inputs_of = [&](int n) { return static_cast<int>(graph.inputs[n].size()); };
  model.inputs.Reset(num_nodes, inputs_of);
  model.predecessors.Reset(num_nodes, inputs_of);
  model.successors.Reset(num_nodes, [&](int n) {
    int reads = 0;
    for (int v : graph.outputs[n]) reads += reads_[v];
    return reads;
  });
  for (int n = 0; n < num_nodes; ++n) {
    const std::span<const int> inputs = graph.inputs[n];
    for (int v : inputs) model.readers.AppendUnlessLast(v, n);
    scratch_.assign(inputs.begin(), inputs.end());
    std::sort(scratch_.begin(), scratch_.end());
    for (int v : scratch_) {
      if (graph.bytes[v] != 0) model.inputs.AppendUnlessLast(n, v);
    }
    scratch_.clear();
    for (int v : inputs) {
      if (graph.producer[v] != -1) scratch_.push_back(graph.producer[v]);
    }
    std::sort(scratch_.begin(), scratch_.end());
    for (int p : scratch_) model.predecessors.AppendUnlessLast(n, p);
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
  StableOrder(model, order_);
  if (order_.empty()) {
    model.floating_root.assign(num_nodes, -1);
  } else {
    FindFloatingGroups(graph, order_, model.floating_root);
  }
  scratch_.assign(num_nodes, 0);  // Group sizes.
  for (int n : order_) {
    if (model.floating_root[n] != -1) ++scratch_[model.floating_root[n]];
  }
  model.floating_members.Reset(scratch_);
  for (int n : order_) {
    if (model.floating_root[n] != -1) model.floating_members.Append(model.floating_root[n], n);
  }
  return model;
}

StepModel BuildStepModel(const FlatGraph& graph) {
  StepModelBuilder builder;
  builder.Build(graph);
  return std::move(builder.model());
}

StepModel BuildStepModel(const DataflowGraph& graph) { return BuildStepModel(Flatten(graph)); }

namespace {

// Calls step(k, live bytes at step k) for every step of `order`.
template <typename StepFn>
void RunSteps(const StepModel& model, const std::vector<int>& order,
              std::vector<int>& remaining_readers, StepFn step) {
  remaining_readers.resize(model.readers.size());
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

int64_t ModelPeak(const StepModel& model, const std::vector<int>& order, std::vector<int>& scratch) {
  int64_t peak = 0;
  RunSteps(model, order, scratch, [&peak](size_t, int64_t bytes) { peak = std::max(peak, bytes); });
  return peak;
}

int64_t ModelPeak(const StepModel& model, const std::vector<int>& order) {
  std::vector<int> scratch;
  return ModelPeak(model, order, scratch);
}

std::vector<int64_t> ModelLiveBytesPerStep(const StepModel& model, const std::vector<int>& order) {
  std::vector<int64_t> live(order.size());
  std::vector<int> scratch;
  RunSteps(model, order, scratch, [&live](size_t k, int64_t bytes) { live[k] = bytes; });
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
