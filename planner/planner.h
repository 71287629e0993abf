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
// Every result returned here has passed ValidateSolution.
#ifndef ONNX_FOOTPRINT_PLANNER_PLANNER_H_
#define ONNX_FOOTPRINT_PLANNER_PLANNER_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "planner/problem.h"

namespace footprint::planner {

struct SolveOptions {
  absl::Duration time_limit = absl::Seconds(1);  // For searches beyond the heuristics; 0: heuristics only.
};

struct PlanResult {
  Solution solution;            // Validated.
  Bytes arena_bytes = 0;        // ArenaSize(problem, solution).
  Bytes lower_bound = 0;        // LowerBound(problem): no solution can be smaller.
  std::string algorithm;        // Which algorithm produced the solution.
  bool proven_optimal = false;  // True when arena_bytes is known to be the least possible.
  double seconds = 0;           // Wall time spent in Solve.
};

absl::StatusOr<PlanResult> Solve(const Problem& problem, const SolveOptions& options = {});

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_PLANNER_H_
