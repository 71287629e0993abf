// ORT's rules for quantized graphs (qdq_fusion.cc) on built models, through
// the whole analysis under --runtime onnxruntime-cpu.

#include <string>

#include "analyzer/memory/analyze_model.h"
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

// xq (uint8 [batch, Cin, 32, 32]) -> DequantizeLinear -> Conv 3x3 pad 1
// (weight DequantizeLinear of a Cout x Cin x 3 x 3 `weight_type`
// initializer, zero points 0) -> QuantizeLinear -> yq, as ORT's quantizer
// writes a QDQ Conv.
ModelBuilder QdqConv(int64_t input_channels, int64_t output_channels, int32_t weight_type, int64_t batch = 1) {
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {batch, input_channels, 32, 32})
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

TEST(QdqFusionTest, SymmetricConvHoldsTheWholeBatchsIndirectionBuffer) {
  // Channels-last ConvSym runs all images in one parallel section: one
  // indirection buffer per image, all allocated at once.
  absl::StatusOr<Analysis> symmetric = AnalyzeBuilt(QdqConv(16, 32, kInt8, /*batch=*/3), Ort("avx512"));
  ASSERT_TRUE(symmetric.ok()) << symmetric.status();
  EXPECT_EQ(WorkspaceOf(*symmetric, "conv"), 3 * 9 * 1024 * 8);
  // The GEMM path loops over the images: one image's buffers.
  absl::StatusOr<Analysis> gemm = AnalyzeBuilt(QdqConv(16, 32, kUint8, /*batch=*/3), Ort("avx512"));
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  EXPECT_EQ(WorkspaceOf(*gemm, "conv"), 4 * 32 * 1024 + 144 * 1024);
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

TEST(QdqFusionTest, QLinearConvHoldsItsPackedFilterInsteadOfTheFiles) {
  // 20 output channels, int8 weights: on AVX-512 the symmetric conv, whose
  // pack pads them to 16's multiple (32 x 16 x 9 bytes); on AVX2 (20 is no
  // multiple of 8) the GEMM pack: N 20 -> 32 columns of K 144 bytes and an
  // int32 sum each, rounded to 64 bytes (4,736). Either replaces the file's
  // 20 x 16 x 9 = 2,880 bytes.
  absl::StatusOr<Analysis> avx512 = AnalyzeBuilt(QdqConv(16, 20, kInt8), Ort("avx512"));
  absl::StatusOr<Analysis> avx2 = AnalyzeBuilt(QdqConv(16, 20, kInt8), Ort("avx2"));
  ASSERT_TRUE(avx512.ok()) << avx512.status();
  ASSERT_TRUE(avx2.ok()) << avx2.status();
  EXPECT_EQ(avx2->memory.runtime_weights_bytes - avx512->memory.runtime_weights_bytes, 4736 - 32 * 16 * 9);
}

// x (float [1, 16, 32, 32]) -> QuantizeLinear (int8, zero point 0) ->
// DequantizeLinear -> Conv 3x3 pad 1 (int8 weight) -> QuantizeLinear ->
// DequantizeLinear -> y, as ORT's quantize_static writes it by default
// (QInt8 activations); with `second_reader`, a second Conv (float: no Q
// after it) reads the input's DequantizeLinear too.
ModelBuilder Int8QdqConv(bool second_reader) {
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("x", kFloat, {1, 16, 32, 32})
      .Initializer("s", kFloat, {})
      .Initializer("z", kInt8, {})
      .Initializer("w", kInt8, {32, 16, 3, 3})
      .Initializer("ws", kFloat, {})
      .Add("QuantizeLinear", {"x", "s", "z"}, {"xq"})
      .Add("DequantizeLinear", {"xq", "s", "z"}, {"xd"})
      .Add("DequantizeLinear", {"w", "ws", "z"}, {"wd"});
  SetInts(builder.Node("Conv", {"xd", "wd"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Add("QuantizeLinear", {"c", "s", "z"}, {"cq"}).Add("DequantizeLinear", {"cq", "s", "z"}, {"y"}).Output("y");
  if (second_reader) {
    SetInts(builder.Node("Conv", {"xd", "wd"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
    builder.Output("c2");
  }
  return builder;
}

TEST(QdqFusionTest, AnInt8PairOfOneReaderRunsInUint8AndItsConvFusesOnX86) {
  // QDQS8ToU8Transformer: the pair around xq (one reader) becomes uint8, so
  // the Conv group has uint8 activations: QLinearConv, MLAS's symmetric
  // path (int8 weights, zero point 0): an indirection buffer only.
  for (const char* isa : {"avx2", "avx512"}) {
    absl::StatusOr<Analysis> ort = AnalyzeBuilt(Int8QdqConv(false), Ort(isa));
    ASSERT_TRUE(ort.ok()) << ort.status();
    EXPECT_FALSE(IsArenaTensor(*ort, "xd")) << isa;
    EXPECT_FALSE(IsArenaTensor(*ort, "c")) << isa;
    EXPECT_EQ(WorkspaceOf(*ort, "conv"), 9 * 1024 * 8) << isa;
  }
}

TEST(QdqFusionTest, AnInt8ConvWhoseInputHasTwoReadersRunsInFloatOnX86Only) {
  // Each reader gets its own DequantizeLinear (EnsureUniqueDQForNodeUnit):
  // the Q has two output edges and stays int8; x86-64 fuses no int8 Conv
  // (QDQIsInt8Allowed), ARM64 does.
  absl::StatusOr<Analysis> x86 = AnalyzeBuilt(Int8QdqConv(true), Ort("avx512"));
  ASSERT_TRUE(x86.ok()) << x86.status();
  EXPECT_TRUE(IsArenaTensor(*x86, "xd"));
  EXPECT_TRUE(IsArenaTensor(*x86, "c"));
  absl::StatusOr<Analysis> arm = AnalyzeBuilt(Int8QdqConv(true), Ort("arm64"));
  ASSERT_TRUE(arm.ok()) << arm.status();
  EXPECT_FALSE(IsArenaTensor(*arm, "c"));  // xd stays: the second Conv has no Q and runs in float.
}

TEST(QdqFusionTest, QLinearMatMulAndQGemmHoldAnInt32Product) {
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("aq", kUint8, {8, 64})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {})
      .Initializer("b", kInt8, {64, 32})
      .Initializer("bz", kInt8, {})
      .Add("DequantizeLinear", {"aq", "s", "z"}, {"ad"})
      .Add("DequantizeLinear", {"b", "s", "bz"}, {"bd"})
      .Add("MatMul", {"ad", "bd"}, {"m"}, "matmul")
      .Add("Gemm", {"ad", "bd"}, {"g"}, "gemm")
      .Add("QuantizeLinear", {"m", "s", "z"}, {"mq"})
      .Add("QuantizeLinear", {"g", "s", "z"}, {"gq"})
      .Output("mq")
      .Output("gq");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "m"));
  EXPECT_FALSE(IsArenaTensor(*ort, "g"));
  // quantize_linear_matmul.cc and quant_gemm.cc: M x N int32 before requantizing.
  EXPECT_EQ(WorkspaceOf(*ort, "matmul"), 4 * 8 * 32);
  EXPECT_EQ(WorkspaceOf(*ort, "gemm"), 4 * 8 * 32);
}

TEST(QdqFusionTest, TheTransposeBackToNchwCopiesTheUint8TensorBeforeAFloatOp) {
  // The QLinearConv's output is dequantized for an LRN (no quantized form,
  // NCHW): the transpose optimizer moves the Transpose above the
  // DequantizeLinear, so the uint8 tensor is transposed, not the float one.
  ModelBuilder builder = QdqConv(16, 32, kInt8);
  builder.Add("DequantizeLinear", {"yq", "s", "z"}, {"yd"}).Add("LRN", {"yd"}, {"n"}).Output("n");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "yq.nhwc"));
  EXPECT_TRUE(IsArenaTensor(*ort, "yd"));
  EXPECT_FALSE(IsArenaTensor(*ort, "yd.nhwc"));
}

TEST(QdqFusionTest, AFloatTensorBetweenChannelsLastKernelsKeepsItsBufferFromNchwTensors) {
  // xq (uint8 [1,16,32,32]) -> QDQ Conv 1x1 -> DQ -> Add of a [16,1,1]
  // constant -> `sum` -> QDQ Conv 1x1 to 256 channels -> QDQ Conv 1x1 back
  // to 16 -> DQ -> `cd` -> LRN (NCHW). The Add runs channels-last between
  // the QLinearConvs, and the transpose optimizer permutes its output's dims
  // (TransposeOutput), so `cd`, as many bytes but NCHW, cannot take `sum`'s
  // freed buffer (SameSize compares dims): nothing holds it across the
  // 256-channel QLinearConv. ORT 1.30 (AVX-512): 298,232 bytes at the run's
  // peak (our 294,912 + 1,536 of overhead); held, it would be 65,536 more.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 16, 32, 32})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {})
      .Initializer("ws", kFloat, {})
      .Initializer("wz", kInt8, {})
      .Initializer("c", kFloat, {16, 1, 1})
      .Initializer("wa", kInt8, {16, 16, 1, 1})
      .Initializer("wb", kInt8, {256, 16, 1, 1})
      .Initializer("wc", kInt8, {16, 256, 1, 1})
      .Add("DequantizeLinear", {"xq", "s", "z"}, {"xd"})
      .Add("DequantizeLinear", {"wa", "ws", "wz"}, {"wad"})
      .Add("Conv", {"xd", "wad"}, {"a"})
      .Add("QuantizeLinear", {"a", "s", "z"}, {"aq"})
      .Add("DequantizeLinear", {"aq", "s", "z"}, {"ad"})
      .Add("Add", {"ad", "c"}, {"sum"})
      .Add("QuantizeLinear", {"sum", "s", "z"}, {"sq"})
      .Add("DequantizeLinear", {"sq", "s", "z"}, {"sd"})
      .Add("DequantizeLinear", {"wb", "ws", "wz"}, {"wbd"})
      .Add("Conv", {"sd", "wbd"}, {"b"})
      .Add("QuantizeLinear", {"b", "s", "z"}, {"bq"})
      .Add("DequantizeLinear", {"bq", "s", "z"}, {"bd"})
      .Add("DequantizeLinear", {"wc", "ws", "wz"}, {"wcd"})
      .Add("Conv", {"bd", "wcd"}, {"cc"})
      .Add("QuantizeLinear", {"cc", "s", "z"}, {"cq"})
      .Add("DequantizeLinear", {"cq", "s", "z"}, {"cd"});
  SetInt(builder.Node("LRN", {"cd"}, {"out"}), "size", 3);
  builder.Output("out");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "sum"));
  EXPECT_TRUE(IsArenaTensor(*ort, "cd"));
  // At the 256-channel QLinearConv: xq, its channels-last input, its output.
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 16 * 1024 + 16 * 1024 + 256 * 1024);
}

