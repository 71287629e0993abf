// Greedy offset assignment: order the buffers, then place each one in turn.
//
// How it works:
// - Pinned buffers are placed first, at their pinned offsets.
// - The others are taken in a given order (size descending is what TFLite,
//   XNNPACK, ONNX Runtime and IREE ship; the portfolio below tries several).
// - Best fit: each buffer goes into the smallest gap, among the buffers already
//   placed whose lifespans intersect its own, that holds it at an aligned offset;
//   with no such gap, on top of the highest of them. Conflicting placed buffers
//   are found through an interval index over time, so a buffer costs
//   O(log T + k log k) with k its placed conflicts, never a scan of all buffers.
// - Skyline: repeatedly take the unplaced buffer whose lowest free offset (its
//   floor) is lowest, ties by a priority order, and put it there. This fills the
//   arena bottom-up, the way the exact search (exact.h) builds its plans.
// - The portfolio runs several orderings with both placements and keeps the
//   best (as XLA's heap simulator does), stopping early at the lower bound.
//
// What it does not guarantee: optimality. On production accelerator traces
// single orderings land 1.2-1.4x above the lower bound (see bench/); exact.h
// closes the gap.
#ifndef ONNX_FOOTPRINT_PLANNER_GREEDY_H_
#define ONNX_FOOTPRINT_PLANNER_GREEDY_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "planner/problem.h"

namespace footprint::planner {

// Buffer indices, largest size first (ties: longer lifespan, then index).
std::vector<int> OrderBySizeDescending(const Problem& problem);
// Longest lifespan first (ties: larger size, then index).
std::vector<int> OrderByLifespanDescending(const Problem& problem);
// Largest size x lifespan first (ties: larger size, then index).
std::vector<int> OrderByAreaDescending(const Problem& problem);
// Highest peak of live bytes over the buffer's lifespan first, i.e. the buffers
// that take part in the most crowded steps (ties: larger size, then index).
std::vector<int> OrderByPeakLoadDescending(const Problem& problem);
// Earliest first step first (ties: larger size, then index).
std::vector<int> OrderByStart(const Problem& problem);

// Places the buffers in `order` (a permutation of all indices) by best fit.
// Always succeeds; the capacity is not enforced here.
Solution PlaceBestFit(const Problem& problem, const std::vector<int>& order);

// Places buffers bottom-up, lowest floor first; `priority` (a permutation of
// all indices) breaks ties, earlier first. Always succeeds.
Solution PlaceSkyline(const Problem& problem, const std::vector<int>& priority);

// PlaceBestFit(problem, OrderBySizeDescending(problem)).
Solution GreedyBySize(const Problem& problem);

struct HeuristicPlan {
  Solution solution;      // The best plan found.
  Bytes arena_bytes = 0;  // Its arena.
  std::string algorithm;  // E.g. "best_fit/size" or "skyline/peak_load".
};

// Runs orderings with skyline and best-fit placement and keeps the smallest
// arena; stops as soon as one reaches `lower_bound`, or after the first plan
// that ends past `deadline`. Problems of more than 10000 buffers get only
// skyline by lifespan and best fit by size, so that they stay well under a second.
HeuristicPlan RunHeuristicPortfolio(const Problem& problem, Bytes lower_bound,
                                    absl::Time deadline = absl::InfiniteFuture());

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_GREEDY_H_
