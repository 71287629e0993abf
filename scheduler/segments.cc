#include "scheduler/segments.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace footprint::scheduler {

namespace {
std::vector<Segment> Split(const DataflowGraph& graph, const std::vector<int>& order,
                           const std::vector<int>& starts, const std::vector<bool>& build);
}  // namespace

std::vector<bool> FindChokepoints(const DataflowGraph& graph, const std::vector<int>& order) {
  const int num_nodes = static_cast<int>(order.size());
  std::vector<int> position(graph.nodes.size(), -1);  // -1: not in `order`, ignored.
  for (int k = 0; k < num_nodes; ++k) position[order[k]] = k;
  std::vector<int> last_predecessor(num_nodes, -1);       // By position.
  std::vector<int> first_successor(num_nodes, num_nodes);  // By position.
  for (int k = 0; k < num_nodes; ++k) {
    const Node& node = graph.nodes[order[k]];
    for (int v : node.inputs) {
      const int producer = graph.values[v].producer;
      if (producer != -1) last_predecessor[k] = std::max(last_predecessor[k], position[producer]);
      // (An ignored producer has position -1 and so changes nothing.)
    }
    for (int v : node.outputs) {
      for (int consumer : graph.values[v].consumers) {
        if (position[consumer] != -1) first_successor[k] = std::min(first_successor[k], position[consumer]);
      }
    }
  }
  // after[p] = min over q > p of last_predecessor[q].
  std::vector<int> after(num_nodes + 1, std::numeric_limits<int>::max());
  for (int q = num_nodes - 1; q >= 0; --q) after[q] = std::min(after[q + 1], last_predecessor[q]);
  std::vector<bool> chokepoint(num_nodes, false);
  int before = std::numeric_limits<int>::min();  // Max over a < p of first_successor[a].
  for (int p = 0; p < num_nodes; ++p) {
    chokepoint[p] = before <= p && after[p + 1] >= p;
    before = std::max(before, first_successor[p]);
  }
  return chokepoint;
}

std::vector<int> FindFloatingGroups(const DataflowGraph& graph, const std::vector<int>& order) {
  const int num_nodes = static_cast<int>(graph.nodes.size());
  std::vector<int> root(num_nodes, -1);
  for (const Value& value : graph.values) {
    // A graph input read by nobody is live at step 0 only: then which node
    // runs first matters, and floating nodes are better left where they are.
    if (value.producer == -1 && value.consumers.empty() && !value.is_graph_output &&
        value.bytes > 0) {
      return root;
    }
  }
  // Distinct readers of all of a node's outputs, when there is exactly one.
  auto sole_reader = [&](int n) {
    int reader = -1;
    for (int v : graph.nodes[n].outputs) {
      for (int c : graph.values[v].consumers) {
        if (reader != -1 && c != reader) return -1;
        reader = c;
      }
    }
    return reader;
  };
  std::vector<int> position(num_nodes, 0);
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  std::vector<std::vector<int>> members(num_nodes);  // Of each root.
  for (int n : order) {
    const Node& node = graph.nodes[n];
    bool floating = node.extra_bytes == 0 && !node.outputs.empty();
    for (int v : node.outputs) floating = floating && !graph.values[v].consumers.empty();
    std::vector<int> absorbed;  // Roots of the groups that feed only n.
    for (int v : node.inputs) {
      const Value& input = graph.values[v];
      if (input.producer == -1) {
        floating = floating && input.bytes == 0;
      } else if (root[input.producer] != input.producer || sole_reader(input.producer) != n) {
        floating = false;
      } else if (std::find(absorbed.begin(), absorbed.end(), input.producer) == absorbed.end()) {
        absorbed.push_back(input.producer);
      }
    }
    if (!floating) continue;
    // The group in `order`: its nodes' steps, counting only the group's own
    // values, must stay within what n keeps plus any reader's own step.
    std::vector<int> group;
    for (int r : absorbed) group.insert(group.end(), members[r].begin(), members[r].end());
    std::sort(group.begin(), group.end(),
              [&](int a, int b) { return position[a] < position[b]; });
    group.push_back(n);
    int64_t live = 0;
    int64_t group_peak = 0;
    for (int m : group) {
      int64_t outputs = 0;
      for (int v : graph.nodes[m].outputs) outputs += graph.values[v].bytes;
      group_peak = std::max(group_peak, live + outputs);
      live += outputs;
      std::vector<int> inputs = graph.nodes[m].inputs;
      std::sort(inputs.begin(), inputs.end());
      inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
      for (int v : inputs) {
        if (graph.values[v].producer != -1) live -= graph.values[v].bytes;  // Read by m only.
      }
    }
    int64_t kept = 0;
    for (int v : node.outputs) kept += graph.values[v].bytes;
    int64_t least_reader_step = -1;
    for (int v : node.outputs) {
      for (int c : graph.values[v].consumers) {
        int64_t step = graph.nodes[c].extra_bytes;
        for (int w : graph.nodes[c].outputs) step += graph.values[w].bytes;
        if (least_reader_step == -1 || step < least_reader_step) least_reader_step = step;
      }
    }
    if (group_peak > kept + least_reader_step) continue;
    for (int m : group) root[m] = n;
    members[n] = std::move(group);
  }
  return root;
}

