#include "scheduler/testing/brute_force.h"

#include <algorithm>
#include <functional>

#include "scheduler/schedule.h"

namespace footprint::scheduler::testing {
namespace {

// Number of inputs (counting repeats) whose producer has not run, per node.
std::vector<int> MissingInputs(const DataflowGraph& graph) {
  std::vector<int> missing(graph.nodes.size(), 0);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int v : graph.nodes[n].inputs) missing[n] += graph.values[v].producer != -1;
  }
  return missing;
}

// For each node, the readers of its outputs, once per read.
std::vector<std::vector<int>> ReadsOf(const DataflowGraph& graph) {
  std::vector<std::vector<int>> reads(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int v : graph.nodes[n].inputs) {
      if (graph.values[v].producer != -1) reads[graph.values[v].producer].push_back(n);
    }
  }
  return reads;
}

}  // namespace

std::optional<int64_t> BruteForceMinPeak(const DataflowGraph& graph, int64_t max_orders) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::vector<int> missing = MissingInputs(graph);
  const std::vector<std::vector<int>> reads = ReadsOf(graph);
  std::vector<bool> done(num_nodes, false);
  std::vector<int> order;
  int64_t orders = 0;
  std::optional<int64_t> best;
  std::function<bool()> extend = [&]() -> bool {
    if (static_cast<int>(order.size()) == num_nodes) {
      if (++orders > max_orders) return false;
      const int64_t peak = SchedulePeak(graph, order);
      if (!best.has_value() || peak < *best) best = peak;
      return true;
    }
    for (int n = 0; n < num_nodes; ++n) {
      if (done[n] || missing[n] != 0) continue;
      done[n] = true;
      order.push_back(n);
      for (int reader : reads[n]) --missing[reader];
      const bool go_on = extend();
      for (int reader : reads[n]) ++missing[reader];
      order.pop_back();
      done[n] = false;
      if (!go_on) return false;
    }
    return true;
  };
  if (!extend()) return std::nullopt;
  return best;
}

std::vector<int> RandomTopologicalOrder(const DataflowGraph& graph, std::mt19937_64& random) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::vector<int> missing = MissingInputs(graph);
  const std::vector<std::vector<int>> reads = ReadsOf(graph);
  std::vector<bool> done(num_nodes, false);
  std::vector<int> order;
  while (static_cast<int>(order.size()) < num_nodes) {
    std::vector<int> ready;
    for (int n = 0; n < num_nodes; ++n) {
      if (!done[n] && missing[n] == 0) ready.push_back(n);
    }
    const int n = ready[std::uniform_int_distribution<size_t>(0, ready.size() - 1)(random)];
    done[n] = true;
    order.push_back(n);
    for (int reader : reads[n]) --missing[reader];
  }
  return order;
}

}  // namespace footprint::scheduler::testing
