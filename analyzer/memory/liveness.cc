#include "analyzer/memory/liveness.h"

#include <algorithm>

namespace footprint {

std::vector<planner::Step> StepsOf(const std::vector<NodeId>& order, int node_count) {
  std::vector<planner::Step> step(node_count, 0);
  for (size_t k = 0; k < order.size(); ++k) step[order[k]] = static_cast<planner::Step>(k);
  return step;
}

std::vector<planner::Lifespan> ComputeLifespans(const IrGraph& graph, const std::vector<NodeId>& order,
                                                const GraphRewrite& rewrite) {
  const std::vector<planner::Step> step = StepsOf(order, static_cast<int>(graph.nodes.size()));
  const planner::Step last_step = std::max<planner::Step>(0, static_cast<planner::Step>(order.size()) - 1);
  std::vector<planner::Lifespan> lifespans(graph.values.size());
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const IrValue& value = graph.values[id];
    planner::Lifespan& lifespan = lifespans[id];
    if (value.origin != ValueOrigin::kGraphInput && value.origin != ValueOrigin::kNodeOutput) continue;
    lifespan.first = value.origin == ValueOrigin::kNodeOutput ? step[value.producer] : 0;
    lifespan.last = lifespan.first;
    for (NodeId consumer : value.consumers) lifespan.last = std::max(lifespan.last, step[consumer]);
    if (value.is_graph_output || HeldAs(rewrite, static_cast<ValueId>(id)).live_to_end) {
      lifespan.last = std::max(lifespan.last, last_step);
    }
  }
  return lifespans;
}

}  // namespace footprint
