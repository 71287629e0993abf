// Analyzing several models in one run, as a CI job over a models/ folder does.
//
// Usage:
//   std::vector<ModelReport> reports = AnalyzeModels(ExpandModelPaths({"a.onnx", "models/"}), request);
//   std::cout << RenderBatchText(reports);
//   return WorstExitCode(reports);
//
// Why each model is independent: one broken file must not hide the figures of
// the others, so a failure is kept as that model's one-line error and the run
// goes on; the exit code is the worst of all (2 > 1 > 0). Analyses run on
// --jobs threads, and the output keeps the order the models were given in.
#ifndef ONNX_FOOTPRINT_ANALYZER_BATCH_H_
#define ONNX_FOOTPRINT_ANALYZER_BATCH_H_

#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis.h"
#include "analyzer/symbolic/sweep.h"
#include "analyzer/budgets.h"
#include "analyzer/json_writer.h"
#include "analyzer/report_diff.h"
#include "nlohmann/json.hpp"

namespace footprint {

// One model of the run: analyzed, or failed with a one-line error.
struct ModelReport {
  std::string path;                    // As given, or as found below a directory.
  std::optional<Analysis> analysis;    // Set when the model was analyzed.
  std::string error;                   // One line naming the problem, when it was not.
  std::optional<ReportDiff> baseline;  // Against --baseline-report, when given.
  int exit_code = 0;                   // 0 ok, 1 over a budget or the device, 2 failed.
};

// A model path and, when expanding it failed, why.
struct ModelPath {
  std::string path;   // A file as given, or a *.onnx file found below a directory.
  std::string error;  // Set when a directory could not be read or holds no *.onnx.
};

// Files stay as given (even without the .onnx suffix); a directory becomes
// every regular file named *.onnx below it, recursively, sorted by path.
std::vector<ModelPath> ExpandModelPaths(const std::vector<std::string>& arguments);

struct BatchRequest {
  AnalyzeOptions options;                    // The same for every model.
  Budgets budgets;                           // Checked for every model.
  std::optional<ReportFigures> baseline;     // --baseline-report (one model only).
  int jobs = 1;                              // Threads; >= 1.
  bool progress = false;                     // Draw a progress line on stderr.
  std::optional<symbolic::SweepRequest> sweep;  // --sweep: plan each model at each value of a dim.
};

// With several models, each model takes the --dim bindings that name one of
// its graph inputs' dims, so one run covers models with different dynamic
// dims; a binding that no model names goes to `run_errors` (exit 2).
std::vector<ModelReport> AnalyzeModels(const std::vector<ModelPath>& models, const BatchRequest& request,
                                       std::vector<std::string>* run_errors = nullptr);

// The worst exit code of the run: 2 > 1 > 0.
int WorstExitCode(const std::vector<ModelReport>& reports);

// The status column of the summary: "ok", "over budget", "does not fit", "error".
std::string StatusOf(const ModelReport& report);

// Text: each model's report, then the summary table (one row per model).
std::string RenderBatchText(const std::vector<ModelReport>& reports);
std::string RenderSummaryText(const std::vector<ModelReport>& reports);
// JSON: one model's report (report.h's WriteAnalysisJsonMembers), with
// "baseline" when it has one, or {"model": {"path"}, "error"} when it failed;
// several models: {"schema_version": 1, "reports": [...]}. Write* stream it
// into a writer; Render* return the text with its final newline.
void WriteModelReportJson(const ModelReport& report, JsonWriter& json);
void WriteBatchJson(const std::vector<ModelReport>& reports, JsonWriter& json);
std::string RenderModelReportJson(const ModelReport& report);
std::string RenderBatchJson(const std::vector<ModelReport>& reports);
// The same as DOMs, for callers that look values up (parsed from the text).
nlohmann::ordered_json ModelReportToJson(const ModelReport& report);
nlohmann::ordered_json BatchToJson(const std::vector<ModelReport>& reports);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_BATCH_H_
