// `analyze --emit-plan` and `replay` at the command line: both formats,
// the exit codes and one-line errors, nothing written on bad input.
#include <algorithm>
#include <filesystem>
#include <functional>

#include "absl/strings/match.h"
#include "analyzer/plan/plan_file.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::ReadWholeFile;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::ScratchPath;
using ::footprint::testing::WriteScratchFile;

TEST(EmitPlanFlag, WritesJsonAndHeaderByExtension) {
  const std::string model = WriteScratchFile("emit/add_relu.onnx", testing::AddReluModel());
  const std::string json = ScratchPath("emit/plan.json");
  const std::string header = ScratchPath("emit/plan.h");
  testing::CliRun run = RunCliCaptured({"analyze", model, "--emit-plan", json});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  absl::StatusOr<ArenaPlan> plan = ParsePlanJson(ReadWholeFile(json));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->model_path, model);
  EXPECT_EQ(plan->model_hash, *ModelHash(model));
  run = RunCliCaptured({"analyze", model, "--emit-plan=" + header});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(ReadWholeFile(header), "FP_PLAN_INITIALIZER"));
  run = RunCliCaptured({"replay", json});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.out, "no live tensor was overwritten")) << run.out;
}

TEST(EmitPlanFlag, RefusesBadInputWritingNothing) {
  const std::string model = WriteScratchFile("emit_bad/add_relu.onnx", testing::AddReluModel());
  const std::string unbound = WriteScratchFile("emit_bad/unbound.onnx", testing::UnboundBatchModel());
  const std::string report = ScratchPath("emit_bad/report.txt");
  const std::string plan = ScratchPath("emit_bad/plan.json");
  testing::CliRun run = RunCliCaptured({"analyze", model, "--emit-plan", ScratchPath("emit_bad/plan.txt")});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(run.err, "--emit-plan expects a FILE ending in .json or .h")) << run.err;
  run = RunCliCaptured({"analyze", model, "--emit-plan"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(run.err, "--emit-plan needs a value")) << run.err;
  run = RunCliCaptured({"analyze", model, model, "--emit-plan", plan});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(run.err, "one model")) << run.err;
  run = RunCliCaptured({"analyze", unbound, "--emit-plan", plan, "--output", report});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(run.err, "unsized")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "--dim")) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_FALSE(std::filesystem::exists(plan));
  EXPECT_FALSE(std::filesystem::exists(report));
  run = RunCliCaptured({"analyze", model, "--emit-plan", "/no/such/dir/plan.json"});
  EXPECT_EQ(run.exit_code, 2);
}

class ReplayCli : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = WriteScratchFile("replay_cli/add_relu.onnx", testing::AddReluModel());
    plan_ = testing::ScratchPath("replay_cli/plan.json");
    ASSERT_EQ(RunCliCaptured({"analyze", model_, "--emit-plan", plan_}).exit_code, 0);
    json_ = nlohmann::json::parse(testing::ReadWholeFile(plan_));
  }
  testing::CliRun ReplayEdited(const std::function<void(nlohmann::json&)>& edit, const std::string& name) {
    nlohmann::json edited = json_;
    edit(edited);
    return RunCliCaptured({"replay", WriteScratchFile("replay_cli/" + name, edited.dump())});
  }
  std::string model_, plan_;
  nlohmann::json json_;
};

TEST_F(ReplayCli, ExitsZeroOnTheEmittedPlan) {
  testing::CliRun run = RunCliCaptured({"replay", plan_});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  run = RunCliCaptured({"replay", plan_, "--model", model_});
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST_F(ReplayCli, ExitsOneOnAClobberWithOneLine) {
  testing::CliRun run = ReplayEdited(
      [](nlohmann::json& j) {
        j["tensors"][1]["offset"] = j["tensors"][0]["offset"];  // a<b>&"c" over x, both live at add.
      },
      "clobbered.json");
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "overwrote live tensor")) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
}

TEST_F(ReplayCli, ExitsTwoOnBadInput) {
  const auto expect_two = [](const testing::CliRun& run, const std::string& expected) {
    EXPECT_EQ(run.exit_code, 2) << run.err;
    EXPECT_TRUE(absl::StrContains(run.err, expected)) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_TRUE(run.out.empty());
  };
  expect_two(ReplayEdited([](nlohmann::json& j) { j["plan_version"] = 7; }, "v7.json"), "plan_version 7");
  expect_two(ReplayEdited([](nlohmann::json& j) { j["model"]["hash"] = "mx64:0000000000000000"; }, "hash.json"),
             "does not match the model");
  expect_two(ReplayEdited([](nlohmann::json& j) { j["tensors"] = 3; }, "tensors.json"), "tensors");
  expect_two(RunCliCaptured({"replay", WriteScratchFile("replay_cli/garbage.json", "{plan")}), "not valid JSON");
  expect_two(RunCliCaptured({"replay", "/no/such/plan.json"}), "cannot read the plan");
  expect_two(RunCliCaptured({"replay"}), "replay needs a PLAN.json");
  expect_two(RunCliCaptured({"replay", plan_, "--model"}), "--model needs a file name");
  expect_two(RunCliCaptured({"replay", plan_, "--model", "/no/such.onnx"}), "cannot read the model file");
  expect_two(RunCliCaptured({"replay", plan_, "--frobnicate"}), "unknown option --frobnicate");
  expect_two(ReplayEdited([](nlohmann::json& j) { j["tiers"][0]["arena_bytes"] = int64_t{1} << 50; }, "huge.json"),
             "too large to replay");
}

TEST(PlanHelp, NamesEmitPlanAndReplay) {
  testing::CliRun run = RunCliCaptured({"--help"});
  EXPECT_TRUE(absl::StrContains(run.out, "onnx-footprint replay PLAN.json")) << run.out;
  run = RunCliCaptured({"analyze", "--help"});
  EXPECT_TRUE(absl::StrContains(run.out, "--emit-plan FILE")) << run.out;
  run = RunCliCaptured({"replay", "--help"});
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(run.out, "Exit codes: 0 no live tensor was ever overwritten")) << run.out;
}

}  // namespace
}  // namespace footprint