TEST(QdqFusionTest, AWeightDequantizedAfterItsReadersInputRunsFirst) {
  // Two float Convs on dequantized weights (an op reads each weight's
  // DequantizeLinear, so nothing fuses): the second weight's
  // DequantizeLinear comes after its Conv's input producer in the file, so
  // ORT's reverse-DFS order runs it first, its float weight live from the
  // start; the first one's comes before, and runs just before its Conv.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("x", kFloat, {1, 256, 4, 4})
      .Initializer("s", kFloat, {})
      .Initializer("z", kInt8, {})
      .Initializer("w0", kInt8, {256, 256, 1, 1})
      .Initializer("w1", kInt8, {256, 256, 1, 1})
      .Add("DequantizeLinear", {"w0", "s", "z"}, {"w0d"})
      .Add("Conv", {"x", "w0d"}, {"y0"})
      .Add("DequantizeLinear", {"w1", "s", "z"}, {"w1d"})
      .Add("Conv", {"y0", "w1d"}, {"y1"})
      .Output("y1");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  // At the first Conv: x, both float weights and y0.
  EXPECT_GE(ort->memory.runtime_tensor_bytes, 2 * 262144 + 2 * 16384);
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

TEST(QdqFusionTest, DynamicMatMulTakesInItsBiasAdd) {
  // A Linear as torch writes it, quantized dynamically: Add(bias, product),
  // the bias first. ORT 1.30's optimized model of vision_models.py's
  // dynamic ViT has the bias as DynamicQuantizeMatMul's fifth input.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("x", kFloat, {4, 64})
      .Initializer("w", kInt8, {64, 32})
      .Initializer("ws", kFloat, {})
      .Initializer("wz", kInt8, {})
      .Initializer("bias", kFloat, {32})
      .Add("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"})
      .Add("MatMulInteger", {"xq", "w", "xz", "wz"}, {"mm"}, "matmul");
  SetInt(builder.Node("Cast", {"mm"}, {"mmf"}), "to", kFloat);
  builder.Add("Mul", {"xs", "ws"}, {"scale"}).Add("Mul", {"mmf", "scale"}, {"product"});
  builder.Add("Add", {"bias", "product"}, {"sum"}).Add("Relu", {"sum"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "product"));
  EXPECT_TRUE(IsArenaTensor(*ort, "sum"));
}

