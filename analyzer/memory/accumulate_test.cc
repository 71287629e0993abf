// The accumulate mode (accumulate.h) on built residual blocks: the Conv's
// output goes, the sum takes the dying residual's bytes, and nothing of it
// where the shapes differ, in the baseline or under --runtime.
#include "analyzer/memory/accumulate.h"

#include <string>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::FindTensor;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInt;
using ::footprint::testing::SetInts;

constexpr int64_t kMap = 8 * 16 * 16 * 4;  // One float [1, 8, 16, 16] feature map.

AnalyzeOptions Defaults(bool accumulate = true) {
  return {.alias = true, .inplace = true, .fold_constants = true, .accumulate = accumulate};
}

void Conv(ModelBuilder& builder, const std::string& input, const std::string& weight, const std::string& output) {
  SetInts(builder.Node("Conv", {input, weight}, {output}, output), "pads", {1, 1, 1, 1});
}

// x -> Relu -> r -> Conv -> c0 -> Conv -> c1; y = Add(c1, `residual`) -> Neg -> z.
ModelBuilder ResidualBlock(const std::string& residual = "r") {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  builder.Initializer("w0", onnx::TensorProto::FLOAT, {8, 8, 3, 3});
  builder.Initializer("w1", onnx::TensorProto::FLOAT, {8, 8, 3, 3});
  builder.Initializer("bias", onnx::TensorProto::FLOAT, {1, 8, 1, 1});
  builder.Add("Relu", {"x"}, {"r"}, "relu");
  Conv(builder, "r", "w0", "c0");
  Conv(builder, "c0", "w1", "c1");
  builder.Add("Add", {"c1", residual}, {"y"}, "add").Add("Neg", {"y"}, {"z"}, "neg").Output("z");
  return builder;
}

TEST(AccumulateTest, TheConvAddsTheResidualAsItWrites) {
  absl::StatusOr<Analysis> accumulated = AnalyzeBuilt(ResidualBlock(), Defaults());
  ASSERT_TRUE(accumulated.ok()) << accumulated.status();
  EXPECT_EQ(accumulated->modes.accumulate.nodes, 1);
  for (const TensorRecord& tensor : accumulated->tensors) EXPECT_NE(tensor.name, "c1");  // Never exists.
  EXPECT_EQ(FindTensor(*accumulated, "y").shares_with, "r");  // r dies at the fused Conv.
  EXPECT_EQ(FindTensor(*accumulated, "y").producer, "c1");
  EXPECT_EQ(accumulated->memory.arena_bytes, 2 * kMap);  // r = y and c0 at the second Conv.
  EXPECT_TRUE(accumulated->warnings.empty());

  absl::StatusOr<Analysis> kept = AnalyzeBuilt(ResidualBlock(), Defaults(/*accumulate=*/false));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->modes.accumulate.nodes, 0);
  EXPECT_EQ(kept->memory.arena_bytes, 3 * kMap);  // r, c0 and c1 at the second Conv.
}

TEST(AccumulateTest, ThroughAnInferenceBatchNormalization) {
  // Conv, BatchNormalization, Add (ResNet's blocks): both tensors before the
  // sum go; a training-mode BatchNormalization keeps them.
  for (const bool training : {false, true}) {
    ModelBuilder builder;
    builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
    builder.Initializer("w0", onnx::TensorProto::FLOAT, {8, 8, 3, 3});
    for (const char* name : {"scale", "shift", "mean", "var"}) builder.Initializer(name, onnx::TensorProto::FLOAT, {8});
    builder.Add("Relu", {"x"}, {"r"}, "relu");
    Conv(builder, "r", "w0", "c");
    onnx::NodeProto& norm = builder.Node("BatchNormalization", {"c", "scale", "shift", "mean", "var"}, {"n"}, "bn");
    if (training) SetInt(norm, "training_mode", 1);
    builder.Add("Sum", {"r", "n"}, {"y"}, "sum").Add("Neg", {"y"}, {"z"}, "neg").Output("z");
    absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, Defaults());
    ASSERT_TRUE(analysis.ok()) << analysis.status();
    EXPECT_EQ(analysis->modes.accumulate.nodes, training ? 0 : 1) << training;
    if (!training) {
      for (const TensorRecord& tensor : analysis->tensors) EXPECT_TRUE(tensor.name != "c" && tensor.name != "n");
      EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "");  // r is the Conv's data input too.
    }
  }
}

TEST(AccumulateTest, NeverOverAnInputTheConvReads) {
  // y = Conv(c0) + c0: the Conv still fuses, but writing the sum over c0
  // would overwrite the input it is reading.
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(ResidualBlock("c0"), Defaults());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->modes.accumulate.nodes, 1);
  EXPECT_EQ(FindTensor(*analysis, "y").shares_with, "");
}

TEST(AccumulateTest, ABroadcastAddendKeepsTheConvOutput) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(ResidualBlock("bias"), Defaults());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->modes.accumulate.nodes, 0);
  FindTensor(*analysis, "c1");  // Still an arena tensor (fails the test if not).
}

TEST(AccumulateTest, NotInTheBaselineNorUnderARuntime) {
  absl::StatusOr<Analysis> baseline = AnalyzeBuilt(ResidualBlock(), {});
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_FALSE(baseline->modes.accumulate.enabled);
  EXPECT_EQ(baseline->modes.accumulate.nodes, 0);
  AnalyzeOptions runtime = Defaults();
  runtime.runtime = "onnxruntime-cpu:avx2";
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(ResidualBlock(), runtime);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(ort->modes.accumulate.enabled);
  EXPECT_EQ(ort->modes.accumulate.nodes, 0);
}

}  // namespace
}  // namespace footprint
