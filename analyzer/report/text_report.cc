// RenderText (report.h): the report for people at a terminal.
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "analyzer/report/format.h"
#include "analyzer/report/report.h"

namespace footprint {
namespace {

// "  weights       1.23 MiB  (1,289,732 bytes)"; a figure summing unsized
// tensors is the lower bound it is ("  arena   >= 1.23 MiB  (lower bound:
// 1,289,732 bytes)") or, when nothing of it is sized, "unknown".
std::string FigureLine(const std::string& label, int64_t bytes, const std::string& note = "", bool known = true) {
  std::string exact = absl::StrCat(bytes);
  for (int i = static_cast<int>(exact.size()) - 3; i > 0; i -= 3) exact.insert(i, ",");
  if (!known && bytes == 0) return absl::StrFormat("  %-20s %12s  (no tensor of it sized)%s\n", label, "unknown", note);
  if (!known) return absl::StrFormat("  %-20s %12s  (lower bound: %s bytes)%s\n", label, HumanBytesOrBound(bytes, false), exact, note);
  return absl::StrFormat("  %-20s %12s  (%s bytes)%s\n", label, HumanBytes(bytes), exact, note);
}

// The model, the device and the modes; first of all, the dims with no value.
void AppendHeader(const Analysis& analysis, std::string* out) {
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : analysis.model.opsets) {
    opsets.push_back(absl::StrCat(domain.empty() ? "ai.onnx" : domain, " ", version));
  }
  absl::StrAppend(out, "onnx-footprint: ", analysis.model.path, "\n");
  if (!analysis.unbound_dims.empty()) {
    // First, before any figure: which dims have no value, and how to give them one.
    absl::StrAppend(out, "  UNBOUND ", DescribeUnboundDims(analysis),
                    ": no value, so the sizes that use them are formulas, not counted in the figures\n",
                    "  bind    ", absl::StrJoin(BindingExamples(analysis), "  or  "), "\n");
  }
  absl::StrAppend(out, "  model   ", analysis.model.nodes, " nodes, IR ", analysis.model.ir_version, ", opsets ",
                  absl::StrJoin(opsets, ", "),
                  analysis.model.producer.empty() ? "" : absl::StrCat(", from ", analysis.model.producer), "\n");
  absl::StrAppend(out, "  device  ", analysis.device.name, " (alignment ", analysis.device.alignment_bytes,
                  " B)\n");
  std::vector<std::string> dims;
  for (const auto& [name, value] : analysis.options.dims) dims.push_back(absl::StrCat(name, "=", value));
  for (const auto& [name, shape] : analysis.options.input_shapes) {
    dims.push_back(absl::StrCat(name, "=", shape.empty() ? "scalar" : absl::StrJoin(shape, "x")));
  }
  if (analysis.options.dim_default.has_value()) dims.push_back(absl::StrCat("others=", *analysis.options.dim_default));
  for (const auto& [name, value] : analysis.options.input_values) dims.push_back(absl::StrCat(name, "=", value));
  absl::StrAppend(out, "  mode    schedule ", analysis.options.optimize_schedule ? "optimized" : "given",
                  analysis.file_order_was_valid ? ""
                  : analysis.modes.accumulate.nodes + analysis.modes.fused_nodes + analysis.modes.reorder_nodes > 0
                      ? " (sorted topologically after the fusions)"
                      : " (file order sorted topologically)",
                  ", fold ", analysis.options.fold_constants ? "on" : "off", ", accumulate ",
                  !analysis.modes.accumulate.enabled ? std::string("off")
                                                     : absl::StrCat("on (", analysis.modes.accumulate.nodes, " Conv+Add)"),
                  // Named only when on, so that the baseline's line stays as it was.
                  analysis.modes.qdq.enabled ? absl::StrCat(", qdq on (", analysis.modes.qdq.groups, " groups)") : "",
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
                                 branch.decided_by.empty() ? "" : absl::StrCat(" (", branch.decided_by, ")"),
                                 branch.ruled_out.empty() ? ""
                                                          : absl::StrCat(" (the ", branch.ruled_out.substr(0, 4),
                                                                         " branch cannot run)")));
    }
    if (analysis.if_branches.size() > kShown) ifs.push_back(absl::StrCat("+", analysis.if_branches.size() - kShown, " more"));
    absl::StrAppend(out, "  if      ", absl::StrJoin(ifs, "; "), "\n");
  }
  absl::StrAppend(out, "\n");
}

