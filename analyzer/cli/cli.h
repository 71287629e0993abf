// The onnx-footprint command line: `onnx-footprint COMMAND [ARGS]`.
//
// Exit codes, for every command:
//   0  success
//   1  a budget or the device's capacity is exceeded (the report is still printed)
//   2  usage or input error: one line on stderr naming the file and the
//      problem, nothing on stdout, no output file written
#ifndef ONNX_FOOTPRINT_ANALYZER_CLI_CLI_H_
#define ONNX_FOOTPRINT_ANALYZER_CLI_CLI_H_

#include <string>
#include <vector>

namespace footprint {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNotWithinLimits = 1;
inline constexpr int kExitBadInput = 2;

// `args` are the words after the program name.
int RunCli(const std::vector<std::string>& args);

// `args` are the words after `analyze`.
int RunAnalyzeCommand(const std::vector<std::string>& args);

}  // namespace footprint

#endif  // ONNX_FOOTPRINT_ANALYZER_CLI_CLI_H_
