// The onnx-footprint command line: `onnx-footprint COMMAND [ARGS]`.
//
// Exit codes, for every command:
//   0  success
//   1  a budget or the device's capacity is exceeded (the report is still printed)
//   2  usage or input error: one line on stderr naming the file and the
//      problem, nothing on stdout, no output file written
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_CLI_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_CLI_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/cli/batch.h"
#include "analyzer/cli/cli_reports.h"
#include "analyzer/memory/analysis_result.h"
#include "analyzer/memory/sweep.h"

namespace footprint {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNotWithinLimits = 1;
inline constexpr int kExitBadInput = 2;

// `args` are the words after the program name.
int RunCli(const std::vector<std::string>& args);

// `args` are the words after `analyze`.
int RunAnalyzeCommand(const std::vector<std::string>& args);

// The words after `analyze`, parsed: what RunAnalyzeCommand does, as data, so
// that another front end (python/) takes exactly the CLI's flags.
struct AnalyzeCommand {
  std::vector<std::string> models;    // Files and folders, as given.
  AnalyzeOptions options;             // Bindings and modes; the device is resolved by MakeBatchRequest.
  BatchRequest batch;                 // Budgets and --jobs (options and sweep are set by MakeBatchRequest).
  ReportRequest report;               // --format, --output, --baseline-report.
  std::string device_name;            // --device (ParseAnalyzeArgs defaults it to generic-cpu).
  std::string device_file;            // --device-file, "" = none; wins over --device.
  std::optional<SweepRequest> sweep;  // --sweep.
  bool help = false;                  // -h or --help: print AnalyzeUsage() and nothing else.
};

// A bad flag or value is InvalidArgument with the one-line message the CLI
// prints (before its "(see `onnx-footprint analyze --help`)").
absl::StatusOr<AnalyzeCommand> ParseAnalyzeArgs(const std::vector<std::string>& args);

// Resolves the device profile (a bad --device or --device-file is an error
// naming it) and gathers the request AnalyzeModels takes.
absl::StatusOr<BatchRequest> MakeBatchRequest(const AnalyzeCommand& command);

// `onnx-footprint analyze --help`.
const char* AnalyzeUsage();

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_CLI_H_
