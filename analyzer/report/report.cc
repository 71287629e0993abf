#include "analyzer/report/report.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
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
  json.Key("lower_bound_bytes").Int(memory.lower_bound_bytes);
  json.Key("naive_bytes").Int(memory.naive_bytes);
  json.Key("reuse_savings_bytes").Int(memory.reuse_savings_bytes);
  json.Key("reuse_savings_percent").Double(ReuseSavingsPercent(memory));
  json.Key("peak_bytes").Int(memory.peak_bytes);
  json.Key("unsized_tensors").Int(memory.unsized_tensors);
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
  json.Key("runtime").BeginObject();  // What --runtime's rewrites did (all 0 without it).
  json.Key("fused_nodes").Int(modes.fused_nodes);
  json.Key("layout_nodes").Int(modes.layout_nodes);
  json.Key("reorder_nodes").Int(modes.reorder_nodes);
  json.EndObject();
  json.EndObject();
}

void WriteSweep(const SweepFigures& sweep, JsonWriter& json) {
  json.BeginObject();
  json.Key("dim").String(sweep.dim);
  json.Key("points").BeginArray();
  for (const SweepFigures::Point& point : sweep.points) {
    json.BeginObject();
    json.Key("value").Int(point.value);
    json.Key("peak_bytes").Int(point.memory.peak_bytes);
    json.Key("arena_bytes").Int(point.memory.arena_bytes);
    json.Key("lower_bound_bytes").Int(point.memory.lower_bound_bytes);
    json.Key("naive_bytes").Int(point.memory.naive_bytes);
    json.Key("unsized_tensors").Int(point.memory.unsized_tensors);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
}

// "  weights       1.23 MiB  (1,289,732 bytes)"
std::string FigureLine(const std::string& label, int64_t bytes, const std::string& note = "") {
  std::string exact = absl::StrCat(bytes);
  for (int i = static_cast<int>(exact.size()) - 3; i > 0; i -= 3) exact.insert(i, ",");
  return absl::StrFormat("  %-20s %12s  (%s bytes)%s\n", label, HumanBytes(bytes), exact, note);
}

}  // namespace

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

double ReuseSavingsPercent(const MemoryFigures& memory) {
  if (memory.naive_bytes == 0) return 0;
  return 100.0 * static_cast<double>(memory.reuse_savings_bytes) / static_cast<double>(memory.naive_bytes);
}

void WriteAnalysisJsonMembers(const Analysis& analysis, JsonWriter& json) {
  json.Key("schema_version").Int(kJsonSchemaVersion);

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

  const AnalyzeOptions& options = analysis.options;
  json.Key("options").BeginObject();
  json.Key("schedule").String(options.optimize_schedule ? "optimized" : "given");
  json.Key("alias").Bool(options.alias);
  json.Key("inplace").Bool(options.inplace);
  json.Key("fold").Bool(options.fold_constants);
  json.Key("accumulate").Bool(options.accumulate);
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
  if (!analysis.dim_default_conflict.empty()) json.Key("dim_default_conflict").String(analysis.dim_default_conflict);
  if (!analysis.if_branches.empty()) {
    json.Key("if_branches").BeginArray();
    for (const IfBranch& branch : analysis.if_branches) {
      json.BeginObject();
      json.Key("node").String(branch.node);
      json.Key("branch").String(branch.branch);
      json.Key("decided_by");
      WriteStringOrNull(branch.decided_by, json);
      json.EndObject();
    }
    json.EndArray();
  }
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
  json.Key("budgets").BeginArray();
  for (const BudgetCheck& check : analysis.budgets) {
    json.BeginObject();
    json.Key("figure").String(check.figure);
    json.Key("limit_bytes").Int(check.limit_bytes);
    json.Key("actual_bytes").Int(check.actual_bytes);
    json.Key("ok").Bool(check.ok);
    json.EndObject();
  }
  json.EndArray();
}

std::string RenderJson(const Analysis& analysis) {
  JsonWriter json;
  json.BeginObject();
  WriteAnalysisJsonMembers(analysis, json);
  json.EndObject();
  return std::move(json).Release() + "\n";
}

nlohmann::ordered_json AnalysisToJson(const Analysis& analysis) { return Json::parse(RenderJson(analysis)); }

