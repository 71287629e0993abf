// The reports of a run: one model's (analyzed, or failed with its one-line
// error) and the run's, as text with a summary table, or as JSON.
//
// Why a type of its own: every format (report.h's text and JSON, markdown.h,
// html.h) renders the same list of models, and the CLI's batch (cli/batch.h)
// fills it; the type belongs with the reports that read it.
#ifndef ONNX_FOOTPRINT_ANALYZER_REPORT_MODEL_REPORT_H_
#define ONNX_FOOTPRINT_ANALYZER_REPORT_MODEL_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include "analyzer/memory/analysis_result.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/json_writer.h"

namespace footprint {

// One model of the run: analyzed, or failed with a one-line error.
struct ModelReport {
  std::string path;                    // As given, or as found below a directory.
  std::optional<Analysis> analysis;    // Set when the model was analyzed.
  std::string error;                   // One line naming the problem, when it was not.
  std::optional<ReportDiff> baseline;  // Against --baseline-report, when given.
  int exit_code = 0;                   // 0 ok, 1 over a budget or the device, 2 failed.
};

// The status column of the summary: "ok", "over budget", "does not fit", "error".
std::string StatusOf(const ModelReport& report);

// Text: each model's report, then the summary table (one row per model).
std::string RenderBatchText(const std::vector<ModelReport>& reports);
std::string RenderSummaryText(const std::vector<ModelReport>& reports);
// JSON: one model's report (report.h's WriteAnalysisJsonMembers), with
// "baseline" when it has one, or {"model": {"path"}, "error"} when it failed;
// several models: {"schema_version": 1, "reports": [...]}, streamed into a
// writer (JsonWriter::Release gives the text).
void WriteModelReportJson(const ModelReport& report, JsonWriter& json);
void WriteBatchJson(const std::vector<ModelReport>& reports, JsonWriter& json);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_REPORT_MODEL_REPORT_H_
