#include "planner/planner.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "planner/exact.h"
#include "planner/greedy.h"
#include "planner/lower_bound.h"
#include "planner/validator.h"

namespace footprint::planner {

absl::StatusOr<PlanResult> Solve(const Problem& problem, const SolveOptions& options) {
  const absl::Time start = absl::Now();
  if (absl::Status status = ValidateProblem(problem); !status.ok()) return status;
  PlanResult result;
  result.lower_bound = LowerBound(problem);
  result.solution = GreedyBySize(problem);
  result.algorithm = "greedy_by_size";
  result.arena_bytes = ArenaSize(problem, result.solution);
  result.proven_optimal = result.arena_bytes == result.lower_bound;
  if (!result.proven_optimal && options.time_limit > absl::ZeroDuration()) {
    ExactResult exact = MinimizeArena(problem, result.solution, {.deadline = start + options.time_limit});
    if (exact.improved) {
      result.solution = exact.solution;
      result.arena_bytes = exact.arena_bytes;
      result.algorithm = "exact_search";
    }
    result.proven_optimal = exact.proven_optimal;
  }
  if (absl::Status status = ValidateSolution(problem, result.solution); !status.ok()) {
    return absl::InternalError(absl::StrCat("planner produced an invalid plan: ", status.message()));
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

}  // namespace footprint::planner
