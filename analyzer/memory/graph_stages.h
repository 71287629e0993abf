// The analysis of one graph (the main graph or an If/Loop/Scan body), shared
// by the files that carry it out, in the order they run:
//   graph_problem.cc   graph view, weights, sizes, tensor records, planner problem;
//   schedule_modes.cc  the schedule and sharing modes and each one's lower bound;
//   analyze_graph.cc   AnalyzeGraph, which runs them (bodies first) and plans;
//   tiers.cc           the device's tiers for the main graph's tensors;
//   analyze_model.cc   AnalyzeModel (analyze_model.h), which assembles the Analysis.
// Internal to footprint_memory: the reports read analysis_result.h only.
#ifndef ONNX_FOOTPRINT_ANALYZER_MEMORY_GRAPH_STAGES_H_
#define ONNX_FOOTPRINT_ANALYZER_MEMORY_GRAPH_STAGES_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/memory/accumulate.h"
#include "analyzer/memory/qdq.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/memory/folding.h"
#include "analyzer/memory/modes.h"
#include "analyzer/memory/schedule.h"
#include "analyzer/runtimes/runtime_model.h"
#include "analyzer/shapes/shape_engine.h"
#include "onnx/onnx_pb.h"
#include "planner/planner.h"
#include "planner/problem.h"

