// ORT's level-1 CSE of small constants (shared_constants.h) through the
// whole analysis. Measured (ORT 1.30, AVX-512): the float16 copy of an
// SSD-shaped detector whose 18 Clips each have their own zero and six keeps
// every Clip apart from its Conv (ORT's optimized model: one zero and one six
// for all, cast at every run, the Clips between a ReorderOutput and a
// ReorderInput): 0.647 of ORT's peak without this rule, 1.000 with it.
#include "analyzer/runtimes/onnxruntime/passes/shared_constants.h"

#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;

constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
const AnalyzeOptions kOrt = testing::OrtAsTheCliRunsIt();

// A float16 scalar initializer of `value`'s bits.
void Float16Scalar(ModelBuilder& builder, const std::string& name, uint16_t bits) {
  onnx::TensorProto* tensor = builder.graph().add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(kFloat16);
  tensor->set_raw_data(std::string(reinterpret_cast<const char*>(&bits), sizeof(bits)));
}

// Conv -> Clip(zero_a, six_a) -> Conv -> Clip(zero_b, six_b) -> Conv,
// float16, the sixes equal (`equal`) or not. Both Clips run in float32
// between float32 Convs (ORT's ForceSingleNodeCPUFloat16ToFloat32).
ModelBuilder ConvClipTwice(bool equal) {
  ModelBuilder builder;
  builder.Opset("", 13).Input("x", kFloat16, {1, 16, 64, 64});
  for (const char* w : {"w1", "w2", "w3"}) builder.Initializer(w, kFloat16, {16, 16, 3, 3});
  constexpr uint16_t kZero = 0x0000;
  constexpr uint16_t kSix = 0x4600;
  constexpr uint16_t kFive = 0x4500;
  Float16Scalar(builder, "zero_a", kZero);
  Float16Scalar(builder, "six_a", kSix);
  Float16Scalar(builder, "zero_b", kZero);
  Float16Scalar(builder, "six_b", equal ? kSix : kFive);
  testing::SetInts(builder.Node("Conv", {"x", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  builder.Node("Clip", {"c1", "zero_a", "six_a"}, {"k1"}, "clip_a");
  testing::SetInts(builder.Node("Conv", {"k1", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  builder.Node("Clip", {"c2", "zero_b", "six_b"}, {"k2"}, "clip_b");
  testing::SetInts(builder.Node("Conv", {"k2", "w3"}, {"y"}), "pads", {1, 1, 1, 1});
  builder.Output("y", kFloat16, {1, 16, 64, 64});
  return builder;
}

bool ClipRuns(const Analysis& analysis, const std::string& clip) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.producer == clip) return true;
  }
  return false;
}

TEST(SharedConstantsTest, EqualBoundsAreOneConstantSoTheClipsStayApart) {
  // Merged, each bound is read by two float32 Clips: cast at every run (not
  // converted at load), so no Conv takes its Clip in. ORT's profile of this
  // model (dbg_clip3): one Cast each of zero_b and six_b, then ReorderOutput,
  // Clip, ReorderInput around each Clip; peak 660,200 bytes, ours 659,392.
  absl::StatusOr<Analysis> merged = AnalyzeBuilt(ConvClipTwice(/*equal=*/true), kOrt);
  ASSERT_TRUE(merged.ok()) << merged.status();
  EXPECT_TRUE(ClipRuns(*merged, "clip_a"));
  EXPECT_TRUE(ClipRuns(*merged, "clip_b"));
  // Different sixes: zero is shared, six_b is not; still no fusion, as
  // Clip needs both bounds constant.
  absl::StatusOr<Analysis> apart = AnalyzeBuilt(ConvClipTwice(/*equal=*/false), kOrt);
  ASSERT_TRUE(apart.ok()) << apart.status();
  EXPECT_TRUE(ClipRuns(*apart, "clip_a"));
}

TEST(SharedConstantsTest, OnlySmallConstantsAreComparedByValue) {
  onnx::TensorProto small;
  small.set_data_type(onnx::TensorProto::FLOAT);
  small.add_dims(8);
  for (int i = 0; i < 8; ++i) small.add_float_data(1.0f);
  onnx::TensorProto renamed = small;
  renamed.set_name("other");
  EXPECT_TRUE(ort::SmallConstantKey(small).has_value());
  EXPECT_EQ(ort::SmallConstantKey(small), ort::SmallConstantKey(renamed));
  onnx::TensorProto nine = small;
  nine.set_dims(0, 9);
  nine.add_float_data(1.0f);
  EXPECT_FALSE(ort::SmallConstantKey(nine).has_value());  // 9 elements: ORT keeps them apart.
  onnx::TensorProto bytes;
  bytes.set_data_type(onnx::TensorProto::UINT8);
  EXPECT_FALSE(ort::SmallConstantKey(bytes).has_value());
}

}  // namespace
}  // namespace footprint
