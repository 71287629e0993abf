// Exact offset assignment: a branch-and-bound search over canonical plans.
//
// Usage:
//   ExactResult result = MinimizeArena(problem, greedy_solution, {.deadline = absl::Now() + absl::Seconds(1)});
//   // result.solution is never worse than greedy_solution; result.proven_optimal says if it is the least.
//
// How it works (after MiniMalloc, Moffitt, ASPLOS 2023, with our own data structures):
// - A decision search asks "does everything fit below `capacity`?". It places one buffer
//   at a time at its lowest free offset (its "floor": the top of the placed buffers it
//   meets in time, aligned up), in non-decreasing order of offset, ties by a fixed
//   preorder. Every plan can be pushed down into such a canonical plan, so searching
//   only these is complete, and every symmetric reordering is visited once.
// - Dominance: a buffer is never placed at or above the top another unplaced buffer
//   would have at its floor (that one could always go underneath).
// - Section inference: in every section (a time range where the live set is constant),
//   the unplaced buffers need their sizes summed above the section's lowest floor; a
//   partial plan for which this overflows the capacity is pruned at once.
// - Decomposition: time points that no unplaced buffer spans split the rest of the
//   search into independent parts, solved one after another (no thrashing across them).
// - Restarts: the search runs under a node limit that doubles, rotating between
//   preorders (by section load, lifespan, area), as one of them usually finds a
//   plan quickly where another gets stuck.
// - Minimizing: first the lower bound itself is tried; when that does not settle
//   it, capacities between the best plan so far and the best proven bound are tried
//   (halving the step on a failed try). A decision search that finishes without a
//   plan proves that capacity impossible and raises the proven bound.
//
// What it does not guarantee: with pinned buffers the canonical form is not
// complete, so only reaching the lower bound counts as proof there. Problems
// with more than kMaxExactBuffers buffers, a part (buffers linked by overlapping
// lifespans) of more than kMaxExactPartitionBuffers, or very many intersecting
// pairs are left to the heuristics. The search stops at the deadline with its best plan.
#ifndef ONNX_FOOTPRINT_PLANNER_EXACT_H_
#define ONNX_FOOTPRINT_PLANNER_EXACT_H_

#include <cstdint>

#include "absl/time/time.h"
#include "planner/problem.h"

namespace footprint::planner {

inline constexpr int kMaxExactBuffers = 20000;         // Larger problems: heuristics only.
inline constexpr int kMaxExactPartitionBuffers = 5000; // Same, for the largest independent part
                                                       // (the search recurses once per buffer of a part,
                                                       // on a stack sized for it: search_stack.h).
inline constexpr int64_t kMaxExactOverlaps = 4000000;  // Same, for intersecting pairs.

struct ExactOptions {
  absl::Time deadline = absl::InfiniteFuture();  // The search returns its best by then.
  int64_t max_nodes = -1;                        // Stop after this many search nodes (-1: no limit).
};

enum class Feasibility {
  kFits,        // A plan within the capacity was found.
  kImpossible,  // Proven: no plan fits.
  kUnknown,     // Ran out of time or nodes.
};

struct DecisionResult {
  Feasibility feasibility = Feasibility::kUnknown;
  Solution solution;  // Set when kFits.
  int64_t nodes = 0;  // Search nodes visited.
};

// Does every buffer fit within `capacity` bytes?
DecisionResult FitWithinCapacity(const Problem& problem, Bytes capacity, const ExactOptions& options = {});

struct ExactResult {
  Solution solution;             // The best plan: `incumbent` or better.
  Bytes arena_bytes = 0;         // ArenaSize(problem, solution).
  Bytes proven_lower_bound = 0;  // No plan can be smaller than this.
  bool proven_optimal = false;   // arena_bytes == proven_lower_bound.
  bool improved = false;         // The search found a smaller arena than the incumbent's.
  int64_t nodes = 0;             // Search nodes visited.
};

// Searches for the smallest arena, starting from a valid `incumbent`, until it
// is proven optimal or the deadline (or node limit) passes.
ExactResult MinimizeArena(const Problem& problem, const Solution& incumbent, const ExactOptions& options = {});

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_EXACT_H_