// The figures, peak first; a figure that sums unsized tensors is a lower bound.
void AppendMemory(const Analysis& analysis, std::string* out) {
  const MemoryFigures& memory = analysis.memory;
  absl::StrAppend(out, memory.complete ? "Memory\n" : "Memory (INCOMPLETE: see the unsized tensors below)\n");
  const bool known = memory.complete;  // Else every figure that sums tensors is a lower bound.
  const bool weights_known = WeightsKnown(analysis);
  const std::string runtime_peak = absl::StrCat("  ", RuntimePeakNote(analysis));
  absl::StrAppend(out, FigureLine("peak", memory.peak_bytes,
                                   !analysis.options.runtime.empty()  ? runtime_peak
                                   : analysis.options.fold_constants ? "  = weights + folded + arena"
                                                                     : "  = weights + arena", known));
  absl::StrAppend(out, FigureLine("weights", memory.weights_bytes, "", weights_known));
  if (analysis.options.fold_constants) {
    absl::StrAppend(out, FigureLine("folded weights", memory.folded_weights_bytes,
                                     absl::StrCat("  ", analysis.modes.fold.nodes, " nodes evaluated at load"),
                                     weights_known));
  }
  absl::StrAppend(out, FigureLine("arena", memory.arena_bytes,
                                   absl::StrFormat("  %s, %s", analysis.plan.algorithm,
                                                   analysis.plan.proven_optimal ? "optimal" : "not proven optimal"),
                                   known));
  if (!analysis.options.runtime.empty()) {
    absl::StrAppend(out, FigureLine("kernel workspaces", memory.workspace_bytes,
                                     absl::StrCat("  in the arena; runtime ", RuntimeLabel(analysis), ", ",
                                                  analysis.modes.fused_nodes, " nodes fused, ",
                                                  analysis.modes.layout_nodes, " in NCHWc, ",
                                                  analysis.modes.reorder_nodes, " reorders"), known));
    const char* in_working_peak = memory.runtime_peak_reserved ? "" : "; in the peak";
    const char* in_reserved_peak = memory.runtime_peak_reserved ? "; in the peak" : "";
    absl::StrAppend(out, FigureLine("runtime tensors", memory.runtime_tensor_bytes,
                                     absl::StrCat("  ", RuntimeLabel(analysis),
                                                  "'s own planner at its worst step, arena off", in_working_peak),
                                     known));
    absl::StrAppend(out, FigureLine("runtime overhead", memory.runtime_overhead_bytes,
                                     absl::StrCat("  held by the runtime during a run, no tensor", in_working_peak),
                                     known));
    absl::StrAppend(out, FigureLine("runtime reserved", memory.runtime_reserved_bytes,
                                     absl::StrCat("  held after a first run with its default options (arena on)",
                                                  in_reserved_peak),
                                     known));
    absl::StrAppend(out, FigureLine("runtime weights", memory.runtime_weights_bytes,
                                     "  held after creating the session: weights after load", weights_known));
    if (memory.runtime_mapped_weights_bytes > 0) {
      absl::StrAppend(out, FigureLine("runtime mapped", memory.runtime_mapped_weights_bytes,
                                       "  external data mapped from its file, not heap: not in the peak",
                                       weights_known));
    }
    if (memory.runtime_load_peak_bytes > 0) {
      absl::StrAppend(out, FigureLine("runtime load peak", memory.runtime_load_peak_bytes,
                                       absl::StrCat("  ", RuntimeLoadPeakNote(analysis)), weights_known));
    }
  }
  const double ratio = memory.lower_bound_bytes == 0
                           ? 1.0
                           : static_cast<double>(memory.arena_bytes) / static_cast<double>(memory.lower_bound_bytes);
  absl::StrAppend(out, FigureLine("lower bound", memory.lower_bound_bytes,
                                   absl::StrFormat("  arena is %.3fx the bound", ratio), known));
  absl::StrAppend(out, FigureLine("no reuse (naive)", memory.naive_bytes, "", known));
  if (known) {
    absl::StrAppend(out, FigureLine("reuse savings", memory.reuse_savings_bytes,
                                     absl::StrFormat("  %.1f%% of naive", ReuseSavingsPercent(memory))));
  } else {
    absl::StrAppend(out, absl::StrFormat("  %-20s %12s  (the difference of two lower bounds)\n", "reuse savings",
                                          "unknown"));
  }
  if (memory.unsized_tensors > 0) {
    absl::StrAppend(out, absl::StrFormat("  %-20s %12d\n", "unsized tensors", memory.unsized_tensors));
  }
  if (const int64_t bound = BoundTensorCount(analysis); bound > 0) {
    absl::StrAppend(out, absl::StrFormat("  %-20s %12d  sized as an undecided If's larger branch (upper bounds)\n",
                                          "bound tensors", bound));
  }
}

