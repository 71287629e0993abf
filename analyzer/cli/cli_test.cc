#include "analyzer/cli/cli.h"

#include <filesystem>
#include <fstream>

#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "analyzer/testing/test_models.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/scratch_dir.h"

namespace footprint {
namespace {

using ::footprint::testing::ModelBuilder;

using ::footprint::testing::AddReluModel;
using ::footprint::testing::CliRun;
using ::footprint::testing::ExpectOneLineError;
using ::footprint::testing::RunCliCaptured;
using ::footprint::testing::ScratchDir;
using ::footprint::testing::ScratchPath;
using ::footprint::testing::WriteScratchFile;

TEST(CliTest, AnalyzesAModelAsText) {
  const std::string path = WriteScratchFile("small.onnx", AddReluModel());
  const CliRun run = RunCliCaptured({"analyze", path});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_NE(run.out.find("peak"), std::string::npos);
  EXPECT_NE(run.out.find("lower bound"), std::string::npos);
}

TEST(CliTest, JsonFollowsTheContract) {
  const std::string path = WriteScratchFile("small.onnx", AddReluModel());
  const CliRun run = RunCliCaptured({"analyze", path, "--baseline", "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["schema_version"], 1);
  for (const char* key : {"path", "ir_version", "opsets", "nodes"}) EXPECT_TRUE(json["model"].contains(key)) << key;
  EXPECT_EQ(json["device"]["name"], "generic-cpu");
  EXPECT_EQ(json["device"]["alignment_bytes"], 64);
  EXPECT_EQ(json["options"]["schedule"], "given");
  EXPECT_EQ(json["options"]["alias"], false);
  EXPECT_EQ(json["options"]["inplace"], false);
  const nlohmann::json& memory = json["memory"];
  for (const char* key : {"weights_bytes", "arena_bytes", "lower_bound_bytes", "naive_bytes", "reuse_savings_bytes",
                          "peak_bytes", "unsized_tensors"}) {
    ASSERT_TRUE(memory.contains(key)) << key;
    EXPECT_TRUE(memory[key].is_number_integer()) << key;
  }
  EXPECT_EQ(memory["weights_bytes"], 64);
  EXPECT_EQ(memory["naive_bytes"], 3 * 64);  // x, a, y.
  ASSERT_EQ(json["tensors"].size(), 3u);
  for (const char* key : {"name", "dtype", "shape", "bytes", "aligned_bytes", "first_step", "last_step", "offset"}) {
    EXPECT_TRUE(json["tensors"][0].contains(key)) << key;
  }
  EXPECT_EQ(json["tensors"][0]["shape"], nlohmann::json::array({1, 16}));
  EXPECT_EQ(json["schedule"], nlohmann::json::array({"add", "relu"}));
  EXPECT_TRUE(json["fits"].is_null());
  // Each phase's wall seconds, the load (measured by the caller) among them.
  for (const char* phase : {"load", "shape_engine", "schedule_and_plan", "device_tiers", "total"}) {
    ASSERT_TRUE(json["timings"].contains(phase)) << phase;
    EXPECT_GE(json["timings"][phase].get<double>(), 0.0) << phase;
  }
}

TEST(CliTest, ModesAreOnByDefaultAndEachHasAFlag) {
  // x -Add(w)-> a -Relu-> y: a never writes over the caller's x; y writes over a.
  const std::string path = WriteScratchFile("small.onnx", AddReluModel());
  CliRun run = RunCliCaptured({"analyze", path, "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["options"]["schedule"], "optimized");
  EXPECT_EQ(json["options"]["alias"], true);
  EXPECT_EQ(json["options"]["inplace"], true);
  EXPECT_EQ(json["modes"]["inplace"]["enabled"], true);
  EXPECT_EQ(json["tensors"][2]["name"], "y");
  EXPECT_EQ(json["tensors"][2]["shares_with"], "a<b>&\"c\"");
  EXPECT_EQ(json["memory"]["baseline"]["lower_bound_bytes"], 128);
  EXPECT_EQ(json["memory"]["lower_bound_bytes"], 128);  // x and a at step 0; a = y at step 1.

  run = RunCliCaptured({"analyze", path, "--format", "json", "--schedule=given", "--no-alias", "--no-inplace",
                        "--schedule-time-limit", "0"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["options"]["schedule"], "given");
  EXPECT_EQ(json["modes"]["inplace"]["enabled"], false);
  EXPECT_TRUE(json["tensors"][2]["shares_with"].is_null());

  run = RunCliCaptured({"analyze", path, "--format", "json", "--baseline", "--inplace"});  // Later flags win.
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["options"]["schedule"], "given");
  EXPECT_EQ(json["options"]["alias"], false);
  EXPECT_EQ(json["options"]["inplace"], true);

  ExpectOneLineError(RunCliCaptured({"analyze", path, "--schedule", "best"}), "--schedule must be given or optimized");
  ExpectOneLineError(RunCliCaptured({"analyze", path, "--schedule-time-limit", "-1"}), "--schedule-time-limit");
}

TEST(CliTest, OutputFileIsWrittenWhole) {
  const std::string path = WriteScratchFile("small.onnx", AddReluModel());
  const std::string report = ScratchPath("report.json");
  std::filesystem::remove(report);
  const CliRun run = RunCliCaptured({"analyze", path, "--format=json", "--output", report});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_TRUE(run.out.empty());
  std::ifstream file(report);
  EXPECT_NO_THROW(nlohmann::json::parse(file));
}

TEST(CliTest, TruncatedFileIsExitTwoWithNothingWritten) {
  const std::string bytes = AddReluModel();
  const std::string path = WriteScratchFile("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  const std::string report = ScratchPath("never.json");
  std::filesystem::remove(report);
  ExpectOneLineError(RunCliCaptured({"analyze", path, "--output", report}), path);
  EXPECT_FALSE(std::filesystem::exists(report));
}

TEST(CliTest, BadInputsAreExitTwo) {
  ExpectOneLineError(RunCliCaptured({"analyze", ScratchPath("does-not-exist.onnx")}), "does-not-exist.onnx");
  ExpectOneLineError(RunCliCaptured({"analyze", WriteScratchFile("text.onnx", "this is not a model\n")}), "text.onnx");
  ExpectOneLineError(RunCliCaptured({"analyze", WriteScratchFile("empty.onnx", "")}), "empty.onnx");
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--format", "yaml"}), "--format");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--dim", "batch"}), "--dim");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--dim", "nothere=3"}), "nothere");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--frobnicate"}), "--frobnicate");
  ExpectOneLineError(RunCliCaptured({"analyze"}), "MODEL");
  ExpectOneLineError(RunCliCaptured({"dance"}), "dance");
}

TEST(CliTest, InvalidGraphIsExitTwoNamingNodeAndOp) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {4}).Add("Mul", {"x", "ghost"}, {"y"}, "mul").Output("y");
  const std::string path = WriteScratchFile("undefined.onnx", builder.Serialize());
  ExpectOneLineError(RunCliCaptured({"analyze", path}), "'mul' (Mul)");
}

}  // namespace
}  // namespace footprint

