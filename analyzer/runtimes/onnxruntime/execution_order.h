// The order ORT 1.30's sequential executor runs a graph's nodes in: the
// session's GraphViewer default order (core/graph/graph_viewer.cc, the
// constructor: Graph::ReverseDFSFrom the leaf nodes with NodeCompare, which
// compares NodeIndex; core/framework/session_state.cc and
// allocation_planner.cc take GetNodesInTopologicalOrder(ExecutionOrder::
// DEFAULT), SessionOptions::execution_order's default). The walk
// (core/graph/graph.cc, ReverseDFSFrom) starts from the nodes no node reads,
// pushed in index order so the highest is explored first; at each node the
// producers of its inputs (explicit and implicit) are pushed in ascending
// index, so the producer of highest index is explored, and emitted, first;
// a node is emitted once all its producers are. A node's NodeIndex is its
// position in the model (Graph's constructor adds the file's nodes in
// order); a node ORT's passes make (Graph::AddNode) takes the next index,
// after every earlier one, and a node a pass rewrites into another op is a
// new node. So a node with no producer (a Cast of a weight or of a graph
// input) runs as early as the walk reaches it, and where two branches meet,
// the one from the newer node runs first.
#ifndef ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_EXECUTION_ORDER_H_
#define ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_EXECUTION_ORDER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/loader/graph_ir.h"
#include "analyzer/runtimes/runtime_model.h"

namespace footprint::ort {

// ORT's NodeIndex order for each node of graph.nodes: a node of the file
// keeps its position in GraphProto.node; a node a pass made or rewrote (its
// proto in rewrite.made_nodes) comes after all of them, in the order made; a
// node of neither kind comes last, in graph order.
std::vector<int64_t> OrtNodeIndices(const IrGraph& graph, const GraphRewrite& rewrite);

// The node ids of graph.nodes in GraphViewer's default order for the given
// indices (one per node); nullopt when the walk misses a node (a cycle).
std::optional<std::vector<NodeId>> OrtExecutionOrder(const IrGraph& graph, const std::vector<int64_t>& index);

// graph.nodes reordered as ORT runs them (OrtExecutionOrder of
// OrtNodeIndices), values relinked; unchanged on a cycle.
void ApplyOrtExecutionOrder(IrGraph& graph, const GraphRewrite& rewrite);

// The same with the given indices (one per node).
void ApplyOrtExecutionOrder(IrGraph& graph, const std::vector<int64_t>& index);

}  // namespace footprint::ort

#endif  // ONNX_FOOTPRINT_ANALYZER_RUNTIMES_ONNXRUNTIME_EXECUTION_ORDER_H_
