// ORT's execution order (execution_order.h) and the passes that decide the
// node indices it sorts by, on built models through the whole analysis.
// The float16 cases name the probe of bench/ground_truth/probe_models.py
// (float16_order_probes) they follow.
#include "analyzer/runtimes/onnxruntime/execution_order.h"

#include <cstdint>
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
using ::footprint::testing::SetInt;
using ::footprint::testing::SetInts;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kFloat16 = onnx::TensorProto::FLOAT16;
// The runtime's own order is the given schedule (the optimizer's serves the
// arena plan only).
const AnalyzeOptions kOrt = [] {
  AnalyzeOptions options = testing::OrtAsTheCliRunsIt();
  options.optimize_schedule = false;
  return options;
}();
constexpr int64_t kElements = 16 * 64 * 64;

TEST(OrtExecutionOrderTest, APresentOutputsCastRunsLast) {
  // fp16_present_cast_last (ORT 3,673,080 at 16 x 128 x 128): Exp writes the
  // "present" output and Neg reads it, all three ops in float32. ORT makes
  // the Cast of Exp's output back to float16 before the logits' Cast
  // (InsertCastTransformer walks Exp first), so the walk from the leaves
  // reaches it last: Exp's float32 output lives to the end of the run.
  ModelBuilder builder;
  builder.Input("x", kFloat16, {1, 16, 64, 64});
  builder.Add("Exp", {"x"}, {"present"}).Add("Neg", {"present"}, {"z"}).Add("Abs", {"z"}, {"logits"});
  builder.Output("present", kFloat16, {1, 16, 64, 64}).Output("logits", kFloat16, {1, 16, 64, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_GE(ort->schedule.size(), 2u);
  EXPECT_EQ(ort->schedule.back(), "InsertedPrecisionFreeCast_present");
  EXPECT_EQ(ort->schedule[ort->schedule.size() - 2], "InsertedPrecisionFreeCast_logits");
  // At Abs: x (float16), Exp's, Neg's and Abs's float32 outputs. Had the
  // present's Cast run right after Exp, its float16 copy would stand for
  // Exp's float32 output there (3 x 2 + 2 x 4 bytes an element, not 2 + 3 x 4).
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, kElements * (2 + 3 * 4));
}

TEST(OrtExecutionOrderTest, AnInputsCastRunsAsSoonAsTheWalkReachesIt) {
  // The fp16 tiny Llama's trace: the Casts of the past key and value (graph
  // inputs) run first, before the layers that read them. Here the Cast of
  // "late" (read by the last Mul) runs before the first Exp: ORT gives it a
  // higher index than the Exps, and the walk explores the highest producer
  // first.
  ModelBuilder builder;
  builder.Input("x", kFloat16, {1, 16, 64, 64}).Input("late", kFloat16, {1, 16, 64, 64});
  builder.Add("Exp", {"x"}, {"a"}).Add("Exp", {"a"}, {"b"}).Add("Mul", {"b", "late"}, {"y"});
  builder.Output("y", kFloat16, {1, 16, 64, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_GE(ort->schedule.size(), 2u);
  // Measured on this graph (ORT 1.30's profile): Cast(late), Cast(x), Exp,
  // Exp, Mul, Cast(y).
  EXPECT_EQ(ort->schedule[0], "InsertedPrecisionFreeCast_late.float32");
  EXPECT_EQ(ort->schedule[1], "InsertedPrecisionFreeCast_x.float32");
}

TEST(OrtExecutionOrderTest, OverridableFloat16WeightsLeaveConvsUnfused) {
  // fp16_conv_add_overridable_weights (ORT 4,196,992 at 16 x 128 x 128):
  // with no float16 weight converted at load, ORT does not run levels 2 and
  // 3 again after the Casts: Conv, Conv, Add, Relu stay apart, the Add
  // writes a buffer of its own (FusedConv would write over its addend).
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16, 64, 64});
  for (const std::string w : {"w1", "w2"}) {
    builder.Input(w, kFloat16, {16, 16, 3, 3}).Initializer(w, kFloat16, {16, 16, 3, 3});
  }
  SetInt(builder.Node("Cast", {"x"}, {"x16"}), "to", kFloat16);
  SetInts(builder.Node("Conv", {"x16", "w1"}, {"c1"}), "pads", {1, 1, 1, 1});
  SetInts(builder.Node("Conv", {"c1", "w2"}, {"c2"}), "pads", {1, 1, 1, 1});
  builder.Add("Add", {"c2", "c1"}, {"s"}).Add("Relu", {"s"}, {"r"});
  SetInt(builder.Node("Cast", {"r"}, {"y"}), "to", kFloat);
  builder.Output("y", kFloat, {1, 16, 64, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  // At the Add: x, c1, c2 and s in float32 (the model's Cast of x and ORT's
  // Cast back cancel; the weights' copies are dead by then).
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 4 * kElements * 4);
}

// overridable_constant_of_shape_weights: two Convs whose 256 x 256 x 3 x 3
// weights ConstantOfShape makes from shape initializers also listed as graph
// inputs, both ConstantOfShape first in the file.
ModelBuilder OverridableWeightsModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 256, 8, 8});
  for (const std::string n : {"1", "2"}) {
    builder.Input("s" + n, onnx::TensorProto::INT64, {4}).Int64Initializer("s" + n, {256, 256, 3, 3});
    builder.Add("ConstantOfShape", {"s" + n}, {"w" + n}, "fill" + n);
  }
  SetInts(builder.Node("Conv", {"x", "w1"}, {"c1"}, "conv1"), "pads", {1, 1, 1, 1});
  builder.Add("Relu", {"c1"}, {"r1"});
  SetInts(builder.Node("Conv", {"r1", "w2"}, {"c2"}, "conv2"), "pads", {1, 1, 1, 1});
  builder.Add("Relu", {"c2"}, {"y"}).Output("y", kFloat, {1, 256, 8, 8});
  return builder;
}

