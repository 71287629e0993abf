// Checks a solution before anything reports it.
//
// Nothing the analyzer prints comes from an unchecked plan: a planner bug
// must surface as an error, never as a wrong figure in a CI gate.
#ifndef ONNX_FOOTPRINT_PLANNER_VALIDATOR_H_
#define ONNX_FOOTPRINT_PLANNER_VALIDATOR_H_

#include "absl/status/status.h"
#include "planner/problem.h"

namespace footprint::planner {

// OK when the solution has one offset per buffer, every offset is >= 0 and a
// multiple of its buffer's alignment, pinned offsets are kept, offset + size
// stays within the capacity (when set), and no two buffers whose lifespans
// intersect share a byte. Otherwise an error naming the buffers involved.
// Zero-size buffers occupy no bytes and never overlap anything.
// O(n log n): a sweep over steps with the live buffers kept in offset order.
absl::Status ValidateSolution(const Problem& problem, const Solution& solution);

// Checks the problem itself: sizes >= 0, alignment >= 1, first <= last,
// pinned offsets >= 0 and aligned, and no two pinned buffers collide.
absl::Status ValidateProblem(const Problem& problem);

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_VALIDATOR_H_
