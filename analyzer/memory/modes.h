// The modes beyond the baseline (spec, "Modes beyond the baseline"): another
// schedule, aliasing of view ops and in-place reuse by elementwise ops.
//
// Usage (schedule_modes.cc and graph_problem.cc do this for the main graph):
//   scheduler::DataflowGraph dataflow = ToDataflowGraph(ir, rewrite, aligned_bytes, extra_bytes);
//   ... scheduler::OptimizeSchedule(dataflow, baseline.order, {...}) -> order
//   std::vector<planner::Lifespan> lifespans = ComputeLifespans(ir, order, rewrite);
//   std::vector<Sharing> sharing = PlanSharing(ir, order, lifespans, facts, {.alias = true, .inplace = true});
//   // sharing[v].owner: the value whose bytes v occupies (v itself when it owns them).
//
// Why groups: a value that shares another's bytes is not a buffer of its own.
// The analysis merges each group (an owner and the values that took over its
// bytes, a chain x -> Reshape -> y -> Relu -> z) into one planner buffer live
// from the owner's first step to the last step of any member, as large as its
// largest member. Members may overlap each other in time (that is the point);
// nothing else may overlap the group (ValidateSharedBytes checks it).
//
// Rules, applied in schedule order, one decision per node:
// - aliasing: the output of Reshape, Flatten, Squeeze, Unsqueeze or Identity
//   takes its data input's bytes when they have the same byte size;
// - in-place: the output of an elementwise op (activations, unary math, Clip,
//   PRelu, Add/Sub/Mul/Div) takes the bytes of an input of the same dtype and
//   byte size (for Add/Sub/Mul/Div: the input that is not broadcast; the first
//   such input), when the device profile allows in-place reuse;
// - in both cases the input must die at this step (this node is its last
//   consumer), be a node output of this graph (never a graph input: those are
//   the caller's buffers; never a weight) and not be a graph output (which
//   must keep its bytes until the end), and must not already have handed its
//   bytes to another output. A graph output may take over a dying input's
//   bytes: the group then lives to the last step.
// What it does not do: the schedule optimizer does not know about sharing
// (it orders for the no-sharing peak, then sharing is applied on that order),
// and If/Loop/Scan bodies stay on the baseline (see analyze_graph.cc).
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_MODES_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_MODES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/runtimes/runtime_model.h"
#include "planner/problem.h"
#include "scheduler/dataflow_graph.h"

namespace footprint {

// What the sharing rules need to know of one value (indexed like IrGraph::values).
struct ValueFacts {
  std::optional<int64_t> bytes;  // Exact byte size; nullopt when unsized (never shared).
  std::string dtype;             // "float32", ...
};

struct SharingOptions {
  bool alias = false;    // View ops reuse their input's bytes.
  bool inplace = false;  // Elementwise ops write over a dying input.
  // With inplace: per value, the input its (fused) producer writes over
  // under the --runtime profile (RuntimeModel::RewriteGraph), or -1; empty for none.
  const std::vector<ValueId>* runtime_writes_over = nullptr;
  // A runtime's model (--runtime NAME) or nullptr: then only the elementwise
  // ops its kernels run in place do so (RuntimeModel::RunsInPlace).
  const RuntimeModel* runtime = nullptr;
};

enum class SharingKind {
  kOwner,    // Owns its bytes.
  kAlias,    // A view of a dying input.
  kInPlace,  // Written over a dying input.
};
const char* SharingKindName(SharingKind kind);

struct Sharing {
  ValueId owner = -1;                      // The group's owner (itself when kind is kOwner).
  SharingKind kind = SharingKind::kOwner;  // How it joined the group.
};

// True for the elementwise ops in-place reuse applies to (default domain
// only); the view ops aliasing applies to are IsViewOp (graph_ir.h).
bool IsElementwiseOp(const onnx::NodeProto& node);

// The dataflow graph the schedule optimizer orders: one node per scheduled
// node (file order), values with their aligned sizes (`aligned_bytes` indexed
// like graph.values; weights, outer values and unsized values count 0),
// implicit inputs as inputs, and `extra_bytes[node]` held at its step. A
// value `rewrite` holds to the end (HeldValue::live_to_end) counts as an output.
scheduler::DataflowGraph ToDataflowGraph(const IrGraph& graph, const GraphRewrite& rewrite,
                                         const std::vector<int64_t>& aligned_bytes,
                                         const std::vector<int64_t>& extra_bytes);

// Which value shares whose bytes under `order` (indexed like graph.values).
std::vector<Sharing> PlanSharing(const IrGraph& graph, const std::vector<NodeId>& order,
                                 const std::vector<planner::Lifespan>& lifespans,
                                 const std::vector<ValueFacts>& facts, const SharingOptions& options);

// The analyzer's own check of a plan with shared bytes, independent of the
// planner: every tensor that shares bytes names an owner that owns its
// bytes, sits at the owner's offset and fits in the group's size; and no two
// tensors of different groups are live at a common step on a common byte
// (aligned sizes; unsized tensors hold no bytes). Errors name both tensors.
absl::Status ValidateSharedBytes(const std::vector<TensorRecord>& tensors);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_MODES_H_
