// The shape flags on the command line: --input-shape, --dim-default,
// --tensor-shape, --sweep, and formulas in the reports.
#include "analyzer/cli/cli.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/scratch_dir.h"

namespace footprint {
namespace {

using ::footprint::testing::ModelBuilder;

using ::footprint::testing::CliRun;
using ::footprint::testing::RunCliCaptured;

// x: batch x 16 -> Relu -> r -> Relu -> y: three 64*batch-byte tensors.
std::string ModelPath() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {"batch", 16})
      .Add("Relu", {"x"}, {"r"}, "relu")
      .Add("Relu", {"r"}, {"y"}, "relu2")
      .Output("y");
  // One file per test: ctest runs the tests in parallel processes.
  return testing::WriteScratchFile(
      std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".onnx", builder.Serialize());
}

TEST(SymbolicCliTest, UnboundDimsPrintFormulas) {
  CliRun run = RunCliCaptured({"analyze", ModelPath(), "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["tensors"][0]["bytes_expr"], "64*batch");
  EXPECT_EQ(json["memory"]["naive_expr"], "192*batch");
  EXPECT_EQ(json["memory"]["lower_bound_expr"], "128*batch");
  EXPECT_EQ(json["memory"]["symbols"], nlohmann::json::array({"batch"}));
  CliRun text = RunCliCaptured({"analyze", ModelPath()});
  EXPECT_NE(text.out.find("64*batch bytes"), std::string::npos) << text.out;
}

TEST(SymbolicCliTest, InputShapeAndDimDefaultBind) {
  CliRun shaped = RunCliCaptured({"analyze", ModelPath(), "--input-shape", "x=4x16", "--format", "json"});
  ASSERT_EQ(shaped.exit_code, kExitOk) << shaped.err;
  EXPECT_EQ(nlohmann::json::parse(shaped.out)["memory"]["naive_bytes"], 3 * 256);
  CliRun defaulted = RunCliCaptured({"analyze", ModelPath(), "--dim-default=2", "--format", "json"});
  ASSERT_EQ(defaulted.exit_code, kExitOk) << defaulted.err;
  EXPECT_EQ(nlohmann::json::parse(defaulted.out)["memory"]["naive_bytes"], 3 * 128);
}

TEST(SymbolicCliTest, SweepListsEachValue) {
  CliRun run = RunCliCaptured({"analyze", ModelPath(), "--sweep", "batch=1,4", "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json sweep = nlohmann::json::parse(run.out)["sweep"];
  EXPECT_EQ(sweep["dim"], "batch");
  ASSERT_EQ(sweep["points"].size(), 2u);
  EXPECT_EQ(sweep["points"][1]["value"], 4);
  EXPECT_EQ(sweep["points"][1]["lower_bound_bytes"], 2 * 256);
  CliRun text = RunCliCaptured({"analyze", ModelPath(), "--sweep", "batch=1,4"});
  EXPECT_NE(text.out.find("Sweep of batch"), std::string::npos) << text.out;
}

TEST(SymbolicCliTest, BadBindingsAreOneLineErrors) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--input-shape", "x"},
           {"--input-shape", "x=4xa"},
           {"--dim-default", "-1"},
           {"--tensor-shape", "r=?"},
           {"--sweep", "batch="},
           {"--input-shape", "nope=1x16"},
           {"--input-shape", "x=4x16x1"},
           {"--tensor-shape", "missing=2"},
           {"--sweep", "typo=1,2"},
       }) {
    std::vector<std::string> full = {"analyze", ModelPath()};
    full.insert(full.end(), args.begin(), args.end());
    CliRun run = RunCliCaptured(full);
    EXPECT_EQ(run.exit_code, kExitBadInput) << args[0] << " " << args[1];
    EXPECT_TRUE(run.out.empty()) << run.out;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  }
}

}  // namespace
}  // namespace footprint
