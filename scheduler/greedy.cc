#include "scheduler/greedy.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace footprint::scheduler {

std::vector<int> GreedySchedule(const StepModel& model, GreedyRule rule,
                                const std::vector<int>& rank) {
  const int num_nodes = model.num_nodes;
  std::vector<int> remaining_readers(model.readers.size());
  for (size_t v = 0; v < model.readers.size(); ++v) {
    remaining_readers[v] = static_cast<int>(model.readers[v].size());
  }
  std::vector<int> missing(num_nodes);
  std::vector<int> ready;
  std::vector<int> ready_since(num_nodes, 0);
  for (int n = 0; n < num_nodes; ++n) {
    missing[n] = static_cast<int>(model.predecessors[n].size());
    if (missing[n] == 0) ready.push_back(n);
  }
  std::vector<int> order;
  order.reserve(num_nodes);
  int64_t live = model.initial_live;
  int64_t peak = 0;
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  for (int step = 0; step < num_nodes && !ready.empty(); ++step) {
    size_t best = 0;
    Key best_key;
    int64_t best_growth = 0;
    int64_t best_cost = 0;
    for (size_t i = 0; i < ready.size(); ++i) {
      const int n = ready[i];
      int64_t freed = 0;
      for (int v : model.inputs[n]) {
        if (remaining_readers[v] == 1 && !model.value_is_graph_output[v]) {
          freed += model.value_bytes[v];
        }
      }
      const int64_t growth = model.kept_bytes[n] - freed;
      const int64_t cost = live + model.run_bytes[n] + (step == 0 ? model.first_step_bytes : 0);
      Key key;
      switch (rule) {
        case GreedyRule::kLeastGrowth:
          key = {growth, cost, rank[n]};
          break;
        case GreedyRule::kPeakAware:
          key = {std::max(cost, peak), growth, rank[n]};
          break;
        case GreedyRule::kDepthFirst:
          key = {-ready_since[n], growth, rank[n]};
          break;
      }
      if (i == 0 || key < best_key) {
        best = i;
        best_key = key;
        best_growth = growth;
        best_cost = cost;
      }
    }
    const int n = ready[best];
    ready[best] = ready.back();
    ready.pop_back();
    order.push_back(n);
    live += best_growth;
    peak = std::max(peak, best_cost);
    for (int v : model.inputs[n]) --remaining_readers[v];
    for (int s : model.successors[n]) {
      if (--missing[s] == 0) {
        ready.push_back(s);
        ready_since[s] = step + 1;
      }
    }
  }
  return order;
}

}  // namespace footprint::scheduler