// The figures as formulas in the unbound dims.
void AppendFormulas(const Analysis& analysis, std::string* out) {
  if (analysis.symbolic_memory.has_value()) {
    const SymbolicMemory& symbolic = *analysis.symbolic_memory;
    absl::StrAppend(out, "\nMemory as formulas in the unbound dims (", absl::StrJoin(symbolic.symbols, ", "),
                    "; the planned arena needs values: --dim or --sweep)\n");
    const std::string no_formula =
        absl::StrCat("unknown (", symbolic.tensors_without_formula, " tensors have neither a size nor a formula)");
    auto line = [out, &symbolic, &no_formula](const std::string& label, const std::string& expr, bool sums_all) {
      const std::string shown = !expr.empty()                                      ? expr
                                : sums_all && symbolic.tensors_without_formula > 0 ? no_formula
                                                                                   : "(too many cases; see --sweep)";
      absl::StrAppend(out, absl::StrFormat("  %-20s %s\n", label, shown));
    };
    line("peak >=", symbolic.peak_lower_bound_expr, false);
    line("peak <=", symbolic.peak_upper_bound_expr, true);
    line("lower bound", symbolic.lower_bound_expr, false);
    line("no reuse (naive)", symbolic.naive_expr, true);
  }
}

// The figures at sample bindings of the unbound dims.
void AppendSamples(const Analysis& analysis, std::string* out) {
  if (!analysis.samples.empty()) {
    absl::StrAppend(out, "\nSamples (the figures at sample bindings of the unbound dims, not their range)\n",
                    absl::StrFormat("  %-32s %12s %12s %12s %12s %8s\n", "binding", "peak", "arena", "lower bound",
                                    "naive", "unsized"));
    for (const SampleFigures& sample : analysis.samples) {
      std::vector<std::string> binding;
      for (const auto& [name, value] : sample.dims) binding.push_back(absl::StrCat(name, "=", value));
      const bool sample_known = sample.memory.complete;
      absl::StrAppend(out, absl::StrFormat("  %-32s %12s %12s %12s %12s %8d  %s\n", absl::StrJoin(binding, " "),
                                            HumanBytesOrBound(sample.memory.peak_bytes, sample_known),
                                            HumanBytesOrBound(sample.memory.arena_bytes, sample_known),
                                            HumanBytesOrBound(sample.memory.lower_bound_bytes, sample_known),
                                            HumanBytesOrBound(sample.memory.naive_bytes, sample_known),
                                            sample.memory.unsized_tensors, sample.label));
    }
  }
}

