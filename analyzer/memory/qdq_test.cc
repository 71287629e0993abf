// The qdq mode (qdq.h) on built QDQ graphs: a group runs as its quantized
// op, an op with no quantized form keeps its float input, a weight's
// DequantizeLinear goes with its group, a DequantizeLinear read outside
// groups stays, and the baseline keeps every tensor.
#include "analyzer/memory/qdq.h"

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
using ::footprint::testing::SetInts;

constexpr int64_t kFloatMap = 8 * 16 * 16 * 4;  // One float [1, 8, 16, 16] feature map.
constexpr int64_t kByteMap = 8 * 16 * 16;       // The same map in uint8.

AnalyzeOptions Defaults(bool qdq = true) { return {.fold_constants = true, .qdq = qdq}; }

bool HasTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return true;
  }
  return false;
}

// x -Q-> xq -DQ-> xd; w(int8) -DQ-> wd; Conv(xd, wd) -> c -Q-> cq -DQ-> cd
// -> Softmax -> y. `extra_reader`: a Neg reads xd too, outside any group.
ModelBuilder QdqConv(bool extra_reader = false) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 8, 16, 16});
  builder.Initializer("s", onnx::TensorProto::FLOAT, {});
  builder.Initializer("zp", onnx::TensorProto::UINT8, {});
  builder.Initializer("w", onnx::TensorProto::INT8, {8, 8, 3, 3});
  builder.Initializer("ws", onnx::TensorProto::FLOAT, {8});
  builder.Initializer("wzp", onnx::TensorProto::INT8, {8});
  builder.Add("QuantizeLinear", {"x", "s", "zp"}, {"xq"}, "quantize_x")
      .Add("DequantizeLinear", {"xq", "s", "zp"}, {"xd"}, "dequantize_x")
      .Add("DequantizeLinear", {"w", "ws", "wzp"}, {"wd"}, "dequantize_w");
  SetInts(builder.Node("Conv", {"xd", "wd"}, {"c"}, "conv"), "pads", {1, 1, 1, 1});
  builder.Add("QuantizeLinear", {"c", "s", "zp"}, {"cq"}, "quantize_c")
      .Add("DequantizeLinear", {"cq", "s", "zp"}, {"cd"}, "dequantize_c")
      .Add("Softmax", {"cd"}, {"y"}, "softmax")
      .Output("y");
  if (extra_reader) builder.Add("Neg", {"xd"}, {"n"}, "neg").Output("n");
  return builder;
}

TEST(QdqTest, AGroupIsItsQuantizedOp) {
  absl::StatusOr<Analysis> fused = AnalyzeBuilt(QdqConv(), Defaults());
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_TRUE(fused->modes.qdq.enabled);
  EXPECT_EQ(fused->modes.qdq.groups, 1);
  EXPECT_FALSE(HasTensor(*fused, "xd"));  // The float tensors inside the group never exist.
  EXPECT_FALSE(HasTensor(*fused, "c"));
  EXPECT_EQ(FindTensor(*fused, "cq").producer, "conv");  // The Conv writes the quantized output.
  EXPECT_EQ(FindTensor(*fused, "cq").bytes, kByteMap);
  // xd and c (float) are gone; the Softmax's step (cd, y) still sets the arena.
  absl::StatusOr<Analysis> kept = AnalyzeBuilt(QdqConv(), Defaults(/*qdq=*/false));
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(kept->memory.naive_bytes - fused->memory.naive_bytes, 2 * kFloatMap);
}

TEST(QdqTest, ComMicrosoftQuantizersMakeGroupsToo) {
  // ORT's quantizer writes com.microsoft QuantizeLinear / DequantizeLinear
  // for 16-bit activations or when asked (UseQDQContribOps): the same group.
  ModelBuilder builder = QdqConv();
  builder.Opset("com.microsoft", 1);
  for (onnx::NodeProto& node : *builder.graph().mutable_node()) {
    if (node.op_type() == "QuantizeLinear" || node.op_type() == "DequantizeLinear") node.set_domain("com.microsoft");
  }
  absl::StatusOr<Analysis> fused = AnalyzeBuilt(builder, Defaults());
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->modes.qdq.groups, 1);
  EXPECT_FALSE(HasTensor(*fused, "xd"));
  EXPECT_EQ(FindTensor(*fused, "cq").producer, "conv");
}

TEST(QdqTest, AnOpWithNoQuantizedKernelReadsTheDequantizedTensor) {
  absl::StatusOr<Analysis> fused = AnalyzeBuilt(QdqConv(), Defaults());
  ASSERT_TRUE(fused.ok()) << fused.status();
  // Softmax has no quantized form: cd stays float and is read by it.
  EXPECT_EQ(FindTensor(*fused, "cd").dtype, "float32");
  EXPECT_EQ(FindTensor(*fused, "cd").bytes, kFloatMap);
  EXPECT_EQ(FindTensor(*fused, "cd").producer, "dequantize_c");
}

TEST(QdqTest, AWeightsDequantizeLinearGoesWithItsGroup) {
  absl::StatusOr<Analysis> fused = AnalyzeBuilt(QdqConv(), Defaults());
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_FALSE(HasTensor(*fused, "wd"));
  EXPECT_EQ(fused->memory.folded_weights_bytes, 0);  // No float copy of w.
  for (const WeightRecord& weight : fused->weights) EXPECT_NE(weight.name, "wd");

  // Without the mode, folding computes the float weight at load.
  absl::StatusOr<Analysis> float_weight = AnalyzeBuilt(QdqConv(), Defaults(/*qdq=*/false));
  ASSERT_TRUE(float_weight.ok()) << float_weight.status();
  EXPECT_EQ(float_weight->memory.folded_weights_bytes, 8 * 8 * 3 * 3 * 4);
}

TEST(QdqTest, ADequantizeLinearReadOutsideGroupsStays) {
  absl::StatusOr<Analysis> fused = AnalyzeBuilt(QdqConv(/*extra_reader=*/true), Defaults());
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->modes.qdq.groups, 1);
  EXPECT_EQ(FindTensor(*fused, "xd").producer, "dequantize_x");  // The Neg reads it.
  EXPECT_EQ(FindTensor(*fused, "xd").bytes, kFloatMap);
  EXPECT_FALSE(HasTensor(*fused, "c"));
  EXPECT_EQ(FindTensor(*fused, "cq").producer, "conv");
}

TEST(QdqTest, TheBaselineKeepsEveryTensor) {
  absl::StatusOr<Analysis> baseline = AnalyzeBuilt(QdqConv(), AnalyzeOptions{});
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_FALSE(baseline->modes.qdq.enabled);
  EXPECT_EQ(baseline->modes.qdq.groups, 0);
  for (const char* name : {"xd", "wd", "c", "cq", "cd"}) EXPECT_TRUE(HasTensor(*baseline, name)) << name;
  EXPECT_EQ(FindTensor(*baseline, "cq").producer, "quantize_c");
}

TEST(QdqTest, AnOpOutputReadByMoreThanTheQuantizeLinearIsNoGroup) {
  ModelBuilder builder = QdqConv();
  builder.Add("Relu", {"c"}, {"r"}, "relu").Output("r");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, Defaults());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->modes.qdq.groups, 0);
  EXPECT_EQ(FindTensor(*analysis, "c").producer, "conv");
}

}  // namespace
}  // namespace footprint
