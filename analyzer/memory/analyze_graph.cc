// AnalyzeGraph: one graph's problem, its bodies' workspaces, its modes and
// its validated plan, in that order (graph_stages.h).
#include "analyzer/memory/graph_stages.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "analyzer/loader/graph_ir.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/memory/liveness.h"
#include "analyzer/memory/modes.h"
#include "analyzer/shapes/tensor_size.h"
#include "planner/planner.h"
#include "planner/problem.h"

namespace footprint {
namespace {

// Nesting deeper than this is refused rather than risking the stack.
constexpr int kMaxSubgraphDepth = 64;

// With folding on, an If whose condition the values known before running
// decide (--input-value, or shapes) holds only its taken branch: the other
// can never run, and runtimes fold such an If into its branch at load. With
// folding off (--baseline) it holds its largest branch, as the spec says.
// Returns the taken branch's attribute name, or "" for both.
std::string TakenBranchAttribute(const Context& context, const IrNode& node) {
  if (!context.options.fold_constants || node.proto->op_type() != "If") return "";
  if (!IsDefaultDomain(*node.proto)) return "";
  if (context.shapes == nullptr || !context.shapes->has_value()) return "";
  for (const symbolic::IfDecision& decision : (*context.shapes)->if_decisions) {
    if (decision.proto != node.proto) continue;
    if (decision.branch == "then" || decision.branch == "else") return absl::StrCat(decision.branch, "_branch");
    return "";
  }
  return "";
}

// Whether bodies are constant-folded: only where the runtime's folding
// recurses into them; otherwise bodies are planned as written.
bool FoldsBodies(const Context& context) {
  return context.options.fold_constants && context.runtime != nullptr && context.runtime->FoldsBodyConstants();
}

// The names a body of `graph` may read as constant weights: the enclosing
// graphs' (`outer_constants`), and `graph`'s initializers, Constant values
// and folded values, less the weights the runtime does not treat as constant
// (in the main graph: RuntimeModel::NonConstantWeights).
absl::flat_hash_set<std::string> ConstantsForBodies(const absl::flat_hash_set<std::string>& outer_constants,
                                                    int depth, const Context& context, const IrGraph& graph) {
  absl::flat_hash_set<std::string> constants = outer_constants;
  const std::vector<bool> not_constant =
      depth == 0 ? context.runtime->NonConstantWeights(context.ir_version, graph) : std::vector<bool>{};
  for (size_t id = 0; id < graph.values.size(); ++id) {
    const ValueOrigin origin = graph.values[id].origin;
    const bool weight =
        origin == ValueOrigin::kInitializer || origin == ValueOrigin::kConstant || origin == ValueOrigin::kFolded;
    if (weight && (not_constant.empty() || !not_constant[id])) constants.insert(graph.values[id].name);
  }
  return constants;
}

// Bodies: each If/Loop/Scan holds, at its step, the planned peak of its
// largest body (sizes.workspace_of). Bodies are analyzed on the baseline
// whatever the modes (see AnalyzeOptions), so their peak is the same in every
// mode, but for the folding of a runtime that folds bodies (FoldsBodies).
// Their weights, unsized values and warnings join `result`'s.
absl::Status AnalyzeBodies(const absl::flat_hash_set<std::string>& outer_names,
                           const absl::flat_hash_set<std::string>& outer_constants, const std::string& graph_label,
                           int depth, const Context& context, GraphSizes& sizes, GraphResult& result) {
  const IrGraph& g = result.ir;
  std::vector<int64_t>& workspace_of = sizes.workspace_of;
  workspace_of.assign(g.nodes.size(), 0);
  // Built lazily: only graphs with bodies need them.
  absl::flat_hash_set<std::string> body_outer_names;
  absl::flat_hash_set<std::string> body_outer_constants;
  for (NodeId node_id : result.schedule.order) {
    const IrNode& node = g.nodes[node_id];
    if (node.bodies.empty()) continue;
    if (body_outer_names.empty()) {
      body_outer_names = outer_names;
      for (const IrValue& value : g.values) body_outer_names.insert(value.name);
      if (FoldsBodies(context)) body_outer_constants = ConstantsForBodies(outer_constants, depth, context, g);
    }
    int64_t workspace = 0;
    const std::string taken_branch = TakenBranchAttribute(context, node);
    for (const onnx::AttributeProto& attribute : node.proto->attribute()) {
      if (!taken_branch.empty() && attribute.name() != taken_branch) continue;
      std::vector<const onnx::GraphProto*> bodies;
      if (attribute.has_g()) bodies.push_back(&attribute.g());
      for (const onnx::GraphProto& body : attribute.graphs()) bodies.push_back(&body);
      for (const onnx::GraphProto* body : bodies) {
        const std::string body_label =
            absl::StrCat(graph_label.empty() ? "" : graph_label + " / ", "body '", attribute.name(), "' of node '",
                         node.display_name, "' (", node.proto->op_type(), ")");
        absl::StatusOr<GraphResult> body_result = AnalyzeGraph(*body, body_outer_names, body_outer_constants, body_label, depth + 1, context);
        if (!body_result.ok()) return body_result.status();
        workspace = std::max(workspace, body_result->plan.arena_bytes);
        for (WeightRecord& weight : body_result->weights) result.weights.push_back(std::move(weight));
        int64_t body_unsized = body_result->nested_unsized;
        std::vector<std::string> unsized_names;
        for (const TensorRecord& tensor : body_result->tensors) {
          if (tensor.bytes.has_value()) continue;
          ++body_unsized;
          if (unsized_names.size() < 5) unsized_names.push_back(tensor.name);
        }
        result.nested_unsized += body_unsized;
        if (body_unsized > 0) {
          result.warnings.push_back(absl::StrCat(body_label, " has ", body_unsized,
                                                 " unsized tensors (", absl::StrJoin(unsized_names, ", "),
                                                 body_unsized > 5 ? ", ..." : "", "): its peak is a lower bound"));
        }
        for (std::string& warning : body_result->warnings) result.warnings.push_back(std::move(warning));
      }
    }
    workspace_of[node_id] = workspace;
  }
  return absl::OkStatus();
}

// How the runtime's planner sees value `id`'s dims: its own PlannerShape, or
// that of the value it is sized as (a Cast a runtime inserted of a value of
// an inlined body), the first one set on the way.
PlannerShape PlannerShapeOf(const GraphRewrite& rewrite, ValueId id) {
  for (ValueId at = id; at >= 0; at = HeldAs(rewrite, at).sized_as) {
    if (HeldAs(rewrite, at).planner_shape != PlannerShape::kAsSized) return HeldAs(rewrite, at).planner_shape;
  }
  return PlannerShape::kAsSized;
}

// The runtime's own planner over the runtime's order (RuntimeModel::TensorPeak)
// and what it holds after load and a first run (RuntimeModel::HeldBytes), from
// the sized values before ArrangeTensors takes their records. The runtime
// runs its graph in its own order, the baseline schedule of the graph it
// rewrote (nodes it adds where it runs them), not the order our schedule
// optimizer finds: measured, ORT runs the Casts of float16 weights first.
void RuntimeFigures(const RuntimeModel& runtime, const ShapeLookup& shape_of, const GraphSizes& sizes,
                    GraphResult& result) {
  std::vector<RuntimeValue> values(result.ir.values.size());
  for (size_t id = 0; id < values.size(); ++id) {
    values[id].bytes = sizes.sized_bytes[id];
    if (sizes.record_of[id] < 0 || values[id].bytes < 0) continue;
    const TensorRecord& record = sizes.records[sizes.record_of[id]];
    if (!record.shape.has_value() || record.shape->empty()) continue;
    const PlannerShape planner_shape = PlannerShapeOf(result.rewrite, static_cast<ValueId>(id));
    if (planner_shape == PlannerShape::kUnknown) continue;
    std::vector<std::optional<int64_t>> dims;
    for (const Dim& dim : *record.shape) dims.push_back(dim.value);
    if (planner_shape == PlannerShape::kFlattenedSpatial && dims.size() > 3) {
      for (size_t axis = 3; axis < dims.size(); ++axis) {
        dims[2] = dims[2].has_value() && dims[axis].has_value() ? std::optional<int64_t>(*dims[2] * *dims[axis])
                                                                : std::nullopt;
      }
      dims.resize(3);
    }
    std::string key = absl::StrCat(record.dtype, "[");
    bool known = true;
    for (const std::optional<int64_t>& dim : dims) {
      if (!dim.has_value()) known = false;
      absl::StrAppend(&key, dim.value_or(-1), ",");
    }
    if (known) values[id].shape_key = absl::StrCat(key, "]");
  }
  const std::vector<NodeId>& order = result.schedule.order;
  const PlannerPeak peak =
      runtime.TensorPeak(result.ir, result.rewrite, order, values, sizes.step_extra_of);
  result.runtime_tensor_bytes = peak.bytes;
  for (ValueId id : peak.values) result.runtime_peak_values.push_back(result.ir.values[id].name);
  result.runtime_frame_bytes =
      runtime.FrameBytes(result.ir, result.rewrite, order, values, sizes.step_extra_of);
  result.runtime_held = runtime.HeldBytes(result.ir, result.rewrite, shape_of, order, values, sizes.step_blocks_of);
}

// OutOfRange when the arena values and the per-step workspaces together
// exceed 64 bits: every live-byte sum the schedule modes and the planner
// take is at most that total, so past this check none can overflow.
absl::Status CheckTotalFits(const GraphSizes& sizes) {
  int64_t total = 0;
  for (const std::vector<int64_t>* part : {&sizes.sized_bytes, &sizes.step_extra_of}) {
    for (int64_t bytes : *part) {
      if (bytes <= 0) continue;
      absl::StatusOr<int64_t> sum = CheckedAdd(total, bytes);
      if (!sum.ok()) return absl::OutOfRangeError("the arena tensors' total byte size overflows 64 bits");
      total = *sum;
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string ErrorPrefix(const std::string& graph_label) {
  return graph_label.empty() ? "" : absl::StrCat("in ", graph_label, ": ");
}

absl::Status WithPrefix(const absl::Status& status, const std::string& graph_label) {
  if (graph_label.empty()) return status;
  return absl::Status(status.code(), absl::StrCat(ErrorPrefix(graph_label), status.message()));
}

absl::StatusOr<GraphResult> AnalyzeGraph(const onnx::GraphProto& graph,
                                         const absl::flat_hash_set<std::string>& outer_names,
                                         const absl::flat_hash_set<std::string>& outer_constants,
                                         const std::string& graph_label, int depth, const Context& context) {
  if (depth > kMaxSubgraphDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(ErrorPrefix(graph_label), "subgraphs nested deeper than ", kMaxSubgraphDepth));
  }
  const AnalyzeOptions& options = context.options;
  const bool main_graph = depth == 0;
  GraphResult result;
  const RuntimeModel* runtime = main_graph ? context.runtime : nullptr;
  ShapeLookup shape_of;
  const bool accumulate = main_graph && options.accumulate && runtime == nullptr;
  if (runtime != nullptr) {
    absl::StatusOr<ShapeLookup> lookup = MakeShapeLookup(graph, context);
    if (!lookup.ok()) return lookup.status();
    shape_of = *std::move(lookup);
  } else if (accumulate) {
    // Waits for the shapes only once a Conv feeding an Add asks; an error of
    // the engine reaches the caller when the sizes are read.
    shape_of = [&graph, &context, lookup = std::make_shared<std::optional<absl::StatusOr<ShapeLookup>>>()](
                   const std::string& name) -> std::optional<ValueShape> {
      if (!lookup->has_value()) *lookup = MakeShapeLookup(graph, context);
      if (!(*lookup)->ok()) return std::nullopt;
      return (***lookup)(name);
    };
  }
  const bool fold = main_graph ? options.fold_constants : FoldsBodies(context);
  if (absl::Status status = LoadGraph(graph, outer_names, outer_constants, graph_label, fold,
                                      accumulate, main_graph && options.qdq, runtime,
                                      main_graph ? context.file_graph : nullptr, shape_of, context.ir_version,
                                      context.opset, result);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<GraphSizes> sizes = SizeArenaValues(graph, result, graph_label, context);
  if (!sizes.ok()) return sizes.status();
  for (WeightRecord& weight : sizes->folded_weights) result.weights.push_back(std::move(weight));
  if (absl::Status status = AnalyzeBodies(outer_names, outer_constants, graph_label, depth, context, *sizes, result); !status.ok()) {
    return status;
  }
  // A body's kernels take their scratch as the main graph's do (ORT runs a
  // subgraph's nodes with the same kernels).
  SizeKernelWorkspaces(context.runtime, options.device.alignment_bytes, result, *sizes);
  if (absl::Status status = CheckTotalFits(*sizes); !status.ok()) return WithPrefix(status, graph_label);
  if (absl::Status status = RunScheduleMode(*sizes, main_graph, options, graph_label, result); !status.ok()) {
    return status;
  }
  const std::vector<planner::Lifespan> lifespans = ComputeLifespans(result.ir, result.order, result.rewrite);
  const std::vector<planner::Step> step_of = StepsOf(result.order, static_cast<int>(result.ir.nodes.size()));
  const std::vector<Sharing> sharing = RunSharingModes(*sizes, lifespans, main_graph, options, runtime, result);
  if (runtime != nullptr) RuntimeFigures(*runtime, shape_of, *sizes, result);
  ArrangeTensors(lifespans, step_of, sharing, *sizes, result);
  const std::vector<int64_t> buffer_of_tensor = BuildPlannerProblem(options.device.alignment_bytes, result);
  // Bodies get the heuristics only: there may be many, and the main graph's
  // arena is the figure users act on.
  absl::StatusOr<planner::PlanResult> plan = planner::Solve(
      result.problem, {.time_limit = main_graph ? options.planner_time_limit : absl::ZeroDuration()});
  if (!plan.ok()) return WithPrefix(plan.status(), graph_label);
  result.plan = *std::move(plan);
  for (size_t i = 0; i < result.tensors.size(); ++i) {
    if (buffer_of_tensor[i] >= 0) result.tensors[i].offset = result.plan.solution.offsets[buffer_of_tensor[i]];
  }
  if (absl::Status status = ValidateSharedBytes(result.tensors); !status.ok()) {
    return WithPrefix(status, graph_label);
  }
  if (absl::Status status = FinishInPlaceMode(graph_label, result); !status.ok()) return status;
  return result;
}

}  // namespace footprint
