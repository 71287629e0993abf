// Greedy offset assignment: order the buffers, then place each one in turn.
//
// How it works:
// - Pinned buffers are placed first, at their pinned offsets.
// - The others are taken in the given order (by default: size descending,
//   then longer lifespan first, then input order, which is what TFLite,
//   XNNPACK, ONNX Runtime and IREE ship).
// - Each buffer goes into the smallest gap, among the buffers already placed
//   whose lifespans intersect its own, that holds it at an aligned offset
//   ("best fit"); with no such gap, on top of the highest of them.
//
// What it does not guarantee: optimality. On production accelerator traces it
// lands about 1.3x above the lower bound (see bench/); exact.h closes the gap.
#ifndef ONNX_FOOTPRINT_PLANNER_GREEDY_H_
#define ONNX_FOOTPRINT_PLANNER_GREEDY_H_

#include <vector>

#include "planner/problem.h"

namespace footprint::planner {

// Buffer indices, largest size first (ties: longer lifespan, then index).
std::vector<int> OrderBySizeDescending(const Problem& problem);

// Places the buffers in `order` (a permutation of all indices) by best fit.
// Always succeeds; the capacity is not enforced here.
Solution PlaceBestFit(const Problem& problem, const std::vector<int>& order);

// PlaceBestFit(problem, OrderBySizeDescending(problem)).
Solution GreedyBySize(const Problem& problem);

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_GREEDY_H_
