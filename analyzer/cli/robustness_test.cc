// No crash, no hang, no silent zero: damaged models, fuzzer finds, limits.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/time/time.h"
#include "analyzer/cli/cli.h"
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/report/report.h"
#include "analyzer/testing/cli_runner.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"
#include "testing/scratch_dir.h"

namespace footprint {
namespace {

using ::footprint::testing::ModelBuilder;

// Loads and analyzes `bytes`; returns "" on success, else the error message.
std::string LoadAndAnalyze(const std::string& bytes) {
  absl::StatusOr<LoadedModel> loaded = LoadModelFromBytes(bytes, "/nonexistent");
  if (!loaded.ok()) return std::string(loaded.status().message());
  AnalyzeOptions options;
  options.planner_time_limit = absl::ZeroDuration();
  absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, options);
  if (!analysis.ok()) return std::string(analysis.status().message());
  EXPECT_FALSE(RenderJson(*analysis).empty());
  EXPECT_FALSE(RenderText(*analysis).empty());
  return "";
}

void ExpectCleanError(const std::string& message, const std::string& what) {
  if (message.empty()) return;  // Analyzed fine.
  EXPECT_EQ(message.find('\n'), std::string::npos) << what << ": " << message;
}

TEST(RobustnessTest, FuzzerFindsStayFixed) {
  const std::filesystem::path dir = std::filesystem::path(FOOTPRINT_TESTDATA_DIR) / "fuzz_regressions";
  int replayed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() == ".md") continue;
    ExpectCleanError(LoadAndAnalyze(testing::ReadWholeFile(entry.path())), entry.path().filename().string());
    ++replayed;
  }
  RecordProperty("replayed", replayed);
}

TEST(RobustnessTest, DamagedCopiesOfRealModelsEndInAReportOrAnError) {
  std::vector<std::filesystem::path> models = {std::filesystem::path(FOOTPRINT_TESTDATA_DIR) / "mnist.onnx"};
  const std::filesystem::path shared = std::filesystem::path(FOOTPRINT_SHARED_DIR) / "models";
  for (const char* name : {"microsoft_onnxconverter-common/test_subgraph.onnx", "onnx_onnx/light_squeezenet.onnx",
                           "onnx_onnx/light_inception_v1.onnx", "webonnx_wonnx/opt-mnist.onnx",
                           "microsoft_onnxconverter-common/coreml_OneHotEncoder_BikeSharing.onnx"}) {
    if (std::filesystem::exists(shared / name)) models.push_back(shared / name);
  }
  std::mt19937 random(20261129);  // Fixed: the same copies every run.
  int copies = 0;
  int errors = 0;
  for (const std::filesystem::path& model : models) {
    const std::string original = testing::ReadWholeFile(model);
    ASSERT_FALSE(original.empty()) << model;
    for (int i = 0; i < 60; ++i) {
      std::string damaged = original;
      if (i % 3 == 0) {
        damaged.resize(std::uniform_int_distribution<size_t>(0, original.size() - 1)(random));
      } else {
        const int flips = 1 + static_cast<int>(random() % 8);
        for (int f = 0; f < flips; ++f) {
          const size_t at = std::uniform_int_distribution<size_t>(0, damaged.size() - 1)(random);
          damaged[at] = static_cast<char>(random() & 0xff);
        }
      }
      const std::string message = LoadAndAnalyze(damaged);
      ExpectCleanError(message, model.filename().string() + " copy " + std::to_string(i));
      errors += message.empty() ? 0 : 1;
      ++copies;
    }
  }
  EXPECT_GE(copies, 60);
  EXPECT_GT(errors, 0);  // Truncations at least must be refused.
}

TEST(RobustnessTest, SizeOverflowingSixtyFourBitsIsExitTwo) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40})
      .Add("Relu", {"x"}, {"y"}, "relu")
      .Output("y");
  const std::filesystem::path path = std::filesystem::path(footprint::testing::ScratchDir()) / "overflow.onnx";
  std::ofstream(path, std::ios::binary) << builder.Serialize();
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = RunCli({"analyze", path.string()});
  const std::string out = ::testing::internal::GetCapturedStdout();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, kExitBadInput);
  EXPECT_TRUE(out.empty());
  EXPECT_NE(err.find("overflows 64 bits"), std::string::npos) << err;
  EXPECT_NE(err.find("'x'"), std::string::npos) << err;
}

TEST(RobustnessTest, WeightsOverflowingSixtyFourBitsAreAnError) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {4}).Add("Relu", {"x"}, {"y"}, "relu").Output("y");
  for (int i = 0; i < 3; ++i) {
    onnx::TensorProto* weight = builder.graph().add_initializer();  // 2^62 bytes each, no data.
    weight->set_name("w" + std::to_string(i));
    weight->set_data_type(onnx::TensorProto::FLOAT);
    weight->add_dims(int64_t{1} << 60);
  }
  absl::StatusOr<Analysis> analysis = AnalyzeModel({.model = builder.Build(), .path = "w.onnx"}, {});
  ASSERT_FALSE(analysis.ok());
  EXPECT_EQ(analysis.status().code(), absl::StatusCode::kOutOfRange) << analysis.status();
}

TEST(RobustnessTest, DeeplyNestedBodiesAreRefused) {
  // 100 Ifs, each the else branch of the one above.
  onnx::GraphProto inner;
  inner.set_name("leaf");
  inner.add_output()->set_name("x");
  for (int depth = 0; depth < 100; ++depth) {
    onnx::GraphProto outer;
    outer.set_name("level" + std::to_string(depth));
    onnx::NodeProto* node = outer.add_node();
    node->set_op_type("If");
    node->set_name("if" + std::to_string(depth));
    node->add_input("cond");
    node->add_output("out" + std::to_string(depth));
    onnx::GraphProto leaf;
    leaf.set_name("leaf");
    leaf.add_output()->set_name("x");
    onnx::AttributeProto* then_branch = node->add_attribute();
    then_branch->set_name("then_branch");
    then_branch->set_type(onnx::AttributeProto::GRAPH);
    *then_branch->mutable_g() = leaf;
    onnx::AttributeProto* else_branch = node->add_attribute();
    else_branch->set_name("else_branch");
    else_branch->set_type(onnx::AttributeProto::GRAPH);
    *else_branch->mutable_g() = inner;
    outer.add_output()->set_name("out" + std::to_string(depth));
    inner = outer;
  }
  ModelBuilder builder;
  builder.Input("cond", onnx::TensorProto::BOOL, {}).Input("x", onnx::TensorProto::FLOAT, {4});
  builder.graph().mutable_node()->MergeFrom(inner.node());
  builder.graph().mutable_output()->MergeFrom(inner.output());
  const std::string message = LoadAndAnalyze(builder.Serialize());
  EXPECT_NE(message.find("deeper than"), std::string::npos) << message;
}

}  // namespace
}  // namespace footprint

namespace footprint {
namespace {

TEST(RobustnessTest, AbsurdRankIsAnErrorNamingTheTensor) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, std::vector<testing::TestDim>(2000, int64_t{1}))
      .Add("Relu", {"x"}, {"y"}, "relu")
      .Output("y");
  const std::string message = LoadAndAnalyze(builder.Serialize());
  EXPECT_NE(message.find("'x' has rank 2000"), std::string::npos) << message;
}

}  // namespace
}  // namespace footprint
