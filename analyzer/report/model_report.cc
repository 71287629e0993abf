#include "analyzer/report/model_report.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/report/format.h"
#include "analyzer/report/report.h"

namespace footprint {
namespace {

std::string Cell(const ModelReport& report, int64_t MemoryFigures::*figure) {
  if (!report.analysis.has_value()) return "-";
  return HumanBytes(report.analysis->memory.*figure);
}

}  // namespace

std::string StatusOf(const ModelReport& report) {
  if (!report.analysis.has_value()) return "error";
  if (!AllWithinBudget(report.analysis->budgets)) return "over budget";
  if (report.analysis->fits.has_value() && !*report.analysis->fits) return "does not fit";
  if (!report.analysis->memory.complete) return "ok (incomplete)";
  return "ok";
}

std::string RenderSummaryText(const std::vector<ModelReport>& reports) {
  size_t width = 5;
  for (const ModelReport& report : reports) width = std::max(width, report.path.size());
  width = std::min<size_t>(width, 60);
  std::string out = absl::StrCat("Summary (", reports.size(), " models)\n");
  absl::StrAppend(&out, absl::StrFormat("  %-*s %10s %10s %10s %11s %7s %5s  %s\n", width, "model", "peak", "weights",
                                        "arena", "lower bound", "unsized", "fits", "status"));
  for (const ModelReport& report : reports) {
    std::string name = report.path;
    if (name.size() > width) name = "..." + name.substr(name.size() - width + 3);
    const std::string unsized =
        report.analysis.has_value() ? absl::StrCat(report.analysis->memory.unsized_tensors) : "-";
    const std::string fits = !report.analysis.has_value() || !report.analysis->fits.has_value()
                                 ? "-"
                                 : (*report.analysis->fits ? "yes" : "NO");
    std::string status = StatusOf(report);
    if (!report.error.empty()) absl::StrAppend(&status, ": ", report.error);
    absl::StrAppend(&out, absl::StrFormat("  %-*s %10s %10s %10s %11s %7s %5s  %s\n", width, name,
                                          Cell(report, &MemoryFigures::peak_bytes),
                                          Cell(report, &MemoryFigures::weights_bytes),
                                          Cell(report, &MemoryFigures::arena_bytes),
                                          Cell(report, &MemoryFigures::lower_bound_bytes), unsized, fits, status));
  }
  return out;
}

std::string RenderBatchText(const std::vector<ModelReport>& reports) {
  std::string out;
  for (const ModelReport& report : reports) {
    if (!report.analysis.has_value()) continue;
    absl::StrAppend(&out, RenderText(*report.analysis));
    if (report.baseline.has_value()) {
      absl::StrAppend(&out, "\nChange against ", report.baseline->old_figures.source, "\n");
      for (const FigureDelta& delta : report.baseline->figures) {
        absl::StrAppend(&out, absl::StrFormat("  %-20s %s\n", delta.label, DeltaToString(delta)));
      }
    }
    if (reports.size() > 1) absl::StrAppend(&out, "\n");
  }
  if (reports.size() > 1) absl::StrAppend(&out, RenderSummaryText(reports));
  return out;
}

void WriteModelReportJson(const ModelReport& report, JsonWriter& json) {
  json.BeginObject();
  if (!report.analysis.has_value()) {
    json.Key("model").BeginObject().Key("path").String(report.path).EndObject();
    json.Key("error").String(report.error);
  } else {
    WriteAnalysisJsonMembers(*report.analysis, json);
    // A few figures: the diff's own DOM, embedded as it is.
    if (report.baseline.has_value()) json.Key("baseline").Embed(DiffToJson(*report.baseline));
  }
  json.EndObject();
}

void WriteBatchJson(const std::vector<ModelReport>& reports, JsonWriter& json) {
  json.BeginObject();
  json.Key("schema_version").Int(kJsonSchemaVersion);
  json.Key("reports").BeginArray();
  for (const ModelReport& report : reports) WriteModelReportJson(report, json);
  json.EndArray();
  json.EndObject();
}

}  // namespace footprint