// Each mode's lower bound, applied in order, next to the baseline's.
void AppendModes(const Analysis& analysis, std::string* out) {
  const bool known = analysis.memory.complete;  // Else every figure that sums tensors is a lower bound.
  const ModesSummary& modes = analysis.modes;
  const auto saved = [known](int64_t bytes, int64_t before) {
    if (bytes == 0 || !known) return std::string();  // Of lower bounds, a difference says nothing.
    return absl::StrFormat("  -%s (%.1f%%)", HumanBytes(bytes),
                           before == 0 ? 0.0 : 100.0 * static_cast<double>(bytes) / static_cast<double>(before));
  };
  absl::StrAppend(out, "\nModes (lower bound after each)\n");
  absl::StrAppend(out, FigureLine("baseline", modes.baseline_lower_bound_bytes, "  given order, no sharing", known));
  absl::StrAppend(out, FigureLine(absl::StrCat("schedule ", modes.schedule.name), modes.schedule.lower_bound_bytes,
                                   absl::StrCat(saved(modes.schedule.saved_bytes, modes.baseline_lower_bound_bytes),
                                                modes.schedule.name == "optimized"
                                                    ? absl::StrFormat("  %s, %s, %.3f s", modes.schedule.algorithm,
                                                                      modes.schedule.proven_optimal
                                                                          ? "optimal"
                                                                          : "not proven optimal",
                                                                      modes.schedule.seconds)
                                                    : ""),
                                   known));
  for (const auto& [label, mode, before] :
       {std::tuple{"alias", &modes.alias, modes.schedule.lower_bound_bytes},
        std::tuple{"in-place", &modes.inplace, modes.alias.lower_bound_bytes}}) {
    if (!mode->enabled) {
      absl::StrAppend(out, absl::StrFormat("  %-20s %12s\n", absl::StrCat(label, " off"), "-"));
      continue;
    }
    absl::StrAppend(out, FigureLine(absl::StrCat("+ ", label), mode->lower_bound_bytes,
                                     absl::StrCat(saved(mode->saved_bytes, before), "  ", mode->tensors,
                                                  mode->tensors == 1 ? " tensor shares" : " tensors share",
                                                  " bytes"),
                                     known));
  }
}

// The ten largest arena tensors, and how many share bytes.
void AppendLargestTensors(const Analysis& analysis, std::string* out) {
  const std::vector<const TensorRecord*> largest = LargestTensors(analysis, 10);
  if (!largest.empty()) {
    absl::StrAppend(out, "\nLargest arena tensors\n");
    absl::StrAppend(out, absl::StrFormat("  %-32s %-10s %-20s %10s %11s %12s\n", "name", "dtype", "shape", "size",
                                          "steps", "offset"));
    for (const TensorRecord* tensor : largest) {
      std::string name = tensor->name;
      if (name.size() > 32) name = name.substr(0, 29) + "...";
      std::string shape = ShapeToString(tensor->shape);
      if (shape.size() > 20) shape = shape.substr(0, 17) + "...";
      absl::StrAppend(out, absl::StrFormat("  %-32s %-10s %-20s %10s %11s %12d\n", name, tensor->dtype, shape,
                                            HumanBytes(tensor->aligned_bytes),
                                            absl::StrCat(tensor->first_step, "-", tensor->last_step),
                                            tensor->offset.value_or(0)));
    }
  }
  if (const int64_t sharing = analysis.modes.alias.tensors + analysis.modes.inplace.tensors; sharing > 0) {
    absl::StrAppend(out, "  ", sharing, sharing == 1 ? " tensor shares" : " tensors share",
                    " the bytes of an earlier tensor at its offset (see \"shares_with\" in --format json)\n");
  }
}

// Up to 20 unsized tensors and why, and the weights with no byte size.
void AppendUnsized(const Analysis& analysis, std::string* out) {
  int listed_unsized = 0;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.bytes.has_value()) continue;
    if (listed_unsized == 0) absl::StrAppend(out, "\nUnsized tensors (not counted in the arena)\n");
    if (++listed_unsized > 20) continue;
    absl::StrAppend(out, "  ", tensor.name, "  ", tensor.dtype, " ", ShapeToString(tensor.shape), "  ",
                    tensor.bytes_expr.empty() ? tensor.unsized_reason : absl::StrCat(tensor.bytes_expr, " bytes"),
                    "\n");
  }
  if (listed_unsized > 20) absl::StrAppend(out, "  ... and ", listed_unsized - 20, " more (see --format json)\n");
  for (const WeightRecord& weight : analysis.weights) {
    if (weight.bytes.has_value()) continue;
    absl::StrAppend(out, "  weight ", weight.name, "  ", weight.dtype, "  no byte size\n");
  }
}

// The warnings.
void AppendWarnings(const Analysis& analysis, std::string* out) {
  if (!analysis.warnings.empty()) {
    absl::StrAppend(out, "\nWarnings\n");
    for (const std::string& warning : analysis.warnings) absl::StrAppend(out, "  - ", warning, "\n");
  }
}

