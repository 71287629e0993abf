// Budgets: the checks, and the gate they make of the command line.
#include "analyzer/cli/budgets.h"

#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::AddReluModel;
using ::footprint::testing::AnalyzeJson;
using ::footprint::testing::CliRun;
using ::footprint::testing::ExpectOneLineError;
using ::footprint::testing::Occurrences;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::UnboundBatchModel;
using ::footprint::testing::WriteScratchFile;

TEST(BudgetsTest, EqualToTheLimitIsWithinIt) {
  const MemoryFigures memory{.weights_bytes = 100, .arena_bytes = 200, .peak_bytes = 300};
  const std::vector<BudgetCheck> checks =
      CheckBudgets(memory, {.max_peak_bytes = 300, .max_arena_bytes = 199, .max_weights_bytes = 1000});
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].figure, "peak");
  EXPECT_TRUE(checks[0].ok);
  EXPECT_EQ(checks[1].figure, "arena");
  EXPECT_FALSE(checks[1].ok);
  EXPECT_EQ(checks[1].actual_bytes, 200);
  EXPECT_EQ(checks[1].limit_bytes, 199);
  EXPECT_TRUE(checks[2].ok);
  EXPECT_FALSE(AllWithinBudget(checks));
  EXPECT_TRUE(CheckBudgets(memory, {}).empty());
  EXPECT_NE(BudgetViolation(checks[1]).find("--max-arena"), std::string::npos);
}

TEST(BudgetCliTest, WithinBudgetsIsExitZero) {
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  const int64_t peak = AnalyzeJson(model)["memory"]["peak_bytes"];
  const CliRun run = RunCliCaptured({"analyze", model, "--max-peak", std::to_string(peak), "--max-arena=1MiB",
                          "--max-weights", "64B"});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_TRUE(run.err.empty()) << run.err;
  EXPECT_NE(run.out.find("Budgets"), std::string::npos);
}

TEST(BudgetCliTest, EachExceededBudgetIsOneLineAndExitOne) {
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  const nlohmann::json figures = AnalyzeJson(model)["memory"];
  const int64_t peak = figures["peak_bytes"];
  const CliRun run = RunCliCaptured({"analyze", model, "--max-peak", std::to_string(peak - 1), "--max-arena", "1",
                          "--max-weights", "1MiB"});
  EXPECT_EQ(run.exit_code, kExitNotWithinLimits);
  EXPECT_NE(run.out.find("peak"), std::string::npos) << "the report is still printed";
  EXPECT_EQ(Occurrences(run.err, "\n"), 2) << run.err;
  EXPECT_NE(run.err.find("--max-peak"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--max-arena"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("--max-weights"), std::string::npos) << run.err;
}

TEST(BudgetCliTest, BudgetsAppearInJson) {
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--format", "json", "--max-weights", "63", "--max-peak", "1GiB"});
  EXPECT_EQ(run.exit_code, kExitNotWithinLimits);
  const nlohmann::json json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["budgets"].size(), 2u);
  EXPECT_EQ(json["budgets"][0], (nlohmann::json{{"figure", "peak"}, {"limit_bytes", 1073741824},
                                                {"actual_bytes", json["memory"]["peak_bytes"]}, {"ok", true}}));
  EXPECT_EQ(json["budgets"][1], (nlohmann::json{{"figure", "weights"}, {"limit_bytes", 63}, {"actual_bytes", 64},
                                                {"ok", false}}));
  EXPECT_TRUE(AnalyzeJson(model)["budgets"].empty());
}

TEST(BudgetCliTest, IncompleteFiguresAreSaidWithTheBudget) {
  const std::string model = WriteScratchFile("unsized.onnx", UnboundBatchModel());
  const CliRun run = RunCliCaptured({"analyze", model, "--max-peak", "1MiB"});
  EXPECT_EQ(run.exit_code, kExitOk);
  EXPECT_NE(run.err.find("incomplete"), std::string::npos) << run.err;
}

TEST(BudgetCliTest, MalformedSizeIsExitTwo) {
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  for (const std::string flag : {"--max-peak", "--max-arena", "--max-weights"}) {
    SCOPED_TRACE(flag);
    ExpectOneLineError(RunCliCaptured({"analyze", model, flag, "12XB"}), flag);
    ExpectOneLineError(RunCliCaptured({"analyze", model, flag, "-5"}), flag);
    ExpectOneLineError(RunCliCaptured({"analyze", model, flag + "="}), flag);
    ExpectOneLineError(RunCliCaptured({"analyze", model, flag}), flag);
  }
}

}  // namespace
}  // namespace footprint
