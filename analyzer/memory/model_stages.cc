// The stages of AnalyzeModel around the main graph's analysis
// (model_stages.h): the device, the model's header, the runtime, and the
// figures assembled from the main graph's result.
#include "analyzer/memory/model_stages.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/loader/onnx_domain.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/memory/unbound_dims.h"
#include "analyzer/runtimes/registry.h"
#include "analyzer/shapes/expr.h"
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
  int64_t without_formula = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRecord& tensor = tensors[i];
    if (tensor.bytes.has_value()) {
      aligned[i] = symbolic::Expr(tensor.aligned_bytes);
    } else if (!tensor.bytes_expr.empty()) {
      std::optional<symbolic::Expr> bytes = symbolic::Expr::Parse(tensor.bytes_expr);
      aligned[i] = bytes.has_value() ? symbolic::AlignedExpr(*bytes, alignment) : symbolic::Expr::Unknown();
      any_symbolic = true;
    } else {
      // Listed as unsized. 0 keeps the lower bounds lower bounds; the sums
      // that claim every tensor (naive, the peak's upper bound) are unknown.
      aligned[i] = symbolic::Expr(0);
      ++without_formula;
    }
  }
  if (!any_symbolic) return std::nullopt;
  SymbolicMemory result;
  symbolic::Expr naive = 0;
  for (const symbolic::Expr& e : aligned) naive = naive + e;
  const size_t step_count = static_cast<size_t>(std::max<int64_t>(steps, 1));
  std::vector<std::vector<size_t>> starting(step_count), ending(step_count);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const int64_t first = std::clamp<int64_t>(tensors[i].first_step, 0, step_count - 1);
    const int64_t last = std::clamp<int64_t>(tensors[i].last_step, first, step_count - 1);
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
  result.tensors_without_formula = without_formula;
  result.naive_expr = naive.known() && without_formula == 0 ? naive.ToString() : "";
  result.lower_bound_expr = lower_bound.known() ? lower_bound.ToString() : "";
  const symbolic::Expr weights(weights_bytes);
  result.peak_lower_bound_expr = lower_bound.known() ? (weights + lower_bound).ToString() : "";
  result.peak_upper_bound_expr = naive.known() && without_formula == 0 ? (weights + naive).ToString() : "";
  return result;
}

}  // namespace

absl::StatusOr<AnalyzeOptions> ResolveDevice(const AnalyzeOptions& requested) {
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
  return options;
}

ModelSummary DescribeModel(const LoadedModel& loaded) {
  const onnx::ModelProto& source = loaded.model;
  ModelSummary model;
  model.path = loaded.path;
  model.ir_version = source.ir_version();
  model.nodes = source.graph().node_size();
  model.producer =
      absl::StrCat(source.producer_name(), source.producer_version().empty() ? "" : " ", source.producer_version());
  for (const onnx::OperatorSetIdProto& opset : source.opset_import()) {
    model.opsets[OpsetKey(opset.domain())] = opset.version();
  }
  return model;
}

absl::StatusOr<std::unique_ptr<const RuntimeModel>> MakeRuntime(const AnalyzeOptions& options) {
  absl::StatusOr<std::unique_ptr<const RuntimeModel>> runtime = MakeRuntimeModel(options.runtime);
  if (!runtime.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--runtime ", runtime.status().message()));
  }
  return runtime;
}

void RecordSchedule(const AnalyzeOptions& options, GraphResult& main, Analysis& analysis) {
  analysis.file_order_was_valid = main.schedule.file_order_was_valid;
  // A fused node reads its chain's inputs, which the file may define later: not the file's fault.
  if (!analysis.file_order_was_valid && main.rewrite.fused_nodes == 0 && main.rewrite.reorder_nodes == 0 &&
      main.accumulated.fused_nodes == 0) {
    analysis.warnings.push_back(
        "the file's node order is not a valid topological order; the baseline schedule is a stable topological "
        "sort of it");
  }
  for (NodeId node : main.order) analysis.schedule.push_back(main.ir.nodes[node].display_name);
  analysis.modes = main.modes;
  for (std::string& warning : main.warnings) analysis.warnings.push_back(std::move(warning));
}

void RecordModes(const AnalyzeOptions& options, const GraphResult& main, Analysis& analysis) {
  analysis.modes.fold = FoldMode{.enabled = options.fold_constants,
                                 .nodes = main.folded.folded_nodes,
                                 .weights_bytes = analysis.memory.folded_weights_bytes};
  analysis.modes.accumulate = AccumulateMode{.enabled = options.accumulate && options.runtime.empty(),
                                             .nodes = main.accumulated.fused_nodes};
  analysis.modes.qdq = QdqMode{.enabled = options.qdq && options.runtime.empty(), .groups = main.qdq.groups};
  analysis.modes.fused_nodes = main.rewrite.fused_nodes;
  analysis.modes.layout_nodes = main.rewrite.layout_nodes;
  analysis.modes.reorder_nodes = main.rewrite.reorder_nodes;
}