namespace footprint {

// Everything the analysis of one graph (the main graph or a body) produces.
struct GraphResult {
  IrGraph ir;                               // The graph view.
  BaselineSchedule schedule;                // The baseline order.
  std::vector<NodeId> order;                // The order used (the baseline or the optimizer's).
  ModesSummary modes;                       // Meaningful for the main graph only.
  std::vector<TensorRecord> tensors;        // Arena tensors (sized and unsized) and workspaces.
  std::vector<WeightRecord> weights;        // This graph's weights and its bodies'.
  FoldedGraph folded;                       // What constant folding took out of the graph.
  GraphRewrite rewrite;                     // What the runtime's rewrites (or the accumulate mode) made of it.
  AccumulatedAdds accumulated;              // What the accumulate mode took out.
  QdqGroups qdq;                            // What the qdq mode fused (qdq.h).
  planner::Problem problem;                 // Sized arena tensors, in `tensors` order.
  std::vector<size_t> tensor_of_buffer;     // problem.buffers[i] is tensors[tensor_of_buffer[i]].
  planner::PlanResult plan;                 // Validated.
  int64_t runtime_tensor_bytes = 0;         // --runtime, main graph: the runtime planner's peak (runtime_buffers.h).
  std::vector<std::string> runtime_peak_values;  // --runtime, main graph: RuntimeModel::TensorPeak's values, named.
  int64_t runtime_frame_bytes = 0;          // --runtime, main graph: its per-tensor objects at its worst step.
  HeldFigures runtime_held;                 // --runtime, main graph: held after load and a first run (RuntimeModel::HeldBytes).
  int64_t nested_unsized = 0;               // Unsized values inside bodies.
  std::vector<std::string> warnings;        // This graph's and its bodies', in the order found.
};

// What the analysis of every graph of one model shares.
struct Context {
  const AnalyzeOptions& options;                                 // With the device's name and alignment set.
  const std::optional<symbolic::ShapeTables>* shapes = nullptr;  // Our engine's results; unset: ONNX's types only.
  std::function<absl::Status()> await_shapes;  // Fills *shapes (once); call before reading it.
  int64_t ir_version = 0;                      // ModelProto.ir_version (what --runtime rules may read).
  int64_t opset = 0;                           // The default domain's opset_import version (0: none).
  const RuntimeModel* runtime = nullptr;       // --runtime's model; nullptr for none. Applies to the main graph.
  const onnx::GraphProto* file_graph = nullptr;  // The main graph as read (RewriteInputs::file_graph).
};

// One graph's values sized, before any schedule: what its modes and its plan
// are built from. Indexed like IrGraph::values unless said otherwise.
struct GraphSizes {
  std::vector<TensorRecord> records;  // One per arena value: graph inputs, then node outputs in the baseline order.
  std::vector<int32_t> record_of;     // records[record_of[v]] is value v's; -1 when v is not in the arena.
  std::vector<int64_t> aligned_of;    // Aligned size; 0 for unsized values and weights.
  std::vector<int64_t> sized_bytes;   // Aligned size; -1 for unsized values and weights.
  std::vector<ValueFacts> facts;      // What the sharing rules read.
  std::vector<int64_t> workspace_of;  // Indexed like IrGraph::nodes: the planned peak of its largest body, or 0.
  std::vector<WeightRecord> folded_weights;  // The folded values, sized like arena values.
  std::vector<int64_t> kernel_workspace_of;  // Indexed like IrGraph::nodes: the runtime's kernel scratch, or 0.
  std::vector<int64_t> step_extra_of;        // workspace_of + kernel_workspace_of: held at the node's step.
  std::vector<std::vector<int64_t>> step_blocks_of;  // What step_extra_of is made of, block by block in order: the
                                                     // body's workspace, then the kernel's scratch (unaligned).
};

// "in LABEL: " ("" for the main graph): every error about a body names it.
std::string ErrorPrefix(const std::string& graph_label);

// `status` with ErrorPrefix(graph_label) before its message.
absl::Status WithPrefix(const absl::Status& status, const std::string& graph_label);

// The whole analysis of one graph at nesting `depth` (0: the main graph,
// which alone gets the modes and the full planner budget); `outer_names` are
// the values of the enclosing graphs, `outer_constants` those of them that
// are constant weights there (filled only where the runtime folds bodies:
// RuntimeModel::FoldsBodyConstants). Recurses into bodies (analyze_graph.cc).
absl::StatusOr<GraphResult> AnalyzeGraph(const onnx::GraphProto& graph,
                                         const absl::flat_hash_set<std::string>& outer_names,
                                         const absl::flat_hash_set<std::string>& outer_constants,
                                         const std::string& graph_label, int depth, const Context& context);

// Builds the problem (graph_problem.cc), in this order:

// The graph view of one graph (constant-folded when `fold`, then rewritten
// by `runtime`'s rewrites unless nullptr, else by the accumulate mode when
// `accumulate`), its baseline schedule and its weights: all that needs no
// shape, so that it runs while the shape engine does; only a runtime's
// layout rules and the accumulate mode read shapes (`shape_of`, from
// MakeShapeLookup; the mode only where a Conv feeds an Add).
absl::Status LoadGraph(const onnx::GraphProto& graph, const absl::flat_hash_set<std::string>& outer_names,
                       const absl::flat_hash_set<std::string>& outer_constants,
                       const std::string& graph_label, bool fold, bool accumulate, bool qdq,
                       const RuntimeModel* runtime, const onnx::GraphProto* file_graph,
                       const ShapeLookup& shape_of, int64_t ir_version, int64_t opset, GraphResult& result);

// The shapes of `graph`'s values by name, as SizeArenaValues sizes them
// (our engine's, else the model's value_info); waits for the engine.
absl::StatusOr<ShapeLookup> MakeShapeLookup(const onnx::GraphProto& graph, const Context& context);

// sizes.kernel_workspace_of (the workspace of each node's kernel under
// `runtime`, nullptr for none) and sizes.step_extra_of, once the bodies are
// sized. Each workspace is rounded up to `alignment`.
void SizeKernelWorkspaces(const RuntimeModel* runtime, int64_t alignment, const GraphResult& result,
                          GraphSizes& sizes);

// Every arena value's type and size (graph inputs, then each node's outputs
// in the baseline order), before any schedule: the optimizer needs sizes.
// Waits for the shape engine only once what needs no shape is done. Leaves
// workspace_of to the bodies' analysis.
absl::StatusOr<GraphSizes> SizeArenaValues(const onnx::GraphProto& graph, const GraphResult& result,
                                           const std::string& graph_label, const Context& context);

// result.tensors: the arena tensors in schedule order (graph inputs first,
// then each node's outputs; the records move out of `sizes`) with their
// live intervals and sharing, then one workspace per node with bodies.
void ArrangeTensors(const std::vector<planner::Lifespan>& lifespans, const std::vector<planner::Step>& step_of,
                    const std::vector<Sharing>& sharing, GraphSizes& sizes, GraphResult& result);

// One planner buffer per group of tensors sharing bytes: live from the
// owner's first step to the last step of any member, as large as the
// largest member (modes.h). Fills result.problem and result.tensor_of_buffer;
// returns each tensor's buffer (-1 when unsized).
std::vector<int64_t> BuildPlannerProblem(int64_t alignment, GraphResult& result);

// Runs the modes (schedule_modes.cc), in this order:

// The schedule: the baseline, or the optimizer's order (main graph only),
// into result.order, with the lower bound of each.
absl::Status RunScheduleMode(const GraphSizes& sizes, bool main_graph, const AnalyzeOptions& options,
                             const std::string& graph_label, GraphResult& result);

// Sharing on the chosen order: aliasing, then in-place (main graph only,
// only where `runtime`'s kernels write in place when it is not nullptr).
// Sets which modes apply and the alias mode's lower bound; returns who
// shares whose bytes with every enabled mode.
std::vector<Sharing> RunSharingModes(const GraphSizes& sizes, const std::vector<planner::Lifespan>& lifespans,
                                     bool main_graph, const AnalyzeOptions& options, const RuntimeModel* runtime,
                                     GraphResult& result);

// The in-place mode's lower bound is the plan's (the last mode applied):
// with in-place off it must be the alias mode's, or the plan is wrong.
absl::Status FinishInPlaceMode(const std::string& graph_label, GraphResult& result);

// Plans the tiers (tiers.cc) of the main graph's tensors and weights, once
// they are in `analysis`: each tensor's tier and offset, the tiers, the fits
// verdict and what spills.
absl::Status PlanOnDeviceTiers(const AnalyzeOptions& options, Analysis& analysis);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_MEMORY_GRAPH_STAGES_H_
