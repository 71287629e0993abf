// The schedule optimizer: another valid order of the nodes with a lower peak
// of live bytes (the spec's "schedule optimization" mode, issue 7).
//
// Usage:
//   absl::StatusOr<std::vector<int>> given = StableTopologicalOrder(graph);
//   if (!given.ok()) return given.status();
//   absl::StatusOr<ScheduleResult> result =
//       OptimizeSchedule(graph, *given, {.time_limit = absl::Seconds(1)});
//   if (!result.ok()) return result.status();
//   // result->order runs node result->order[k] at step k;
//   // lower_bound <= peak <= given_peak.
//
// How it works:
// - Floating groups (weights made by nodes that read nothing, segments.h)
//   move right before their first reader, which some best schedule does.
// - The order is then cut around chokepoints, the nodes every schedule must
//   pass through (segments.h); the peak is the max over segments, each
//   scheduled alone, so a long model becomes many small problems.
// - Each segment starts from the best of its given order and four greedy
//   list schedules (greedy.h).
// - Then, while time is left, the segment that holds the peak gets a small
//   exact search, then exact re-solving of windows around its peak
//   (window_search.h), then the full exact best-first dynamic program over
//   executed sets (exact_search.h), each asked only for a schedule below the
//   current peak and satisfied at the best lower bound known. When the
//   segment holding the peak is solved, the whole schedule is optimal.
//
// Guarantees: the order is a valid schedule; its peak (recomputed by
// SchedulePeak) is never above the given order's, and when nothing lowers the
// peak the given order itself is returned; proven_optimal is only set when
// the peak equals a proven lower bound.
// What it does not guarantee: optimality within the time limit on wide
// segments (the exact search is exponential in a segment's width, and
// segments over 256 nodes only get the greedy schedules). The time limit
// bounds the exact search; the linear-time splitting and greedy passes run
// first whatever it is.
#ifndef ONNX_FOOTPRINT_SCHEDULER_OPTIMIZER_H_
#define ONNX_FOOTPRINT_SCHEDULER_OPTIMIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/dataflow_graph.h"

namespace footprint::scheduler {

struct ScheduleOptions {
  absl::Duration time_limit = absl::Seconds(1);  // Bounds the searches (exact, windows); 0: greedy only.
};

struct ScheduleResult {
  std::vector<int> order;       // A topological order: node order[k] runs at step k.
  int64_t peak = 0;             // SchedulePeak(graph, order) <= given_peak.
  int64_t given_peak = 0;       // SchedulePeak(graph, given_order): the baseline.
  int64_t lower_bound = 0;      // Proven: no schedule of this graph peaks below it.
  std::string algorithm;        // What produced the order ("given" when unchanged).
  bool proven_optimal = false;  // True when peak == lower_bound.
  double seconds = 0;           // Wall time spent.
};

// `given_order` must be a topological order of `graph` (see
// StableTopologicalOrder); an invalid graph or order is an InvalidArgument.
absl::StatusOr<ScheduleResult> OptimizeSchedule(const DataflowGraph& graph,
                                                const std::vector<int>& given_order,
                                                const ScheduleOptions& options = {});

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_OPTIMIZER_H_
