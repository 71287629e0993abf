// ParseAnalyzeArgs and MakeBatchRequest: the analyze flags as data (what the
// Python module hands them), and the CLI's own messages for bad ones.
#include <string>
#include <vector>

#include "analyzer/cli/cli.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

TEST(ParseAnalyzeArgs, FlagsBecomeOptionsBudgetsAndDevice) {
  absl::StatusOr<AnalyzeCommand> command =
      ParseAnalyzeArgs({"m.onnx", "--dim", "batch=2", "--input-shape", "x=1x3", "--no-alias", "--schedule=given",
                        "--max-peak", "1KiB", "--device", "stm32h743", "--time-limit", "0"});
  ASSERT_TRUE(command.ok()) << command.status();
  EXPECT_EQ(command->models, std::vector<std::string>{"m.onnx"});
  EXPECT_EQ(command->options.dims.at("batch"), 2);
  EXPECT_EQ(command->options.input_shapes.at("x"), (std::vector<int64_t>{1, 3}));
  EXPECT_FALSE(command->options.alias);
  EXPECT_TRUE(command->options.inplace);
  EXPECT_FALSE(command->options.optimize_schedule);
  EXPECT_EQ(command->batch.budgets.max_peak_bytes, 1024);
  EXPECT_EQ(command->device_name, "stm32h743");
  absl::StatusOr<BatchRequest> batch = MakeBatchRequest(*command);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->options.device_profile->name(), "stm32h743");
  EXPECT_EQ(batch->options.dims.at("batch"), 2);
  EXPECT_EQ(batch->budgets.max_peak_bytes, 1024);
  EXPECT_EQ(batch->options.planner_time_limit, absl::ZeroDuration());
}

TEST(ParseAnalyzeArgs, AccumulateIsAModeLikeTheOthers) {
  EXPECT_FALSE(ParseAnalyzeArgs({"m.onnx", "--no-accumulate"})->options.accumulate);
  EXPECT_FALSE(ParseAnalyzeArgs({"m.onnx", "--baseline"})->options.accumulate);
  EXPECT_TRUE(ParseAnalyzeArgs({"m.onnx", "--baseline", "--accumulate"})->options.accumulate);  // Later flags win.
  absl::StatusOr<AnalyzeCommand> typo = ParseAnalyzeArgs({"m.onnx", "--accumulated"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("--accumulated"), std::string::npos) << typo.status();
}

TEST(ParseAnalyzeArgs, DefaultsAreEveryModeOnGenericCpu) {
  absl::StatusOr<AnalyzeCommand> command = ParseAnalyzeArgs({"m.onnx"});
  ASSERT_TRUE(command.ok());
  EXPECT_TRUE(command->options.optimize_schedule && command->options.alias && command->options.inplace);
  EXPECT_TRUE(command->options.fold_constants && command->options.accumulate);
  EXPECT_EQ(command->device_name, "generic-cpu");
  EXPECT_FALSE(command->help);
  EXPECT_TRUE(ParseAnalyzeArgs({"--help"})->help);
}

TEST(ParseAnalyzeArgs, BadFlagsAreTheUsageMessage) {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"m.onnx", "--schedule", "fast"}, "--schedule must be given or optimized, got 'fast'"},
           {{"m.onnx", "--dim"}, "--dim needs a value"},
           {{"m.onnx", "--frobnicate"}, "unknown option --frobnicate"},
           {{}, "analyze needs a MODEL.onnx"}}) {
    absl::StatusOr<AnalyzeCommand> command = ParseAnalyzeArgs(args);
    ASSERT_FALSE(command.ok());
    EXPECT_EQ(command.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(command.status().message(), message);
  }
}

TEST(MakeBatchRequest, AnUnknownDeviceIsAnError) {
  absl::StatusOr<AnalyzeCommand> command = ParseAnalyzeArgs({"m.onnx", "--device", "no-such-board"});
  ASSERT_TRUE(command.ok());
  absl::StatusOr<BatchRequest> batch = MakeBatchRequest(*command);
  ASSERT_FALSE(batch.ok());
  EXPECT_NE(batch.status().message().find("no-such-board"), std::string::npos) << batch.status();
}

}  // namespace
}  // namespace footprint
