#include "analyzer/report/markdown.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/report/format.h"
#include "analyzer/report/report.h"

namespace footprint {
namespace {

const FigureDelta* FindDelta(const ModelReport& report, const std::string& key) {
  if (!report.baseline.has_value()) return nullptr;
  for (const FigureDelta& delta : report.baseline->figures) {
    if (delta.key == key) return &delta;
  }
  return nullptr;
}

// `known` false: a sum of sized tensors only, a lower bound ("unknown" when 0).
void AppendFigureRow(std::string* out, const ModelReport& report, const std::string& label, const std::string& key,
                     int64_t bytes, const std::string& note, bool known = true) {
  absl::StrAppend(out, "| ", label, " | ", MarkdownCell(HumanBytesOrBound(bytes, known)), " | ",
                  MarkdownCell(ExactBytesOrBound(bytes, known)), " | ");
  if (report.baseline.has_value()) {
    const FigureDelta* delta = FindDelta(report, key);
    absl::StrAppend(out, delta != nullptr ? DeltaToString(*delta) : "", " | ");
  }
  absl::StrAppend(out, note, " |\n");
}

// First, before any figure: which dims have no value, and how to give them one.
void AppendUnbound(std::string* out, const Analysis& analysis) {
  if (!analysis.unbound_dims.empty()) {
    const std::vector<std::string> examples = BindingExamples(analysis);
    absl::StrAppend(out, "> **Unbound input dims:** ", MarkdownCell(DescribeUnboundDims(analysis)),
                    ". The sizes that use them are formulas, not counted in the figures. Bind them: ",
                    absl::StrJoin(examples, " or ", [](std::string* o, const std::string& e) {
                      absl::StrAppend(o, "`", MarkdownCode(e), "`");
                    }),
                    "\n\n");
  }
}

// The device and the modes, and whether some tensor has no size.
void AppendModeLine(std::string* out, const Analysis& analysis) {
  const MemoryFigures& memory = analysis.memory;
  std::vector<std::string> dims;
  for (const auto& [name, value] : analysis.options.dims) dims.push_back(absl::StrCat(name, "=", value));
  absl::StrAppend(out, "Device **", MarkdownCell(analysis.device.name), "** (alignment ",
                  analysis.device.alignment_bytes, " B) · schedule ",
                  analysis.options.optimize_schedule ? "optimized" : "given", " · alias ",
                  analysis.options.alias ? "on" : "off", " · in-place ", analysis.modes.inplace.enabled ? "on" : "off",
                  " · accumulate ", analysis.modes.accumulate.enabled ? "on" : "off",
                  analysis.modes.qdq.enabled ? absl::StrCat(" · qdq on (", analysis.modes.qdq.groups, " groups)") : "",
                  dims.empty() ? "" : absl::StrCat(" · dims ", MarkdownCell(absl::StrJoin(dims, " "))), " · ",
                  analysis.model.nodes, " nodes\n\n");
  if (!memory.complete) {
    absl::StrAppend(out, "> ⚠️ **Incomplete:** ", memory.unsized_tensors,
                    " tensor(s) have no known size; the figures below are lower bounds.\n\n");
  }
}

// The figures, peak first, each with its note (and its change against a baseline).
void AppendFigureTable(std::string* out, const ModelReport& report) {
  const Analysis& analysis = *report.analysis;
  const MemoryFigures& memory = analysis.memory;
  const bool with_change = report.baseline.has_value();
  absl::StrAppend(out, "| figure | size | bytes |", with_change ? " change |" : "", " |\n");
  absl::StrAppend(out, "|---|---:|---:|", with_change ? "---:|" : "", "---|\n");
  const bool known = memory.complete;  // Else every figure that sums tensors is a lower bound.
  const bool weights_known = WeightsKnown(analysis);
  AppendFigureRow(out, report, "**peak**", "peak_bytes", memory.peak_bytes,
                  analysis.options.runtime.empty()
                      ? std::string(analysis.options.fold_constants ? "weights + folded + arena" : "weights + arena")
                      : MarkdownCell(RuntimePeakNote(analysis)),
                  known);
  AppendFigureRow(out, report, "weights", "weights_bytes", memory.weights_bytes, "resident, outside the arena",
                  weights_known);
  if (analysis.options.fold_constants) {
    AppendFigureRow(out, report, "folded weights", "folded_weights_bytes", memory.folded_weights_bytes,
                    absl::StrCat(analysis.modes.fold.nodes, " nodes evaluated at load; resident"), weights_known);
  }
  AppendFigureRow(out, report, "arena", "arena_bytes", memory.arena_bytes,
                  absl::StrCat(MarkdownCell(analysis.plan.algorithm),
                               analysis.plan.proven_optimal ? ", optimal" : ", not proven optimal"),
                  known);
  if (!analysis.options.runtime.empty()) {
    const char* in_working_peak = memory.runtime_peak_reserved ? "" : "; in the peak";
    const char* in_reserved_peak = memory.runtime_peak_reserved ? "; in the peak" : "";
    AppendFigureRow(out, report, "runtime tensors", "runtime_tensor_bytes", memory.runtime_tensor_bytes,
                    absl::StrCat(MarkdownCell(RuntimeLabel(analysis)),
                                 "'s own planner at its worst step, arena off", in_working_peak),
                    known);
    AppendFigureRow(out, report, "runtime overhead", "runtime_overhead_bytes", memory.runtime_overhead_bytes,
                    absl::StrCat("held by ", MarkdownCell(RuntimeLabel(analysis)),
                                 " during a run, no tensor", in_working_peak),
                    known);
    AppendFigureRow(out, report, "runtime reserved", "runtime_reserved_bytes", memory.runtime_reserved_bytes,
                    absl::StrCat("held after a first run with its default options (arena on)", in_reserved_peak),
                    known);
    AppendFigureRow(out, report, "runtime weights", "runtime_weights_bytes", memory.runtime_weights_bytes,
                    "held after creating the session: weights after load", weights_known);
    if (memory.runtime_mapped_weights_bytes > 0) {
      AppendFigureRow(out, report, "runtime mapped", "runtime_mapped_weights_bytes",
                      memory.runtime_mapped_weights_bytes,
                      "external data mapped from its file, not heap: not in the peak", weights_known);
    }
    if (memory.runtime_load_peak_bytes > 0) {
      AppendFigureRow(out, report, "runtime load peak", "runtime_load_peak_bytes", memory.runtime_load_peak_bytes,
                      MarkdownCell(RuntimeLoadPeakNote(analysis)), weights_known);
    }

  }
  const double ratio = memory.lower_bound_bytes == 0
                           ? 1.0
                           : static_cast<double>(memory.arena_bytes) / static_cast<double>(memory.lower_bound_bytes);
  AppendFigureRow(out, report, "lower bound", "lower_bound_bytes", memory.lower_bound_bytes,
                  absl::StrFormat("arena is %.3f× the bound", ratio), known);
  AppendFigureRow(out, report, "baseline lower bound", "baseline_lower_bound_bytes",
                  analysis.modes.baseline_lower_bound_bytes,
                  absl::StrCat("given order, no sharing; ", known ? DescribeModeSavings(analysis.modes) : "mode savings unknown"), known);
  AppendFigureRow(out, report, "naive (no reuse)", "naive_bytes", memory.naive_bytes,
                  known ? absl::StrFormat("reuse saves %s (%.1f%%)", HumanBytes(memory.reuse_savings_bytes),
                                          ReuseSavingsPercent(memory))
                        : "reuse savings unknown (the difference of two lower bounds)",
                  known);
  absl::StrAppend(out, "| unsized tensors | ", memory.unsized_tensors, " | |");
  if (with_change) {
    const FigureDelta* delta = FindDelta(report, "unsized_tensors");
    absl::StrAppend(out, " ", delta != nullptr ? DeltaToString(*delta) : "", " |");
  }
  absl::StrAppend(out, memory.unsized_tensors > 0 ? " not counted above" : "", " |\n");
  if (const int64_t bound = BoundTensorCount(analysis); bound > 0) {
    absl::StrAppend(out, "| bound tensors | ", bound, " | |", with_change ? " |" : "",
                    " sized as an undecided If's larger branch (upper bounds) |\n");
  }
}

// The figures at sample bindings of the unbound dims.
void AppendSamples(std::string* out, const Analysis& analysis) {
  if (!analysis.samples.empty()) {
    absl::StrAppend(out, "\nSamples: the figures at sample bindings of the unbound dims, not their range.\n\n"
                          "| binding | peak | arena | lower bound | naive | unsized | |\n|---|---:|---:|---:|---:|---:|---|\n");
    for (const SampleFigures& sample : analysis.samples) {
      std::vector<std::string> binding;
      for (const auto& [name, value] : sample.dims) binding.push_back(absl::StrCat(name, "=", value));
      const bool sample_known = sample.memory.complete;
      absl::StrAppend(out, "| `", MarkdownCode(absl::StrJoin(binding, " ")), "` | ",
                      MarkdownCell(HumanBytesOrBound(sample.memory.peak_bytes, sample_known)), " | ",
                      MarkdownCell(HumanBytesOrBound(sample.memory.arena_bytes, sample_known)), " | ",
                      MarkdownCell(HumanBytesOrBound(sample.memory.lower_bound_bytes, sample_known)), " | ",
                      MarkdownCell(HumanBytesOrBound(sample.memory.naive_bytes, sample_known)), " | ",
                      sample.memory.unsized_tensors, " | ", MarkdownCell(sample.label), " |\n");
    }
  }
}

// Which baseline report the changes are against.
void AppendBaselineSource(std::string* out, const ModelReport& report) {
  const Analysis& analysis = *report.analysis;
  const bool with_change = report.baseline.has_value();
  if (with_change) {
    absl::StrAppend(out, "\nChange against the baseline report `", MarkdownCode(report.baseline->old_figures.source),
                    "`", report.baseline->old_figures.model_path != analysis.model.path
                             ? absl::StrCat(" (of `", MarkdownCode(report.baseline->old_figures.model_path), "`)")
                             : "",
                    ".\n");
  }
}

// The budgets' and the device's verdicts.
void AppendChecks(std::string* out, const Analysis& analysis) {
  const bool known = analysis.memory.complete;
  const bool weights_known = WeightsKnown(analysis);
  if (!analysis.budgets.empty()) {
    absl::StrAppend(out, "\n| budget | limit | actual | |\n|---|---:|---:|---|\n");
    for (const BudgetCheck& check : analysis.budgets) {
      absl::StrAppend(out, "| --max-", check.figure, " | ", HumanBytes(check.limit_bytes), " | ",
                      MarkdownCell(HumanBytesOrBound(check.actual_bytes, check.figure == "weights" ? weights_known : known)), " | ",
                      check.ok ? "✅ ok" : absl::StrCat("❌ **over by ", HumanBytes(check.actual_bytes - check.limit_bytes), "**"),
                      " |\n");
    }
  }
  if (analysis.fits.has_value()) {
    absl::StrAppend(out, "\nFits on ", MarkdownCell(analysis.device.name), ": ",
                    *analysis.fits ? "✅ yes" : "❌ **no**", "\n");
  }
}

// The ten largest arena tensors, folded away.
void AppendLargestTensors(std::string* out, const Analysis& analysis) {
  const std::vector<const TensorRecord*> largest = LargestTensors(analysis, 10);
  if (!largest.empty()) {
    absl::StrAppend(out, "\n<details><summary>Top ", largest.size(),
                    " arena tensors</summary>\n\n| tensor | dtype | shape | size | steps | offset |\n"
                    "|---|---|---|---:|---:|---:|\n");
    for (const TensorRecord* tensor : largest) {
      absl::StrAppend(out, "| `", MarkdownCode(tensor->name), "` | ", tensor->dtype, " | ",
                      MarkdownCell(ShapeToString(tensor->shape)), " | ", HumanBytes(tensor->aligned_bytes), " | ",
                      tensor->first_step, "–", tensor->last_step, " | ", WithThousands(tensor->offset.value_or(0)),
                      " |\n");
    }
    absl::StrAppend(out, "\n</details>\n");
  }
}

// Up to 50 unsized tensors and why, folded away.
void AppendUnsizedTensors(std::string* out, const Analysis& analysis) {
  std::vector<const TensorRecord*> unsized;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (!tensor.bytes.has_value()) unsized.push_back(&tensor);
  }
  if (!unsized.empty()) {
    absl::StrAppend(out, "\n<details><summary>", unsized.size(),
                    " unsized tensor(s)</summary>\n\n| tensor | dtype | shape | why |\n|---|---|---|---|\n");
    for (size_t i = 0; i < unsized.size() && i < 50; ++i) {
      absl::StrAppend(out, "| `", MarkdownCode(unsized[i]->name), "` | ", unsized[i]->dtype, " | ",
                      MarkdownCell(ShapeToString(unsized[i]->shape)), " | ", MarkdownCell(unsized[i]->unsized_reason),
                      " |\n");
    }
    if (unsized.size() > 50) absl::StrAppend(out, "\n… and ", unsized.size() - 50, " more (see --format json)\n");
    absl::StrAppend(out, "\n</details>\n");
  }
}

// The warnings, folded away.
void AppendWarnings(std::string* out, const Analysis& analysis) {
  if (!analysis.warnings.empty()) {
    absl::StrAppend(out, "\n<details><summary>", analysis.warnings.size(), " warning(s)</summary>\n\n");
    for (const std::string& warning : analysis.warnings) absl::StrAppend(out, "- ", MarkdownCell(warning), "\n");
    absl::StrAppend(out, "\n</details>\n");
  }
}

std::string ModelMarkdown(const ModelReport& report, const std::string& heading) {
  const Analysis& analysis = *report.analysis;
  std::string out = absl::StrCat(heading, " onnx-footprint: `", MarkdownCode(analysis.model.path), "`\n\n");
  AppendUnbound(&out, analysis);
  AppendModeLine(&out, analysis);
  AppendFigureTable(&out, report);
  AppendSamples(&out, analysis);
  AppendBaselineSource(&out, report);
  AppendChecks(&out, analysis);
  AppendLargestTensors(&out, analysis);
  AppendUnsizedTensors(&out, analysis);
  AppendWarnings(&out, analysis);
  return out;
}

std::string SummaryMarkdown(const std::vector<ModelReport>& reports) {
  std::string out = absl::StrCat("### onnx-footprint: ", reports.size(), " models\n\n");
  absl::StrAppend(&out,
                  "| model | peak | weights | arena | lower bound | unsized | fits | status |\n"
                  "|---|---:|---:|---:|---:|---:|---|---|\n");
  for (const ModelReport& report : reports) {
    absl::StrAppend(&out, "| `", MarkdownCode(report.path), "` | ");
    if (report.analysis.has_value()) {
      const MemoryFigures& memory = report.analysis->memory;
      const std::string fits =
          !report.analysis->fits.has_value() ? "–" : (*report.analysis->fits ? "yes" : "**no**");
      const std::string status = StatusOf(report);
      absl::StrAppend(&out, MarkdownCell(HumanBytesOrBound(memory.peak_bytes, memory.complete)), " | ",
                      MarkdownCell(HumanBytesOrBound(memory.weights_bytes, WeightsKnown(*report.analysis))), " | ",
                      MarkdownCell(HumanBytesOrBound(memory.arena_bytes, memory.complete)), " | ",
                      MarkdownCell(HumanBytesOrBound(memory.lower_bound_bytes, memory.complete)), " | ",
                      memory.unsized_tensors, " | ", fits, " | ", report.exit_code != 0 ? "❌ " : (memory.complete ? "✅ " : "⚠️ "), status,
                      " |\n");
    } else {
      absl::StrAppend(&out, "– | – | – | – | – | – | ❌ error: ", MarkdownCell(report.error), " |\n");
    }
  }
  return out;
}

}  // namespace

std::string MarkdownCode(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\n': case '\r': out += ' '; break;
      case '`': out += '\''; break;
      default: out += c;
    }
  }
  return out;
}

std::string MarkdownCell(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\n': case '\r': out += ' '; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '`': out += '\''; break;
      default: out += c;
    }
  }
  return out;
}

std::string RenderMarkdown(const std::vector<ModelReport>& reports) {
  if (reports.size() == 1 && reports[0].analysis.has_value()) return ModelMarkdown(reports[0], "###");
  std::string out = SummaryMarkdown(reports);
  for (const ModelReport& report : reports) {
    if (!report.analysis.has_value()) continue;
    absl::StrAppend(&out, "\n<details><summary>", MarkdownCell(report.path), "</summary>\n\n",
                    ModelMarkdown(report, "####"), "\n</details>\n");
  }
  return out;
}

}  // namespace footprint