std::vector<Segment> SplitIntoSegments(const DataflowGraph& graph, const std::vector<int>& order,
                                       int join_up_to) {
  const int num_nodes = static_cast<int>(order.size());
  if (num_nodes == 0) return {};

  // Floating groups go right before the first reader of their root in the
  // given order and are left out when looking for chokepoints.
  const std::vector<int> root = FindFloatingGroups(graph, order);
  std::vector<int> position(graph.nodes.size());
  for (int k = 0; k < num_nodes; ++k) position[order[k]] = k;
  std::vector<std::vector<int>> members(graph.nodes.size());  // Of each root, in `order`.
  for (int n : order) {
    if (root[n] != -1) members[root[n]].push_back(n);
  }
  std::vector<std::vector<int>> glued(graph.nodes.size());  // Nodes to place before each node.
  std::vector<int> core;  // `order` without the floating nodes.
  for (int n : order) {
    if (root[n] == -1) {
      core.push_back(n);
      continue;
    }
    if (root[n] != n) continue;
    int first_reader = -1;
    for (int v : graph.nodes[n].outputs) {
      for (int reader : graph.values[v].consumers) {
        if (first_reader == -1 || position[reader] < position[first_reader]) first_reader = reader;
      }
    }
    glued[first_reader].insert(glued[first_reader].end(), members[n].begin(), members[n].end());
  }
  std::vector<int> placed;  // The order with each floating group glued to its reader.
  std::vector<int> start_of(graph.nodes.size());  // Position of a core node's glued run.
  for (int n : core) {
    start_of[n] = static_cast<int>(placed.size());
    placed.insert(placed.end(), glued[n].begin(), glued[n].end());
    placed.push_back(n);
  }

  // Parts: [start, end) ranges of positions, cut around every chokepoint.
  const std::vector<bool> chokepoint = FindChokepoints(graph, core);
  std::vector<int> starts;
  for (size_t p = 0; p < core.size(); ++p) {
    if (p == 0 || chokepoint[p] || chokepoint[p - 1]) starts.push_back(start_of[core[p]]);
  }
  starts[0] = 0;
  starts.push_back(num_nodes);
  std::vector<int> joined = {0};
  for (size_t i = 0; i + 1 < starts.size(); ++i) {
    const int end = starts[i + 1];
    const bool last = i + 2 == starts.size();
    if (!last && starts[i + 2] - joined.back() > join_up_to) joined.push_back(end);
  }
  return Split(graph, placed, joined, std::vector<bool>(joined.size(), true));
}

