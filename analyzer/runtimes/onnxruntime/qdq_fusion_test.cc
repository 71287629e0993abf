// ORT's rules for quantized graphs (qdq_fusion.h) on built models, through
// the whole analysis under --runtime onnxruntime-cpu.
#include "analyzer/runtimes/onnxruntime/qdq_fusion.h"

#include <string>

#include "analyzer/memory/analyze.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInt;
using ::footprint::testing::SetInts;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
constexpr int32_t kInt8 = onnx::TensorProto::INT8;

AnalyzeOptions Ort(const std::string& isa) {
  return {.alias = true, .inplace = true, .fold_constants = true, .runtime = "onnxruntime-cpu:" + isa + ",noarena"};
}

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name && tensor.role != TensorRole::kKernelWorkspace) return true;
  }
  return false;
}

int64_t WorkspaceOf(const Analysis& analysis, const std::string& node) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.role == TensorRole::kKernelWorkspace && tensor.producer == node) return tensor.bytes.value_or(-1);
  }
  return 0;
}

// xq (uint8 [1, Cin, 32, 32]) -> DequantizeLinear -> Conv 3x3 pad 1 (weight
// DequantizeLinear of a Cout x Cin x 3 x 3 `weight_type` initializer, zero
// points 0) -> QuantizeLinear -> yq, as ORT's quantizer writes a QDQ Conv.
ModelBuilder QdqConv(int64_t input_channels, int64_t output_channels, int32_t weight_type) {
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, input_channels, 32, 32})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {})
      .Initializer("w", weight_type, {output_channels, input_channels, 3, 3})
      .Initializer("ws", kFloat, {})
      .Initializer("wz", weight_type, {})
      .Add("DequantizeLinear", {"xq", "s", "z"}, {"xd"})
      .Add("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
  SetInts(builder.Node("Conv", {"xd", "wd"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Add("QuantizeLinear", {"y", "s", "z"}, {"yq"}).Output("yq");
  return builder;
}

TEST(QdqFusionTest, QdqGroupFusesIntoQLinearConv) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(QdqConv(16, 32, kInt8), Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  // The float tensors inside the group never exist; the weight stays int8.
  EXPECT_FALSE(IsArenaTensor(*ort, "xd"));
  EXPECT_FALSE(IsArenaTensor(*ort, "y"));
  EXPECT_FALSE(IsArenaTensor(*ort, "wd"));
  EXPECT_TRUE(IsArenaTensor(*ort, "yq"));
  // Channels-last: the input is transposed for the kernel, the output back.
  EXPECT_TRUE(IsArenaTensor(*ort, "xq.nhwc"));
  EXPECT_TRUE(IsArenaTensor(*ort, "yq.nhwc"));
  // Symmetric int8 weights, uint8 input: MLAS's ConvSym path, an
  // indirection buffer of 3 x 3 x 32 x 32 pointers.
  EXPECT_EQ(WorkspaceOf(*ort, "conv"), 9 * 1024 * 8);
  // Run peak: input, its transposed copy, the output and the buffer.
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 16 * 1024 + 16 * 1024 + 32 * 1024 + 9 * 1024 * 8);
}

TEST(QdqFusionTest, QLinearConvOfUint8WeightsTakesTheGemmPath) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(QdqConv(16, 32, kUint8), Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  // An int32 GEMM output of 32 x 1024 and an im2col buffer of 144 x 1024 bytes.
  EXPECT_EQ(WorkspaceOf(*ort, "conv"), 4 * 32 * 1024 + 144 * 1024);
}

TEST(QdqFusionTest, SymmetricConvNeedsOutputChannelsAlignedPerIsa) {
  // 20 output channels: a multiple of AVX-512's 4, not of AVX2's 8.
  absl::StatusOr<Analysis> avx512 = AnalyzeBuilt(QdqConv(16, 20, kInt8), Ort("avx512"));
  ASSERT_TRUE(avx512.ok()) << avx512.status();
  EXPECT_EQ(WorkspaceOf(*avx512, "conv"), 9 * 1024 * 8);
  absl::StatusOr<Analysis> avx2 = AnalyzeBuilt(QdqConv(16, 20, kInt8), Ort("avx2"));
  ASSERT_TRUE(avx2.ok()) << avx2.status();
  EXPECT_EQ(WorkspaceOf(*avx2, "conv"), 4 * 20 * 1024 + 144 * 1024);
}

TEST(QdqFusionTest, DequantizeLinearOfAnOpWithNoQuantizedKernelRunsInFloat) {
  // Tanh has no QDQ rule: its DequantizeLinear and float output stay; and a
  // weight's DequantizeLinear read by a float Mul runs at every run (ORT's
  // constant folding skips DequantizeLinear), its float output a run tensor.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 4096})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {})
      .Initializer("w", kInt8, {1, 4096})
      .Initializer("wz", kInt8, {})
      .Add("DequantizeLinear", {"xq", "s", "z"}, {"xd"})
      .Add("Tanh", {"xd"}, {"t"})
      .Add("DequantizeLinear", {"w", "s", "wz"}, {"wd"})
      .Add("Mul", {"t", "wd"}, {"m"})
      .Add("QuantizeLinear", {"m", "s", "z"}, {"yq"})
      .Output("yq");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "xd"));
  EXPECT_TRUE(IsArenaTensor(*ort, "t"));
  EXPECT_TRUE(IsArenaTensor(*ort, "wd"));
  EXPECT_TRUE(IsArenaTensor(*ort, "m"));
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true, .fold_constants = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(IsArenaTensor(*plain, "wd"));  // Without the runtime: a folded weight.
}

