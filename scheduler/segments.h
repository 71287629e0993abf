// Splitting a schedule at the nodes every schedule must pass through
// (internal to the scheduler).
//
// Why: a node c such that every other node is an ancestor or a descendant of
// c (a "chokepoint": the Add that closes a residual block, the Concat that
// closes an inception module) splits every valid schedule into the same
// before/c/after parts. The parts can then be scheduled one by one: the peak
// of the whole is the max over the parts, each counted with the bytes of the
// values that only pass over it. Finding them takes O(nodes + edges): in a
// topological order, c at position p is a chokepoint when every node before
// it has a successor at a position <= p and every node after it has a
// predecessor at a position >= p.
#ifndef ONNX_FOOTPRINT_SCHEDULER_SEGMENTS_H_
#define ONNX_FOOTPRINT_SCHEDULER_SEGMENTS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "scheduler/dataflow_graph.h"
#include "scheduler/flat_graph.h"

namespace footprint::scheduler {

struct Segment {
  std::vector<int> nodes;    // Graph node indices, in the order given to SplitIntoSegments.
  DataflowGraph graph;       // Its nodes (local node i is nodes[i]) and the values they touch.
  int64_t passing_bytes = 0;  // Bytes live over the whole segment that none of its nodes touches.
};

// The same with a FlatGraph, which is what the optimizer works from: the
// functions below taking a FlatGraph return these, and the DataflowGraph
// versions are made from them.
struct FlatSegment {
  std::vector<int> nodes;     // Graph node indices, in the order given to SplitIntoSegments.
  FlatGraph graph;            // Its nodes (local node i is nodes[i]) and the values they touch.
  int64_t passing_bytes = 0;  // Bytes live over the whole segment that none of its nodes touches.
};

// An order cut into segments whose graphs are built one at a time, each
// into memory the caller reuses: what the optimizer works from, as a long
// model makes hundreds of segments (SplitAtPositions builds them all).
class Segmentation {
 public:
  // Segment s holds positions [starts[s], starts[s+1]) of `order` (starts[0]
  // must be 0, increasing, below the node count). `graph` must outlive it.
  // O(nodes + edges).
  Segmentation(const FlatGraph& graph, const std::vector<int>& order, const std::vector<int>& starts)
      : graph_(graph) {
    Reset(order, starts);
  }
  // Another cut of another order of the same graph, reusing the memory.
  void Reset(const std::vector<int>& order, const std::vector<int>& starts);

  int num_segments() const { return static_cast<int>(starts_.size()) - 1; }
  // Its graph node indices, in order.
  std::span<const int> nodes(int s) const {
    return {order_.data() + starts_[s], order_.data() + starts_[s + 1]};
  }
  // Bytes live over the whole segment that none of its nodes touches.
  int64_t passing_bytes(int s) const { return passing_bytes_[s]; }
  // Makes `local` segment s's graph (local node i is nodes(s)[i]), reusing
  // its memory. O(the segment's nodes and edges).
  void BuildGraph(int s, FlatGraph& local);

 private:
  const FlatGraph& graph_;
  std::vector<int> order_;                // All segments' nodes, back to back.
  std::vector<int> starts_;               // Where each segment starts in order_, then the end.
  std::vector<int64_t> passing_bytes_;    // Per segment.
  std::vector<int> last_segment_;         // Per value: the last segment it is live in
                                          // (num_segments(): to the end).
  std::vector<int> unread_inputs_;        // Graph inputs nobody reads: segment 0 keeps them.
  std::vector<int> segment_of_;           // Scratch of Reset, per node.
  std::vector<int64_t> passing_delta_;    // Scratch of Reset, per segment.
  std::vector<int> touched_by_;           // Scratch of Reset, per segment.
  std::vector<int> local_id_;             // Per value: its index in the graph being built...
  std::vector<int> numbered_in_;          // ...when numbered in build number numbered_in_[v].
  int builds_ = 0;                        // BuildGraph calls so far.
  std::vector<int> global_of_local_;      // Scratch of BuildGraph.
  std::vector<int> local_reads_;          // Scratch of BuildGraph.
};

// SplitIntoSegments's cut, with no segment graph built yet.
Segmentation SegmentOrder(const FlatGraph& graph, const std::vector<int>& order, int join_up_to);

// Whether each position of `order` (a topological order) holds a chokepoint.
// Nodes missing from `order` are ignored.
std::vector<bool> FindChokepoints(const FlatGraph& graph, const std::vector<int>& order);
std::vector<bool> FindChokepoints(const DataflowGraph& graph, const std::vector<int>& order);

// Floating groups: in-trees of nodes that depend on no other node and read
// no graph input with bytes (weights made by ConstantOfShape, a Transpose or
// DequantizeLinear of an initializer), each read by one node except the root,
// with no extra_bytes and every output read. Some best schedule runs each
// group right before the first reader of its root: moving it there only
// shortens its values' lives, and it is kept only when its own steps stay
// below any reader's step (checked on the group's order in `order`).
// root[n] = the root of n's group, or -1. None when a graph input nobody
// reads makes step 0 special.
std::vector<int> FindFloatingGroups(const FlatGraph& graph, const std::vector<int>& order);
void FindFloatingGroups(const FlatGraph& graph, const std::vector<int>& order, std::vector<int>& root);
std::vector<int> FindFloatingGroups(const DataflowGraph& graph, const std::vector<int>& order);

// Moves every floating group right before the first reader of its root, cuts
// the order around every chokepoint of the other nodes (a floating node would
// otherwise hide them all), then joins neighbouring parts while they hold at most
// `join_up_to` nodes together. The segments' nodes, concatenated, are that
// order. In each segment's graph a
// value made earlier is a graph input, a value read later (or a graph output)
// is a graph output, so that for a local order L_s of every segment s:
//   SchedulePeak(graph, L_0 + L_1 + ...) = max over s of
//       SchedulePeak(segment s graph, L_s) + segment s passing_bytes.
std::vector<FlatSegment> SplitIntoSegments(const FlatGraph& graph, const std::vector<int>& order,
                                           int join_up_to);
std::vector<Segment> SplitIntoSegments(const DataflowGraph& graph, const std::vector<int>& order,
                                       int join_up_to);

// The same contract for any cut: segment s holds positions [starts[s],
// starts[s+1]) of `order` (starts[0] must be 0, increasing, below the node
// count). Reordering within a segment is then only safe for the positions'
// own dependencies, which each segment's graph keeps.
std::vector<FlatSegment> SplitAtPositions(const FlatGraph& graph, const std::vector<int>& order,
                                          const std::vector<int>& starts);
std::vector<Segment> SplitAtPositions(const DataflowGraph& graph, const std::vector<int>& order,
                                      const std::vector<int>& starts);

// Only the segment of positions [first, end) of SplitAtPositions with cuts at
// first and end: O(nodes + edges) but builds one small graph.
FlatSegment ExtractPositions(const FlatGraph& graph, const std::vector<int>& order, int first,
                             int end);
Segment ExtractPositions(const DataflowGraph& graph, const std::vector<int>& order, int first,
                         int end);

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_SEGMENTS_H_
