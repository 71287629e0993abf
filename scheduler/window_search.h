// Exact re-solving of windows of consecutive steps around the peak
// (internal to the scheduler).
//
// Why: a segment too wide for the exact search still has a peak at a few
// steps. The nodes of a window of consecutive steps can be reordered among
// themselves without changing the live bytes at any step outside it
// (segments.h, SplitAtPositions), so the exact search over the window alone
// lowers the peak there or proves the window cannot.
//
// How it works:
// - Take a step at the peak, the window of `size` steps around it, and ask
//   the exact search for an order of the window that stays below the peak
//   (satisfied at good_enough or at the highest step outside the window).
// - Repeat while it helps; when no window of a size helps, try the next size
//   (16, 32, 64 steps) until the deadline.
//
// What it does not guarantee: optimality. Improvements that need nodes far
// apart in the order to move together are out of its reach.
#ifndef ONNX_FOOTPRINT_SCHEDULER_WINDOW_SEARCH_H_
#define ONNX_FOOTPRINT_SCHEDULER_WINDOW_SEARCH_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/dataflow_graph.h"
#include "scheduler/flat_graph.h"

namespace footprint::scheduler {

// Lowers the peak of `order` (a topological order of `graph`) in place;
// returns whether it changed. Stops once the peak is at most good_enough.
bool ImproveByWindows(const FlatGraph& graph, std::vector<int>& order, int64_t good_enough,
                      absl::Time deadline);
bool ImproveByWindows(const DataflowGraph& graph, std::vector<int>& order, int64_t good_enough,
                      absl::Time deadline);

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_WINDOW_SEARCH_H_
