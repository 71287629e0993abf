// AnalyzeModel (analyze.h): binds the model, runs the shape engine beside the
// main graph's analysis (graph_analysis.h), and assembles the Analysis: the
// figures, symbolic memory, tiers, warnings and phase timings.
#include "analyzer/memory/analyze.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "analyzer/loader/isolated_call.h"
#include "analyzer/memory/graph_analysis.h"
#include "analyzer/memory/runtime_profile.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/shapes/shape_engine.h"
#include "analyzer/shapes/shapes.h"
#include "analyzer/shapes/sizing.h"
#include "analyzer/shapes/tensor_size.h"
#include "devices/device_catalog.h"
#include "planner/lower_bound.h"

namespace footprint {
namespace {

// The figures as formulas, when some arena tensor's size is one (see
// SymbolicMemory). A sweep line over steps keeps this linear in tensors.
std::optional<SymbolicMemory> SymbolicFigures(const std::vector<TensorRecord>& tensors, int64_t weights_bytes,
                                              int64_t alignment, int64_t steps) {
  std::vector<symbolic::Expr> aligned(tensors.size());
  bool any_symbolic = false;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRecord& tensor = tensors[i];
    if (tensor.bytes.has_value()) {
      aligned[i] = symbolic::Expr(tensor.aligned_bytes);
    } else if (!tensor.bytes_expr.empty()) {
      std::optional<symbolic::Expr> bytes = symbolic::Expr::Parse(tensor.bytes_expr);
      aligned[i] = bytes.has_value() ? symbolic::AlignedExpr(*bytes, alignment) : symbolic::Expr::Unknown();
      any_symbolic = true;
    } else {
      aligned[i] = symbolic::Expr(0);  // Unknown sizes are listed as unsized, not counted.
    }
  }
  if (!any_symbolic) return std::nullopt;
  SymbolicMemory result;
  symbolic::Expr naive = 0;
  for (const symbolic::Expr& e : aligned) naive = naive + e;
  std::vector<std::vector<size_t>> starting(std::max<int64_t>(steps, 1)), ending(std::max<int64_t>(steps, 1));
  for (size_t i = 0; i < tensors.size(); ++i) {
    const int64_t first = std::clamp<int64_t>(tensors[i].first_step, 0, std::max<int64_t>(steps, 1) - 1);
    const int64_t last = std::clamp<int64_t>(tensors[i].last_step, first, std::max<int64_t>(steps, 1) - 1);
    starting[first].push_back(i);
    ending[last].push_back(i);
  }
  std::vector<symbolic::Expr> per_step;
  symbolic::Expr live = 0;
  for (size_t k = 0; k < starting.size(); ++k) {
    for (size_t i : starting[k]) live = live + aligned[i];
    per_step.push_back(live);
    for (size_t i : ending[k]) live = live - aligned[i];
  }
  const symbolic::Expr lower_bound = symbolic::MaxOfSums(per_step);
  std::set<std::string> symbols;
  naive.CollectSymbols(symbols);
  result.symbols.assign(symbols.begin(), symbols.end());
  result.naive_expr = naive.known() ? naive.ToString() : "";
  result.lower_bound_expr = lower_bound.known() ? lower_bound.ToString() : "";
  const symbolic::Expr weights(weights_bytes);
  result.peak_lower_bound_expr = lower_bound.known() ? (weights + lower_bound).ToString() : "";
  result.peak_upper_bound_expr = naive.known() ? (weights + naive).ToString() : "";
  return result;
}

}  // namespace

