// Schedules of a dataflow graph and the live bytes they imply, exactly as
// the memory model defines them (docs/figures.md, "Steps and live intervals").
//
// - A schedule is an order of all nodes respecting data dependencies; the
//   node at position k runs at step k, and there are N steps.
// - A graph input is live over [0, step of its last consumer, or 0 if none].
// - A node output is live over [its producer's step, step of its last
//   consumer, or the producer's step if none].
// - A graph output stays live until step N-1, whatever its consumers.
// - A step's live bytes are the bytes of the values live at it plus the
//   extra_bytes of the node that runs at it; the peak is the max over steps
//   (the spec's lower_bound_bytes for this schedule), 0 for an empty graph.
#ifndef ONNX_FOOTPRINT_SCHEDULER_SCHEDULE_H_
#define ONNX_FOOTPRINT_SCHEDULER_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/dataflow_graph.h"

namespace footprint::scheduler {

// True when `order` holds every node index once and every node comes after
// the producers of all the values it reads.
bool IsTopologicalOrder(const DataflowGraph& graph, const std::vector<int>& order);

// The nodes' own order when it is a valid schedule; otherwise the stable
// topological sort that keeps that order wherever it can (Kahn's algorithm,
// always taking the ready node with the smallest index). A dependency cycle is
// an InvalidArgument error naming the nodes on one cycle.
absl::StatusOr<std::vector<int>> StableTopologicalOrder(const DataflowGraph& graph);

// Live bytes at every step of `order` (element k is step k). `order` must be
// a topological order of `graph`. O(nodes + edges).
std::vector<int64_t> LiveBytesPerStep(const DataflowGraph& graph, const std::vector<int>& order);

// Max over steps of LiveBytesPerStep (0 for an empty graph). O(nodes + edges).
int64_t SchedulePeak(const DataflowGraph& graph, const std::vector<int>& order);

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_SCHEDULE_H_
