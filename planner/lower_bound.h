// The no-fragmentation lower bound of a problem.
//
// Why it matters: at the busiest step every live buffer needs its own bytes,
// so no offset assignment can make the arena smaller than the sum of their
// sizes. Reporting each arena next to this figure says how much of it is
// fragmentation (the planner's fault) and how much is the schedule's.
#ifndef ONNX_FOOTPRINT_PLANNER_LOWER_BOUND_H_
#define ONNX_FOOTPRINT_PLANNER_LOWER_BOUND_H_

#include <vector>

#include "planner/problem.h"

namespace footprint::planner {

// Max over steps of the sum of sizes of the buffers live at that step.
// O(n log n) in the number of buffers. Alignment padding between buffers is
// not counted: the bound holds for any alignment.
Bytes LowerBound(const Problem& problem);

// The sum of live sizes at every step from the earliest first to the latest
// last: element k is the live bytes at step (first_step + k).
struct LiveProfile {
  Step first_step = 0;             // The step of live_bytes[0].
  std::vector<Bytes> live_bytes;   // Live bytes per step.
};
LiveProfile ComputeLiveProfile(const Problem& problem);

}  // namespace footprint::planner

#endif  // ONNX_FOOTPRINT_PLANNER_LOWER_BOUND_H_
