// The folding and runtime-profile flags: --fold/--no-fold, --baseline, --runtime.
#include <algorithm>
#include <string>

#include "analyzer/cli/cli.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeJson;
using ::footprint::testing::CliRun;
using ::footprint::testing::ExpectOneLineError;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::WriteScratchFile;

// x (1x64 float) MatMul a 64x64 weight built by ConstantOfShape: one folded node.
std::string FoldableModel() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 64})
      .Int64Initializer("shape", {64, 64})
      .Add("ConstantOfShape", {"shape"}, {"w"})
      .Add("MatMul", {"x", "w"}, {"y"})
      .Output("y");
  return builder.Serialize();
}

TEST(RuntimeCliTest, FoldingIsOnByDefaultAndOffInTheBaseline) {
  const std::string path = WriteScratchFile("foldable.onnx", FoldableModel());
  nlohmann::json json = AnalyzeJson(path, {});
  EXPECT_EQ(json["options"]["fold"], true);
  EXPECT_EQ(json["memory"]["folded_weights_bytes"], 64 * 64 * 4);
  EXPECT_EQ(json["memory"]["peak_bytes"], json["memory"]["weights_bytes"].get<int64_t>() + 64 * 64 * 4 +
                                              json["memory"]["arena_bytes"].get<int64_t>());
  EXPECT_TRUE(json["options"]["runtime"].is_null());
  for (const char* off : {"--no-fold", "--baseline"}) {
    json = AnalyzeJson(path, {off});
    EXPECT_EQ(json["options"]["fold"], false) << off;
    EXPECT_EQ(json["memory"]["folded_weights_bytes"], 0) << off;
    EXPECT_EQ(json["memory"]["arena_bytes"], 256 + 256 + 64 * 64 * 4) << off;  // w is an arena tensor again.
  }
  json = AnalyzeJson(path, {"--baseline", "--fold"});  // Later flags win.
  EXPECT_EQ(json["options"]["fold"], true);
}

TEST(RuntimeCliTest, TextReportNamesTheFoldedWeights) {
  const std::string path = WriteScratchFile("foldable.onnx", FoldableModel());
  const CliRun run = RunCliCaptured({"analyze", path, "--runtime", "onnxruntime-cpu"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_NE(run.out.find("folded weights"), std::string::npos);
  EXPECT_NE(run.out.find("kernel workspaces"), std::string::npos);
  // ORT's default options: the weights it holds after load, what its arena keeps after a run and
  // the caller's inputs; creation peaks lower.
  EXPECT_NE(run.out.find("during the first run: runtime weights + runtime reserved + inputs"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("runtime tensors"), std::string::npos);
  EXPECT_NE(run.out.find("runtime load peak"), std::string::npos);
  // Arena off, the run holds less than creation, which packs the MatMul's B beside it.
  const CliRun noarena = RunCliCaptured({"analyze", path, "--runtime", "onnxruntime-cpu:avx2,noarena"});
  ASSERT_EQ(noarena.exit_code, kExitOk) << noarena.err;
  EXPECT_NE(noarena.out.find("at session creation (pre-packing): runtime load peak"), std::string::npos)
      << noarena.out;
}

TEST(RuntimeCliTest, RuntimeFlag) {
  const std::string path = WriteScratchFile("foldable.onnx", FoldableModel());
  nlohmann::json json = AnalyzeJson(path, {"--runtime=onnxruntime-cpu"});
  EXPECT_EQ(json["options"]["runtime"], "onnxruntime-cpu");
  EXPECT_EQ(json["memory"]["workspace_bytes"], 0);
  // The process's high-water: the larger of creation and the first run (weights after load, what the
  // arena keeps, the caller's input: x, 64 floats).
  const nlohmann::json& memory = json["memory"];
  const int64_t first_run = memory["runtime_weights_bytes"].get<int64_t>() +
                            memory["runtime_reserved_bytes"].get<int64_t>() + 64 * 4;
  EXPECT_EQ(memory["peak_bytes"].get<int64_t>(),
            std::max(first_run, memory["runtime_load_peak_bytes"].get<int64_t>()));
  EXPECT_EQ(memory["runtime_peak_phase"], "first run");
  EXPECT_GT(memory["runtime_tensor_bytes"].get<int64_t>(), 0);
  nlohmann::json noarena = AnalyzeJson(path, {"--runtime=onnxruntime-cpu:noarena"});
  const int64_t noarena_run = noarena["memory"]["runtime_weights_bytes"].get<int64_t>() +
                              noarena["memory"]["runtime_tensor_bytes"].get<int64_t>() +
                              noarena["memory"]["runtime_overhead_bytes"].get<int64_t>();
  EXPECT_EQ(noarena["memory"]["peak_bytes"].get<int64_t>(),
            std::max(noarena_run, noarena["memory"]["runtime_load_peak_bytes"].get<int64_t>()));
  for (const char* key : {"fused_nodes", "layout_nodes", "reorder_nodes"}) {
    EXPECT_TRUE(json["modes"]["runtime"][key].is_number_integer()) << key;
  }
  nlohmann::json plain = AnalyzeJson(path, {});
  EXPECT_EQ(plain["modes"]["runtime"]["fused_nodes"], 0);
  EXPECT_EQ(plain["memory"]["runtime_tensor_bytes"], 0);
  ExpectOneLineError(RunCliCaptured({"analyze", path, "--runtime", "unknown-name"}),
                     "--runtime must be one of onnxruntime-cpu, got 'unknown-name'");
  ExpectOneLineError(RunCliCaptured({"analyze", path, "--runtime"}), "--runtime needs a value");
  ExpectOneLineError(RunCliCaptured({"analyze", path, "--runtime="}), "--runtime must be one of");
}

TEST(RuntimeCliTest, SizesPastTheArenasLargestEndWithTheOverflowErrorNotAHang) {
  // N x 2^20 floats with N = 3 x 2^39: each tensor is 3 x 2^61 bytes, past what
  // ORT's arena replay (bfc_arena.h) can double to; it saturates, and the
  // analysis refuses the sizes, whose sum overflows, before any schedule
  // or plan sums them (with or without --runtime).
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {"N", 1 << 20}).Add("Relu", {"x"}, {"h"}).Add("Relu", {"h"}, {"y"});
  builder.Output("y");
  const std::string path = WriteScratchFile("huge_relu.onnx", builder.Serialize());
  ExpectOneLineError(RunCliCaptured({"analyze", path, "--dim", "N=1649267441664"}), "overflows 64 bits");
  for (const char* runtime : {"onnxruntime-cpu", "onnxruntime-cpu:noarena"}) {
    const CliRun run = RunCliCaptured({"analyze", path, "--dim", "N=1649267441664", "--runtime", runtime});
    ExpectOneLineError(run, "overflows 64 bits");
  }
}

TEST(RuntimeCliTest, NoarenaIsTakenOnce) {
  const std::string path = WriteScratchFile("foldable.onnx", FoldableModel());
  ExpectOneLineError(RunCliCaptured({"analyze", path, "--runtime", "onnxruntime-cpu:noarena,noarena"}),
                     "takes noarena once");
}

}  // namespace
}  // namespace footprint