absl::StatusOr<Analysis> AnalyzeModel(const LoadedModel& loaded, const AnalyzeOptions& requested) {
  const absl::Time analysis_start = absl::Now();
  AnalyzeOptions options = requested;
  if (options.device_profile.has_value()) {
    if (absl::Status status = devices::CheckDeviceProfile(*options.device_profile); !status.ok()) return status;
    options.device.name = options.device_profile->name();
    options.device.alignment_bytes = options.device_profile->has_alignment_bytes()
                                         ? options.device_profile->alignment_bytes()
                                         : devices::kDefaultAlignmentBytes;
  }
  if (options.device.alignment_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat("device alignment ", options.device.alignment_bytes, " < 1"));
  }
  Analysis analysis;
  analysis.options = options;
  analysis.device = options.device;
  analysis.warnings = loaded.warnings;
  const onnx::ModelProto& source = loaded.model;
  analysis.model.path = loaded.path;
  analysis.model.ir_version = source.ir_version();
  analysis.model.nodes = source.graph().node_size();
  analysis.model.producer = absl::StrCat(source.producer_name(),
                                         source.producer_version().empty() ? "" : " ", source.producer_version());
  for (const onnx::OperatorSetIdProto& opset : source.opset_import()) {
    analysis.model.opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
  }

  // --dim names a graph input's dim_param, or a symbol our engine makes up
  // (a Loop's trip count): the latter go to the engine, and a name neither
  // knows is refused below with BindDims' message.
  DimBindings input_dims, engine_dims;
  {
    absl::flat_hash_set<std::string> input_dim_names;
    for (const onnx::ValueInfoProto& input : source.graph().input()) {
      if (!input.type().has_tensor_type()) continue;
      for (const auto& dim : input.type().tensor_type().shape().dim()) {
        if (dim.has_dim_param()) input_dim_names.insert(dim.dim_param());
      }
    }
    for (const auto& [name, value] : options.dims) (input_dim_names.contains(name) ? input_dims : engine_dims)[name] = value;
  }
  if (options.onnx_inference_only) input_dims = options.dims;
  // ONNX's whole-model pass runs in a child process (it can crash) and costs
  // as much as the rest of the analysis: when our engine has a shape function
  // for every op, it is skipped (the engine still asks ONNX per node where its
  // own function gives up).
  const bool needs_onnx_fallback = symbolic::NeedsOnnxFallback(source);
  const bool engine_covers_all = !options.onnx_inference_only && !needs_onnx_fallback;
  const bool run_onnx_pass = options.onnx_shape_inference && !engine_covers_all;
  // Bindings and ONNX's pass write into the model: only then is it copied (a
  // copy of an 18,000-node graph costs as much as its shape inference).
  std::optional<onnx::ModelProto> bound_model;
  absl::StatusOr<symbolic::InputValues> input_values = symbolic::ParseInputValues(options.input_values, source);
  if (!input_values.ok()) return input_values.status();
  if (run_onnx_pass || !input_dims.empty() || !options.input_shapes.empty() || options.dim_default.has_value() ||
      !options.input_values.empty()) {
    bound_model.emplace(source);
    if (absl::Status status = BindDims(input_dims, *bound_model); !status.ok()) return status;
    if (absl::Status status = symbolic::ApplyInputBindings({.input_shapes = options.input_shapes,
                                                            .dim_default = options.dim_default,
                                                            .input_values = options.input_values},
                                                           *bound_model);
        !status.ok()) {
      return status;
    }
  }
  const onnx::ModelProto& model = bound_model.has_value() ? *bound_model : source;
  if (run_onnx_pass) {
    const absl::Time onnx_start = absl::Now();
    for (std::string& warning : RunOnnxShapeInference(*bound_model)) analysis.warnings.push_back(std::move(warning));
    analysis.phase_seconds["onnx_shape_inference"] = absl::ToDoubleSeconds(absl::Now() - onnx_start);
  }
  // Our engine. Without ONNX's per-node functions in play it runs on a
  // second thread, beside the IR, the baseline schedule and the weights,
  // which need no shapes: AnalyzeGraph waits for it before sizing tensors.
  std::optional<absl::StatusOr<symbolic::ShapeTables>> tables;  // Unset: not run (ONNX's types only).
  std::optional<symbolic::ShapeTables> shapes;
  std::thread engine_thread;
  absl::Cleanup join_engine = [&engine_thread] {
    if (engine_thread.joinable()) engine_thread.join();
  };
  const symbolic::SymbolValues symbol_values(engine_dims.begin(), engine_dims.end());
  bool onnx_fallback = true;
  if (!options.onnx_inference_only) {
    const absl::Time engine_start = absl::Now();
    if (needs_onnx_fallback) {
      // A dry run in a child: ONNX's per-node functions may crash on this model.
      absl::StatusOr<std::string> dry_run = RunIsolated(
          [&]() {
            (void)symbolic::InferSymbolicShapes(model, options.tensor_shapes, symbol_values, true, *input_values);
            return std::string("ok");
          },
          kOnnxInferenceDeadline);
      if (!dry_run.ok()) {
        onnx_fallback = false;
        analysis.warnings.push_back(absl::StrCat("ONNX's per-node shape functions ", dry_run.status().message(),
                                                 " on this model; ops without a shape function of ours stay unsized"));
      }
    }
    analysis.phase_seconds["shape_engine_dry_run"] = absl::ToDoubleSeconds(absl::Now() - engine_start);
    auto run_engine = [&tables, &model, &options, &analysis, &input_values, symbol_values, onnx_fallback] {
      const absl::Time tables_start = absl::Now();
      try {
        tables = symbolic::InferSymbolicShapes(model, options.tensor_shapes, symbol_values, onnx_fallback,
                                               *input_values);
      } catch (const std::exception& error) {  // ONNX's per-node functions throw; nothing may escape a thread.
        tables = absl::InternalError(absl::StrCat("shape inference failed: ", error.what()));
      }
      analysis.phase_seconds["shape_engine"] = absl::ToDoubleSeconds(absl::Now() - tables_start);
    };
    if (needs_onnx_fallback) {
      run_engine();
    } else {
      engine_thread = std::thread(run_engine);
    }
  }
  // Once, at the first graph that needs sizes; the engine's errors come first.
  std::optional<absl::Status> shapes_status;
  auto await_shapes = [&]() -> absl::Status {
    if (shapes_status.has_value()) return *shapes_status;
    if (engine_thread.joinable()) engine_thread.join();
    shapes_status = absl::OkStatus();
    if (!tables.has_value()) return *shapes_status;
    if (!tables->ok()) return *(shapes_status = tables->status());
    if (!(*tables)->unused_symbol_values.empty()) {
      onnx::ModelProto probe = source;
      DimBindings unused;
      for (const std::string& name : (*tables)->unused_symbol_values) unused[name] = 0;
      return *(shapes_status = BindDims(unused, probe));  // Its error names the dims the inputs do have.
    }
    shapes = *std::move(*tables);
    for (std::string& warning : shapes->warnings) analysis.warnings.push_back(std::move(warning));
    for (const symbolic::IfDecision& decision : shapes->if_decisions) {
      analysis.if_branches.push_back({.node = decision.node, .branch = decision.branch, .decided_by = decision.decided_by});
    }
    return *shapes_status;
  };

  const Context context{
      .options = options, .shapes = &shapes, .await_shapes = await_shapes, .ir_version = model.ir_version()};
  const absl::Time graph_start = absl::Now();
  absl::StatusOr<GraphResult> main = AnalyzeGraph(model.graph(), {}, "", 0, context);
  if (absl::Status engine_status = await_shapes(); !engine_status.ok()) return engine_status;
  if (!main.ok()) return main.status();
  analysis.phase_seconds["schedule_and_plan"] = absl::ToDoubleSeconds(absl::Now() - graph_start);

  if (options.dim_default.has_value() && shapes.has_value()) {
    // --dim-default may bind dims the model ties together (a total length =
    // past + sequence): then one line at the top says so, from the formulas
    // of a run without it, rather than an unsized tensor deep inside.
    auto graph = shapes->graphs.find(&model.graph());
    const bool clash =
        graph != shapes->graphs.end() &&
        std::any_of(graph->second.values.begin(), graph->second.values.end(), [](const symbolic::SymValue& v) {
          return v.reason.find("do not broadcast") != std::string::npos;
        });
    onnx::ModelProto unbound_model = source;
    if (clash && BindDims(input_dims, unbound_model).ok() &&
        symbolic::ApplyInputBindings({.input_shapes = options.input_shapes, .input_values = options.input_values},
                                     unbound_model)
            .ok()) {
      absl::StatusOr<symbolic::ShapeTables> unbound = absl::UnknownError("not run");
      try {
        unbound = symbolic::InferSymbolicShapes(unbound_model, options.tensor_shapes, symbol_values, onnx_fallback,
                                                *input_values);
      } catch (const std::exception& error) {  // ONNX's per-node functions throw.
        unbound = absl::InternalError(error.what());
      }
      if (unbound.ok()) {
        if (std::optional<std::string> conflict =
                symbolic::FindDimDefaultConflict(model, *shapes, unbound_model, *unbound, *options.dim_default)) {
          analysis.dim_default_conflict = *conflict;
        }
      }
    }
  }

  analysis.file_order_was_valid = main->schedule.file_order_was_valid;
  // A fused node reads its chain's inputs, which the file may define later: not the file's fault.
  if (!analysis.file_order_was_valid && main->fusions.fused_nodes == 0 && main->fusions.reorder_nodes == 0 &&
      main->accumulated.fused_nodes == 0) {
    analysis.warnings.push_back(
        "the file's node order is not a valid topological order; the baseline schedule is a stable topological "
        "sort of it");
  }
  for (NodeId node : main->order) analysis.schedule.push_back(main->ir.nodes[node].display_name);
  analysis.modes = main->modes;
  for (std::string& warning : main->warnings) analysis.warnings.push_back(std::move(warning));

  MemoryFigures& memory = analysis.memory;
  for (const WeightRecord& weight : main->weights) {
    if (!weight.bytes.has_value()) {
      ++memory.unsized_tensors;
      continue;
    }
    int64_t& total = weight.folded ? memory.folded_weights_bytes : memory.weights_bytes;
    absl::StatusOr<int64_t> sum = CheckedAdd(total, *weight.bytes);
    if (!sum.ok()) return absl::OutOfRangeError("the weights' total byte size overflows 64 bits");
    total = *sum;
  }
  for (const TensorRecord& tensor : main->tensors) {
    if (!tensor.bytes.has_value()) {
      ++memory.unsized_tensors;
      continue;
    }
    if (tensor.role == TensorRole::kKernelWorkspace) memory.workspace_bytes += tensor.aligned_bytes;
    absl::StatusOr<int64_t> sum = CheckedAdd(memory.naive_bytes, tensor.aligned_bytes);
    if (!sum.ok()) return absl::OutOfRangeError("the arena tensors' total byte size overflows 64 bits");
    memory.naive_bytes = *sum;
  }
  memory.unsized_tensors += main->nested_unsized;
  memory.complete = memory.unsized_tensors == 0;
  memory.arena_bytes = main->plan.arena_bytes;
  memory.lower_bound_bytes = main->plan.lower_bound;
  memory.reuse_savings_bytes = memory.naive_bytes - memory.arena_bytes;
  analysis.modes.fold = FoldMode{.enabled = options.fold_constants,
                                 .nodes = main->folded.folded_nodes,
                                 .weights_bytes = memory.folded_weights_bytes};
  analysis.modes.accumulate = AccumulateMode{.enabled = options.accumulate && options.runtime.empty(),
                                             .nodes = main->accumulated.fused_nodes};
  analysis.modes.fused_nodes = main->fusions.fused_nodes;
  analysis.modes.layout_nodes = main->fusions.layout_nodes;
  analysis.modes.reorder_nodes = main->fusions.reorder_nodes;
  int64_t input_bytes = 0;  // What is live at the run's end (RuntimeOverheadBytes).
  int64_t output_bytes = 0;
  int64_t bindings = model.graph().output_size();  // The caller's inputs and outputs.
  for (const TensorRecord& tensor : main->tensors) {
    if (tensor.role == TensorRole::kGraphInput) {
      ++bindings;
      input_bytes += tensor.aligned_bytes;
    }
    if (tensor.role == TensorRole::kGraphOutput) output_bytes += tensor.aligned_bytes;
  }
  if (!options.runtime.empty()) {
    // A graph output that is a weight is copied into an output buffer by
    // the run, like any output (qwen2-5-vl dummy_text: no node, 2 x its
    // 2.4 MB of initializer outputs in ORT's run peak).
    absl::flat_hash_map<std::string, int64_t> weight_bytes;
    for (const WeightRecord& weight : main->weights) {
      if (weight.graph.empty() && weight.bytes.has_value()) weight_bytes.emplace(weight.name, *weight.bytes);
    }
    for (const IrValue& value : main->ir.values) {
      if (!value.is_graph_output || value.origin == ValueOrigin::kGraphInput ||
          value.origin == ValueOrigin::kNodeOutput) {
        continue;
      }
      auto it = weight_bytes.find(value.name);
      if (it != weight_bytes.end()) output_bytes += it->second;
    }
  }
  // Under --runtime the peak is that runtime's: its planner's buffers rather
  // than our arena (runtime_buffers.h), and what it holds besides them.
  memory.runtime_tensor_bytes = main->runtime_tensor_bytes;
  const int64_t tensor_bytes = options.runtime.empty() ? memory.arena_bytes : memory.runtime_tensor_bytes;
  memory.runtime_overhead_bytes =
      RuntimeOverheadBytes(options.runtime, tensor_bytes, input_bytes, output_bytes, bindings);
  absl::StatusOr<int64_t> peak = CheckedAdd(memory.weights_bytes + memory.folded_weights_bytes,
                                            tensor_bytes + memory.runtime_overhead_bytes);
  if (!peak.ok()) return absl::OutOfRangeError("the peak byte count overflows 64 bits");
  memory.peak_bytes = *peak;
  if (!memory.complete) {
    absl::flat_hash_set<std::string> unbound;
    for (const TensorRecord& tensor : main->tensors) {
      if (tensor.bytes.has_value() || !tensor.shape.has_value()) continue;
      for (const Dim& dim : *tensor.shape) {
        if (!dim.value.has_value() && !dim.symbol.empty() && !absl::StartsWith(dim.symbol, "unk__")) {
          unbound.insert(dim.symbol);
        }
      }
    }
    std::vector<std::string> names(unbound.begin(), unbound.end());
    std::sort(names.begin(), names.end());
    if (names.size() > 8) names.resize(8);
    analysis.warnings.push_back(absl::StrCat(
        memory.unsized_tensors, " tensors have no known size: the figures are incomplete",
        names.empty() ? std::string(" (ops whose output shapes could not be inferred)")
                                            : absl::StrCat(" (unbound dims: ", absl::StrJoin(names, ", "),
                                     "; bind with --dim NAME=VALUE, --input-shape INPUT=DIMS or --dim-default N)")));
  }

  analysis.plan = PlanSummary{
      .algorithm = main->plan.algorithm,
      .proven_optimal = main->plan.proven_optimal,
      .seconds = main->plan.seconds,
  };
  const planner::LiveProfile profile = planner::ComputeLiveProfile(main->problem);
  analysis.live_bytes_per_step.assign(std::max<size_t>(1, main->schedule.order.size()), 0);
  for (size_t k = 0; k < profile.live_bytes.size(); ++k) {
    const size_t step = static_cast<size_t>(profile.first_step) + k;
    if (step < analysis.live_bytes_per_step.size()) analysis.live_bytes_per_step[step] = profile.live_bytes[k];
  }
  analysis.symbolic_memory = SymbolicFigures(main->tensors, memory.weights_bytes + memory.folded_weights_bytes, options.device.alignment_bytes,
                                             static_cast<int64_t>(main->schedule.order.size()));
  analysis.tensors = std::move(main->tensors);
  analysis.weights = std::move(main->weights);
  const absl::Time tiers_start = absl::Now();
  if (absl::Status status = PlanOnDeviceTiers(options, analysis); !status.ok()) return status;
  analysis.phase_seconds["device_tiers"] = absl::ToDoubleSeconds(absl::Now() - tiers_start);
  analysis.phase_seconds["total"] = absl::ToDoubleSeconds(absl::Now() - analysis_start);
  return analysis;
}

}  // namespace footprint
