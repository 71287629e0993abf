// ORT's float16 handling on its CPU provider (fp16_casts.h) and the sharing
// of equal ConstantOfShape weights (shared_constants.h), on built models
// through the whole analysis: which tensors exist, in which type, for how
// long. Each case names the probe of bench/ground_truth/fp16_probes.py whose
// optimized model or heap measurement it follows.
#include "analyzer/runtimes/onnxruntime/passes/fp16_casts.h"

#include <cstdint>
#include <string>
#include <tuple>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInt;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
const AnalyzeOptions kOrt = testing::OrtAsTheCliRunsIt();
// The session's own structures of these few-node graphs (loaded_weights.h:
// 63,650 bytes and a few KB per node, node attribute and name; tested there):
// what runtime_weights_bytes holds beyond the weights lies in this range.
constexpr int64_t kSessionAtLeast = 63'650;
constexpr int64_t kSessionBelow = 100'000;

const TensorRecord* Find(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return &tensor;
  }
  return nullptr;
}

// A Cast node writing `output` from `input`.
void AddCast(ModelBuilder& builder, const std::string& input, const std::string& output, int64_t to) {
  SetInt(builder.Node("Cast", {input}, {output}), "to", to);
}

TEST(Float16CastsTest, AnOpWithNoFloat16KernelRunsInFloat32BehindCasts) {
  // single_Sigmoid: Cast(x) -> Sigmoid -> Cast back to the float16 output.
  ModelBuilder builder;
  builder.Input("x", kFloat16, {1, 1024}).Add("Sigmoid", {"x"}, {"y"}).Output("y", kFloat16, {1, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const TensorRecord* x = Find(*ort, "x");
  const TensorRecord* x_float = Find(*ort, "x.float32");
  const TensorRecord* y_float = Find(*ort, "y.float32");
  const TensorRecord* y = Find(*ort, "y");
  ASSERT_NE(x, nullptr);
  ASSERT_NE(x_float, nullptr);
  ASSERT_NE(y_float, nullptr);
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(x->dtype, "float16");
  EXPECT_EQ(x_float->dtype, "float32");
  EXPECT_EQ(x_float->bytes, 4096);
  EXPECT_EQ(y_float->bytes, 4096);
  EXPECT_EQ(y->dtype, "float16");
  EXPECT_EQ(y->bytes, 2048);
  // Without the runtime the graph is as the file says: no float32 copies.
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(builder, {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(Find(*plain, "x.float32"), nullptr);
}

TEST(Float16CastsTest, AnOpWithAFloat16KernelStaysFloat16) {
  // single_Transpose, mat_LayerNormalization: kept with no Cast.
  ModelBuilder builder;
  builder.Input("x", kFloat16, {1, 64, 256}).Node("Transpose", {"x"}, {"y"});
  builder.Output("y", kFloat16, {1, 256, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_NE(Find(*ort, "y"), nullptr);
  EXPECT_EQ(Find(*ort, "y")->dtype, "float16");
  EXPECT_EQ(Find(*ort, "x.float32"), nullptr);
  EXPECT_EQ(ort->tensors.size(), 2u);
}

TEST(Float16CastsTest, AFloat16NodeBetweenFloat32OnesRunsInFloat32Too) {
  // a_native_between: Sigmoid -> Transpose -> Sigmoid, the Transpose isolated
  // (ForceSingleNodeCPUFloat16ToFloat32): no Cast around it.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 256, 256});
  AddCast(builder, "x", "x16", kFloat16);
  builder.Add("Sigmoid", {"x16"}, {"a"});
  builder.Node("Transpose", {"a"}, {"b"});
  builder.Add("Sigmoid", {"b"}, {"e"});
  AddCast(builder, "e", "y", kFloat);
  builder.Output("y", kFloat, {1, 256, 256});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  for (const std::string name : {"a", "b", "e"}) {
    const TensorRecord* tensor = Find(*ort, name);
    ASSERT_NE(tensor, nullptr) << name;
    EXPECT_EQ(tensor->dtype, "float32") << name;
  }
  EXPECT_EQ(Find(*ort, "a.float32"), nullptr);
  EXPECT_EQ(Find(*ort, "b.float32"), nullptr);
}

TEST(Float16CastsTest, TheModelsCastsAtTheEdgesCancelWithORTs) {
  // chain_add_mul: the Cast to float16 after the input and ORT's Cast back
  // cancel (the Add reads x); the Cast to float32 of the output stays, as it
  // gives a graph output, and copies the float32 value.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 1024});
  AddCast(builder, "x", "x16", kFloat16);
  builder.Add("Add", {"x16", "x16"}, {"a"}).Add("Mul", {"a", "x16"}, {"z16"});
  AddCast(builder, "z16", "y", kFloat);
  builder.Output("y", kFloat, {1, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(Find(*ort, "x16"), nullptr);
  ASSERT_NE(Find(*ort, "z16"), nullptr);
  EXPECT_EQ(Find(*ort, "z16")->dtype, "float32");
  EXPECT_EQ(Find(*ort, "z16.float32"), nullptr);  // No Cast back to float16 is left.
  ASSERT_NE(Find(*ort, "y"), nullptr);
  EXPECT_EQ(ort->tensors.size(), 4u);  // x, a, z16, y.
}

TEST(Float16CastsTest, AModelsOwnLossyCastPairIsKept) {
  // castpair_f_h_f: float32 -> float16 -> float32 loses precision; ORT keeps it.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 1024}).Add("Relu", {"x"}, {"a"});
  AddCast(builder, "a", "b", kFloat16);
  AddCast(builder, "b", "c", kFloat);
  builder.Add("Relu", {"c"}, {"y"}).Output("y", kFloat, {1, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_NE(Find(*ort, "b"), nullptr);
  EXPECT_EQ(Find(*ort, "b")->dtype, "float16");
  EXPECT_NE(Find(*ort, "c"), nullptr);
}

TEST(Float16CastsTest, AFloat16WeightReadByOneFloat32OpIsConvertedAtLoad) {
  // w_matmul_one: FusedBack_W float [1024, 1024], the float16 W gone; the
  // MatMul then packs it (1024 x 1024 floats) and frees it.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 64, 1024}).Initializer("W", kFloat16, {1024, 1024});
  AddCast(builder, "x", "x16", kFloat16);
  builder.Add("MatMul", {"x16", "W"}, {"a"});
  AddCast(builder, "a", "y", kFloat);
  builder.Output("y", kFloat, {1, 64, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.weights_bytes, 1024 * 1024 * 2);  // The file's.
  // float32 W only: not the float16 original beside it (+2 MiB), not float16 alone (-2 MiB).
  EXPECT_GE(ort->memory.runtime_weights_bytes, 1024 * 1024 * 4 + kSessionAtLeast);
  EXPECT_LT(ort->memory.runtime_weights_bytes, 1024 * 1024 * 4 + kSessionBelow);
  EXPECT_EQ(Find(*ort, "W.float32"), nullptr);  // Nothing cast at run time.
}

TEST(Float16CastsTest, AFloat16WeightReadByTwoFloat32OpsIsCastAtEveryRun) {
  // w_matmul_two: W stays float16, one Cast before the first MatMul, its
  // float32 copy live until the second.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 64, 1024}).Initializer("W", kFloat16, {1024, 1024});
  AddCast(builder, "x", "x16", kFloat16);
  builder.Add("MatMul", {"x16", "W"}, {"a"}).Add("MatMul", {"a", "W"}, {"b"});
  AddCast(builder, "b", "y", kFloat);
  builder.Output("y", kFloat, {1, 64, 1024});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const TensorRecord* copy = Find(*ort, "W.float32");
  const TensorRecord* b = Find(*ort, "b");
  ASSERT_NE(copy, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(copy->bytes, 1024 * 1024 * 4);
  EXPECT_EQ(copy->last_step, b->first_step);
  // W held as float16 only.
  EXPECT_GE(ort->memory.runtime_weights_bytes, 1024 * 1024 * 2 + kSessionAtLeast);
  EXPECT_LT(ort->memory.runtime_weights_bytes, 1024 * 1024 * 2 + kSessionBelow);
}

TEST(Float16CastsTest, AnOverridableFloat16WeightIsCastFirst) {
  // matmul_chain_overridable: initializers listed as graph inputs (IR 4) are
  // not constant; ORT runs their Casts first, every float32 copy live at once
  // (measured 8,458,840 bytes for eight 1 MiB copies).
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16, 512});
  AddCast(builder, "x", "a0", kFloat16);
  for (int i = 0; i < 3; ++i) {
    const std::string w = "W" + std::to_string(i);
    builder.Input(w, kFloat16, {512, 512}).Initializer(w, kFloat16, {512, 512});
    builder.Add("MatMul", {"a" + std::to_string(i), w}, {"a" + std::to_string(i + 1)});
  }
  AddCast(builder, "a3", "y", kFloat);
  builder.Output("y", kFloat, {1, 16, 512});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  for (const std::string name : {"W0.float32", "W1.float32", "W2.float32"}) {
    EXPECT_NE(Find(*ort, name), nullptr) << name;
  }
  // The runtime's order, not the optimizer's (which runs each Cast late):
  // the three copies and the first MatMul's input and output at once.
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 3 * 512 * 512 * 4 + 16 * 512 * 4 * 2);
}

TEST(Float16CastsTest, EqualConstantsOfShapeAreOneWeight) {
  // same_cos: two ConstantOfShape of one shape and value read by two MatMuls
  // fold into one initializer, so its Cast runs at every run; different
  // values (diff_cos) stay two weights, each converted at load.
  auto model = [](float second_value) {
    ModelBuilder builder;
    builder.Input("x", kFloat, {1, 16, 256}).Int64Initializer("sA", {256, 256}).Int64Initializer("sB", {256, 256});
    for (const auto& [shape, name, value] : {std::tuple{"sA", "A", 0.5f}, std::tuple{"sB", "B", second_value}}) {
      onnx::NodeProto& node = builder.Node("ConstantOfShape", {shape}, {name});
      onnx::AttributeProto* attribute = node.add_attribute();
      attribute->set_name("value");
      attribute->set_type(onnx::AttributeProto::TENSOR);
      attribute->mutable_t()->set_data_type(kFloat16);
      attribute->mutable_t()->add_dims(1);
      const uint16_t half = value == 0.5f ? 0x3800 : 0x3400;  // 0.5 and 0.25 in float16.
      attribute->mutable_t()->set_raw_data(std::string(reinterpret_cast<const char*>(&half), 2));
    }
    AddCast(builder, "x", "a0", kFloat16);
    builder.Add("MatMul", {"a0", "A"}, {"a1"}).Add("MatMul", {"a1", "B"}, {"a2"});
    AddCast(builder, "a2", "y", kFloat);
    builder.Output("y", kFloat, {1, 16, 256});
    return AnalyzeBuilt(builder, kOrt);
  };
  absl::StatusOr<Analysis> same = model(0.5f);
  absl::StatusOr<Analysis> different = model(0.25f);
  ASSERT_TRUE(same.ok()) << same.status();
  ASSERT_TRUE(different.ok()) << different.status();
  EXPECT_NE(Find(*same, "A.float32"), nullptr);
  EXPECT_EQ(Find(*different, "A.float32"), nullptr);
  EXPECT_EQ(Find(*different, "B.float32"), nullptr);
}

TEST(Float16CastsTest, TheKernelListIsORTs) {
  EXPECT_TRUE(ort::HasFloat16CpuKernel("LayerNormalization"));
  EXPECT_TRUE(ort::HasFloat16CpuKernel("Concat"));
  EXPECT_FALSE(ort::HasFloat16CpuKernel("Conv"));
  EXPECT_FALSE(ort::HasFloat16CpuKernel("MatMul"));
  EXPECT_FALSE(ort::HasFloat16CpuKernel("Softmax"));
}

TEST(Float16CastsTest, ABfloat16OpWithNoBfloat16KernelIsRefused) {
  // ORT 1.30: "Could not find an implementation for Relu(14)"; a Transpose
  // has a bfloat16 kernel.
  ModelBuilder relu;
  relu.Input("x", onnx::TensorProto::BFLOAT16, {1, 1024}).Node("Relu", {"x"}, {"y"}, "relu");
  relu.Output("y", onnx::TensorProto::BFLOAT16, {1, 1024});
  absl::StatusOr<Analysis> refused = AnalyzeBuilt(relu, kOrt);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no bfloat16 kernel for Relu (node 'relu')"), std::string::npos)
      << refused.status();
  EXPECT_TRUE(AnalyzeBuilt(relu, {.alias = true, .inplace = true}).ok());  // Without the runtime: a figure.
  ModelBuilder transpose;
  transpose.Input("x", onnx::TensorProto::BFLOAT16, {1, 1024}).Node("Transpose", {"x"}, {"y"});
  transpose.Output("y", onnx::TensorProto::BFLOAT16, {1024, 1});
  EXPECT_TRUE(AnalyzeBuilt(transpose, kOrt).ok());
}

TEST(Float16CastsTest, ContribOpsFollowTheirMeasuredKernels) {
  // QuickGelu has no float16 CPU kernel: float32 behind Casts; RotaryEmbedding
  // and SkipSimplifiedLayerNormalization have one.
  ModelBuilder builder;
  builder.Opset("com.microsoft", 1).Input("x", kFloat16, {1, 4, 256});
  builder.Node("QuickGelu", {"x"}, {"q"}).set_domain("com.microsoft");
  builder.Initializer("g", kFloat16, {256});
  builder.Node("SkipSimplifiedLayerNormalization", {"x", "q", "g"}, {"y"}).set_domain("com.microsoft");
  builder.Output("y", kFloat16, {1, 4, 256});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_NE(Find(*ort, "x.float32"), nullptr);
  ASSERT_NE(Find(*ort, "q.float32"), nullptr);
  const TensorRecord* y = Find(*ort, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->dtype, "float16");
  EXPECT_TRUE(ort::HasFloat16ContribKernel("RotaryEmbedding"));
  EXPECT_TRUE(ort::ContribRunsInFloat32("MultiHeadAttention"));
  EXPECT_TRUE(ort::HasFloat16CpuKernel("SimplifiedLayerNormalization"));
}

TEST(Float16CastsTest, EmbedLayerNormalizationRunsInFloat32WithItsEmbeddingsConvertedAtLoad) {
  // ORT's optimized fp16 tiny-random-gpt2: EmbedLayerNormalization reads
  // FusedBack_ float32 embeddings; a float16 4096 x 256 table holds what a
  // float32 one does after creation (4,809,984 against 4,797,392 measured).
  ModelBuilder builder;
  builder.Opset("com.microsoft", 1).Input("ids", onnx::TensorProto::INT32, {1, 4});
  builder.Input("pos", onnx::TensorProto::INT32, {1, 4});
  builder.Initializer("wte", kFloat16, {4096, 256}).Initializer("wpe", kFloat16, {512, 256});
  builder.Initializer("g", kFloat16, {256}).Initializer("b", kFloat16, {256});
  builder.Node("EmbedLayerNormalization", {"ids", "", "wte", "wpe", "", "g", "b", "", "pos"}, {"y", "mask_index"})
      .set_domain("com.microsoft");
  builder.Output("y", kFloat16, {1, 4, 256});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  const int64_t float32_weights = (4096 + 512 + 2) * 256 * 4;
  EXPECT_GE(ort->memory.runtime_weights_bytes, float32_weights + kSessionAtLeast);
  EXPECT_LT(ort->memory.runtime_weights_bytes, float32_weights + kSessionBelow);
  EXPECT_TRUE(ort::ContribRunsInFloat32("EmbedLayerNormalization"));
}

}  // namespace
}  // namespace footprint