absl::Status SumFigures(const GraphResult& main, MemoryFigures& memory) {
  for (const WeightRecord& weight : main.weights) {
    if (!weight.bytes.has_value()) {
      ++memory.unsized_tensors;
      continue;
    }
    int64_t& total = weight.folded ? memory.folded_weights_bytes : memory.weights_bytes;
    absl::StatusOr<int64_t> sum = CheckedAdd(total, *weight.bytes);
    if (!sum.ok()) return absl::OutOfRangeError("the weights' total byte size overflows 64 bits");
    total = *sum;
  }
  for (const TensorRecord& tensor : main.tensors) {
    if (!tensor.bytes.has_value()) {
      ++memory.unsized_tensors;
      continue;
    }
    if (tensor.role == TensorRole::kKernelWorkspace) memory.workspace_bytes += tensor.aligned_bytes;
    absl::StatusOr<int64_t> sum = CheckedAdd(memory.naive_bytes, tensor.aligned_bytes);
    if (!sum.ok()) return absl::OutOfRangeError("the arena tensors' total byte size overflows 64 bits");
    memory.naive_bytes = *sum;
  }
  memory.unsized_tensors += main.nested_unsized;
  memory.complete = memory.unsized_tensors == 0;
  memory.arena_bytes = main.plan.arena_bytes;
  memory.lower_bound_bytes = main.plan.lower_bound;
  memory.reuse_savings_bytes = memory.naive_bytes - memory.arena_bytes;
  return absl::OkStatus();
}

absl::Status RuntimePeak(const GraphResult& main, const onnx::GraphProto& graph, const RuntimeModel* runtime,
                         MemoryFigures& memory) {
  int64_t input_bytes = 0;  // What is live at the run's end (RuntimeModel::OverheadBytes).
  int64_t output_bytes = 0;
  int64_t bindings = graph.output_size();  // The caller's inputs and outputs.
  for (const TensorRecord& tensor : main.tensors) {
    if (tensor.role == TensorRole::kGraphInput) {
      ++bindings;
      input_bytes += tensor.aligned_bytes;
    }
    if (tensor.role == TensorRole::kGraphOutput) output_bytes += tensor.aligned_bytes;
  }
  if (runtime != nullptr) {
    // A graph output that is a weight is copied into an output buffer by
    // the run, like any output (qwen2-5-vl dummy_text: no node, 2 x its
    // 2.4 MB of initializer outputs in ORT's run peak).
    absl::flat_hash_map<std::string, int64_t> weight_bytes;
    for (const WeightRecord& weight : main.weights) {
      if (weight.graph.empty() && weight.bytes.has_value()) weight_bytes.emplace(weight.name, *weight.bytes);
    }
    for (const IrValue& value : main.ir.values) {
      if (!value.is_graph_output || value.origin == ValueOrigin::kGraphInput ||
          value.origin == ValueOrigin::kNodeOutput) {
        continue;
      }
      auto it = weight_bytes.find(value.name);
      if (it != weight_bytes.end()) output_bytes += it->second;
    }
  }
  // Under --runtime the peak is that runtime's: its planner's buffers rather
  // than our arena (RuntimeModel::TensorPeak), and what it holds besides them.
  memory.runtime_tensor_bytes = main.runtime_tensor_bytes;
  memory.runtime_peak_values = main.runtime_peak_values;
  const int64_t tensor_bytes = runtime == nullptr ? memory.arena_bytes : memory.runtime_tensor_bytes;
  memory.runtime_overhead_bytes =
      runtime == nullptr ? 0
                         : runtime->OverheadBytes(tensor_bytes, main.runtime_frame_bytes, input_bytes, output_bytes,
                                                  bindings);
  int64_t resident = memory.weights_bytes + memory.folded_weights_bytes;
  int64_t working = tensor_bytes + memory.runtime_overhead_bytes;
  if (runtime != nullptr) {
    // What the runtime keeps after load replaces the file's weights; with its
    // defaults, what it holds after a first run replaces the working memory.
    memory.runtime_weights_bytes = main.runtime_held.weights_bytes;
    memory.runtime_reserved_bytes = main.runtime_held.reserved_bytes;
    memory.runtime_peak_follows = main.runtime_held.peak_configuration;
    if (memory.runtime_weights_bytes > 0) resident = memory.runtime_weights_bytes;
    memory.runtime_peak_reserved = main.runtime_held.peak_follows_defaults;
    // The caller's inputs are heap of the process during the run too
    // (measured: FastestDet's 1.49 MB input is 11% of its first run's
    // high-water with the defaults); the arena-off overhead has them already.
    if (memory.runtime_peak_reserved) {
      absl::StatusOr<int64_t> run = CheckedAdd(memory.runtime_reserved_bytes, input_bytes);
      if (!run.ok()) return absl::OutOfRangeError("the peak byte count overflows 64 bits");
      working = *run;
    }
  }
  absl::StatusOr<int64_t> peak = CheckedAdd(resident, working);
  if (!peak.ok()) return absl::OutOfRangeError("the peak byte count overflows 64 bits");
  memory.peak_bytes = *peak;
  if (runtime != nullptr) {
    memory.runtime_run_peak_bytes = *peak;
    memory.runtime_input_bytes = input_bytes;
  }
  if (runtime != nullptr && main.runtime_held.load_peak_bytes > 0) {
    // The process is killed at its highest point: creation or the first run.
    memory.runtime_load_peak_bytes = main.runtime_held.load_peak_bytes;
    memory.runtime_load_peak_step = main.runtime_held.load_peak_step;
    memory.runtime_peak_phase = memory.runtime_load_peak_bytes > memory.peak_bytes ? "session creation" : "first run";
    memory.peak_bytes = std::max(memory.peak_bytes, memory.runtime_load_peak_bytes);
  }
  if (runtime != nullptr) memory.runtime_mapped_weights_bytes = main.runtime_held.mapped_weights_bytes;
  return absl::OkStatus();
}

