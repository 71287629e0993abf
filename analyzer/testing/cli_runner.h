// Runs the onnx-footprint command line in-process for tests, capturing what
// it prints, and the few file helpers every CLI test needs.
//
//   const std::string model = WriteScratchFile("small.onnx", builder.Serialize());
//   CliRun run = RunCliCaptured({"analyze", model, "--format", "json"});
//   EXPECT_EQ(run.exit_code, kExitOk) << run.err;
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_CLI_RUNNER_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_CLI_RUNNER_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/cli/cli.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/scratch_dir.h"

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

// The path of `name` (which may hold folders) in this process's scratch
// directory, its parent folders created.
inline std::string ScratchPath(const std::string& name) {
  const std::filesystem::path path = std::filesystem::path(ScratchDir()) / name;
  std::filesystem::create_directories(path.parent_path());
  return path.string();
}

// Writes `bytes` to ScratchPath(name) and returns that path.
inline std::string WriteScratchFile(const std::string& name, const std::string& bytes) {
  const std::string path = ScratchPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

// How many times `needle` occurs in `haystack` (overlaps counted).
inline int64_t Occurrences(const std::string& haystack, const std::string& needle) {
  int64_t count = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++count;
  return count;
}

// The contract for bad input: exit 2, nothing on stdout, one line on stderr
// that contains `must_contain`.
inline void ExpectOneLineError(const CliRun& run, const std::string& must_contain) {
  EXPECT_EQ(run.exit_code, kExitBadInput) << run.out << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
  EXPECT_NE(run.err.find(must_contain), std::string::npos) << run.err;
  EXPECT_EQ(Occurrences(run.err, "\n"), 1) << run.err;
}

// `analyze MODEL FLAGS... --format json` (no time beyond the planner's
// heuristics), expected to succeed, parsed; an empty object when it failed.
inline nlohmann::json AnalyzeJson(const std::string& model, const std::vector<std::string>& flags = {}) {
  std::vector<std::string> args = {"analyze", model};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--format", "json", "--time-limit", "0"});
  const CliRun run = RunCliCaptured(args);
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  return run.exit_code == kExitOk ? nlohmann::json::parse(run.out) : nlohmann::json::object();
}

// `bytes` written to a scratch file named after the running test.
inline std::string WriteTestModel(const std::string& bytes) {
  return WriteScratchFile(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".onnx",
                          bytes);
}

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_CLI_RUNNER_H_