TEST(OrtExecutionOrderTest, OverridableInitializersAreNotFoldedAndTheirWeightsMadeWhereTheWalkRunsThem) {
  // ORT 1.30 measured 3,148,496 (ours 3,148,096): one weight (2,359,296)
  // live at a time, each ConstantOfShape run just before its Conv, and each
  // Conv plain (no NCHWc for a weight that is not constant) with its im2col
  // buffer. Folded, the weights would be no arena tensor at all (ours was
  // 201,216 then, 0.064 of ORT's); in the file's order both would be live.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(OverridableWeightsModel(), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  // Each Relu joins its Conv (level 2 needs no constant weight).
  ASSERT_EQ(ort->schedule.size(), 4u);
  EXPECT_EQ(ort->schedule[0], "fill1");
  EXPECT_EQ(ort->schedule[1], "conv1");
  EXPECT_EQ(ort->schedule[2], "fill2");
  EXPECT_EQ(ort->memory.folded_weights_bytes, 0);
  constexpr int64_t kWeight = 256 * 256 * 3 * 3 * 4;
  EXPECT_GT(ort->memory.runtime_tensor_bytes, kWeight);
  EXPECT_LT(ort->memory.runtime_tensor_bytes, 2 * kWeight);

  // Without --runtime the spec's folding evaluates both at load.
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(OverridableWeightsModel(), AnalyzeOptions{.fold_constants = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->memory.folded_weights_bytes, 2 * kWeight);
  EXPECT_EQ(plain->schedule.size(), 4u);
}

// Where two branches meet, ORT runs first the one whose producer has the
// higher index: a node a fusion made comes after every file node.
int64_t Position(const Analysis& analysis, const std::string& node) {
  for (size_t step = 0; step < analysis.schedule.size(); ++step) {
    if (analysis.schedule[step] == node) return static_cast<int64_t>(step);
  }
  ADD_FAILURE() << "no node " << node;
  return -1;
}

TEST(OrtExecutionOrderTest, AFusedNodeRunsBeforeAnEarlierFileNode) {
  // YOLOv5's C3 block, dynamic-quantized (ORT 10,268,864): each SiLU becomes
  // a QuickGelu (a new node), so at the Concat ORT runs the second branch
  // first. Here: Relu (node 0) and a SiLU (nodes 1, 2) meet at a Concat;
  // the QuickGelu ORT makes of the SiLU runs before the Relu (ORT 1.30's
  // profile: mul/QuickGeluFusion/, relu, concat).
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16, 64, 64});
  builder.Node("Relu", {"x"}, {"r"}, "relu");
  builder.Node("Sigmoid", {"x"}, {"s"}, "sigmoid");
  builder.Node("Mul", {"x", "s"}, {"a"}, "mul");
  SetInt(builder.Node("Concat", {"r", "a"}, {"y"}, "concat"), "axis", 1);
  builder.Output("y", kFloat, {1, 32, 64, 64});
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  ASSERT_EQ(ort->schedule.size(), 3u);
  EXPECT_EQ(ort->schedule[2], "concat");
  EXPECT_EQ(Position(*ort, "relu"), 1);  // After the QuickGelu.
}

// x -> Conv (node 0) -> `op` (node 2) and x -> Relu (node 1), meeting at a
// Concat. 1-D: NCHWc, whose new Convs would order them again, takes 2-D
// Convs only. ORT 1.30's profile of both (this host, AVX-512):
// BatchNormalization: relu_of_x, conv; Relu: conv (FusedConv), relu_of_x.
ModelBuilder ConvBranchThen(const std::string& op) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16, 4096}).Initializer("w", kFloat, {16, 16, 3});
  SetInts(builder.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", {1, 1});
  builder.Node("Relu", {"x"}, {"r"}, "relu_of_x");
  if (op == "BatchNormalization") {
    for (const char* name : {"scale", "bias", "mean", "var"}) builder.Initializer(name, kFloat, {16});
    builder.Node(op, {"c", "scale", "bias", "mean", "var"}, {"y"}, "after_conv");
  } else {
    builder.Node(op, {"c"}, {"y"}, "after_conv");
  }
  SetInt(builder.Node("Concat", {"y", "r"}, {"z"}, "concat"), "axis", 1);
  builder.Output("z", kFloat, {1, 32, 4096});
  return builder;
}

TEST(OrtExecutionOrderTest, ALevelOneFoldKeepsTheConvsIndex) {
  // conv_bn_fusion.cc folds the BatchNormalization into the Conv's weights:
  // the Conv (index 0) stays, the Relu (index 1) runs first.
  absl::StatusOr<Analysis> folded = AnalyzeBuilt(ConvBranchThen("BatchNormalization"), kOrt);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_LT(Position(*folded, "relu_of_x"), Position(*folded, "conv"));
  // conv_activation_fusion.cc replaces Conv + Relu with a new FusedConv,
  // after every file node: it runs first.
  absl::StatusOr<Analysis> fused = AnalyzeBuilt(ConvBranchThen("Relu"), kOrt);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_LT(Position(*fused, "conv"), Position(*fused, "relu_of_x"));
}

}  // namespace
}  // namespace footprint
