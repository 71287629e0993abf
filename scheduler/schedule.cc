#include "scheduler/schedule.h"

#include <algorithm>
#include <functional>
#include <queue>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace footprint::scheduler {

bool IsTopologicalOrder(const DataflowGraph& graph, const std::vector<int>& order) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  if (static_cast<int>(order.size()) != num_nodes) return false;
  std::vector<int> position(num_nodes, -1);
  for (int k = 0; k < num_nodes; ++k) {
    const int n = order[k];
    if (n < 0 || n >= num_nodes || position[n] != -1) return false;
    position[n] = k;
  }
  for (int n = 0; n < num_nodes; ++n) {
    for (int v : graph.nodes[n].inputs) {
      const int producer = graph.values[v].producer;
      if (producer != -1 && position[producer] >= position[n]) return false;
    }
  }
  return true;
}

absl::StatusOr<std::vector<int>> StableTopologicalOrder(const DataflowGraph& graph) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  // One edge per (producer, consumer) read; repeated reads just count twice.
  std::vector<int> missing_inputs(num_nodes, 0);
  for (int n = 0; n < num_nodes; ++n) {
    for (int v : graph.nodes[n].inputs) {
      if (graph.values[v].producer != -1) ++missing_inputs[n];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int n = 0; n < num_nodes; ++n) {
    if (missing_inputs[n] == 0) ready.push(n);
  }
  std::vector<int> order;
  order.reserve(num_nodes);
  while (!ready.empty()) {
    const int n = ready.top();
    ready.pop();
    order.push_back(n);
    for (int v : graph.nodes[n].outputs) {
      // Walk the distinct readers through their own input lists so that the
      // count matches however `consumers` lists repeats.
      std::vector<int> readers = graph.values[v].consumers;
      std::sort(readers.begin(), readers.end());
      readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
      for (int reader : readers) {
        const int reads = static_cast<int>(std::count(graph.nodes[reader].inputs.begin(),
                                                      graph.nodes[reader].inputs.end(), v));
        missing_inputs[reader] -= reads;
        if (reads > 0 && missing_inputs[reader] == 0) ready.push(reader);
      }
    }
  }
  if (static_cast<int>(order.size()) == num_nodes) return order;

  // Every node left waits on another node left: walk back along unfinished
  // producers until a node repeats; the walk from there is a cycle.
  std::vector<bool> done(num_nodes, false);
  for (int n : order) done[n] = true;
  int start = 0;
  while (done[start]) ++start;
  std::vector<int> visit_index(num_nodes, -1);
  std::vector<int> walk;
  int current = start;
  while (visit_index[current] == -1) {
    visit_index[current] = static_cast<int>(walk.size());
    walk.push_back(current);
    int next = -1;
    for (int v : graph.nodes[current].inputs) {
      const int producer = graph.values[v].producer;
      if (producer != -1 && !done[producer]) {
        next = producer;
        break;
      }
    }
    current = next;
  }
  std::vector<int> cycle(walk.begin() + visit_index[current], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // Producer before consumer.
  cycle.push_back(cycle.front());
  return absl::InvalidArgumentError(absl::StrCat(
      "the graph has a dependency cycle: ",
      absl::StrJoin(cycle, " -> ", [&graph](std::string* out, int n) {
        out->append(DescribeNode(graph, n));
      })));
}

namespace {

// Calls step(k, live bytes at step k) for every step of `order`.
template <typename StepFn>
void ForEachStep(const DataflowGraph& graph, const std::vector<int>& order, StepFn step) {
  const int num_steps = static_cast<int>(order.size());
  if (num_steps == 0) return;
  std::vector<int> step_of(graph.nodes.size(), 0);
  for (int k = 0; k < num_steps; ++k) step_of[order[k]] = k;
  // delta[k] changes the live bytes from step k on.
  std::vector<int64_t> delta(num_steps + 1, 0);
  for (const Value& value : graph.values) {
    if (value.bytes == 0) continue;
    const int first = value.producer == -1 ? 0 : step_of[value.producer];
    int last = first;
    for (int consumer : value.consumers) last = std::max(last, step_of[consumer]);
    if (value.is_graph_output) last = num_steps - 1;
    delta[first] += value.bytes;
    delta[last + 1] -= value.bytes;
  }
  int64_t running = 0;
  for (int k = 0; k < num_steps; ++k) {
    running += delta[k];
    step(k, running + graph.nodes[order[k]].extra_bytes);
  }
}

}  // namespace

std::vector<int64_t> LiveBytesPerStep(const DataflowGraph& graph, const std::vector<int>& order) {
  std::vector<int64_t> live(order.size(), 0);
  ForEachStep(graph, order, [&live](int k, int64_t bytes) { live[k] = bytes; });
  return live;
}

int64_t SchedulePeak(const DataflowGraph& graph, const std::vector<int>& order) {
  int64_t peak = 0;
  ForEachStep(graph, order, [&peak](int, int64_t bytes) { peak = std::max(peak, bytes); });
  return peak;
}

}  // namespace footprint::scheduler
