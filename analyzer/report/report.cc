#include "analyzer/report/report.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/report/format.h"

namespace footprint {
namespace {

using Json = nlohmann::ordered_json;

// null for an unknown shape; each dim a number, its symbol, or null.
void WriteShape(const std::optional<std::vector<Dim>>& shape, JsonWriter& json) {
  if (!shape.has_value()) {
    json.Null();
    return;
  }
  json.BeginArray();
  for (const Dim& dim : *shape) {
    if (dim.value.has_value()) {
      json.Int(*dim.value);
    } else if (!dim.symbol.empty()) {
      json.String(dim.symbol);
    } else {
      json.Null();
    }
  }
  json.EndArray();
}

void WriteIntOrNull(const std::optional<int64_t>& value, JsonWriter& json) {
  if (value.has_value()) {
    json.Int(*value);
  } else {
    json.Null();
  }
}

// "" (none) is null.
void WriteStringOrNull(const std::string& value, JsonWriter& json) {
  if (value.empty()) {
    json.Null();
  } else {
    json.String(value);
  }
}

void WriteStrings(const std::vector<std::string>& values, JsonWriter& json) {
  json.BeginArray();
  for (const std::string& value : values) json.String(value);
  json.EndArray();
}

void WriteInts(const std::vector<int64_t>& values, JsonWriter& json) {
  json.BeginArray();
  for (const int64_t value : values) json.Int(value);
  json.EndArray();
}

// {"NAME": [DIMS...]} for --input-shape and --tensor-shape.
void WriteShapeBindings(const std::map<std::string, std::vector<int64_t>>& shapes, JsonWriter& json) {
  json.BeginObject();
  for (const auto& [name, dims] : shapes) {
    json.Key(name);
    WriteInts(dims, json);
  }
  json.EndObject();
}

// ONNX names the default domain "" or "ai.onnx"; the report calls it
// "ai.onnx", once. A model that lists both gets one key, in the first place
// ("" sorts first), with the version listed under "ai.onnx".
void WriteOpsets(const std::map<std::string, int64_t>& opsets, JsonWriter& json) {
  const auto named_default = opsets.find("ai.onnx");
  const bool has_empty_default = opsets.contains("");
  json.BeginObject();
  for (const auto& [domain, version] : opsets) {
    if (domain.empty()) {
      json.Key("ai.onnx").Int(named_default != opsets.end() ? named_default->second : version);
    } else if (domain != "ai.onnx" || !has_empty_default) {
      json.Key(domain).Int(version);
    }
  }
  json.EndObject();
}

void WriteTensor(const TensorRecord& tensor, JsonWriter& json) {
  json.BeginObject();
  json.Key("name").String(tensor.name);
  json.Key("role").String(TensorRoleName(tensor.role));
  json.Key("dtype").String(tensor.dtype);
  json.Key("shape");
  WriteShape(tensor.shape, json);
  json.Key("bytes");
  WriteIntOrNull(tensor.bytes, json);
  json.Key("aligned_bytes");
  WriteIntOrNull(tensor.bytes.has_value() ? std::optional<int64_t>(tensor.aligned_bytes) : std::nullopt, json);
  json.Key("first_step").Int(tensor.first_step);
  json.Key("last_step").Int(tensor.last_step);
  json.Key("offset");
  WriteIntOrNull(tensor.offset, json);
  json.Key("producer").String(tensor.producer);
  json.Key("tier");
  WriteStringOrNull(tensor.tier, json);
  json.Key("tier_offset");
  WriteIntOrNull(tensor.tier_offset, json);
  json.Key("shares_with");
  WriteStringOrNull(tensor.shares_with, json);
  json.Key("sharing");
  WriteStringOrNull(tensor.sharing, json);
  if (!tensor.bytes.has_value()) json.Key("unsized_reason").String(tensor.unsized_reason);
  if (!tensor.bytes_expr.empty()) json.Key("bytes_expr").String(tensor.bytes_expr);
  if (!tensor.bound.empty()) json.Key("bound").String(tensor.bound);
  json.EndObject();
}

void WriteWeight(const WeightRecord& weight, JsonWriter& json) {
  json.BeginObject();
  json.Key("name").String(weight.name);
  json.Key("dtype").String(weight.dtype);
  json.Key("shape");
  WriteShape(weight.shape, json);
  json.Key("bytes");
  WriteIntOrNull(weight.bytes, json);
  json.Key("source").String(weight.folded ? "folded" : weight.from_constant_node ? "constant" : "initializer");
  if (!weight.graph.empty()) json.Key("graph").String(weight.graph);
  json.EndObject();
}

void WriteTier(const TierSummary& tier, JsonWriter& json) {
  json.BeginObject();
  json.Key("name").String(tier.name);
  json.Key("capacity_bytes");
  WriteIntOrNull(tier.capacity_bytes, json);
  json.Key("arena_bytes").Int(tier.arena_bytes);
  json.Key("weights_bytes").Int(tier.weights_bytes);
  json.Key("arena_limit_bytes");
  WriteIntOrNull(tier.arena_limit_bytes, json);
  json.Key("alignment_bytes").Int(tier.alignment_bytes);
  json.Key("tensors").Int(tier.tensors);
  json.Key("holds_weights").Bool(tier.holds_weights);
  json.Key("holds_activations").Bool(tier.holds_activations);
  json.Key("proven_optimal").Bool(tier.proven_optimal);
  json.EndObject();
}

void WriteMemory(const Analysis& analysis, JsonWriter& json) {
  const MemoryFigures& memory = analysis.memory;
  json.BeginObject();
  json.Key("weights_bytes").Int(memory.weights_bytes);
  json.Key("folded_weights_bytes").Int(memory.folded_weights_bytes);
  json.Key("arena_bytes").Int(memory.arena_bytes);
  json.Key("workspace_bytes").Int(memory.workspace_bytes);
  json.Key("runtime_tensor_bytes").Int(memory.runtime_tensor_bytes);
  json.Key("runtime_overhead_bytes").Int(memory.runtime_overhead_bytes);
  if (!analysis.options.runtime.empty()) {  // Reports without --runtime stay as they were.
    json.Key("runtime_reserved_bytes").Int(memory.runtime_reserved_bytes);
    json.Key("runtime_weights_bytes").Int(memory.runtime_weights_bytes);
    json.Key("runtime_peak_follows").String(memory.runtime_peak_follows);
    json.Key("runtime_run_peak_bytes").Int(memory.runtime_run_peak_bytes);
    json.Key("runtime_load_peak_bytes").Int(memory.runtime_load_peak_bytes);
    json.Key("runtime_load_peak_step").String(memory.runtime_load_peak_step);
    json.Key("runtime_mapped_weights_bytes").Int(memory.runtime_mapped_weights_bytes);
    json.Key("runtime_peak_phase").String(memory.runtime_peak_phase);
  }
  json.Key("lower_bound_bytes").Int(memory.lower_bound_bytes);
  json.Key("naive_bytes").Int(memory.naive_bytes);
  json.Key("reuse_savings_bytes").Int(memory.reuse_savings_bytes);
  json.Key("reuse_savings_percent").Double(ReuseSavingsPercent(memory));
  json.Key("peak_bytes").Int(memory.peak_bytes);
  json.Key("unsized_tensors").Int(memory.unsized_tensors);
  if (const int64_t bound = BoundTensorCount(analysis); bound > 0) json.Key("bound_tensors").Int(bound);
  json.Key("complete").Bool(memory.complete);
  json.Key("baseline").BeginObject();
  json.Key("lower_bound_bytes").Int(analysis.modes.baseline_lower_bound_bytes);
  json.EndObject();
  json.Key("tiers").BeginArray();
  for (const TierSummary& tier : analysis.tiers) WriteTier(tier, json);
  json.EndArray();
  if (analysis.symbolic_memory.has_value()) {
    const SymbolicMemory& symbolic = *analysis.symbolic_memory;
    json.Key("symbols");
    WriteStrings(symbolic.symbols, json);
    // "" is a formula too large to print.
    json.Key("naive_expr");
    WriteStringOrNull(symbolic.naive_expr, json);
    json.Key("lower_bound_expr");
    WriteStringOrNull(symbolic.lower_bound_expr, json);
    json.Key("peak_lower_bound_expr");
    WriteStringOrNull(symbolic.peak_lower_bound_expr, json);
    json.Key("peak_upper_bound_expr");
    WriteStringOrNull(symbolic.peak_upper_bound_expr, json);
    if (symbolic.tensors_without_formula > 0) json.Key("tensors_without_formula").Int(symbolic.tensors_without_formula);
  }
  json.EndObject();
}

void WriteModes(const ModesSummary& modes, JsonWriter& json) {
  json.BeginObject();
  json.Key("schedule").BeginObject();
  json.Key("name").String(modes.schedule.name);
  json.Key("algorithm").String(modes.schedule.algorithm);
  json.Key("proven_optimal").Bool(modes.schedule.proven_optimal);
  json.Key("lower_bound_bytes").Int(modes.schedule.lower_bound_bytes);
  json.Key("saved_bytes").Int(modes.schedule.saved_bytes);
  json.Key("seconds").Double(modes.schedule.seconds);
  json.EndObject();
  for (const auto& [key, mode] : {std::pair{"alias", &modes.alias}, std::pair{"inplace", &modes.inplace}}) {
    json.Key(key).BeginObject();
    json.Key("enabled").Bool(mode->enabled);
    json.Key("tensors").Int(mode->tensors);
    json.Key("lower_bound_bytes").Int(mode->lower_bound_bytes);
    json.Key("saved_bytes").Int(mode->saved_bytes);
    json.EndObject();
  }
  json.Key("accumulate").BeginObject();
  json.Key("enabled").Bool(modes.accumulate.enabled);
  json.Key("nodes").Int(modes.accumulate.nodes);
  json.EndObject();
  if (modes.qdq.enabled) {  // Only when on: --baseline and --no-qdq reports stay as they were.
    json.Key("qdq").BeginObject();
    json.Key("enabled").Bool(modes.qdq.enabled);
    json.Key("groups").Int(modes.qdq.groups);
    json.EndObject();
  }
  json.Key("runtime").BeginObject();  // What --runtime's rewrites did (all 0 without it).
  json.Key("fused_nodes").Int(modes.fused_nodes);
  json.Key("layout_nodes").Int(modes.layout_nodes);
  json.Key("reorder_nodes").Int(modes.reorder_nodes);
  // The ISA whose rules applied: only under --runtime, so that reports
  // without a runtime stay as they were.
  if (!modes.runtime_isa.empty()) json.Key("isa").String(modes.runtime_isa);
  json.EndObject();
  json.EndObject();
}

// The figures of one planned point (a sweep value, a sample binding), as
// members of the object being written.
void WritePointFigures(const MemoryFigures& memory, JsonWriter& json) {
  json.Key("peak_bytes").Int(memory.peak_bytes);
  json.Key("arena_bytes").Int(memory.arena_bytes);
  json.Key("lower_bound_bytes").Int(memory.lower_bound_bytes);
  json.Key("naive_bytes").Int(memory.naive_bytes);
  json.Key("unsized_tensors").Int(memory.unsized_tensors);
}

void WriteSweep(const SweepFigures& sweep, JsonWriter& json) {
  json.BeginObject();
  json.Key("dim").String(sweep.dim);
  json.Key("points").BeginArray();
  for (const SweepFigures::Point& point : sweep.points) {
    json.BeginObject();
    json.Key("value").Int(point.value);
    WritePointFigures(point.memory, json);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

}  // namespace

std::string RuntimeLabel(const Analysis& analysis) {
  const std::string& runtime = analysis.options.runtime;
  if (runtime.empty() || analysis.modes.runtime_isa.empty() || runtime.find(':') != std::string::npos) return runtime;
  return absl::StrCat(runtime, ":", analysis.modes.runtime_isa);
}

std::string RuntimePeakNote(const Analysis& analysis) {
  const MemoryFigures& memory = analysis.memory;
  if (memory.runtime_peak_phase == "session creation") {
    return absl::StrCat("at session creation (", memory.runtime_load_peak_step, "): runtime load peak; ",
                        memory.runtime_peak_follows);
  }
  return absl::StrCat(memory.runtime_peak_phase.empty() ? "" : "during the first run: ",
                      memory.runtime_peak_reserved ? "runtime weights + runtime reserved + inputs; "
                                                   : "runtime weights + runtime tensors + runtime overhead; ",
                      memory.runtime_peak_follows);
}

std::string RuntimeLoadPeakNote(const Analysis& analysis) {
  const MemoryFigures& memory = analysis.memory;
  return absl::StrCat("while creating the session from the file, highest at: ", memory.runtime_load_peak_step,
                      memory.runtime_peak_phase == "session creation" ? "; the peak" : "");
}

std::string DescribeModeSavings(const ModesSummary& modes) {
  const auto saved = [](int64_t bytes) { return bytes == 0 ? std::string("0 B") : "-" + HumanBytes(bytes); };
  return absl::StrCat("schedule ", modes.schedule.name, " ", saved(modes.schedule.saved_bytes), ", alias ",
                      modes.alias.enabled ? saved(modes.alias.saved_bytes) : "off", ", in-place ",
                      modes.inplace.enabled ? saved(modes.inplace.saved_bytes) : "off");
}

std::vector<const TensorRecord*> LargestTensors(const Analysis& analysis, size_t count) {
  std::vector<const TensorRecord*> largest;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.bytes.has_value()) largest.push_back(&tensor);
  }
  std::stable_sort(largest.begin(), largest.end(),
                   [](const TensorRecord* a, const TensorRecord* b) { return a->aligned_bytes > b->aligned_bytes; });
  if (largest.size() > count) largest.resize(count);
  return largest;
}

std::string DescribeUnboundDims(const Analysis& analysis) {
  return absl::StrJoin(analysis.unbound_dims, ", ", [](std::string* out, const UnboundDim& dim) {
    absl::StrAppend(out, dim.name, " (", absl::StrJoin(dim.uses, ", ", [](std::string* o, const UnboundDim::Use& use) {
                      absl::StrAppend(o, use.input, " axis ", use.axis);
                    }),
                    dim.stated ? absl::StrCat("; the model states ", dim.example) : "", ")");
  });
}

std::vector<std::string> BindingExamples(const Analysis& analysis) {
  if (analysis.unbound_dims.empty()) return {};
  const UnboundDim& first = analysis.unbound_dims.front();
  const int64_t base = first.example;
  return {absl::StrJoin(analysis.unbound_dims, " ",
                        [](std::string* out, const UnboundDim& dim) {
                          absl::StrAppend(out, "--dim ", dim.name, "=", dim.example);
                        }),
          "--dim-default 1",
          absl::StrCat("--sweep ", first.name, "=", base, ",", 2 * base, ",", 4 * base, ",", 8 * base)};
}

int64_t BoundTensorCount(const Analysis& analysis) {
  int64_t count = 0;
  for (const TensorRecord& tensor : analysis.tensors) count += tensor.bytes.has_value() && !tensor.bound.empty();
  return count;
}

bool WeightsKnown(const Analysis& analysis) {
  for (const WeightRecord& weight : analysis.weights) {
    if (!weight.bytes.has_value()) return false;
  }
  return true;
}

double ReuseSavingsPercent(const MemoryFigures& memory) {
  if (memory.naive_bytes == 0) return 0;
  return 100.0 * static_cast<double>(memory.reuse_savings_bytes) / static_cast<double>(memory.naive_bytes);
}

// `unbound_dims` and `binding_examples`, when some input dim has no value: first, before any figure.
void WriteUnboundDims(const Analysis& analysis, JsonWriter& json) {
  if (!analysis.unbound_dims.empty()) {
    json.Key("unbound_dims").BeginArray();
    for (const UnboundDim& dim : analysis.unbound_dims) {
      json.BeginObject();
      json.Key("name").String(dim.name);
      json.Key("uses").BeginArray();
      for (const UnboundDim::Use& use : dim.uses) {
        json.BeginObject();
        json.Key("input").String(use.input);
        json.Key("axis").Int(use.axis);
        json.EndObject();
      }
      json.EndArray();
      json.Key("example").Int(dim.example);
      json.Key("stated_by_model").Bool(dim.stated);
      json.EndObject();
    }
    json.EndArray();
    json.Key("binding_examples");
    WriteStrings(BindingExamples(analysis), json);
  }
}

// `model` and `device`.
void WriteModelAndDevice(const Analysis& analysis, JsonWriter& json) {
  json.Key("model").BeginObject();
  json.Key("path").String(analysis.model.path);
  json.Key("ir_version").Int(analysis.model.ir_version);
  json.Key("opsets");
  WriteOpsets(analysis.model.opsets, json);
  json.Key("nodes").Int(analysis.model.nodes);
  json.Key("producer").String(analysis.model.producer);
  json.EndObject();

  json.Key("device").BeginObject();
  json.Key("name").String(analysis.device.name);
  json.Key("alignment_bytes").Int(analysis.device.alignment_bytes);
  json.EndObject();
}

// `options`: the modes and bindings asked for.
void WriteOptions(const AnalyzeOptions& options, JsonWriter& json) {
  json.Key("options").BeginObject();
  json.Key("schedule").String(options.optimize_schedule ? "optimized" : "given");
  json.Key("alias").Bool(options.alias);
  json.Key("inplace").Bool(options.inplace);
  json.Key("fold").Bool(options.fold_constants);
  json.Key("accumulate").Bool(options.accumulate);
  if (options.qdq) json.Key("qdq").Bool(true);  // Absent when off, as in reports before the mode.
  json.Key("runtime");
  WriteStringOrNull(options.runtime, json);
  json.Key("dims").BeginObject();
  for (const auto& [name, value] : options.dims) json.Key(name).Int(value);
  json.EndObject();
  if (!options.input_shapes.empty()) {
    json.Key("input_shapes");
    WriteShapeBindings(options.input_shapes, json);
  }
  if (options.dim_default.has_value()) json.Key("dim_default").Int(*options.dim_default);
  if (!options.tensor_shapes.empty()) {
    json.Key("tensor_shapes");
    WriteShapeBindings(options.tensor_shapes, json);
  }
  if (!options.input_values.empty()) {
    json.Key("input_values").BeginObject();
    for (const auto& [name, value] : options.input_values) json.Key(name).String(value);
    json.EndObject();
  }
  json.EndObject();
}

// `samples`: the figures at sample bindings of unbound dims.
void WriteSamples(const Analysis& analysis, JsonWriter& json) {
  if (!analysis.samples.empty()) {
    json.Key("samples").BeginArray();
    for (const SampleFigures& sample : analysis.samples) {
      json.BeginObject();
      json.Key("dims").BeginObject();
      for (const auto& [name, value] : sample.dims) json.Key(name).Int(value);
      json.EndObject();
      json.Key("label").String(sample.label);
      WritePointFigures(sample.memory, json);
      json.EndObject();
    }
    json.EndArray();
  }
}

// `if_branches`: each If's branch taken, and by what.
void WriteIfBranches(const Analysis& analysis, JsonWriter& json) {
  if (!analysis.if_branches.empty()) {
    json.Key("if_branches").BeginArray();
    for (const IfBranch& branch : analysis.if_branches) {
      json.BeginObject();
      json.Key("node").String(branch.node);
      json.Key("branch").String(branch.branch);
      json.Key("decided_by");
      WriteStringOrNull(branch.decided_by, json);
      if (!branch.bound_branch.empty()) json.Key("bound_branch").String(branch.bound_branch);
      if (!branch.ruled_out.empty()) json.Key("ruled_out").String(branch.ruled_out);
      json.EndObject();
    }
    json.EndArray();
  }
}

// `budgets`: each --max-* check.
void WriteBudgets(const std::vector<BudgetCheck>& budgets, JsonWriter& json) {
  json.Key("budgets").BeginArray();
  for (const BudgetCheck& check : budgets) {
    json.BeginObject();
    json.Key("figure").String(check.figure);
    json.Key("limit_bytes").Int(check.limit_bytes);
    json.Key("actual_bytes").Int(check.actual_bytes);
    json.Key("ok").Bool(check.ok);
    json.EndObject();
  }
  json.EndArray();
}

void WriteAnalysisJsonMembers(const Analysis& analysis, JsonWriter& json) {
  json.Key("schema_version").Int(kJsonSchemaVersion);
  WriteUnboundDims(analysis, json);
  WriteModelAndDevice(analysis, json);
  WriteOptions(analysis.options, json);
  json.Key("memory");
  WriteMemory(analysis, json);

  json.Key("plan").BeginObject();
  json.Key("algorithm").String(analysis.plan.algorithm);
  json.Key("proven_optimal").Bool(analysis.plan.proven_optimal);
  json.Key("seconds").Double(analysis.plan.seconds);
  json.EndObject();

  json.Key("modes");
  WriteModes(analysis.modes, json);

  json.Key("tensors").BeginArray();
  for (const TensorRecord& tensor : analysis.tensors) WriteTensor(tensor, json);
  json.EndArray();
  json.Key("weights").BeginArray();
  for (const WeightRecord& weight : analysis.weights) WriteWeight(weight, json);
  json.EndArray();

  json.Key("schedule");
  WriteStrings(analysis.schedule, json);
  // The schedule printed is the file's order: valid as written, and kept by the optimizer.
  json.Key("schedule_is_file_order")
      .Bool(analysis.file_order_was_valid && analysis.modes.schedule.algorithm == "given");
  json.Key("live_bytes_per_step");
  WriteInts(analysis.live_bytes_per_step, json);
  if (analysis.sweep.has_value()) {
    json.Key("sweep");
    WriteSweep(*analysis.sweep, json);
  }
  WriteSamples(analysis, json);
  WriteIfBranches(analysis, json);
  json.Key("fits");
  if (analysis.fits.has_value()) {
    json.Bool(*analysis.fits);
  } else {
    json.Null();
  }
  json.Key("fits_reason").String(analysis.fits_reason);
  json.Key("spill_policy").String(analysis.spill_policy);
  json.Key("spilled_tensors").Int(analysis.spilled_tensors);
  json.Key("warnings");
  WriteStrings(analysis.warnings, json);
  json.Key("timings").BeginObject();
  for (const auto& [phase, seconds] : analysis.phase_seconds) json.Key(phase).Double(seconds);
  json.EndObject();
  WriteBudgets(analysis.budgets, json);
}

std::string RenderJson(const Analysis& analysis) {
  JsonWriter json;
  json.BeginObject();
  WriteAnalysisJsonMembers(analysis, json);
  json.EndObject();
  return std::move(json).Release() + "\n";
}

nlohmann::ordered_json AnalysisToJson(const Analysis& analysis) { return Json::parse(RenderJson(analysis)); }

}  // namespace footprint
