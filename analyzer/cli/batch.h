// Analyzing several models in one run, as a CI job over a models/ folder does.
//
// Usage:
//   std::vector<ModelReport> reports = AnalyzeModels(ExpandModelPaths({"a.onnx", "models/"}), request);
//   std::cout << RenderBatchText(reports);  // report/model_report.h
//   return WorstExitCode(reports);
//
// Why each model is independent: one broken file must not hide the figures of
// the others, so a failure is kept as that model's one-line error and the run
// goes on; the exit code is the worst of all (2 > 1 > 0). Analyses run on
// --jobs threads, and the output keeps the order the models were given in.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_BATCH_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_BATCH_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/cli/budgets.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/memory/sweep.h"
#include "analyzer/report/diff.h"
#include "analyzer/report/model_report.h"

namespace footprint {

// A model path and, when expanding it failed, why.
struct ModelPath {
  std::string path;   // A file as given, or a *.onnx file found below a directory.
  std::string error;  // Set when a directory could not be read or holds no *.onnx.
  // A model already in memory (python/: a ModelProto or bytes): when set, it
  // is parsed instead of reading `path`, which only names it in the report.
  std::optional<std::string_view> bytes;
  std::string external_data_dir;  // With `bytes`: where its external data locations resolve.
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
  std::optional<SweepRequest> sweep;  // --sweep: plan each model at each value of a dim.
};

// With several models, each model takes the --dim bindings that name one of
// its graph inputs' dims, so one run covers models with different dynamic
// dims; a binding that no model names goes to `run_errors` (exit 2).
std::vector<ModelReport> AnalyzeModels(const std::vector<ModelPath>& models, const BatchRequest& request,
                                       std::vector<std::string>* run_errors = nullptr);

// The worst exit code of the run: 2 > 1 > 0.
int WorstExitCode(const std::vector<ModelReport>& reports);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_BATCH_H_
