// ORT's weights after load (loaded_weights.h) and the first run on its
// default arena (arena_run.h), on built models: each expected figure from the
// rule it checks, next to the probe of bench/ground_truth/arena_probes.py
// that measured it.
#include "analyzer/runtimes/onnxruntime/loaded_weights.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInts;

const AnalyzeOptions kOrt = {.alias = true, .inplace = true, .runtime = "onnxruntime-cpu:avx2"};
const AnalyzeOptions kNoArena = {.alias = true, .inplace = true, .runtime = "onnxruntime-cpu:avx2,noarena"};
const AnalyzeOptions kFolding = {
    .alias = true, .inplace = true, .fold_constants = true, .runtime = "onnxruntime-cpu:avx512,noarena"};
// The session's structures (loaded_weights.cc): a fixed part, and per node
// (with a 4-D output; 70 less per dim fewer), per attribute it carries (its
// schema's defaults included), per initializer held, per initializer the
// rewrites took out.
constexpr int64_t kSession = 63'720;
constexpr int64_t kPerNode = 2'860;
constexpr int64_t kPerNodeOf2D = kPerNode - 2 * 70;
constexpr int64_t kPerAttribute = 820;
constexpr int64_t kPerInitializer = 1'470;
constexpr int64_t kPerRemovedInitializer = 750;

