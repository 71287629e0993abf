// The baseline schedule: the order in which the graph's nodes run.
//
// The spec's baseline is the file's own node order when it respects the data
// dependencies (exporters almost always write one); otherwise a stable
// topological sort that keeps the file's order wherever it can, and the
// report says so.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_SCHEDULE_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_SCHEDULE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/loader/graph_ir.h"

namespace footprint {

struct BaselineSchedule {
  std::vector<NodeId> order;       // order[step] is the node that runs at that step.
  bool file_order_was_valid = true;  // False when the nodes had to be sorted.
};

// Errors on a cycle, naming a node on it and its op.
absl::StatusOr<BaselineSchedule> MakeBaselineSchedule(const IrGraph& graph);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_SCHEDULE_H_
