// Live intervals, exactly as the spec's "Steps and live intervals" says.
//
// - a graph input lives from step 0 to its last consumer (0 if none);
// - a node output from its producer's step to its last consumer (the same
//   step if none);
// - a graph output until the last step, whatever its consumers;
// - a value read inside an If/Loop/Scan body counts as read at that node's
//   step (graph_ir.h turns those reads into implicit inputs).
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_LIVENESS_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_LIVENESS_H_

#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"
#include "planner/problem.h"

namespace footprint {

// The step at which each node runs under `order` (a permutation of nodes).
std::vector<planner::Step> StepsOf(const std::vector<NodeId>& order, int node_count);

// The live interval of each value of `graph`, indexed like graph.values. Only
// meaningful for graph inputs and node outputs; weights and outer values get
// [0, 0]. With no nodes, every interval is [0, 0]. A value `rewrite` holds
// to the end (HeldValue::live_to_end: a runtime's caller-owned inputs) lives
// to the last step, as a graph output does.
std::vector<planner::Lifespan> ComputeLifespans(const IrGraph& graph, const std::vector<NodeId>& order,
                                                const GraphRewrite& rewrite);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_LIVENESS_H_
