// NchwcTransformer (nchwc_layout.cc) on built models: the activations it
// takes in, checked through the whole analysis. The other NCHWc rules are
// checked in ../onnxruntime_cpu_test.cc and ../testdata/rewrites/nchwc_*.
#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::FindTensor;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInts;

const AnalyzeOptions kOrt = testing::OrtAsTheCliRunsIt();  // AVX-512: a block of 16 channels.
constexpr int64_t kTensorBytes = 16 * 16 * 16 * 4;         // [1, 16, 16, 16] float, a whole block.

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return true;
  }
  return false;
}

// x -> Conv (16 filters, 3x3, pad 1) -> c; g = HardSigmoid(c, alpha); y = c * g.
ModelBuilder ConvHardSwish(float alpha) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 16, 16, 16})
      .Initializer("w", onnx::TensorProto::FLOAT, {16, 16, 3, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  onnx::AttributeProto* attribute = builder.Node("HardSigmoid", {"c"}, {"g"}, "gate").add_attribute();
  attribute->set_name("alpha");
  attribute->set_type(onnx::AttributeProto::FLOAT);
  attribute->set_f(alpha);
  builder.Node("Mul", {"c", "g"}, {"y"}, "mul");
  builder.Output("y");
  return builder;
}

TEST(NchwcLayoutTest, HardSwishAfterAConvIsItsActivation) {
  // Probe hardswish_plain (bench/ground_truth/heldout_standins.py): ORT 1.30
  // writes one NchwcConv with activation "HardSwish" between the reorders.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(ConvHardSwish(1.0f / 6.0f), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->modes.layout_nodes, 1);
  EXPECT_EQ(ort->modes.reorder_nodes, 2);  // ReorderInput(x), ReorderOutput(y).
  EXPECT_EQ(ort->modes.fused_nodes, 2);    // The HardSigmoid and the Mul.
  // The Conv's blocked tensor (named after c) stands for y.
  for (const char* gone : {"c", "g", "g.nchwc", "y.nchwc"}) EXPECT_FALSE(IsArenaTensor(*ort, gone)) << gone;
  EXPECT_EQ(FindTensor(*ort, "c.nchwc").producer, "conv");
  EXPECT_EQ(FindTensor(*ort, "y").producer, "ReorderOutput(y)");
  // x (held to the run's end) with x.nchwc and y.nchwc at the Conv, with
  // y.nchwc and y at the reorder: three tensors, not the five of c, g, y.
  EXPECT_EQ(ort->memory.lower_bound_bytes, 3 * kTensorBytes);
}

TEST(NchwcLayoutTest, HardSigmoidOfAnotherSlopeRunsOnTheBlockedTensor) {
  // Probe hardswish_alpha02: no HardSwish; HardSigmoid and Mul read the
  // Conv's blocked tensor (TransformActivation, TransformBinary), so c is
  // never reordered back.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(ConvHardSwish(0.2f), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->modes.fused_nodes, 0);
  EXPECT_EQ(ort->modes.reorder_nodes, 2);
  EXPECT_FALSE(IsArenaTensor(*ort, "c"));
  EXPECT_EQ(FindTensor(*ort, "g.nchwc").bytes, kTensorBytes);
  EXPECT_EQ(FindTensor(*ort, "y").producer, "ReorderOutput(y)");
}

}  // namespace
}  // namespace footprint
