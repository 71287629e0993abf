// ORT's GeluFusion and MatMulScaleFusion (transformer_fusions.cc), Softmax
// written in place and ConvTranspose's column buffer, on built models through
// the whole analysis. Each case follows a probe of probe_models.py
// (transformer_*, convtranspose_*) measured with ORT 1.30 (AVX-512).

#include <string>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInts;

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

void FloatScalar(ModelBuilder& builder, const std::string& name, float value) {
  onnx::TensorProto* tensor = builder.graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(kFloat);
  tensor->add_float_data(value);
}

// Neg -> GELU as torch.onnx.export writes it (x * (Erf(x / sqrt 2) + 1) * 0.5,
// or with `half_first` x * 0.5 * (Erf + 1)) -> Neg, on [1, 16, 128, 128]
// float32 (1 MiB); `divisor` is the Div's constant.
ModelBuilder Gelu(bool half_first, float divisor = 1.4142135f) {
  ModelBuilder builder;
  builder.Opset("", 17).Input("x", kFloat, {1, 16, 128, 128});
  FloatScalar(builder, "sqrt2", divisor);
  FloatScalar(builder, "one", 1.0f);
  FloatScalar(builder, "half", 0.5f);
  builder.Node("Neg", {"x"}, {"a"});
  builder.Node("Div", {"a", "sqrt2"}, {"d"});
  builder.Node("Erf", {"d"}, {"e"});
  builder.Node("Add", {"e", "one"}, {"p"});
  if (half_first) {
    builder.Node("Mul", {"a", "half"}, {"h"});
    builder.Node("Mul", {"h", "p"}, {"g"});
  } else {
    builder.Node("Mul", {"a", "p"}, {"m"});
    builder.Node("Mul", {"m", "half"}, {"g"});
  }
  builder.Node("Neg", {"g"}, {"y"});
  builder.Output("y", kFloat, {1, 16, 128, 128});
  return builder;
}

TEST(TransformerFusionsTest, TorchGeluIsOneNode) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Gelu(/*half_first=*/false), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  for (const char* gone : {"d", "e", "p", "m"}) EXPECT_FALSE(IsArenaTensor(*ort, gone)) << gone;
  EXPECT_EQ(ort->modes.fused_nodes, 4);
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * kMiB);  // x, a, g (then x, g, y).
}

TEST(TransformerFusionsTest, GeluWithTheHalfFirstIsOneNodeToo) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Gelu(/*half_first=*/true), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "h"));
  EXPECT_EQ(ort->modes.fused_nodes, 4);
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * kMiB);
}

TEST(TransformerFusionsTest, AnotherDivisorIsNoGelu) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Gelu(/*half_first=*/false, /*divisor=*/2.0f), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "e"));
  EXPECT_EQ(ort->modes.fused_nodes, 0);
  EXPECT_GT(ort->memory.runtime_tensor_bytes, 3 * kMiB);
}

// Attention scores as timm and HF write them: MatMul of [1, 4, 256, 64] by
// [1, 4, 64, 256] (1 MiB of float32 scores), then `scale_op` by a constant
// scalar, then Softmax and ReduceMax (a small output).
ModelBuilder Scores(const std::string& scale_op, int32_t type = kFloat) {
  ModelBuilder builder;
  builder.Opset("", 17).Input("q", type, {1, 4, 256, 64}).Input("k", type, {1, 4, 64, 256});
  if (type == kFloat) {
    FloatScalar(builder, "scale", 0.125f);
  } else {
    builder.Initializer("scale", type, {});
  }
  builder.Node("MatMul", {"q", "k"}, {"scores"});
  builder.Node(scale_op, {"scores", "scale"}, {"scaled"});
  builder.Node("Softmax", {"scaled"}, {"probs"});
  SetInts(builder.Node("ReduceMax", {"probs"}, {"y"}), "axes", {-1});
  return builder;
}

TEST(TransformerFusionsTest, AScaleAfterMatMulFoldsIntoFusedMatMul) {
  for (const char* op : {"Mul", "Div"}) {
    absl::StatusOr<Analysis> ort = AnalyzeBuilt(Scores(op), kOrt);
    ASSERT_TRUE(ort.ok()) << ort.status();
    EXPECT_FALSE(IsArenaTensor(*ort, "scores")) << op;
    EXPECT_EQ(ort->modes.fused_nodes, 1) << op;
    // The inputs (256 KiB each), one 1 MiB buffer (the scaled scores, which
    // the float32 Softmax writes over) and the 4 KiB output.
    EXPECT_EQ(ort->memory.runtime_tensor_bytes, kMiB + kMiB / 2 + 4096) << op;
  }
}

TEST(TransformerFusionsTest, Float16ScoresKeepTheirScale) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(Scores("Mul", kFloat16), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "scores"));
}

TEST(TransformerFusionsTest, AScaleInputFoldsAndItsMulGoes) {
  ModelBuilder builder;
  builder.Opset("", 17).Input("q", kFloat, {1, 4, 256, 64}).Input("k", kFloat, {1, 4, 64, 256});
  FloatScalar(builder, "scale", 0.125f);
  builder.Node("Mul", {"q", "scale"}, {"q_scaled"});
  builder.Node("MatMul", {"q_scaled", "k"}, {"y"});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "q_scaled"));
  EXPECT_EQ(ort->modes.fused_nodes, 1);
}

TEST(TransformerFusionsTest, ConvTransposeHoldsItsColumnBuffer) {
  // 32 -> 16 channels, 2 x 2 stride 2 from 64 x 64: 16 * 4 * 4096 floats.
  ModelBuilder builder;
  builder.Opset("", 17).Input("x", kFloat, {1, 32, 64, 64}).Initializer("w", kFloat, {32, 16, 2, 2});
  onnx::NodeProto& node = builder.Node("ConvTranspose", {"x", "w"}, {"y"});
  SetInts(node, "kernel_shape", {2, 2});
  SetInts(node, "strides", {2, 2});
  builder.Output("y", kFloat, {1, 16, 128, 128});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.workspace_bytes, kMiB);
}

TEST(TransformerFusionsTest, Float32GraphsRunInOrtsOrder) {
  // The file runs the Neg first and holds its 1 MiB across Exp and Sin; ORT's
  // order (execution_order.h) runs the Mul's later-indexed producer chain
  // first. Measured (probe transformer_float32_order): 3,150,448 bytes.
  ModelBuilder builder;
  builder.Opset("", 17).Input("x", kFloat, {1, 16, 128, 128});
  builder.Node("Neg", {"x"}, {"n"});
  builder.Node("Exp", {"x"}, {"e"});
  builder.Node("Sin", {"e"}, {"s"});
  SetInts(builder.Node("ReduceMax", {"s"}, {"r"}), "axes", {1, 2, 3});
  builder.Node("Mul", {"n", "r"}, {"y"});
  builder.Output("y", kFloat, {1, 16, 128, 128});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * kMiB + 64);  // x, e, s; then x, n, y and r.
}

}  // namespace
}  // namespace footprint