std::string RenderText(const Analysis& analysis) {
  std::string out;
  const MemoryFigures& memory = analysis.memory;
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : analysis.model.opsets) {
    opsets.push_back(absl::StrCat(domain.empty() ? "ai.onnx" : domain, " ", version));
  }
  absl::StrAppend(&out, "onnx-footprint: ", analysis.model.path, "\n");
  if (!analysis.dim_default_conflict.empty()) absl::StrAppend(&out, "  NOTE    ", analysis.dim_default_conflict, "\n");
  absl::StrAppend(&out, "  model   ", analysis.model.nodes, " nodes, IR ", analysis.model.ir_version, ", opsets ",
                  absl::StrJoin(opsets, ", "),
                  analysis.model.producer.empty() ? "" : absl::StrCat(", from ", analysis.model.producer), "\n");
  absl::StrAppend(&out, "  device  ", analysis.device.name, " (alignment ", analysis.device.alignment_bytes,
                  " B)\n");
  std::vector<std::string> dims;
  for (const auto& [name, value] : analysis.options.dims) dims.push_back(absl::StrCat(name, "=", value));
  for (const auto& [name, shape] : analysis.options.input_shapes) {
    dims.push_back(absl::StrCat(name, "=", shape.empty() ? "scalar" : absl::StrJoin(shape, "x")));
  }
  if (analysis.options.dim_default.has_value()) dims.push_back(absl::StrCat("others=", *analysis.options.dim_default));
  for (const auto& [name, value] : analysis.options.input_values) dims.push_back(absl::StrCat(name, "=", value));
  absl::StrAppend(&out, "  mode    schedule ", analysis.options.optimize_schedule ? "optimized" : "given",
                  analysis.file_order_was_valid ? ""
                  : analysis.modes.accumulate.nodes + analysis.modes.fused_nodes + analysis.modes.reorder_nodes > 0
                      ? " (sorted topologically after the fusions)"
                      : " (file order sorted topologically)",
                  ", fold ", analysis.options.fold_constants ? "on" : "off", ", accumulate ",
                  !analysis.modes.accumulate.enabled ? std::string("off")
                                                     : absl::StrCat("on (", analysis.modes.accumulate.nodes, " Conv+Add)"),
                  ", alias ", analysis.options.alias ? "on" : "off", ", in-place ",
                  !analysis.options.inplace           ? "off"
                  : analysis.modes.inplace.enabled ? "on"
                                                   : "off (the device does not allow it)", dims.empty() ? "" : ", dims " + absl::StrJoin(dims, " "),
                  "\n");
  if (!analysis.if_branches.empty()) {
    // Which branch each If takes: bound values decide them (--input-value).
    constexpr size_t kShown = 4;
    std::vector<std::string> ifs;
    for (size_t i = 0; i < analysis.if_branches.size() && i < kShown; ++i) {
      const IfBranch& branch = analysis.if_branches[i];
      ifs.push_back(absl::StrCat(branch.node, ": ", branch.branch,
                                 branch.decided_by.empty() ? "" : absl::StrCat(" (", branch.decided_by, ")")));
    }
    if (analysis.if_branches.size() > kShown) ifs.push_back(absl::StrCat("+", analysis.if_branches.size() - kShown, " more"));
    absl::StrAppend(&out, "  if      ", absl::StrJoin(ifs, "; "), "\n");
  }
  absl::StrAppend(&out, "\n");

  absl::StrAppend(&out, memory.complete ? "Memory\n" : "Memory (INCOMPLETE: see the unsized tensors below)\n");
  absl::StrAppend(&out, FigureLine("peak", memory.peak_bytes,
                                   !analysis.options.runtime.empty()  ? "  = weights + folded + runtime tensors + runtime overhead"
                                   : analysis.options.fold_constants ? "  = weights + folded + arena"
                                                                     : "  = weights + arena"));
  absl::StrAppend(&out, FigureLine("weights", memory.weights_bytes));
  if (analysis.options.fold_constants) {
    absl::StrAppend(&out, FigureLine("folded weights", memory.folded_weights_bytes,
                                     absl::StrCat("  ", analysis.modes.fold.nodes, " nodes evaluated at load")));
  }
  absl::StrAppend(&out, FigureLine("arena", memory.arena_bytes,
                                   absl::StrFormat("  %s, %s", analysis.plan.algorithm,
                                                   analysis.plan.proven_optimal ? "optimal" : "not proven optimal")));
  if (!analysis.options.runtime.empty()) {
    absl::StrAppend(&out, FigureLine("kernel workspaces", memory.workspace_bytes,
                                     absl::StrCat("  in the arena; runtime ", analysis.options.runtime, ", ",
                                                  analysis.modes.fused_nodes, " nodes fused, ",
                                                  analysis.modes.layout_nodes, " in NCHWc, ",
                                                  analysis.modes.reorder_nodes, " reorders")));
    absl::StrAppend(&out, FigureLine("runtime tensors", memory.runtime_tensor_bytes,
                                     absl::StrCat("  ", analysis.options.runtime,
                                                  "'s own planner at its worst step; in the peak")));
    absl::StrAppend(&out, FigureLine("runtime overhead", memory.runtime_overhead_bytes,
                                     "  held by the runtime during a run, no tensor; in the peak"));
  }
  const double ratio = memory.lower_bound_bytes == 0
                           ? 1.0
                           : static_cast<double>(memory.arena_bytes) / static_cast<double>(memory.lower_bound_bytes);
  absl::StrAppend(&out, FigureLine("lower bound", memory.lower_bound_bytes,
                                   absl::StrFormat("  arena is %.3fx the bound", ratio)));
  absl::StrAppend(&out, FigureLine("no reuse (naive)", memory.naive_bytes));
  absl::StrAppend(&out, FigureLine("reuse savings", memory.reuse_savings_bytes,
                                   absl::StrFormat("  %.1f%% of naive", ReuseSavingsPercent(memory))));
  if (memory.unsized_tensors > 0) {
    absl::StrAppend(&out, absl::StrFormat("  %-20s %12d\n", "unsized tensors", memory.unsized_tensors));
  }

  if (analysis.symbolic_memory.has_value()) {
    const SymbolicMemory& symbolic = *analysis.symbolic_memory;
    absl::StrAppend(&out, "\nMemory as formulas in the unbound dims (", absl::StrJoin(symbolic.symbols, ", "),
                    "; the planned arena needs values: --dim or --sweep)\n");
    auto line = [&](const std::string& label, const std::string& expr) {
      absl::StrAppend(&out, absl::StrFormat("  %-20s %s\n", label, expr.empty() ? "(too many cases; see --sweep)" : expr));
    };
    line("peak >=", symbolic.peak_lower_bound_expr);
    line("peak <=", symbolic.peak_upper_bound_expr);
    line("lower bound", symbolic.lower_bound_expr);
    line("no reuse (naive)", symbolic.naive_expr);
  }
  // Each mode's lower bound, applied in order, next to the baseline's.
  const ModesSummary& modes = analysis.modes;
  const auto saved = [](int64_t bytes, int64_t before) {
    if (bytes == 0) return std::string();
    return absl::StrFormat("  -%s (%.1f%%)", HumanBytes(bytes),
                           before == 0 ? 0.0 : 100.0 * static_cast<double>(bytes) / static_cast<double>(before));
  };
  absl::StrAppend(&out, "\nModes (lower bound after each)\n");
  absl::StrAppend(&out, FigureLine("baseline", modes.baseline_lower_bound_bytes, "  given order, no sharing"));
  absl::StrAppend(&out, FigureLine(absl::StrCat("schedule ", modes.schedule.name), modes.schedule.lower_bound_bytes,
                                   absl::StrCat(saved(modes.schedule.saved_bytes, modes.baseline_lower_bound_bytes),
                                                modes.schedule.name == "optimized"
                                                    ? absl::StrFormat("  %s, %s, %.3f s", modes.schedule.algorithm,
                                                                      modes.schedule.proven_optimal
                                                                          ? "optimal"
                                                                          : "not proven optimal",
                                                                      modes.schedule.seconds)
                                                    : "")));
  for (const auto& [label, mode, before] :
       {std::tuple{"alias", &modes.alias, modes.schedule.lower_bound_bytes},
        std::tuple{"in-place", &modes.inplace, modes.alias.lower_bound_bytes}}) {
    if (!mode->enabled) {
      absl::StrAppend(&out, absl::StrFormat("  %-20s %12s\n", absl::StrCat(label, " off"), "-"));
      continue;
    }
    absl::StrAppend(&out, FigureLine(absl::StrCat("+ ", label), mode->lower_bound_bytes,
                                     absl::StrCat(saved(mode->saved_bytes, before), "  ", mode->tensors,
                                                  mode->tensors == 1 ? " tensor shares" : " tensors share",
                                                  " bytes")));
  }

  const std::vector<const TensorRecord*> largest = LargestTensors(analysis, 10);
  if (!largest.empty()) {
    absl::StrAppend(&out, "\nLargest arena tensors\n");
    absl::StrAppend(&out, absl::StrFormat("  %-32s %-10s %-20s %10s %11s %12s\n", "name", "dtype", "shape", "size",
                                          "steps", "offset"));
    for (const TensorRecord* tensor : largest) {
      std::string name = tensor->name;
      if (name.size() > 32) name = name.substr(0, 29) + "...";
      std::string shape = ShapeToString(tensor->shape);
      if (shape.size() > 20) shape = shape.substr(0, 17) + "...";
      absl::StrAppend(&out, absl::StrFormat("  %-32s %-10s %-20s %10s %11s %12d\n", name, tensor->dtype, shape,
                                            HumanBytes(tensor->aligned_bytes),
                                            absl::StrCat(tensor->first_step, "-", tensor->last_step),
                                            tensor->offset.value_or(0)));
    }
  }
  if (const int64_t sharing = analysis.modes.alias.tensors + analysis.modes.inplace.tensors; sharing > 0) {
    absl::StrAppend(&out, "  ", sharing, sharing == 1 ? " tensor shares" : " tensors share",
                    " the bytes of an earlier tensor at its offset (see \"shares_with\" in --format json)\n");
  }
  int listed_unsized = 0;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.bytes.has_value()) continue;
    if (listed_unsized == 0) absl::StrAppend(&out, "\nUnsized tensors (not counted in the arena)\n");
    if (++listed_unsized > 20) continue;
    absl::StrAppend(&out, "  ", tensor.name, "  ", tensor.dtype, " ", ShapeToString(tensor.shape), "  ",
                    tensor.bytes_expr.empty() ? tensor.unsized_reason : absl::StrCat(tensor.bytes_expr, " bytes"),
                    "\n");
  }
  if (listed_unsized > 20) absl::StrAppend(&out, "  ... and ", listed_unsized - 20, " more (see --format json)\n");
  for (const WeightRecord& weight : analysis.weights) {
    if (weight.bytes.has_value()) continue;
    absl::StrAppend(&out, "  weight ", weight.name, "  ", weight.dtype, "  no byte size\n");
  }
  if (!analysis.warnings.empty()) {
    absl::StrAppend(&out, "\nWarnings\n");
    for (const std::string& warning : analysis.warnings) absl::StrAppend(&out, "  - ", warning, "\n");
  }
  if (analysis.sweep.has_value()) {
    absl::StrAppend(&out, "\nSweep of ", analysis.sweep->dim, " (planned at each value)\n",
                    absl::StrFormat("  %12s %12s %12s %12s %12s %8s\n", analysis.sweep->dim, "peak", "arena",
                                    "lower bound", "naive", "unsized"));
    for (const SweepFigures::Point& point : analysis.sweep->points) {
      absl::StrAppend(&out, absl::StrFormat("  %12d %12s %12s %12s %12s %8d\n", point.value,
                                            HumanBytes(point.memory.peak_bytes), HumanBytes(point.memory.arena_bytes),
                                            HumanBytes(point.memory.lower_bound_bytes),
                                            HumanBytes(point.memory.naive_bytes), point.memory.unsized_tensors));
    }
  }
  if (!analysis.tiers.empty()) {
    absl::StrAppend(&out, "\nMemory tiers of ", analysis.device.name, "\n");
    absl::StrAppend(&out, absl::StrFormat("  %-14s %12s %12s %12s %8s\n", "tier", "capacity", "activations",
                                          "weights", "tensors"));
    for (const TierSummary& tier : analysis.tiers) {
      absl::StrAppend(&out, absl::StrFormat("  %-14s %12s %12s %12s %8d\n", tier.name,
                                            tier.capacity_bytes.has_value() ? HumanBytes(*tier.capacity_bytes) : "?",
                                            tier.holds_activations ? HumanBytes(tier.arena_bytes) : "-",
                                            tier.holds_weights ? HumanBytes(tier.weights_bytes) : "-", tier.tensors));
    }
    if (analysis.spilled_tensors > 0) {
      absl::StrAppend(&out, "  ", analysis.spilled_tensors, " buffers (a tensor, or tensors sharing bytes) spilled past the first tier (policy ",
                      analysis.spill_policy, ")\n");
    }
  }
  if (!analysis.budgets.empty()) {
    absl::StrAppend(&out, "\nBudgets", memory.complete ? "" : " (figures incomplete: the true sizes may be larger)",
                    "\n");
    for (const BudgetCheck& check : analysis.budgets) {
      absl::StrAppend(&out, absl::StrFormat("  %-8s %12s of %-12s %s\n", check.figure, HumanBytes(check.actual_bytes),
                                            HumanBytes(check.limit_bytes), check.ok ? "ok" : "EXCEEDED"));
    }
  }
  absl::StrAppend(&out, "\nFits on ", analysis.device.name, ": ",
                  !analysis.fits.has_value() ? "unknown" : (*analysis.fits ? "yes" : "NO"),
                  analysis.fits_reason.empty()
                      ? ""
                      : absl::StrCat(" (", absl::StripPrefix(analysis.fits_reason, "unknown: "), ")"),
                  "\n");
  return out;
}

}  // namespace footprint
