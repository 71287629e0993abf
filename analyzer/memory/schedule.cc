#include "analyzer/memory/schedule.h"

#include <functional>
#include <queue>

#include "absl/strings/str_cat.h"

namespace footprint {
namespace {

// The nodes each node must wait for (producers of its inputs), as counts and
// reverse edges; values from outside (inputs, weights, outer scope) wait for nothing.
struct Dependencies {
  std::vector<int> waiting_on;                // Per node: producers not yet run (with repeats).
  std::vector<std::vector<NodeId>> unblocks;  // Per node: nodes reading one of its outputs.
};

Dependencies CollectDependencies(const IrGraph& graph) {
  Dependencies deps;
  deps.waiting_on.assign(graph.nodes.size(), 0);
  deps.unblocks.resize(graph.nodes.size());
  for (NodeId node = 0; node < static_cast<NodeId>(graph.nodes.size()); ++node) {
    auto add = [&](ValueId value) {
      const NodeId producer = graph.values[value].producer;
      if (producer < 0) return;
      ++deps.waiting_on[node];
      deps.unblocks[producer].push_back(node);
    };
    for (ValueId value : graph.nodes[node].inputs) add(value);
    for (ValueId value : graph.nodes[node].implicit_inputs) add(value);
  }
  return deps;
}

}  // namespace

absl::StatusOr<BaselineSchedule> MakeBaselineSchedule(const IrGraph& graph) {
  const int node_count = static_cast<int>(graph.nodes.size());
  BaselineSchedule schedule;
  // Is the file order valid? Every producer must come before its readers.
  for (NodeId node = 0; node < node_count && schedule.file_order_was_valid; ++node) {
    auto check = [&](ValueId value) {
      if (graph.values[value].producer >= node) schedule.file_order_was_valid = false;
    };
    for (ValueId value : graph.nodes[node].inputs) check(value);
    for (ValueId value : graph.nodes[node].implicit_inputs) check(value);
  }
  if (schedule.file_order_was_valid) {
    schedule.order.resize(node_count);
    for (NodeId node = 0; node < node_count; ++node) schedule.order[node] = node;
    return schedule;
  }
  // Kahn's algorithm, always taking the ready node that comes first in the file.
  Dependencies deps = CollectDependencies(graph);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId node = 0; node < node_count; ++node) {
    if (deps.waiting_on[node] == 0) ready.push(node);
  }
  while (!ready.empty()) {
    const NodeId node = ready.top();
    ready.pop();
    schedule.order.push_back(node);
    for (NodeId next : deps.unblocks[node]) {
      if (--deps.waiting_on[next] == 0) ready.push(next);
    }
  }
  if (static_cast<int>(schedule.order.size()) != node_count) {
    // Walk back from a blocked node through blocked producers: the first node
    // seen twice lies on a cycle (a blocked node may only sit below one).
    NodeId node = 0;
    while (deps.waiting_on[node] == 0) ++node;
    std::vector<bool> seen(node_count, false);
    while (!seen[node]) {
      seen[node] = true;
      NodeId blocked_producer = -1;
      auto visit = [&](ValueId value) {
        const NodeId producer = graph.values[value].producer;
        if (blocked_producer < 0 && producer >= 0 && deps.waiting_on[producer] > 0) blocked_producer = producer;
      };
      for (ValueId value : graph.nodes[node].inputs) visit(value);
      for (ValueId value : graph.nodes[node].implicit_inputs) visit(value);
      node = blocked_producer;
    }
    return absl::InvalidArgumentError(absl::StrCat("the graph has a cycle through node '",
                                                   graph.nodes[node].display_name, "' (",
                                                   graph.nodes[node].proto->op_type(), ")"));
  }
  return schedule;
}

}  // namespace footprint