// xq (`type` [1, 16, 32, 32]) -> DequantizeLinear -> Conv 3x3 pad 1 (int8
// weight, DequantizeLinear) -> QuantizeLinear -> yq, every Q and DQ in
// `domain`: com.microsoft's as ORT's quantizer writes them with
// UseQDQContribOps, and for 16-bit types below opset 21.
ModelBuilder QdqConvIn(const std::string& domain, int32_t type) {
  ModelBuilder builder;
  builder.Opset("", 13)
      .Opset("com.microsoft", 1)
      .Input("xq", type, {1, 16, 32, 32})
      .Initializer("s", kFloat, {})
      .Initializer("z", type, {})
      .Initializer("w", kInt8, {32, 16, 3, 3})
      .Initializer("ws", kFloat, {})
      .Initializer("wz", kInt8, {});
  builder.Node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}).set_domain(domain);
  builder.Node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"}).set_domain(domain);
  SetInts(builder.Node("Conv", {"xd", "wd"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Node("QuantizeLinear", {"y", "s", "z"}, {"yq"}).set_domain(domain);
  builder.Output("yq");
  return builder;
}

TEST(QdqFusionTest, ContribQuantizersGroupLikeOnnxOnes) {
  // qdq_util.cc MatchQNode / MatchDQNode: com.microsoft's Q and DQ too.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(QdqConvIn("com.microsoft", kUint8), Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "xd"));
  EXPECT_FALSE(IsArenaTensor(*ort, "y"));
  EXPECT_FALSE(IsArenaTensor(*ort, "wd"));
  EXPECT_EQ(WorkspaceOf(*ort, "conv"), 9 * 1024 * 8);  // QLinearConv's ConvSym indirection buffer.
}

TEST(QdqFusionTest, SixteenBitConvGroupRunsInFloat) {
  // The Conv selector is registered without 16-bit (no 16-bit QLinearConv):
  // the DequantizeLinear outputs and the float Conv output exist.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(QdqConvIn("com.microsoft", onnx::TensorProto::UINT16), Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_TRUE(IsArenaTensor(*ort, "xd"));
  EXPECT_TRUE(IsArenaTensor(*ort, "wd"));  // Dequantized at each run, never folded.
  EXPECT_TRUE(IsArenaTensor(*ort, "y"));
  EXPECT_TRUE(IsArenaTensor(*ort, "yq"));
}

TEST(QdqFusionTest, SixteenBitQdqAroundReshapeIsDropped) {
  // The "drop" selector takes 16-bit: the Reshape moves the uint16 tensor.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Opset("com.microsoft", 1)
      .Input("xq", onnx::TensorProto::UINT16, {1, 16, 32, 32})
      .Initializer("s", kFloat, {})
      .Initializer("z", onnx::TensorProto::UINT16, {})
      .Int64Initializer("shape", {16, 1024});
  builder.Node("DequantizeLinear", {"xq", "s", "z"}, {"xd"}).set_domain("com.microsoft");
  builder.Add("Reshape", {"xd", "shape"}, {"r"});
  builder.Node("QuantizeLinear", {"r", "s", "z"}, {"rq"}).set_domain("com.microsoft");
  builder.Output("rq");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "xd"));
  EXPECT_FALSE(IsArenaTensor(*ort, "r"));
  EXPECT_TRUE(IsArenaTensor(*ort, "rq"));
}

