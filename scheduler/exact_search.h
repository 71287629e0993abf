// The exact schedule search: a best-first dynamic program over executed sets
// (internal to the scheduler).
//
// How it works (after SERENITY, MLSys 2020):
// - A state is the set E of nodes already run. The live bytes before the next
//   step depend on E alone (step_model.h), so of all the orders that reach E
//   only the one with the lowest peak so far matters: one record per set.
// - States are expanded in order of key = max(peak so far, h(E), good_enough),
//   where h(E) = the largest local_bytes of a node not yet run (no schedule
//   runs it with less live). Both parts only grow along a path, so the first
//   complete set taken from the queue has the least peak (Dijkstra on a
//   max-cost path). Ties go to the deeper state: the search dives.
// - Floating groups (weights made by nodes that read nothing, segments.h)
//   are not candidates of their own: a node that reads one runs it just
//   before itself, as one move. Some best schedule does exactly that.
// - Free moves: a ready node whose step stays within the key and that frees
//   at least what it keeps is run at once with no alternative: moving it
//   earlier in any schedule lowers every step it is moved past.
// - States whose key reaches `upper_bound` are dropped: only strictly better
//   schedules are wanted. When the queue empties, none exists.
//
// What it does not guarantee: an answer within the deadline or the state cap
// (the number of executed sets can grow exponentially with the graph's width).
#ifndef ONNX_FOOTPRINT_SCHEDULER_EXACT_SEARCH_H_
#define ONNX_FOOTPRINT_SCHEDULER_EXACT_SEARCH_H_

#include <cstdint>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/step_model.h"

namespace footprint::scheduler {

inline constexpr int kExactSearchMaxNodes = 256;

struct ExactSearchLimits {
  int64_t upper_bound = 0;     // Only schedules with a peak below this are searched for.
  int64_t good_enough = 0;     // A peak at or below this is accepted at once (0: least peak).
  absl::Time deadline = absl::InfiniteFuture();  // Stop (kStopped) when it passes.
  int64_t max_states = 1'000'000;                // Stop (kStopped) beyond this many executed sets
                                                 // (each costs 60-120 bytes).
};

enum class ExactOutcome {
  kFound,      // `order` has the least peak, or one <= good_enough.
  kNoneBelow,  // Proven: no schedule has a peak below upper_bound.
  kStopped,    // Deadline or state cap reached: nothing is known.
};

struct ExactSearchResult {
  ExactOutcome outcome = ExactOutcome::kStopped;  // What was established.
  std::vector<int> order;                         // With kFound: the schedule.
  int64_t peak = 0;                               // With kFound: its peak.
  int64_t states = 0;                             // Executed sets recorded.
};

// The model must have at most kExactSearchMaxNodes nodes.
ExactSearchResult ExactSearch(const StepModel& model, const ExactSearchLimits& limits);

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_EXACT_SEARCH_H_
