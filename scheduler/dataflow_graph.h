// The plain dataflow graph that the scheduler orders.
//
// Why its own graph: scheduling needs only who produces and who reads each
// value and how many bytes it holds. Keeping ONNX out lets the analyzer, the
// tests and the benchmarks build graphs directly, and keeps this library small.
//
// Usage:
//   DataflowGraph graph;
//   graph.values = {{.bytes = 4096}, {.bytes = 1024, .is_graph_output = true}};
//   graph.nodes = {{.inputs = {0}, .outputs = {1}, .name = "relu"}};
//   ConnectValues(graph);  // Fills every value's producer and consumers.
//   if (absl::Status status = ValidateGraph(graph); !status.ok()) return status;
#ifndef ONNX_FOOTPRINT_SCHEDULER_DATAFLOW_GRAPH_H_
#define ONNX_FOOTPRINT_SCHEDULER_DATAFLOW_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace footprint::scheduler {

struct Value {
  int64_t bytes = 0;            // Its size; 0 counts for nothing (weights, empty tensors).
  int producer = -1;            // Node index, -1 for a graph input.
  std::vector<int> consumers;   // Node indices, may repeat.
  bool is_graph_output = false;  // Live until the last step, whatever its consumers.
};

struct Node {
  std::vector<int> inputs;   // Value indices it reads (may repeat).
  std::vector<int> outputs;  // Value indices it writes (each written by this node only).
  int64_t extra_bytes = 0;   // Held only during the node's step, e.g. a subgraph's peak.
  std::string name;          // Shown in errors.
};

struct DataflowGraph {
  std::vector<Node> nodes;    // In the model's own order (the baseline schedule).
  std::vector<Value> values;  // Every value any node reads or writes, plus graph inputs/outputs.
};

// Sets every value's producer and consumers from the nodes' inputs and outputs
// (a value no node writes becomes a graph input). Indices must be in range.
void ConnectValues(DataflowGraph& graph);

// Checks that indices are in range, sizes are not negative, each value has at
// most one producer and producers/consumers agree with the nodes' outputs and
// inputs (as sets). Dependency cycles are reported by StableTopologicalOrder.
absl::Status ValidateGraph(const DataflowGraph& graph);

// "'name' (node 3)", or "node 3" when the node has no name: for messages.
std::string DescribeNode(const DataflowGraph& graph, int node);

}  // namespace footprint::scheduler

#endif  // ONNX_FOOTPRINT_SCHEDULER_DATAFLOW_GRAPH_H_