TEST(QdqFusionTest, EqualQuantizersMergeSoTheirProducerFuses) {
  // DedicatedQDQPair: y gets a Q -> DQ pair per reader. ORT's CSE keeps one
  // Q (it never merges ONNX's DQ), so y has one Q and its Conv fuses.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 16, 32, 32})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {})
      .Initializer("w", kInt8, {16, 16, 3, 3})
      .Initializer("ws", kFloat, {})
      .Initializer("wz", kInt8, {})
      .Add("DequantizeLinear", {"xq", "s", "z"}, {"xd"})
      .Add("DequantizeLinear", {"w", "ws", "wz"}, {"wd"});
  SetInts(builder.Node("Conv", {"xd", "wd"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  for (const char* k : {"1", "2"}) {
    const std::string q = std::string("q") + k, d = std::string("d") + k, c = std::string("c") + k;
    builder.Add("QuantizeLinear", {"y", "s", "z"}, {q}).Add("DequantizeLinear", {q, "s", "z"}, {d});
    SetInts(builder.Node("Conv", {d, "wd"}, {c}, "conv" + std::string(k)), "pads", {1, 1, 1, 1});
    builder.Add("QuantizeLinear", {c, "s", "z"}, {c + "q"}).Output(c + "q");
  }
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort("avx512"));
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "y"));
  EXPECT_TRUE(IsArenaTensor(*ort, "q1"));
  EXPECT_FALSE(IsArenaTensor(*ort, "q2"));
  for (const char* gone : {"d1", "d2", "c1", "c2"}) EXPECT_FALSE(IsArenaTensor(*ort, gone)) << gone;
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
