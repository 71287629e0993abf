// ORT's EnsureUniqueDQForNodeUnit (unique_dequantizers.cc) on built models,
// through the whole analysis under --runtime onnxruntime-cpu.

#include <cstdint>
#include <string>

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
constexpr int32_t kUint8 = onnx::TensorProto::UINT8;
constexpr int32_t kInt8 = onnx::TensorProto::INT8;
constexpr int64_t kElements = 16 * 64 * 64;

// The runtime's own order is the given schedule.
const AnalyzeOptions kOrt = [] {
  AnalyzeOptions options = testing::OrtAsTheCliRunsIt();
  options.optimize_schedule = false;
  return options;
}();

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name && tensor.role != TensorRole::kKernelWorkspace) return true;
  }
  return false;
}

int64_t Position(const Analysis& analysis, const std::string& node) {
  for (size_t step = 0; step < analysis.schedule.size(); ++step) {
    if (analysis.schedule[step] == node) return static_cast<int64_t>(step);
  }
  return -1;
}

TEST(UniqueDequantizersTest, TheSecondReaderGetsACopyThatRunsFirst) {
  // The probe qdq_shared_dequantize_copy_first (ORT 1.30: 3,410,632; its
  // profile runs DequantizeLinear/duplicated first): the Add's copy is node
  // 4, so ORT's walk explores it before the ReduceMean branch, and its float
  // output is held while the Neg reads the original's.
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 16, 64, 64})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {});
  builder.Node("DequantizeLinear", {"xq", "s", "z"}, {"d"}, "dq");
  builder.Node("Neg", {"d"}, {"n"}, "neg");
  SetInts(builder.Node("ReduceMean", {"n"}, {"m"}, "mean"), "axes", {1});
  builder.Node("Add", {"d", "m"}, {"y"}, "add");
  builder.Output("y", kFloat, {1, 16, 64, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(Position(*ort, "dq/duplicated"), 0);
  EXPECT_EQ(Position(*ort, "dq"), 1);
  EXPECT_TRUE(IsArenaTensor(*ort, "d/duplicated"));
  // At the Neg: the input, the copy's output, d and n.
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, kElements + 3 * 4 * kElements);
}

TEST(UniqueDequantizersTest, AGraphOutputKeepsTheOriginalAndTheReaderGetsACopy) {
  // d is a graph output and the Neg's input: the Neg reads a copy, and the
  // original, read by no node, is a leaf of ORT's walk that runs last (ORT
  // 1.30's profile of this graph at [1, 64, 64, 64]: DequantizeLinear/
  // duplicated, Neg, DequantizeLinear).
  ModelBuilder builder;
  builder.Opset("", 13)
      .Input("xq", kUint8, {1, 16, 64, 64})
      .Initializer("s", kFloat, {})
      .Initializer("z", kUint8, {});
  builder.Node("DequantizeLinear", {"xq", "s", "z"}, {"d"}, "dq");
  builder.Node("Neg", {"d"}, {"n"}, "neg");
  builder.Output("d", kFloat, {1, 16, 64, 64}).Output("n", kFloat, {1, 16, 64, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(Position(*ort, "dq/duplicated"), 0);
  EXPECT_EQ(Position(*ort, "neg"), 1);
  EXPECT_EQ(Position(*ort, "dq"), 2);
  EXPECT_TRUE(IsArenaTensor(*ort, "d"));
  EXPECT_TRUE(IsArenaTensor(*ort, "d/duplicated"));
  // The copy's output dies at the Neg, before d is made.
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, kElements + 2 * 4 * kElements);
}

TEST(UniqueDequantizersTest, AFusedReadersCopyGoesWithItsGroupAndTheOthersStays) {
  // xd is read by a QDQ Conv (node 2, QLinearConv) and a Tanh (node 4, no
  // quantized kernel): the Conv keeps the original, fused away with it; the
  // Tanh's copy writes a float tensor of its own.
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
  SetInts(builder.Node("Conv", {"xd", "wd"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Add("QuantizeLinear", {"c", "s", "z"}, {"cq"});
  builder.Node("Tanh", {"xd"}, {"t"}, "tanh");
  builder.Output("cq", kUint8, {1, 16, 32, 32}).Output("t", kFloat, {1, 16, 32, 32});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "xd"));
  EXPECT_TRUE(IsArenaTensor(*ort, "xd/duplicated"));
  EXPECT_FALSE(IsArenaTensor(*ort, "c"));
}

}  // namespace
}  // namespace footprint