// The figures at each value of --sweep.
void AppendSweep(const Analysis& analysis, std::string* out) {
  if (analysis.sweep.has_value()) {
    absl::StrAppend(out, "\nSweep of ", analysis.sweep->dim, " (planned at each value)\n",
                    absl::StrFormat("  %12s %12s %12s %12s %12s %8s\n", analysis.sweep->dim, "peak", "arena",
                                    "lower bound", "naive", "unsized"));
    for (const SweepFigures::Point& point : analysis.sweep->points) {
      const bool point_known = point.memory.complete;
      absl::StrAppend(out, absl::StrFormat("  %12d %12s %12s %12s %12s %8d\n", point.value,
                                            HumanBytesOrBound(point.memory.peak_bytes, point_known),
                                            HumanBytesOrBound(point.memory.arena_bytes, point_known),
                                            HumanBytesOrBound(point.memory.lower_bound_bytes, point_known),
                                            HumanBytesOrBound(point.memory.naive_bytes, point_known),
                                            point.memory.unsized_tensors));
    }
  }
}

// The device's tiers: what each holds.
void AppendTiers(const Analysis& analysis, std::string* out) {
  const bool known = analysis.memory.complete;  // Else every figure that sums tensors is a lower bound.
  if (!analysis.tiers.empty()) {
    absl::StrAppend(out, "\nMemory tiers of ", analysis.device.name, "\n");
    absl::StrAppend(out, absl::StrFormat("  %-14s %12s %12s %12s %8s\n", "tier", "capacity", "activations",
                                          "weights", "tensors"));
    for (const TierSummary& tier : analysis.tiers) {
      absl::StrAppend(out, absl::StrFormat("  %-14s %12s %12s %12s %8d\n", tier.name,
                                            tier.capacity_bytes.has_value() ? HumanBytes(*tier.capacity_bytes) : "?",
                                            tier.holds_activations ? HumanBytesOrBound(tier.arena_bytes, known) : "-",
                                            tier.holds_weights ? HumanBytes(tier.weights_bytes) : "-", tier.tensors));
    }
    if (analysis.spilled_tensors > 0) {
      absl::StrAppend(out, "  ", analysis.spilled_tensors, " buffers (a tensor, or tensors sharing bytes) spilled past the first tier (policy ",
                      analysis.spill_policy, ")\n");
    }
  }
}

// Each --max-* check.
void AppendBudgets(const Analysis& analysis, std::string* out) {
  const MemoryFigures& memory = analysis.memory;
  const bool known = analysis.memory.complete;  // Else every figure that sums tensors is a lower bound.
  const bool weights_known = WeightsKnown(analysis);
  if (!analysis.budgets.empty()) {
    absl::StrAppend(out, "\nBudgets", memory.complete ? "" : " (figures incomplete: the true sizes may be larger)",
                    "\n");
    for (const BudgetCheck& check : analysis.budgets) {
      absl::StrAppend(out, absl::StrFormat("  %-8s %12s of %-12s %s\n", check.figure,
                                            HumanBytesOrBound(check.actual_bytes, check.figure == "weights" ? weights_known : known),
                                            HumanBytes(check.limit_bytes), check.ok ? "ok" : "EXCEEDED"));
    }
  }
}

// The device's verdict.
void AppendVerdict(const Analysis& analysis, std::string* out) {
  absl::StrAppend(out, "\nFits on ", analysis.device.name, ": ",
                  !analysis.fits.has_value() ? "unknown" : (*analysis.fits ? "yes" : "NO"),
                  analysis.fits_reason.empty()
                      ? ""
                      : absl::StrCat(" (", absl::StripPrefix(analysis.fits_reason, "unknown: "), ")"),
                  "\n");
}

}  // namespace

std::string RenderText(const Analysis& analysis) {
  std::string out;
  AppendHeader(analysis, &out);
  AppendMemory(analysis, &out);
  AppendFormulas(analysis, &out);
  AppendSamples(analysis, &out);
  AppendModes(analysis, &out);
  AppendLargestTensors(analysis, &out);
  AppendUnsized(analysis, &out);
  AppendWarnings(analysis, &out);
  AppendSweep(analysis, &out);
  AppendTiers(analysis, &out);
  AppendBudgets(analysis, &out);
  AppendVerdict(analysis, &out);
  return out;
}

}  // namespace footprint
