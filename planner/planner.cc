#include "planner/planner.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "planner/exact.h"
#include "planner/greedy.h"
#include "planner/lower_bound.h"
#include "planner/validator.h"

namespace footprint::planner {
namespace {

// The bounded dive costs O(buffers) per node: beyond this size it is skipped.
constexpr int64_t kMaxBoundedSearchBuffers = 2000;

}  // namespace

absl::StatusOr<PlanResult> Solve(const Problem& problem, const SolveOptions& options) {
  const absl::Time start = absl::Now();
  if (absl::Status status = ValidateProblem(problem); !status.ok()) return status;
  PlanResult result;
  result.lower_bound = LowerBound(problem);
  // The capacity is a limit to report against, not something the planners
  // aim for: plans are checked without it, then against it.
  std::optional<Problem> unbounded_copy;
  if (problem.capacity.has_value()) {
    unbounded_copy = problem;
    unbounded_copy->capacity.reset();
  }
  const Problem& unbounded = unbounded_copy.has_value() ? *unbounded_copy : problem;
  std::optional<Bytes> hint_arena;
  if (options.hint != nullptr && options.hint->offsets.size() == problem.buffers.size() &&
      ValidateSolution(unbounded, *options.hint).ok()) {
    hint_arena = ArenaSize(problem, *options.hint);
  }
  bool validated = false;  // The solution is the hint, already checked above.
  if (hint_arena.has_value() && *hint_arena == result.lower_bound) {
    validated = true;
    result.solution = *options.hint;
    result.algorithm = "given";
    result.arena_bytes = *hint_arena;
  } else {
    HeuristicPlan heuristic = RunHeuristicPortfolio(
        problem, result.lower_bound,
        options.time_limit > absl::ZeroDuration() ? start + options.time_limit : absl::InfiniteFuture());
    result.solution = std::move(heuristic.solution);
    result.algorithm = heuristic.algorithm;
    result.arena_bytes = heuristic.arena_bytes;
    if (hint_arena.has_value() && *hint_arena < result.arena_bytes) {
      validated = true;
      result.solution = *options.hint;
      result.algorithm = "given";
      result.arena_bytes = *hint_arena;
    }
  }
  result.proven_optimal = result.arena_bytes == result.lower_bound;
  if (!result.proven_optimal) {
    ExactOptions exact_options;
    const char* name = "exact_search";
    if (options.time_limit > absl::ZeroDuration()) {
      exact_options.deadline = start + options.time_limit;
    } else {
      exact_options.max_nodes = options.bounded_search_nodes;
      name = "bounded_search";
    }
    if (exact_options.max_nodes != 0 &&
        (exact_options.max_nodes < 0 || static_cast<int64_t>(problem.buffers.size()) <= kMaxBoundedSearchBuffers)) {
      ExactResult exact = MinimizeArena(problem, result.solution, exact_options);
      if (exact.improved) {
        validated = false;
        result.solution = std::move(exact.solution);
        result.arena_bytes = exact.arena_bytes;
        result.algorithm = name;
      }
      result.proven_optimal = exact.proven_optimal;
      result.search_nodes = exact.nodes;
    }
  }
  if (absl::Status status = validated ? absl::OkStatus() : ValidateSolution(unbounded, result.solution);
      !status.ok()) {
    return absl::InternalError(absl::StrCat("planner produced an invalid plan: ", status.message()));
  }
  if (problem.capacity.has_value() && result.arena_bytes > *problem.capacity) {
    return absl::ResourceExhaustedError(absl::StrCat("the best plan found needs ", result.arena_bytes,
                                                     " bytes, more than the capacity of ", *problem.capacity,
                                                     result.proven_optimal ? " (proven optimal)" : ""));
  }
  result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return result;
}

}  // namespace footprint::planner