std::optional<std::string> UnsizedWarning(const GraphResult& main, const MemoryFigures& memory) {
  if (memory.complete) return std::nullopt;
  absl::flat_hash_set<std::string> unbound;
  for (const TensorRecord& tensor : main.tensors) {
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
  return absl::StrCat(
      memory.unsized_tensors, " tensors have no known size: the figures are incomplete",
      names.empty() ? std::string(" (ops whose output shapes could not be inferred)")
                    : absl::StrCat(" (unbound dims: ", absl::StrJoin(names, ", "),
                                   "; bind with --dim NAME=VALUE, --input-shape INPUT=DIMS or --dim-default N)"));
}

void RecordProfile(const GraphResult& main, const AnalyzeOptions& options, Analysis& analysis) {
  analysis.plan = PlanSummary{
      .algorithm = main.plan.algorithm,
      .proven_optimal = main.plan.proven_optimal,
      .seconds = main.plan.seconds,
  };
  const planner::LiveProfile profile = planner::ComputeLiveProfile(main.problem);
  analysis.live_bytes_per_step.assign(std::max<size_t>(1, main.schedule.order.size()), 0);
  for (size_t k = 0; k < profile.live_bytes.size(); ++k) {
    const size_t step = static_cast<size_t>(profile.first_step) + k;
    if (step < analysis.live_bytes_per_step.size()) analysis.live_bytes_per_step[step] = profile.live_bytes[k];
  }
  analysis.symbolic_memory =
      SymbolicFigures(main.tensors, analysis.memory.weights_bytes + analysis.memory.folded_weights_bytes,
                      options.device.alignment_bytes, static_cast<int64_t>(main.schedule.order.size()));
}

std::vector<UnboundDim> ListUnboundDims(const BoundInputs& inputs, const std::optional<symbolic::ShapeTables>& shapes) {
  const symbolic::GraphShapes* main_shapes = nullptr;
  if (shapes.has_value()) {
    auto it = shapes->graphs.find(&inputs.model().graph());
    if (it != shapes->graphs.end()) main_shapes = &it->second;
  }
  return FindUnboundDims(inputs.model(), inputs.engine_dims, inputs.source->graph(), main_shapes);
}

void AddSampleFigures(const LoadedModel& loaded, const AnalyzeOptions& options, Analysis& analysis) {
  if (analysis.unbound_dims.empty() || !options.sample_unbound_dims) return;
  const std::optional<SymbolicMemory>& symbolic = analysis.symbolic_memory;
  if (symbolic.has_value() && !symbolic->lower_bound_expr.empty() && !symbolic->peak_lower_bound_expr.empty() &&
      !symbolic->naive_expr.empty()) {
    return;  // The formulas say it all.
  }
  std::map<std::string, int64_t> ones, stated;
  bool any_stated = false;
  for (const UnboundDim& dim : analysis.unbound_dims) {
    ones[dim.name] = 1;
    stated[dim.name] = dim.example;
    any_stated = any_stated || (dim.stated && dim.example != 1);
  }
  std::vector<std::pair<std::map<std::string, int64_t>, std::string>> bindings = {{ones, "each unbound dim 1"}};
  if (any_stated) bindings.push_back({stated, "the sizes the model states (1 where it states none)"});
  for (const auto& [binding, label] : bindings) {
    AnalyzeOptions at = options;
    for (const auto& [name, value] : binding) at.dims[name] = value;
    at.sample_unbound_dims = false;
    absl::StatusOr<Analysis> sample = AnalyzeModel(loaded, at);
    if (!sample.ok()) {
      analysis.warnings.push_back(absl::StrCat("no sample figures at ", label, ": ", sample.status().message()));
      continue;
    }
    analysis.samples.push_back({.dims = binding, .label = label, .memory = sample->memory});
  }
}

}  // namespace footprint
