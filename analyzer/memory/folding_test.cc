// Constant folding (folding.h): what folds, what must not, and that the
// baseline never folds.
#include "analyzer/memory/folding.h"

#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return true;
  }
  return false;
}

const WeightRecord* FindWeight(const Analysis& analysis, const std::string& name) {
  for (const WeightRecord& weight : analysis.weights) {
    if (weight.name == name) return &weight;
  }
  return nullptr;
}

// The light_* models' pattern: a weight built at run time from a constant
// shape (ConstantOfShape), then used by the real computation.
ModelBuilder ConstantOfShapeChain() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 256})
      .Int64Initializer("shape", {256, 256})
      .Add("ConstantOfShape", {"shape"}, {"w0"})
      .Add("Relu", {"w0"}, {"w"})  // A fold of a fold.
      .Add("MatMul", {"x", "w"}, {"y"})
      .Output("y");
  return builder;
}

TEST(FoldingTest, ConstantOfShapeChainBecomesWeights) {
  absl::StatusOr<Analysis> folded = AnalyzeBuilt(ConstantOfShapeChain(), {.fold_constants = true});
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_FALSE(IsArenaTensor(*folded, "w0"));
  EXPECT_FALSE(IsArenaTensor(*folded, "w"));
  ASSERT_NE(FindWeight(*folded, "w"), nullptr);
  EXPECT_TRUE(FindWeight(*folded, "w")->folded);
  EXPECT_EQ(folded->memory.folded_weights_bytes, 2 * 256 * 256 * 4);  // w0 and w, float32.
  EXPECT_EQ(folded->modes.fold.nodes, 2);
  EXPECT_EQ(folded->memory.arena_bytes, 1024 + 1024);  // x and y only.
  EXPECT_EQ(folded->memory.peak_bytes,
            folded->memory.weights_bytes + folded->memory.folded_weights_bytes + folded->memory.arena_bytes);
  EXPECT_EQ(folded->schedule.size(), 1u);  // Folded nodes take no step.
}

TEST(FoldingTest, BaselineDoesNotFold) {
  absl::StatusOr<Analysis> baseline = AnalyzeBuilt(ConstantOfShapeChain());  // The struct's default.
  ASSERT_TRUE(baseline.ok()) << baseline.status();
  EXPECT_TRUE(IsArenaTensor(*baseline, "w0"));
  EXPECT_TRUE(IsArenaTensor(*baseline, "w"));
  EXPECT_EQ(baseline->memory.folded_weights_bytes, 0);
  EXPECT_EQ(baseline->schedule.size(), 3u);
}

TEST(FoldingTest, ShapeOfAConstantFolds) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {2, 3})
      .Initializer("c", onnx::TensorProto::FLOAT, {2, 3})
      .Add("Shape", {"c"}, {"s"})
      .Add("Reshape", {"x", "s"}, {"y"})
      .Output("y");
  absl::StatusOr<Analysis> folded = AnalyzeBuilt(builder, {.fold_constants = true});
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_FALSE(IsArenaTensor(*folded, "s"));
  ASSERT_NE(FindWeight(*folded, "s"), nullptr);
  EXPECT_EQ(FindWeight(*folded, "s")->bytes, 2 * 8);  // int64[2].
}

TEST(FoldingTest, RandomOpsAndTheirReadersDoNotFold) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {4, 4})
      .Initializer("c", onnx::TensorProto::FLOAT, {4, 4})
      .Add("RandomUniformLike", {"c"}, {"r"})
      .Add("Relu", {"r"}, {"r2"})  // Reads a random value: not constant either.
      .Add("Add", {"x", "r2"}, {"y"})
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, {.fold_constants = true});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_TRUE(IsArenaTensor(*analysis, "r"));
  EXPECT_TRUE(IsArenaTensor(*analysis, "r2"));
  EXPECT_EQ(analysis->memory.folded_weights_bytes, 0);
  EXPECT_EQ(analysis->modes.fold.nodes, 0);
}

TEST(FoldingTest, GraphOutputsAndGraphInputsAreNotFolded) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {4})
      .Initializer("c", onnx::TensorProto::FLOAT, {4})
      .Add("Neg", {"c"}, {"out_const"})  // ORT keeps a node whose output is a graph output.
      .Add("Relu", {"x"}, {"y"})
      .Output("y")
      .Output("out_const");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, {.fold_constants = true});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_TRUE(IsArenaTensor(*analysis, "out_const"));
  EXPECT_TRUE(IsArenaTensor(*analysis, "y"));
  EXPECT_EQ(analysis->modes.fold.nodes, 0);
}

TEST(FoldingTest, FoldableOps) {
  onnx::NodeProto node;
  node.set_op_type("ConstantOfShape");
  EXPECT_TRUE(IsFoldableOp(node));
  node.set_op_type("RandomNormalLike");
  EXPECT_FALSE(IsFoldableOp(node));
  node.set_op_type("Gelu");
  node.set_domain("com.microsoft");
  EXPECT_FALSE(IsFoldableOp(node));
}

}  // namespace
}  // namespace footprint