TEST(LoadedWeightsTest, AMatMulsConstantBIsPackedWithNPaddedTo16AndTheOriginalFreed) {
  // w_matmul_1000x1000: 1008 x 1000 floats (MlasGemmPackBSize), measured 4,099,224.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 1000}).Initializer("w", onnx::TensorProto::FLOAT, {1000, 1000});
  builder.Add("MatMul", {"x", "w"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.weights_bytes, 4'000'000);
  // MatMul has no attribute; w is packed and taken out.
  EXPECT_EQ(ort->memory.runtime_weights_bytes, 1008 * 1000 * 4 + kSession + kPerNodeOf2D + kPerRemovedInitializer);
}

TEST(LoadedWeightsTest, AnInitializerAnotherNodeReadsAsItIsStaysBesideItsPackedCopy) {
  // w_matmul_and_add: 2 x 4 MiB, measured 8,459,080.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1024, 1024}).Initializer("w", onnx::TensorProto::FLOAT, {1024, 1024});
  builder.Add("MatMul", {"x", "w"}, {"a"}).Add("Mul", {"a", "w"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_weights_bytes, 2 * 1024 * 1024 * 4 + kSession + 2 * kPerNodeOf2D + kPerInitializer);
}

TEST(LoadedWeightsTest, AnNchwcConvsFilterHasItsOutputChannelsPaddedToTheBlock) {
  // w_conv1x1_250: 250 output channels hold as many bytes as 256 once
  // reordered (measured 340,832 = 262,144 + the session's).
  auto conv = [](int64_t outputs) {
    ModelBuilder builder;
    builder.Input("x", onnx::TensorProto::FLOAT, {1, 256, 14, 14})
        .Initializer("w", onnx::TensorProto::FLOAT, {outputs, 256, 1, 1});
    builder.Add("Conv", {"x", "w"}, {"y"}).Output("y");
    return AnalyzeBuilt(builder, kOrt);
  };
  absl::StatusOr<Analysis> padded = conv(250);
  absl::StatusOr<Analysis> whole = conv(256);
  ASSERT_TRUE(padded.ok()) << padded.status();
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_LT(padded->memory.weights_bytes, whole->memory.weights_bytes);
  EXPECT_EQ(padded->memory.runtime_weights_bytes, whole->memory.runtime_weights_bytes);
}

// One com.microsoft Attention on [1, 4, 256] with 256 x 768 constant weights.
absl::StatusOr<Analysis> AttentionOf(int64_t heads) {
  ModelBuilder builder;
  builder.Opset("com.microsoft", 1).Input("x", onnx::TensorProto::FLOAT, {1, 4, 256});
  builder.Initializer("w", onnx::TensorProto::FLOAT, {256, 768}).Initializer("b", onnx::TensorProto::FLOAT, {768});
  onnx::NodeProto& node = builder.Node("Attention", {"x", "w", "b"}, {"y"});
  node.set_domain("com.microsoft");
  testing::SetInt(node, "num_heads", heads);
  builder.Output("y", onnx::TensorProto::FLOAT, {1, 4, 256});
  return AnalyzeBuilt(builder, kNoArena);
}

TEST(LoadedWeightsTest, AttentionPacksItsWeightsPerHeadWithEachHeadPaddedTo16Columns) {
  // attn_h256_n32 / _n4 (AVX-512 host, arena off): 1,646,824 and 860,176
  // held after creation. 4 heads of 64: the pack has the weights' bytes; 32
  // heads of 8: each head's 8 columns padded to 16, twice the weights.
  absl::StatusOr<Analysis> wide = AttentionOf(4);
  absl::StatusOr<Analysis> narrow = AttentionOf(32);
  ASSERT_TRUE(wide.ok() && narrow.ok());
  EXPECT_EQ(wide->memory.weights_bytes, (256 * 768 + 768) * 4);
  EXPECT_EQ(narrow->memory.runtime_weights_bytes - wide->memory.runtime_weights_bytes,
            3 * 32 * (16 * 256 * 4) - 256 * 768 * 4);
}

TEST(LoadedWeightsTest, AConvTransposeFilterTakesAnArenaRegionUnderTheDefaultsOnly) {
  // w_convT: a 2,359,296-byte filter transposed at load; with the arena it is
  // a chunk of a 4 MiB region (+ 1/32 for its handles), measured 4,394,344;
  // without, its own bytes, measured 2,430,016.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 256, 8, 8})
      .Initializer("w", onnx::TensorProto::FLOAT, {256, 256, 3, 3});
  builder.Add("ConvTranspose", {"x", "w"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> defaults = AnalyzeBuilt(builder, kOrt);
  absl::StatusOr<Analysis> no_arena = AnalyzeBuilt(builder, kNoArena);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  ASSERT_TRUE(no_arena.ok()) << no_arena.status();
  // ConvTranspose's schema defaults: auto_pad and group (AttributesInOrt).
  constexpr int64_t kConvTransposeDefaults = 2;
  const int64_t session = kSession + kPerNode + kConvTransposeDefaults * kPerAttribute + kPerRemovedInitializer;
  EXPECT_EQ(defaults->memory.runtime_weights_bytes, 4 * 1024 * 1024 * 33 / 32 + session);
  EXPECT_EQ(no_arena->memory.runtime_weights_bytes, 2'359'296 + session);
  // The region is given whole (4 MiB < 2 x the filter), so the run extends
  // again: by 4 MiB, the size it grew to (measured 4,430,864 with the copy
  // of the 102,400-byte output).
  EXPECT_EQ(defaults->memory.runtime_reserved_bytes, 4 * 1024 * 1024 * 33 / 32 + 102'400 + 3 * 1024);
  // The first run sets the peak, the caller's 65,536-byte input on top.
  EXPECT_EQ(defaults->memory.runtime_peak_phase, "first run");
  EXPECT_EQ(defaults->memory.peak_bytes,
            defaults->memory.runtime_weights_bytes + defaults->memory.runtime_reserved_bytes + 65'536);
}

// ConstantOfShape(shape) -> filter, for the folding tests: `fill` is its value.
void FoldedFilter(ModelBuilder& builder, const std::string& shape, const std::string& filter, float fill) {
  onnx::NodeProto& node = builder.Node("ConstantOfShape", {shape}, {filter});
  onnx::AttributeProto* value = node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(fill);
}

absl::StatusOr<Analysis> TwoConvsOnFoldedFilters(float first_fill, float second_fill) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 32, 8, 8});
  builder.Int64Initializer("s0", {32, 32, 1, 1}).Int64Initializer("s1", {32, 32, 1, 1});
  FoldedFilter(builder, "s0", "w0", first_fill);
  FoldedFilter(builder, "s1", "w1", second_fill);
  builder.Add("Conv", {"x", "w0"}, {"t"}).Add("Conv", {"t", "w1"}, {"y"}).Output("y");
  return AnalyzeBuilt(builder, kFolding);
}

TEST(LoadedWeightsTest, EqualConstantOfShapesFoldIntoOneFilterReorderedOnce) {
  // ORT's common subexpression elimination tells the two 4-element shapes
  // apart by value, so equal ConstantOfShapes are one node before folding:
  // m_cos_same_2 holds one filter (2,447,880), m_cos_diffval_2 two
  // (4,808,160). Each Conv's NCHWc filter is a new initializer.
  absl::StatusOr<Analysis> same = TwoConvsOnFoldedFilters(0.02f, 0.02f);
  absl::StatusOr<Analysis> different = TwoConvsOnFoldedFilters(0.02f, 0.03f);
  ASSERT_TRUE(same.ok()) << same.status();
  ASSERT_TRUE(different.ok()) << different.status();
  EXPECT_EQ(different->memory.runtime_weights_bytes - same->memory.runtime_weights_bytes,
            32 * 32 * 4 + kPerInitializer);
}

absl::StatusOr<Analysis> TwoAddsOf(int64_t elements, bool twins) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {elements});
  builder.Initializer("a0", onnx::TensorProto::FLOAT, {elements});
  if (twins) builder.Initializer("a1", onnx::TensorProto::FLOAT, {elements});  // Zeros, as a0.
  builder.Add("Add", {"x", "a0"}, {"y0"}).Add("Add", {"x", twins ? "a1" : "a0"}, {"y1"});
  builder.Add("Mul", {"y0", "y1"}, {"z"}).Output("z");
  return AnalyzeBuilt(builder, kFolding);
}

TEST(LoadedWeightsTest, EqualInitializersAreOneOnlyUpToEightElements) {
  // Measured (ORT's optimized graphs): two Adds of equal 8-float initializers
  // keep one of them, of 9 floats both.
  absl::StatusOr<Analysis> small_twins = TwoAddsOf(8, true);
  absl::StatusOr<Analysis> small_one = TwoAddsOf(8, false);
  absl::StatusOr<Analysis> large_twins = TwoAddsOf(9, true);
  absl::StatusOr<Analysis> large_one = TwoAddsOf(9, false);
  ASSERT_TRUE(small_twins.ok() && small_one.ok() && large_twins.ok() && large_one.ok());
  EXPECT_EQ(small_twins->memory.runtime_weights_bytes - small_one->memory.runtime_weights_bytes,
            kPerRemovedInitializer);
  EXPECT_EQ(large_twins->memory.runtime_weights_bytes - large_one->memory.runtime_weights_bytes,
            9 * 4 + kPerInitializer);
}

absl::StatusOr<Analysis> Chain(const std::vector<std::string>& ops, int32_t type = onnx::TensorProto::FLOAT) {
  ModelBuilder builder;
  builder.Input("t0", type, {1, 18, 4, 4});
  for (size_t i = 0; i < ops.size(); ++i) {
    builder.Add(ops[i], {absl::StrCat("t", i)}, {absl::StrCat("t", i + 1)});
  }
  builder.Output(absl::StrCat("t", ops.size()));
  return AnalyzeBuilt(builder, kFolding);
}

TEST(LoadedWeightsTest, TheSessionHoldsMorePerAttributeWithItsSchemasDefaults) {
  // a_leaky_*: a LeakyRelu chain holds 675 more per node than a Relu chain;
  // LeakyRelu's alpha has a default, which ORT fills in when the file has none.
  absl::StatusOr<Analysis> relus = Chain({"Relu", "Relu", "Relu"});
  absl::StatusOr<Analysis> leaky = Chain({"LeakyRelu", "LeakyRelu", "LeakyRelu"});
  ASSERT_TRUE(relus.ok() && leaky.ok());
  EXPECT_EQ(relus->memory.runtime_weights_bytes, kSession + 3 * kPerNode);
  EXPECT_EQ(leaky->memory.runtime_weights_bytes - relus->memory.runtime_weights_bytes, 3 * kPerAttribute);
}

TEST(LoadedWeightsTest, AnIdentityOrtTakesOutStillCostsTheSessionSome) {
  // r_identity_relu_*: an Identity before each Relu adds 1,137 per pair.
  absl::StatusOr<Analysis> relus = Chain({"Relu", "Relu"});
  absl::StatusOr<Analysis> with_identity = Chain({"Relu", "Identity", "Relu"});
  ASSERT_TRUE(relus.ok() && with_identity.ok());
  EXPECT_EQ(with_identity->memory.runtime_weights_bytes - relus->memory.runtime_weights_bytes, 1'140);
}

TEST(LoadedWeightsTest, EachCastOrtInsertsAndTakesOutAgainStillCostsTheSessionSome) {
  // session_fp16_sigmoid_*: ORT runs a float16 Sigmoid in float32 behind a
  // Cast in and a Cast out; between two Sigmoids the two meet and go. Two
  // more Sigmoids: two nodes and four such Casts (850 each) more.
  absl::StatusOr<Analysis> three = Chain({"Sigmoid", "Sigmoid", "Sigmoid"}, onnx::TensorProto::FLOAT16);
  absl::StatusOr<Analysis> five = Chain({"Sigmoid", "Sigmoid", "Sigmoid", "Sigmoid", "Sigmoid"}, onnx::TensorProto::FLOAT16);
  ASSERT_TRUE(three.ok() && five.ok());
  EXPECT_EQ(five->memory.runtime_weights_bytes - three->memory.runtime_weights_bytes, 2 * kPerNode + 4 * 850);
  // In float32 no Cast is made: two nodes more.
  absl::StatusOr<Analysis> three32 = Chain({"Sigmoid", "Sigmoid", "Sigmoid"});
  absl::StatusOr<Analysis> five32 = Chain({"Sigmoid", "Sigmoid", "Sigmoid", "Sigmoid", "Sigmoid"});
  ASSERT_TRUE(three32.ok() && five32.ok());
  EXPECT_EQ(five32->memory.runtime_weights_bytes - three32->memory.runtime_weights_bytes, 2 * kPerNode);
}

TEST(LoadedWeightsTest, AFirstRunOfSmallTensorsLeavesTheInitialMegabyteHeld) {
  // Any tiny model: ORT's first region is 1 MiB (measured 1,084,5xx-1,085,0xx
  // on mnist and the one-node probes).
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {16}).Add("Relu", {"x"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_reserved_bytes, 1024 * 1024 * 33 / 32 + 64 + 3 * 1024);
}

}  // namespace
}  // namespace footprint