namespace footprint {
namespace {

TEST(CliTest, SeveralModelsTakeTheBindingsThatNameThem) {
  ModelBuilder with_batch;
  with_batch.Input("images", onnx::TensorProto::FLOAT, {std::string("batch"), 16})
      .Add("Relu", {"images"}, {"y"}, "relu")
      .Output("y");
  ModelBuilder unnamed;
  unnamed.Input("tokens", onnx::TensorProto::FLOAT, {std::string(""), 8}).Add("Neg", {"tokens"}, {"z"}, "neg").Output("z");
  unnamed.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->Clear();
  const std::string a = WriteScratchFile("several_a.onnx", with_batch.Serialize());
  const std::string b = WriteScratchFile("several_b.onnx", unnamed.Serialize());
  // Each binding names something in one model only: the run succeeds, and both are sized.
  CliRun run = RunCliCaptured({"analyze", a, b, "--input-shape", "images=2x16", "--dim", "tokens_dim0=3",
                               "--format", "json"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const nlohmann::json json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["reports"].size(), 2u);
  EXPECT_EQ(json["reports"][0]["memory"]["unsized_tensors"], 0);
  EXPECT_EQ(json["reports"][1]["memory"]["unsized_tensors"], 0);
  // A binding no model knows is an error of the run.
  ExpectOneLineError(RunCliCaptured({"analyze", a, b, "--input-shape", "nothing=1x2"}), "--input-shape nothing");
  ExpectOneLineError(RunCliCaptured({"analyze", a, b, "--tensor-shape", "ghost=4"}), "--tensor-shape ghost");
}

}  // namespace
}  // namespace footprint

namespace footprint {
namespace {

TEST(CliTest, InvalidUtf8NamesAreReplacedInJsonNotACrash) {
  ModelBuilder builder;
  const std::string bad_name = std::string("x\xff\xfe", 3);
  builder.Input(bad_name, onnx::TensorProto::FLOAT, {4}).Add("Relu", {bad_name}, {"y"}, "relu").Output("y");
  const std::string path = WriteScratchFile("bad_utf8.onnx", builder.Serialize());
  for (const char* format : {"json", "text", "md", "html"}) {
    const CliRun run = RunCliCaptured({"analyze", path, "--format", format});
    EXPECT_EQ(run.exit_code, kExitOk) << format << ": " << run.err;
  }
  const CliRun json = RunCliCaptured({"analyze", path, path, "--format", "json"});
  ASSERT_EQ(json.exit_code, kExitOk) << json.err;
  EXPECT_NO_THROW(nlohmann::json::parse(json.out));
}

TEST(AnalyzeCliTest, BadValuesOfNewFlagsAreExitTwo) {
  const std::string model = WriteScratchFile("small.onnx", AddReluModel());
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--format", "pdf"}), "--format");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--jobs", "0"}), "--jobs");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--jobs", "two"}), "--jobs");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--jobs", "1000"}), "--jobs");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--jobs"}), "--jobs");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--output="}), "--output");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--format", "html", "--output", ScratchDir() + "/no/such/dir/r.html"}),
                 "r.html");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--baseline-report="}), "--baseline-report");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--baseline-report", ScratchDir() + "/missing.json"}), "missing.json");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--baseline-report", WriteScratchFile("broken.json", "{\"schema")}), "broken.json");
  ExpectOneLineError(RunCliCaptured({"analyze", model, "--baseline-report",
                      WriteScratchFile("v9.json", R"({"schema_version": 9, "memory": {}})")}),
                 "schema_version 9");
  ExpectOneLineError(RunCliCaptured({"analyze", model, model, "--baseline-report", WriteScratchFile("any.json", "{}")}),
                 "--baseline-report");
}

TEST(AnalyzeCliTest, HelpNamesEveryFlag) {
  const CliRun run = RunCliCaptured({"analyze", "--help"});
  EXPECT_EQ(run.exit_code, kExitOk);
  for (const char* flag : {"--format", "md", "html", "--max-peak", "--max-arena", "--max-weights", "--baseline-report",
                           "--jobs", "KiB", "GB"}) {
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(RunCliCaptured({"--help"}).out.find("diff"), std::string::npos);
}

}  // namespace
}  // namespace footprint
