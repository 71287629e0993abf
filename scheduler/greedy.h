// List scheduling: run, at each step, the ready node a rule likes best
// (internal to the scheduler).
//
// - kLeastGrowth: the node that adds the fewest live bytes (outputs kept
//   minus inputs it is the last reader of), then the smallest step, then rank.
// - kPeakAware: the node whose step stays lowest under the peak so far, then
//   least growth, then rank: it avoids raising the peak for a small saving.
// - kDepthFirst: the node that became ready last, then least growth, then
//   rank: it finishes a branch before opening another.
//
// - kChains: treats the chain each ready node starts (followed while a node
//   has one successor that has one predecessor) as one task, and runs the
//   whole chain with the largest rise minus what it leaves live, then rank:
//   the order that is optimal for independent tasks on a common base. Once
//   more than 512 nodes are ready at once it gives up and finishes in rank
//   order (the other rules handle such wide graphs).
//
// What it does not guarantee: optimality, or beating the given order (the
// optimizer keeps whichever is better). O(log n) per step for the first
// three rules; kChains costs O(ready nodes x chain length) per chain.
#ifndef ONNX_FOOTPRINT_SCHEDULER_GREEDY_H_
#define ONNX_FOOTPRINT_SCHEDULER_GREEDY_H_

#include <memory>
#include <vector>

#include "scheduler/step_model.h"

namespace footprint::scheduler {

enum class GreedyRule { kLeastGrowth, kPeakAware, kDepthFirst, kChains };

// A topological order of the model's nodes; rank[n] breaks the last ties
// (lower first), e.g. the node's position in the given order.
std::vector<int> GreedySchedule(const StepModel& model, GreedyRule rule,
                                const std::vector<int>& rank);

// The same, run after run in the same working memory: the optimizer runs
// four rules on each of hundreds of segments.
class GreedyScheduler {
 public:
  GreedyScheduler();
  ~GreedyScheduler();
  // GreedySchedule(model, rule, rank), into `order`.
  void Schedule(const StepModel& model, GreedyRule rule, const std::vector<int>& rank,
                std::vector<int>& order);

 private:
  struct Memory;
  std::unique_ptr<Memory> memory_;
};

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_GREEDY_H_
