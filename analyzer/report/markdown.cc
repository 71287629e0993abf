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

void AppendFigureRow(std::string* out, const ModelReport& report, const std::string& label, const std::string& key,
                     int64_t bytes, const std::string& note) {
  absl::StrAppend(out, "| ", label, " | ", HumanBytes(bytes), " | ", WithThousands(bytes), " | ");
  if (report.baseline.has_value()) {
    const FigureDelta* delta = FindDelta(report, key);
    absl::StrAppend(out, delta != nullptr ? DeltaToString(*delta) : "", " | ");
  }
  absl::StrAppend(out, note, " |\n");
}

std::string ModelMarkdown(const ModelReport& report, const std::string& heading) {
  const Analysis& analysis = *report.analysis;
  const MemoryFigures& memory = analysis.memory;
  std::string out = absl::StrCat(heading, " onnx-footprint: `", MarkdownCode(analysis.model.path), "`\n\n");
  std::vector<std::string> dims;
  for (const auto& [name, value] : analysis.options.dims) dims.push_back(absl::StrCat(name, "=", value));
  absl::StrAppend(&out, "Device **", MarkdownCell(analysis.device.name), "** (alignment ",
                  analysis.device.alignment_bytes, " B) · schedule ",
                  analysis.options.optimize_schedule ? "optimized" : "given", " · alias ",
                  analysis.options.alias ? "on" : "off", " · in-place ", analysis.modes.inplace.enabled ? "on" : "off",
                  " · accumulate ", analysis.modes.accumulate.enabled ? "on" : "off",
                  analysis.modes.qdq.enabled ? absl::StrCat(" · qdq on (", analysis.modes.qdq.groups, " groups)") : "",
                  dims.empty() ? "" : absl::StrCat(" · dims ", MarkdownCell(absl::StrJoin(dims, " "))), " · ",
                  analysis.model.nodes, " nodes\n\n");
  if (!memory.complete) {
    absl::StrAppend(&out, "> ⚠️ **Incomplete:** ", memory.unsized_tensors,
                    " tensor(s) have no known size; the figures below are lower bounds.\n\n");
  }
  const bool with_change = report.baseline.has_value();
  absl::StrAppend(&out, "| figure | size | bytes |", with_change ? " change |" : "", " |\n");
  absl::StrAppend(&out, "|---|---:|---:|", with_change ? "---:|" : "", "---|\n");
  AppendFigureRow(&out, report, "**peak**", "peak_bytes", memory.peak_bytes,
                  analysis.options.runtime.empty() ? "weights + arena"
                                                   : "weights + runtime tensors + runtime overhead");
  AppendFigureRow(&out, report, "weights", "weights_bytes", memory.weights_bytes, "resident, outside the arena");
  if (analysis.options.fold_constants) {
    AppendFigureRow(&out, report, "folded weights", "folded_weights_bytes", memory.folded_weights_bytes,
                    absl::StrCat(analysis.modes.fold.nodes, " nodes evaluated at load; resident"));
  }
  AppendFigureRow(&out, report, "arena", "arena_bytes", memory.arena_bytes,
                  absl::StrCat(MarkdownCell(analysis.plan.algorithm),
                               analysis.plan.proven_optimal ? ", optimal" : ", not proven optimal"));
  if (!analysis.options.runtime.empty()) {
    AppendFigureRow(&out, report, "runtime tensors", "runtime_tensor_bytes", memory.runtime_tensor_bytes,
                    absl::StrCat(MarkdownCell(analysis.options.runtime),
                                 "'s own planner at its worst step; in the peak"));
    AppendFigureRow(&out, report, "runtime overhead", "runtime_overhead_bytes", memory.runtime_overhead_bytes,
                    absl::StrCat("held by ", MarkdownCell(analysis.options.runtime),
                                 " during a run, no tensor; in the peak"));
  }
  const double ratio = memory.lower_bound_bytes == 0
                           ? 1.0
                           : static_cast<double>(memory.arena_bytes) / static_cast<double>(memory.lower_bound_bytes);
  AppendFigureRow(&out, report, "lower bound", "lower_bound_bytes", memory.lower_bound_bytes,
                  absl::StrFormat("arena is %.3f× the bound", ratio));
  AppendFigureRow(&out, report, "baseline lower bound", "baseline_lower_bound_bytes",
                  analysis.modes.baseline_lower_bound_bytes,
                  absl::StrCat("given order, no sharing; ", DescribeModeSavings(analysis.modes)));
  AppendFigureRow(&out, report, "naive (no reuse)", "naive_bytes", memory.naive_bytes,
                  absl::StrFormat("reuse saves %s (%.1f%%)", HumanBytes(memory.reuse_savings_bytes),
                                  ReuseSavingsPercent(memory)));
  absl::StrAppend(&out, "| unsized tensors | ", memory.unsized_tensors, " | |");
  if (with_change) {
    const FigureDelta* delta = FindDelta(report, "unsized_tensors");
    absl::StrAppend(&out, " ", delta != nullptr ? DeltaToString(*delta) : "", " |");
  }
  absl::StrAppend(&out, memory.unsized_tensors > 0 ? " not counted above" : "", " |\n");
  if (with_change) {
    absl::StrAppend(&out, "\nChange against the baseline report `", MarkdownCode(report.baseline->old_figures.source),
                    "`", report.baseline->old_figures.model_path != analysis.model.path
                             ? absl::StrCat(" (of `", MarkdownCode(report.baseline->old_figures.model_path), "`)")
                             : "",
                    ".\n");
  }

  if (!analysis.budgets.empty()) {
    absl::StrAppend(&out, "\n| budget | limit | actual | |\n|---|---:|---:|---|\n");
    for (const BudgetCheck& check : analysis.budgets) {
      absl::StrAppend(&out, "| --max-", check.figure, " | ", HumanBytes(check.limit_bytes), " | ",
                      HumanBytes(check.actual_bytes), " | ",
                      check.ok ? "✅ ok" : absl::StrCat("❌ **over by ", HumanBytes(check.actual_bytes - check.limit_bytes), "**"),
                      " |\n");
    }
  }
  if (analysis.fits.has_value()) {
    absl::StrAppend(&out, "\nFits on ", MarkdownCell(analysis.device.name), ": ",
                    *analysis.fits ? "✅ yes" : "❌ **no**", "\n");
  }

  const std::vector<const TensorRecord*> largest = LargestTensors(analysis, 10);
  if (!largest.empty()) {
    absl::StrAppend(&out, "\n<details><summary>Top ", largest.size(),
                    " arena tensors</summary>\n\n| tensor | dtype | shape | size | steps | offset |\n"
                    "|---|---|---|---:|---:|---:|\n");
    for (const TensorRecord* tensor : largest) {
      absl::StrAppend(&out, "| `", MarkdownCode(tensor->name), "` | ", tensor->dtype, " | ",
                      MarkdownCell(ShapeToString(tensor->shape)), " | ", HumanBytes(tensor->aligned_bytes), " | ",
                      tensor->first_step, "–", tensor->last_step, " | ", WithThousands(tensor->offset.value_or(0)),
                      " |\n");
    }
    absl::StrAppend(&out, "\n</details>\n");
  }
  std::vector<const TensorRecord*> unsized;
  for (const TensorRecord& tensor : analysis.tensors) {
    if (!tensor.bytes.has_value()) unsized.push_back(&tensor);
  }
  if (!unsized.empty()) {
    absl::StrAppend(&out, "\n<details><summary>", unsized.size(),
                    " unsized tensor(s)</summary>\n\n| tensor | dtype | shape | why |\n|---|---|---|---|\n");
    for (size_t i = 0; i < unsized.size() && i < 50; ++i) {
      absl::StrAppend(&out, "| `", MarkdownCode(unsized[i]->name), "` | ", unsized[i]->dtype, " | ",
                      MarkdownCell(ShapeToString(unsized[i]->shape)), " | ", MarkdownCell(unsized[i]->unsized_reason),
                      " |\n");
    }
    if (unsized.size() > 50) absl::StrAppend(&out, "\n… and ", unsized.size() - 50, " more (see --format json)\n");
    absl::StrAppend(&out, "\n</details>\n");
  }
  if (!analysis.warnings.empty()) {
    absl::StrAppend(&out, "\n<details><summary>", analysis.warnings.size(), " warning(s)</summary>\n\n");
    for (const std::string& warning : analysis.warnings) absl::StrAppend(&out, "- ", MarkdownCell(warning), "\n");
    absl::StrAppend(&out, "\n</details>\n");
  }
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
      absl::StrAppend(&out, HumanBytes(memory.peak_bytes), " | ", HumanBytes(memory.weights_bytes), " | ",
                      HumanBytes(memory.arena_bytes), " | ", HumanBytes(memory.lower_bound_bytes), " | ",
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
