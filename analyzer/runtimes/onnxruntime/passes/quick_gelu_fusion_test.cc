// ORT's QuickGeluFusion (quick_gelu_fusion.cc) on built models through the
// whole analysis: what it fuses, what it leaves, and the run figure it moves.
// Each case follows a 1 MiB probe measured with ORT 1.30 (AVX-512):
// Neg -> SiLU -> Neg peaks at three tensors of 1 MiB (3,150,480 bytes with
// the run's overhead), four without the fusion.

#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
constexpr int64_t kMiB = 1 << 20;
const AnalyzeOptions kOrt = testing::OrtAsTheCliRunsIt();

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return true;
  }
  return false;
}

// Neg -> Sigmoid, Mul (x * Sigmoid(x), or with `alpha`: x * Sigmoid(alpha * x))
// -> `last` on [1, 16, 128, 128] of `type` (1 MiB in float32).
ModelBuilder Silu(int32_t type, bool alpha, const std::string& last = "Neg") {
  ModelBuilder builder;
  builder.Opset("", 13).Input("x", type, {1, 16, 128, 128});
  builder.Node("Neg", {"x"}, {"a"});
  if (alpha) {
    builder.Initializer("alpha", type, {});
    builder.Node("Mul", {"a", "alpha"}, {"scaled"});
    builder.Node("Sigmoid", {"scaled"}, {"s"});
  } else {
    builder.Node("Sigmoid", {"a"}, {"s"});
  }
  builder.Node("Mul", {"s", "a"}, {"m"});
  if (last == "Add") {
    builder.Node("Add", {"m", "s"}, {"y"});  // The Sigmoid read twice.
  } else {
    builder.Node(last, {"m"}, {"y"});
  }
  builder.Output("y", type, {1, 16, 128, 128});
  return builder;
}

TEST(QuickGeluFusionTest, SiluBecomesOneNode) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Silu(kFloat, /*alpha=*/false), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "s"));
  EXPECT_EQ(ort->modes.fused_nodes, 1);
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * kMiB);  // x, a, m (then x, m, y).
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(Silu(kFloat, /*alpha=*/false), {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(IsArenaTensor(*plain, "s"));  // Without --runtime the graph is the file's.
}

TEST(QuickGeluFusionTest, SwishWithAConstantAlphaFusesItsMulToo) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Silu(kFloat, /*alpha=*/true), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "s"));
  EXPECT_FALSE(IsArenaTensor(*ort, "scaled"));
  EXPECT_EQ(ort->modes.fused_nodes, 2);
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * kMiB);
}

TEST(QuickGeluFusionTest, ASigmoidReadTwiceStays) {
  // Measured: 4,196,864 bytes, four tensors (x, a, s, m).
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Silu(kFloat, /*alpha=*/false, "Add"), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "s"));
  EXPECT_EQ(ort->modes.fused_nodes, 0);
}

TEST(QuickGeluFusionTest, BetweenNchwcConvsItRunsOnTheBlockedTensor) {
  // conv_silu_add (ORT 1.30, AVX-512): Conv, SiLU, Conv, Add of the SiLU's
  // output: 3,150,480 bytes, three tensors of 1 MiB; with a ReorderOutput
  // before the QuickGelu and a ReorderInput after it, four.
  ModelBuilder builder;
  builder.Opset("", 13).Input("x", kFloat, {1, 16, 128, 128});
  builder.Initializer("w", kFloat, {16, 16, 3, 3});
  testing::SetInts(builder.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  builder.Node("Sigmoid", {"c"}, {"s"});
  builder.Node("Mul", {"c", "s"}, {"a"});
  testing::SetInts(builder.Node("Conv", {"a", "w"}, {"c2"}), "pads", {1, 1, 1, 1});
  builder.Node("Add", {"a", "c2"}, {"y"});
  builder.Output("y", kFloat, {1, 16, 128, 128});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * kMiB);
}

TEST(QuickGeluFusionTest, AFloat16SiluIsFusedWhenTheCastsMadeItFloat32AndLevel2RunsAgain) {
  // yolo.fp16 / yolov5.fp16 (detector_models.py copies, ORT 1.30): a float16
  // Conv's weight is converted at load, so ORT runs level 2 again after its
  // Casts and the float32 SiLU becomes QuickGelu (1.143 / 1.397 -> 0.999).
  ModelBuilder builder;
  builder.Opset("", 13).Input("x", kFloat16, {1, 16, 128, 128});
  builder.Initializer("w", kFloat16, {16, 16, 3, 3});
  testing::SetInts(builder.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  builder.Node("Sigmoid", {"c"}, {"s"});
  builder.Node("Mul", {"c", "s"}, {"y"});
  builder.Output("y", kFloat16, {1, 16, 128, 128});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  bool quick_gelu = false;
  for (const TensorRecord& tensor : ort->tensors) {
    quick_gelu = quick_gelu || tensor.producer.find("QuickGelu") != std::string::npos;
    EXPECT_NE(tensor.name, "s.float32");
    EXPECT_NE(tensor.name, "s");
  }
  EXPECT_TRUE(quick_gelu);
}

TEST(QuickGeluFusionTest, Float16IsLeftToTheFloat16Rules) {
  // QuickGelu's CPU kernel is float32 only; with no weight converted at
  // load, ORT does not run level 2 after its Casts.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Silu(kFloat16, /*alpha=*/false), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  for (const TensorRecord& tensor : ort->tensors) EXPECT_EQ(tensor.producer.find("QuickGelu"), std::string::npos);
}

}  // namespace
}  // namespace footprint