TEST(QdqFusionTest, QuantizeAndDequantizeAroundAReshapeAreDropped) {
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 8, 16, 16})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {})
      .Int64Initializer("shape", {1, 2048})
      .Add("DequantizeLinear", {"xq", "s", "z"}, {"xd"})
      .Add("Reshape", {"xd", "shape"}, {"r"})
      .Add("QuantizeLinear", {"r", "s", "z"}, {"rq"})
      .Add("Neg", {"rq"}, {"unused"});  // Keeps rq an inner tensor.
  builder.Add("DequantizeLinear", {"rq", "s", "z"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  // The Reshape reads xq and writes rq (uint8): no float copy of either.
  EXPECT_FALSE(IsArenaTensor(*ort, "xd"));
  EXPECT_FALSE(IsArenaTensor(*ort, "r"));
  EXPECT_TRUE(IsArenaTensor(*ort, "rq"));
}

TEST(QdqFusionTest, DifferentParametersKeepTheQuantizeAndDequantize) {
  // The Q's zero point is another initializer of another value: dropping the
  // pair would change the values (IsQDQPairSupported), so the Reshape runs in float.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 2048})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {})
      .Initializer("z2", kUint8, {1})
      .Int64Initializer("shape", {2048})
      .Add("DequantizeLinear", {"xq", "s", "z"}, {"xd"})
      .Add("Reshape", {"xd", "shape"}, {"r"})
      .Add("Neg", {"r"}, {"unused"})
      .Add("QuantizeLinear", {"r", "s", "z2"}, {"rq"})
      .Output("rq");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "xd"));
}

TEST(QdqFusionTest, DynamicMatMulFusesIntoDynamicQuantizeMatMul) {
  // As quantize_dynamic writes a MatMul: DynamicQuantizeLinear, MatMulInteger
  // (int8 weight), Cast, Mul by the product of the scales.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("x", kFloat, {4, 64})
      .Initializer("w", kInt8, {64, 32})
      .Initializer("ws", kFloat, {})
      .Initializer("wz", kInt8, {})
      .Add("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"})
      .Add("MatMulInteger", {"xq", "w", "xz", "wz"}, {"mm"}, "matmul");
  SetInt(builder.Node("Cast", {"mm"}, {"mmf"}), "to", kFloat);
  builder.Add("Mul", {"xs", "ws"}, {"scale"}).Add("Mul", {"mmf", "scale"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  for (const char* gone : {"xq", "mm", "mmf", "scale"}) EXPECT_FALSE(IsArenaTensor(*ort, gone)) << gone;
  EXPECT_TRUE(IsArenaTensor(*ort, "y"));
  // A is quantized inside the kernel: 4 x 64 bytes.
  EXPECT_EQ(WorkspaceOf(*ort, "matmul"), 4 * 64);
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true, .fold_constants = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(IsArenaTensor(*plain, "mm"));
}

TEST(QdqFusionTest, ConvIntegerHoldsItsIm2colBuffer) {
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 4, 16, 16})
      .Initializer("w", kUint8, {8, 4, 3, 3});
  SetInts(builder.Node("ConvInteger", {"xq", "w"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(WorkspaceOf(*ort, "conv"), 4 * 9 * 256);  // kernel_dim x output pixels, bytes.
}

}  // namespace
}  // namespace footprint
