// The planner: one call from a problem to a validated plan.
//
// Usage:
//   footprint::planner::Problem problem;
//   problem.buffers.push_back({.id = "conv1", .lifespan = {0, 3}, .size = 4096, .alignment = 64});
//   ...
//   absl::StatusOr<footprint::planner::PlanResult> plan =
//       footprint::planner::Solve(problem, {.time_limit = absl::Seconds(1)});
//   if (!plan.ok()) return plan.status();
//   // plan->solution.offsets[i] is buffer i's offset; plan->arena_bytes >= plan->lower_bound.
//
// Every result returned here has passed ValidateSolution. A problem with a
// capacity that the best plan found exceeds gets a ResourceExhausted error.
#ifndef ONNX_FOOTPRINT_PLANNER_PLANNER_H_
#define ONNX_FOOTPRINT_PLANNER_PLANNER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "planner/problem.h"

namespace footprint::planner {

// Solve runs, in this order, stopping as soon as the arena equals the lower bound:
// - the heuristic portfolio of greedy.h (a few milliseconds for hundreds of buffers);
// - with time_limit 0 ("heuristics only"): a bounded dive of the exact search, limited by
//   a node count rather than time so that its result does not depend on the machine;
// - otherwise: the exact search of exact.h until time_limit, keeping the best plan.
struct SolveOptions {
  absl::Duration time_limit = absl::Seconds(1);  // For the exact search; 0: heuristics only.
  int64_t bounded_search_nodes = 5000;           // Node budget of the bounded dive (time_limit 0); 0: none.
  // A plan already known for this problem (say, one found with a larger
  // budget): ignored unless valid; at the lower bound nothing else runs,
  // otherwise it competes with the heuristics (algorithm "given").
  const Solution* hint = nullptr;
};

struct PlanResult {
  Solution solution;            // Validated.
  Bytes arena_bytes = 0;        // ArenaSize(problem, solution).
  Bytes lower_bound = 0;        // LowerBound(problem): no solution can be smaller.
  std::string algorithm;        // Which algorithm produced the solution.
  bool proven_optimal = false;  // True when arena_bytes is known to be the least possible.
  double seconds = 0;           // Wall time spent in Solve.
  int64_t search_nodes = 0;     // Nodes visited by the exact search (0 if it did not run).
};

absl::StatusOr<PlanResult> Solve(const Problem& problem, const SolveOptions& options = {});

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_PLANNER_H_
