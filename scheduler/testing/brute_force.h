// Reference answers for the scheduler's tests, by plain enumeration.
#ifndef ONNX_FOOTPRINT_SCHEDULER_TESTING_BRUTE_FORCE_H_
#define ONNX_FOOTPRINT_SCHEDULER_TESTING_BRUTE_FORCE_H_

#include <cstdint>
#include <optional>
#include <random>
#include <vector>

#include "scheduler/dataflow_graph.h"

namespace footprint::scheduler::testing {

// The least SchedulePeak over every topological order of `graph`, or nullopt
// when the graph has more than `max_orders` of them.
std::optional<int64_t> BruteForceMinPeak(const DataflowGraph& graph, int64_t max_orders);

// A uniformly random choice among the ready nodes at every step.
std::vector<int> RandomTopologicalOrder(const DataflowGraph& graph, std::mt19937_64& random);

}  // namespace footprint::scheduler::testing

#endif  // ONNX_FOOTPRINT_SCHEDULER_TESTING_BRUTE_FORCE_H_
