#include "scheduler/segments.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

namespace footprint::scheduler {

namespace {
std::vector<FlatSegment> Split(Segmentation& segmentation, const std::vector<bool>& build);
}  // namespace

std::vector<bool> FindChokepoints(const FlatGraph& graph, const std::vector<int>& order) {
  const int num_nodes = static_cast<int>(order.size());
  std::vector<int> position(graph.num_nodes(), -1);  // -1: not in `order`, ignored.
  for (int k = 0; k < num_nodes; ++k) position[order[k]] = k;
  std::vector<int> last_predecessor(num_nodes, -1);       // By position.
  std::vector<int> first_successor(num_nodes, num_nodes);  // By position.
  for (int k = 0; k < num_nodes; ++k) {
    const int n = order[k];
    for (int v : graph.inputs[n]) {
      const int producer = graph.producer[v];
      if (producer != -1) last_predecessor[k] = std::max(last_predecessor[k], position[producer]);
      // (An ignored producer has position -1 and so changes nothing.)
    }
    for (int v : graph.outputs[n]) {
      for (int consumer : graph.consumers[v]) {
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

std::vector<bool> FindChokepoints(const DataflowGraph& graph, const std::vector<int>& order) {
  return FindChokepoints(Flatten(graph), order);
}

namespace {

// A graph input read by nobody is live at step 0 only: then which node runs
// first matters, and floating nodes are better left where they are.
bool HasUnreadGraphInput(const FlatGraph& graph) {
  for (int v = 0; v < graph.num_values(); ++v) {
    if (graph.producer[v] == -1 && graph.consumers[v].empty() && !graph.is_graph_output[v] && graph.bytes[v] > 0) {
      return true;
    }
  }
  return false;
}

// A node that may float: no workspace, and every output read by some node.
bool OutputsAllRead(const FlatGraph& graph, int n) {
  if (graph.extra_bytes[n] != 0 || graph.outputs[n].empty()) return false;
  for (int v : graph.outputs[n]) {
    if (graph.consumers[v].empty()) return false;
  }
  return true;
}

// The first floating node of a group reads no other node's output.
bool MayStartAGroup(const FlatGraph& graph, int n) {
  if (!OutputsAllRead(graph, n)) return false;
  for (int v : graph.inputs[n]) {
    if (graph.producer[v] != -1 || graph.bytes[v] != 0) return false;
  }
  return true;
}

// The one node that reads all of n's outputs, or -1 when there are several.
int SoleReader(const FlatGraph& graph, int n) {
  int reader = -1;
  for (int v : graph.outputs[n]) {
    for (int c : graph.consumers[v]) {
      if (reader != -1 && c != reader) return -1;
      reader = c;
    }
  }
  return reader;
}

// The largest step of `group` run in its order, counting only the group's
// own values (each read by the next member only).
int64_t GroupPeak(const FlatGraph& graph, const std::vector<int>& group) {
  int64_t live = 0;
  int64_t group_peak = 0;
  std::vector<int> inputs;
  for (int m : group) {
    int64_t outputs = 0;
    for (int v : graph.outputs[m]) outputs += graph.bytes[v];
    group_peak = std::max(group_peak, live + outputs);
    live += outputs;
    inputs.assign(graph.inputs[m].begin(), graph.inputs[m].end());
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    for (int v : inputs) {
      if (graph.producer[v] != -1) live -= graph.bytes[v];  // Read by m only.
    }
  }
  return group_peak;
}

// The smallest step (outputs plus workspace) among the readers of n.
int64_t LeastReaderStep(const FlatGraph& graph, int n) {
  int64_t least_reader_step = -1;
  for (int v : graph.outputs[n]) {
    for (int c : graph.consumers[v]) {
      int64_t step = graph.extra_bytes[c];
      for (int w : graph.outputs[c]) step += graph.bytes[w];
      if (least_reader_step == -1 || step < least_reader_step) least_reader_step = step;
    }
  }
  return least_reader_step;
}

}  // namespace

void FindFloatingGroups(const FlatGraph& graph, const std::vector<int>& order, std::vector<int>& root) {
  const int num_nodes = graph.num_nodes();
  root.assign(num_nodes, -1);
  if (HasUnreadGraphInput(graph)) return;
  // Without a node that may start a group there is none (most segments).
  if (std::none_of(order.begin(), order.end(), [&](int n) { return MayStartAGroup(graph, n); })) return;
  std::vector<int> position(num_nodes, 0);
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  std::vector<std::vector<int>> members(num_nodes);  // Of each root.
  std::vector<int> absorbed;  // Roots of the groups that feed only the node.
  std::vector<int> group;
  for (int n : order) {
    bool floating = OutputsAllRead(graph, n);
    absorbed.clear();
    for (int v : graph.inputs[n]) {
      const int producer = graph.producer[v];
      if (producer == -1) {
        floating = floating && graph.bytes[v] == 0;
      } else if (root[producer] != producer || SoleReader(graph, producer) != n) {
        floating = false;
      } else if (std::find(absorbed.begin(), absorbed.end(), producer) == absorbed.end()) {
        absorbed.push_back(producer);
      }
    }
    if (!floating) continue;
    // The group in `order`: its nodes' steps, counting only the group's own
    // values, must stay within what n keeps plus any reader's own step.
    group.clear();
    for (int r : absorbed) group.insert(group.end(), members[r].begin(), members[r].end());
    std::sort(group.begin(), group.end(), [&](int a, int b) { return position[a] < position[b]; });
    group.push_back(n);
    int64_t kept = 0;
    for (int v : graph.outputs[n]) kept += graph.bytes[v];
    if (GroupPeak(graph, group) > kept + LeastReaderStep(graph, n)) continue;
    for (int m : group) root[m] = n;
    members[n] = group;
  }
}

std::vector<int> FindFloatingGroups(const FlatGraph& graph, const std::vector<int>& order) {
  std::vector<int> root;
  FindFloatingGroups(graph, order, root);
  return root;
}

std::vector<int> FindFloatingGroups(const DataflowGraph& graph, const std::vector<int>& order) {
  return FindFloatingGroups(Flatten(graph), order);
}

Segmentation SegmentOrder(const FlatGraph& graph, const std::vector<int>& order, int join_up_to) {
  const int num_nodes = static_cast<int>(order.size());
  if (num_nodes == 0) return Segmentation(graph, {}, {0});

  // Floating groups go right before the first reader of their root in the
  // given order and are left out when looking for chokepoints.
  const std::vector<int> root = FindFloatingGroups(graph, order);
  std::vector<int> position(graph.num_nodes());
  for (int k = 0; k < num_nodes; ++k) position[order[k]] = k;
  std::vector<std::vector<int>> members(graph.num_nodes());  // Of each root, in `order`.
  for (int n : order) {
    if (root[n] != -1) members[root[n]].push_back(n);
  }
  std::vector<std::vector<int>> glued(graph.num_nodes());  // Nodes to place before each node.
  std::vector<int> core;  // `order` without the floating nodes.
  core.reserve(num_nodes);
  for (int n : order) {
    if (root[n] == -1) {
      core.push_back(n);
      continue;
    }
    if (root[n] != n) continue;
    int first_reader = -1;
    for (int v : graph.outputs[n]) {
      for (int reader : graph.consumers[v]) {
        if (first_reader == -1 || position[reader] < position[first_reader]) first_reader = reader;
      }
    }
    glued[first_reader].insert(glued[first_reader].end(), members[n].begin(), members[n].end());
  }
  std::vector<int> placed;  // The order with each floating group glued to its reader.
  placed.reserve(num_nodes);
  std::vector<int> start_of(graph.num_nodes());  // Position of a core node's glued run.
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
  return Segmentation(graph, placed, joined);
}

std::vector<FlatSegment> SplitIntoSegments(const FlatGraph& graph, const std::vector<int>& order,
                                           int join_up_to) {
  Segmentation segmentation = SegmentOrder(graph, order, join_up_to);
  return Split(segmentation, std::vector<bool>(segmentation.num_segments(), true));
}

void Segmentation::Reset(const std::vector<int>& order, const std::vector<int>& starts) {
  const FlatGraph& graph = graph_;
  order_ = order;
  const int num_nodes = static_cast<int>(order_.size());
  unread_inputs_.clear();
  if (num_nodes == 0) {
    starts_.assign(1, 0);
    passing_bytes_.clear();
    return;
  }
  starts_ = starts;
  starts_.push_back(num_nodes);
  const int num_segments = this->num_segments();
  segment_of_.assign(graph.num_nodes(), 0);
  for (int s = 0; s < num_segments; ++s) {
    for (int p = starts_[s]; p < starts_[s + 1]; ++p) segment_of_[order_[p]] = s;
  }

  // Where each value is live, by segment, and where it is touched.
  const int num_values = graph.num_values();
  last_segment_.resize(num_values);
  passing_delta_.assign(num_segments + 1, 0);
  touched_by_.assign(num_segments, -1);  // The last value that touched each segment.
  for (int v = 0; v < num_values; ++v) {
    const int producer = graph.producer[v];
    const std::span<const int> consumers = graph.consumers[v];
    const int first = producer == -1 ? 0 : segment_of_[producer];
    int last = first;
    for (int consumer : consumers) last = std::max(last, segment_of_[consumer]);
    if (graph.is_graph_output[v]) last = num_segments;
    last_segment_[v] = last;
    const bool unread_input = producer == -1 && consumers.empty() && !graph.is_graph_output[v];
    if (unread_input) unread_inputs_.push_back(v);
    const int64_t bytes = graph.bytes[v];
    if (bytes == 0) continue;
    const int live_until = std::min(last, num_segments - 1);
    passing_delta_[first] += bytes;
    passing_delta_[live_until + 1] -= bytes;
    // Segments that touch it do not count it as passing (once each).
    auto touch = [&](int s) {
      if (touched_by_[s] == v) return;
      touched_by_[s] = v;
      passing_delta_[s] -= bytes;
      passing_delta_[s + 1] += bytes;
    };
    if (producer != -1) touch(first);
    for (int consumer : consumers) touch(segment_of_[consumer]);
    if (unread_input) touch(0);
  }
  passing_bytes_.resize(num_segments);
  int64_t passing = 0;
  for (int s = 0; s < num_segments; ++s) {
    passing += passing_delta_[s];
    passing_bytes_[s] = passing;
  }
  if (static_cast<int>(local_id_.size()) != num_values) {
    local_id_.assign(num_values, -1);
    numbered_in_.assign(num_values, -1);
    builds_ = 0;
  }
}

void Segmentation::BuildGraph(int s, FlatGraph& local) {
  // Its values numbered as its nodes first touch them (inputs, then
  // outputs), then segment 0's unread graph inputs.
  const FlatGraph& graph = graph_;
  const std::span<const int> nodes = this->nodes(s);
  const int build = builds_++;
  global_of_local_.clear();
  auto number = [&](int v) {
    if (numbered_in_[v] == build) return;
    numbered_in_[v] = build;
    local_id_[v] = static_cast<int>(global_of_local_.size());
    global_of_local_.push_back(v);
  };
  for (int n : nodes) {
    for (int v : graph.inputs[n]) number(v);
    for (int v : graph.outputs[n]) number(v);
  }
  if (s == 0) {
    for (int v : unread_inputs_) number(v);
  }
  const int local_nodes = static_cast<int>(nodes.size());
  const int local_values = static_cast<int>(global_of_local_.size());
  local.inputs.Reset(local_nodes, [&](int i) { return static_cast<int>(graph.inputs[nodes[i]].size()); });
  local.outputs.Reset(local_nodes, [&](int i) { return static_cast<int>(graph.outputs[nodes[i]].size()); });
  local.extra_bytes.resize(local_nodes);
  local_reads_.assign(local_values, 0);
  for (int n : nodes) {
    for (int v : graph.inputs[n]) ++local_reads_[local_id_[v]];
  }
  local.consumers.Reset(local_reads_);
  local.producer.assign(local_values, -1);
  for (int i = 0; i < local_nodes; ++i) {
    const int n = nodes[i];
    for (int v : graph.inputs[n]) {
      local.inputs.Append(i, local_id_[v]);
      local.consumers.Append(local_id_[v], i);
    }
    for (int v : graph.outputs[n]) {
      local.outputs.Append(i, local_id_[v]);
      local.producer[local_id_[v]] = i;
    }
    local.extra_bytes[i] = graph.extra_bytes[n];
  }
  local.bytes.resize(local_values);
  local.is_graph_output.resize(local_values);
  for (int i = 0; i < local_values; ++i) {
    local.bytes[i] = graph.bytes[global_of_local_[i]];
    local.is_graph_output[i] = last_segment_[global_of_local_[i]] > s;
  }
}

namespace {

// The segments of `segmentation`, building the graphs of those with
// build[s] set only.
std::vector<FlatSegment> Split(Segmentation& segmentation, const std::vector<bool>& build) {
  std::vector<FlatSegment> segments(segmentation.num_segments());
  for (int s = 0; s < segmentation.num_segments(); ++s) {
    const std::span<const int> nodes = segmentation.nodes(s);
    segments[s].nodes.assign(nodes.begin(), nodes.end());
    segments[s].passing_bytes = segmentation.passing_bytes(s);
    if (build[s]) segmentation.BuildGraph(s, segments[s].graph);
  }
  return segments;
}

// The DataflowGraph version of a segment, with its nodes' names.
Segment Expand(const DataflowGraph& graph, FlatSegment flat) {
  Segment segment{.nodes = std::move(flat.nodes),
                  .graph = Unflatten(flat.graph),
                  .passing_bytes = flat.passing_bytes};
  for (size_t i = 0; i < segment.graph.nodes.size(); ++i) {
    segment.graph.nodes[i].name = graph.nodes[segment.nodes[i]].name;
  }
  return segment;
}

std::vector<Segment> Expand(const DataflowGraph& graph, std::vector<FlatSegment> flat) {
  std::vector<Segment> segments(flat.size());
  for (size_t s = 0; s < flat.size(); ++s) {
    segments[s] = Expand(graph, std::move(flat[s]));
  }
  return segments;
}

}  // namespace

std::vector<Segment> SplitIntoSegments(const DataflowGraph& graph, const std::vector<int>& order,
                                       int join_up_to) {
  return Expand(graph, SplitIntoSegments(Flatten(graph), order, join_up_to));
}

std::vector<FlatSegment> SplitAtPositions(const FlatGraph& graph, const std::vector<int>& order,
                                          const std::vector<int>& starts) {
  Segmentation segmentation(graph, order, starts);
  return Split(segmentation, std::vector<bool>(segmentation.num_segments(), true));
}

std::vector<Segment> SplitAtPositions(const DataflowGraph& graph, const std::vector<int>& order,
                                      const std::vector<int>& starts) {
  return Expand(graph, SplitAtPositions(Flatten(graph), order, starts));
}

FlatSegment ExtractPositions(const FlatGraph& graph, const std::vector<int>& order, int first,
                             int end) {
  std::vector<int> starts = {0};
  if (first > 0) starts.push_back(first);
  const int wanted = static_cast<int>(starts.size()) - 1;
  if (end < static_cast<int>(order.size())) starts.push_back(end);
  Segmentation segmentation(graph, order, starts);
  FlatSegment segment;
  const std::span<const int> nodes = segmentation.nodes(wanted);
  segment.nodes.assign(nodes.begin(), nodes.end());
  segment.passing_bytes = segmentation.passing_bytes(wanted);
  segmentation.BuildGraph(wanted, segment.graph);
  return segment;
}

Segment ExtractPositions(const DataflowGraph& graph, const std::vector<int>& order, int first,
                         int end) {
  return Expand(graph, ExtractPositions(Flatten(graph), order, first, end));
}

}  // namespace footprint::scheduler
