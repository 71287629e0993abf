#include "analyzer/report.h"

#include <algorithm>
#include <numeric>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "analyzer/tensor_size.h"

namespace footprint {
namespace {

using Json = nlohmann::ordered_json;

Json ShapeToJson(const std::optional<std::vector<Dim>>& shape) {
  if (!shape.has_value()) return nullptr;
  Json dims = Json::array();
  for (const Dim& dim : *shape) {
    if (dim.value.has_value()) {
      dims.push_back(*dim.value);
    } else if (!dim.symbol.empty()) {
      dims.push_back(dim.symbol);
    } else {
      dims.push_back(nullptr);
    }
  }
  return dims;
}

template <typename T>
Json OptionalToJson(const std::optional<T>& value) {
  if (!value.has_value()) return nullptr;
  return *value;
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

nlohmann::ordered_json AnalysisToJson(const Analysis& analysis) {
  Json json;
  json["schema_version"] = kJsonSchemaVersion;
  Json opsets = Json::object();
  for (const auto& [domain, version] : analysis.model.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
  json["model"] = {{"path", analysis.model.path},
                   {"ir_version", analysis.model.ir_version},
                   {"opsets", opsets},
                   {"nodes", analysis.model.nodes},
                   {"producer", analysis.model.producer}};
  json["device"] = {{"name", analysis.device.name}, {"alignment_bytes", analysis.device.alignment_bytes}};
  Json dims = Json::object();
  for (const auto& [name, value] : analysis.options.dims) dims[name] = value;
  json["options"] = {{"schedule", analysis.options.optimize_schedule ? "optimized" : "given"},
                     {"alias", analysis.options.alias},
                     {"inplace", analysis.options.inplace},
                     {"dims", dims}};
  if (!analysis.options.input_shapes.empty()) json["options"]["input_shapes"] = analysis.options.input_shapes;
  if (analysis.options.dim_default.has_value()) json["options"]["dim_default"] = *analysis.options.dim_default;
  if (!analysis.options.tensor_shapes.empty()) json["options"]["tensor_shapes"] = analysis.options.tensor_shapes;
  const MemoryFigures& memory = analysis.memory;
  json["memory"] = {{"weights_bytes", memory.weights_bytes},
                    {"arena_bytes", memory.arena_bytes},
                    {"lower_bound_bytes", memory.lower_bound_bytes},
                    {"naive_bytes", memory.naive_bytes},
                    {"reuse_savings_bytes", memory.reuse_savings_bytes},
                    {"reuse_savings_percent", ReuseSavingsPercent(memory)},
                    {"peak_bytes", memory.peak_bytes},
                    {"unsized_tensors", memory.unsized_tensors},
                    {"complete", memory.complete},
                    {"baseline", {{"lower_bound_bytes", analysis.modes.baseline_lower_bound_bytes}}}};
  Json tiers = Json::array();
  for (const TierSummary& tier : analysis.tiers) {
    tiers.push_back({{"name", tier.name},
                     {"capacity_bytes", OptionalToJson(tier.capacity_bytes)},
                     {"arena_bytes", tier.arena_bytes},
                     {"weights_bytes", tier.weights_bytes},
                     {"arena_limit_bytes", OptionalToJson(tier.arena_limit_bytes)},
                     {"alignment_bytes", tier.alignment_bytes},
                     {"tensors", tier.tensors},
                     {"holds_weights", tier.holds_weights},
                     {"holds_activations", tier.holds_activations},
                     {"proven_optimal", tier.proven_optimal}});
  }
  json["memory"]["tiers"] = std::move(tiers);
  if (analysis.symbolic_memory.has_value()) {
    const SymbolicMemory& symbolic = *analysis.symbolic_memory;
    auto or_null = [](const std::string& expr) { return expr.empty() ? Json(nullptr) : Json(expr); };
    json["memory"]["symbols"] = symbolic.symbols;
    json["memory"]["naive_expr"] = or_null(symbolic.naive_expr);
    json["memory"]["lower_bound_expr"] = or_null(symbolic.lower_bound_expr);
    json["memory"]["peak_lower_bound_expr"] = or_null(symbolic.peak_lower_bound_expr);
    json["memory"]["peak_upper_bound_expr"] = or_null(symbolic.peak_upper_bound_expr);
  }
  json["plan"] = {{"algorithm", analysis.plan.algorithm},
                  {"proven_optimal", analysis.plan.proven_optimal},
                  {"seconds", analysis.plan.seconds}};
  const ModesSummary& modes = analysis.modes;
  json["modes"] = {
      {"schedule",
       {{"name", modes.schedule.name},
        {"algorithm", modes.schedule.algorithm},
        {"proven_optimal", modes.schedule.proven_optimal},
        {"lower_bound_bytes", modes.schedule.lower_bound_bytes},
        {"saved_bytes", modes.schedule.saved_bytes},
        {"seconds", modes.schedule.seconds}}},
      {"alias",
       {{"enabled", modes.alias.enabled},
        {"tensors", modes.alias.tensors},
        {"lower_bound_bytes", modes.alias.lower_bound_bytes},
        {"saved_bytes", modes.alias.saved_bytes}}},
      {"inplace",
       {{"enabled", modes.inplace.enabled},
        {"tensors", modes.inplace.tensors},
        {"lower_bound_bytes", modes.inplace.lower_bound_bytes},
        {"saved_bytes", modes.inplace.saved_bytes}}}};
  Json tensors = Json::array();
  for (const TensorRecord& tensor : analysis.tensors) {
    Json entry = {{"name", tensor.name},
                  {"role", TensorRoleName(tensor.role)},
                  {"dtype", tensor.dtype},
                  {"shape", ShapeToJson(tensor.shape)},
                  {"bytes", OptionalToJson(tensor.bytes)},
                  {"aligned_bytes", tensor.bytes.has_value() ? Json(tensor.aligned_bytes) : Json(nullptr)},
                  {"first_step", tensor.first_step},
                  {"last_step", tensor.last_step},
                  {"offset", OptionalToJson(tensor.offset)},
                  {"producer", tensor.producer},
                  {"tier", tensor.tier.empty() ? Json(nullptr) : Json(tensor.tier)},
                  {"tier_offset", OptionalToJson(tensor.tier_offset)},
                  {"shares_with", tensor.shares_with.empty() ? Json(nullptr) : Json(tensor.shares_with)},
                  {"sharing", tensor.sharing.empty() ? Json(nullptr) : Json(tensor.sharing)}};
    if (!tensor.bytes.has_value()) entry["unsized_reason"] = tensor.unsized_reason;
    if (!tensor.bytes_expr.empty()) entry["bytes_expr"] = tensor.bytes_expr;
    tensors.push_back(std::move(entry));
  }
  json["tensors"] = std::move(tensors);
  Json weights = Json::array();
  for (const WeightRecord& weight : analysis.weights) {
    Json entry = {{"name", weight.name},
                  {"dtype", weight.dtype},
                  {"shape", ShapeToJson(weight.shape)},
                  {"bytes", OptionalToJson(weight.bytes)},
                  {"source", weight.from_constant_node ? "constant" : "initializer"}};
    if (!weight.graph.empty()) entry["graph"] = weight.graph;
    weights.push_back(std::move(entry));
  }
  json["weights"] = std::move(weights);
  json["schedule"] = analysis.schedule;
  // The schedule printed is the file's order: valid as written, and kept by the optimizer.
  json["schedule_is_file_order"] = analysis.file_order_was_valid && analysis.modes.schedule.algorithm == "given";
  json["live_bytes_per_step"] = analysis.live_bytes_per_step;
  if (analysis.sweep.has_value()) {
    Json points = Json::array();
    for (const SweepFigures::Point& point : analysis.sweep->points) {
      points.push_back({{"value", point.value},
                        {"peak_bytes", point.memory.peak_bytes},
                        {"arena_bytes", point.memory.arena_bytes},
                        {"lower_bound_bytes", point.memory.lower_bound_bytes},
                        {"naive_bytes", point.memory.naive_bytes},
                        {"unsized_tensors", point.memory.unsized_tensors}});
    }
    json["sweep"] = {{"dim", analysis.sweep->dim}, {"points", std::move(points)}};
  }
  json["fits"] = OptionalToJson(analysis.fits);
  json["fits_reason"] = analysis.fits_reason;
  json["spill_policy"] = analysis.spill_policy;
  json["spilled_tensors"] = analysis.spilled_tensors;
  json["warnings"] = analysis.warnings;
  json["timings"] = analysis.phase_seconds;
  Json budgets = Json::array();
  for (const BudgetCheck& check : analysis.budgets) {
    budgets.push_back({{"figure", check.figure},
                       {"limit_bytes", check.limit_bytes},
                       {"actual_bytes", check.actual_bytes},
                       {"ok", check.ok}});
  }
  json["budgets"] = std::move(budgets);
  return json;
}

std::string RenderJson(const Analysis& analysis) {
  // Names come from the model file: invalid UTF-8 is replaced, not thrown on.
  return AnalysisToJson(analysis).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string RenderText(const Analysis& analysis) {
  std::string out;
  const MemoryFigures& memory = analysis.memory;
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : analysis.model.opsets) {
    opsets.push_back(absl::StrCat(domain.empty() ? "ai.onnx" : domain, " ", version));
  }
  absl::StrAppend(&out, "onnx-footprint: ", analysis.model.path, "\n");
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
  absl::StrAppend(&out, "  mode    schedule ", analysis.options.optimize_schedule ? "optimized" : "given",
                  analysis.file_order_was_valid ? "" : " (file order sorted topologically)",
                  ", alias ", analysis.options.alias ? "on" : "off", ", in-place ",
                  !analysis.options.inplace           ? "off"
                  : analysis.modes.inplace.enabled ? "on"
                                                   : "off (the device does not allow it)", dims.empty() ? "" : ", dims " + absl::StrJoin(dims, " "),
                  "\n\n");

  absl::StrAppend(&out, memory.complete ? "Memory\n" : "Memory (INCOMPLETE: see the unsized tensors below)\n");
  absl::StrAppend(&out, FigureLine("peak", memory.peak_bytes, "  = weights + arena"));
  absl::StrAppend(&out, FigureLine("weights", memory.weights_bytes));
  absl::StrAppend(&out, FigureLine("arena", memory.arena_bytes,
                                   absl::StrFormat("  %s, %s", analysis.plan.algorithm,
                                                   analysis.plan.proven_optimal ? "optimal" : "not proven optimal")));
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
