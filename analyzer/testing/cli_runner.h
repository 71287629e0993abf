// Runs the onnx-footprint command line in-process for tests, capturing what
// it prints.
//
//   CliRun run = RunCliCaptured({"analyze", path, "--format", "json"});
//   EXPECT_EQ(run.exit_code, kExitOk) << run.err;
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_CLI_RUNNER_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_CLI_RUNNER_H_

#include <string>
#include <vector>

#include "analyzer/cli/cli.h"
#include "gtest/gtest.h"

namespace footprint::testing {

struct CliRun {
  int exit_code = 0;  // What RunCli returned.
  std::string out;    // Captured stdout.
  std::string err;    // Captured stderr.
};

inline CliRun RunCliCaptured(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliRun run;
  run.exit_code = RunCli(args);
  run.out = ::testing::internal::GetCapturedStdout();
  run.err = ::testing::internal::GetCapturedStderr();
  return run;
}

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_CLI_RUNNER_H_
