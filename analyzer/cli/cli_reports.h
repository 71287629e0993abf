// The report side of the command line: rendering one or several analyses in
// the chosen format, budgets on stderr, and the `diff` command.
//
// Kept apart from cli.cc so flag parsing stays in one short place and every
// output rule (what goes to stdout, what to stderr, which exit code) lives here.
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_CLI_REPORTS_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_CLI_REPORTS_H_

#include <string>
#include <vector>

#include "analyzer/cli/batch.h"

namespace footprint {

struct ReportRequest {
  std::string format = "text";       // text, json, md or html.
  std::string output_path;           // "" = stdout; else written whole or not at all.
  std::string baseline_report_path;  // --baseline-report OLD.json, "" = none.
  std::string plan_path;             // --emit-plan FILE.json|FILE.h, "" = none (one model only).
};

// True for the formats `analyze --format` takes.
bool IsReportFormat(const std::string& format);

// Analyzes every model (directories expanded), writes the report and returns
// the exit code: the worst over the models (2 > 1 > 0). One model that fails
// prints its error and writes nothing; with several, the others still report.
int AnalyzeAndReport(const std::vector<std::string>& model_arguments, const BatchRequest& batch,
                     const ReportRequest& report);

// `onnx-footprint diff OLD.json NEW.json [--max-increase PCT|SIZE] [--format text|md|json] [--output FILE]`.
int RunDiffCommand(const std::vector<std::string>& args);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_CLI_REPORTS_H_