namespace {

// SplitAtPositions, building the graphs of the segments with build[s] set only.
std::vector<Segment> Split(const DataflowGraph& graph, const std::vector<int>& order,
                           const std::vector<int>& starts, const std::vector<bool>& build) {
  const int num_nodes = static_cast<int>(order.size());
  std::vector<Segment> segments(starts.size());
  if (num_nodes == 0) return {};
  const int num_segments = static_cast<int>(segments.size());
  std::vector<int> segment_of(graph.nodes.size(), 0);
  for (int s = 0; s < num_segments; ++s) {
    const int end = s + 1 < num_segments ? starts[s + 1] : num_nodes;
    for (int p = starts[s]; p < end; ++p) {
      segment_of[order[p]] = s;
      segments[s].nodes.push_back(order[p]);
    }
  }

  // Where each value is live, by segment, and where it is touched.
  const int num_values = static_cast<int>(graph.values.size());
  std::vector<int> last_segment(num_values);  // num_segments: live to the end.
  std::vector<int64_t> passing_delta(num_segments + 1, 0);
  std::vector<int> touched;
  for (int v = 0; v < num_values; ++v) {
    const Value& value = graph.values[v];
    const int first = value.producer == -1 ? 0 : segment_of[value.producer];
    int last = first;
    for (int consumer : value.consumers) last = std::max(last, segment_of[consumer]);
    if (value.is_graph_output) last = num_segments;
    last_segment[v] = last;
    if (value.bytes == 0) continue;
    touched.clear();
    if (value.producer != -1) touched.push_back(first);
    for (int consumer : value.consumers) touched.push_back(segment_of[consumer]);
    if (value.producer == -1 && value.consumers.empty() && !value.is_graph_output) {
      touched.push_back(0);  // Live at step 0 only: segment 0 keeps it.
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    const int live_until = std::min(last, num_segments - 1);
    passing_delta[first] += value.bytes;
    passing_delta[live_until + 1] -= value.bytes;
    for (int s : touched) {
      passing_delta[s] -= value.bytes;
      passing_delta[s + 1] += value.bytes;
    }
  }
  int64_t passing = 0;
  for (int s = 0; s < num_segments; ++s) {
    passing += passing_delta[s];
    segments[s].passing_bytes = passing;
  }

  // Each segment's own graph.
  std::vector<int> local_id(num_values, -1);
  std::vector<int> local_of_segment(num_values, -1);
  for (int s = 0; s < num_segments; ++s) {
    if (!build[s]) continue;
    Segment& segment = segments[s];
    DataflowGraph& local = segment.graph;
    std::vector<int> global_of_local;
    auto local_value = [&](int v) {
      if (local_of_segment[v] != s) {
        local_of_segment[v] = s;
        local_id[v] = static_cast<int>(local.values.size());
        local.values.push_back({.bytes = graph.values[v].bytes});
        global_of_local.push_back(v);
      }
      return local_id[v];
    };
    for (int n : segment.nodes) {
      const Node& node = graph.nodes[n];
      Node& copy = local.nodes.emplace_back();
      copy.extra_bytes = node.extra_bytes;
      copy.name = node.name;
      for (int v : node.inputs) copy.inputs.push_back(local_value(v));
      for (int v : node.outputs) copy.outputs.push_back(local_value(v));
    }
    if (s == 0) {
      for (int v = 0; v < num_values; ++v) {
        const Value& value = graph.values[v];
        if (value.producer == -1 && value.consumers.empty() && !value.is_graph_output) {
          local_value(v);
        }
      }
    }
    ConnectValues(local);
    for (size_t i = 0; i < global_of_local.size(); ++i) {
      local.values[i].is_graph_output = last_segment[global_of_local[i]] > s;
    }
  }
  return segments;
}

}  // namespace

std::vector<Segment> SplitAtPositions(const DataflowGraph& graph, const std::vector<int>& order,
                                      const std::vector<int>& starts) {
  return Split(graph, order, starts, std::vector<bool>(starts.size(), true));
}

Segment ExtractPositions(const DataflowGraph& graph, const std::vector<int>& order, int first,
                         int end) {
  std::vector<int> starts = {0};
  if (first > 0) starts.push_back(first);
  const size_t wanted = starts.size() - 1;
  if (end < static_cast<int>(order.size())) starts.push_back(end);
  std::vector<bool> build(starts.size(), false);
  build[wanted] = true;
  return std::move(Split(graph, order, starts, build)[wanted]);
}

}  // namespace footprint::scheduler
