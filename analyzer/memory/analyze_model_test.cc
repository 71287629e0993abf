// Each rule of the memory model (docs/figures.md) on a graph small enough to
// check by hand; the expected figures are worked out in the comments.
#include "analyzer/memory/analyze_model.h"

#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::FindTensor;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::TensorType;
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

struct Interval {
  int64_t first;  // Expected first step.
  int64_t last;   // Expected last step.
};

void ExpectInterval(const Analysis& analysis, const std::string& name, Interval expected) {
  const TensorRecord& tensor = FindTensor(analysis, name);
  EXPECT_EQ(tensor.first_step, expected.first) << name;
  EXPECT_EQ(tensor.last_step, expected.last) << name;
}

// x -> Relu -> a -> Relu -> b -> Relu -> y, every tensor 64 bytes.
ModelBuilder Chain() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16})
      .Add("Relu", {"x"}, {"a"}, "r0")
      .Add("Relu", {"a"}, {"b"}, "r1")
      .Add("Relu", {"b"}, {"y"}, "r2")
      .Output("y");
  return builder;
}

TEST(AnalysisTest, ChainReusesBytes) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(Chain());
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  ExpectInterval(*analysis, "x", {0, 0});
  ExpectInterval(*analysis, "a", {0, 1});
  ExpectInterval(*analysis, "b", {1, 2});
  ExpectInterval(*analysis, "y", {2, 2});
  EXPECT_EQ(analysis->memory.naive_bytes, 256);
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 128);  // Two 64-byte tensors at every step.
  EXPECT_EQ(analysis->memory.arena_bytes, 128);
  EXPECT_EQ(analysis->memory.reuse_savings_bytes, 128);
  EXPECT_EQ(analysis->memory.weights_bytes, 0);
  EXPECT_EQ(analysis->memory.peak_bytes, 128);
  EXPECT_EQ(analysis->schedule, (std::vector<std::string>{"r0", "r1", "r2"}));
  EXPECT_TRUE(analysis->file_order_was_valid);
  EXPECT_TRUE(analysis->memory.complete);
  EXPECT_EQ(analysis->live_bytes_per_step, (std::vector<int64_t>{128, 128, 128}));
}

TEST(AnalysisTest, InputsLiveFromStepZeroAndOutputsUntilTheEnd) {
  // step 0: a = Relu(x0); step 1: b = Relu(a); step 2: c = Add(b, x1). Outputs a and c.
  ModelBuilder builder;
  builder.Input("x0", kFloat, {16})
      .Input("x1", kFloat, {16})
      .Add("Relu", {"x0"}, {"a"}, "n0")
      .Add("Relu", {"a"}, {"b"}, "n1")
      .Add("Add", {"b", "x1"}, {"c"}, "n2")
      .Output("a")
      .Output("c");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  ExpectInterval(*analysis, "x0", {0, 0});
  ExpectInterval(*analysis, "x1", {0, 2});  // Read only at step 2, live from step 0.
  ExpectInterval(*analysis, "a", {0, 2});   // Last read at step 1, but a graph output.
  ExpectInterval(*analysis, "b", {1, 2});
  ExpectInterval(*analysis, "c", {2, 2});
  // Step 2 holds x1, a, b and c.
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 4 * 64);
  EXPECT_EQ(analysis->memory.naive_bytes, 5 * 64);
  EXPECT_EQ(FindTensor(*analysis, "a").role, TensorRole::kGraphOutput);
  EXPECT_EQ(FindTensor(*analysis, "x1").role, TensorRole::kGraphInput);
}

TEST(AnalysisTest, UnconsumedOutputLivesOnlyAtItsStep) {
  // step 0: s1, s2 = Split(x) (128 -> 64 + 64); step 1: y = Relu(s1). s2 is never read.
  ModelBuilder builder;
  builder.Input("x", kFloat, {32})
      .Add("Split", {"x"}, {"s1", "s2"}, "split")
      .Add("Relu", {"s1"}, {"y"}, "relu")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  ExpectInterval(*analysis, "s2", {0, 0});
  ExpectInterval(*analysis, "s1", {0, 1});
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 128 + 64 + 64);  // Step 0: x, s1, s2.
}

TEST(AnalysisTest, ConstantValuesAndInitializersAreWeights) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {4}).Initializer("unused_w", kFloat, {2, 3});  // 24 bytes.
  onnx::NodeProto& c1 = builder.Node("Constant", {}, {"c1"}, "c1");
  onnx::AttributeProto* value = c1.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(kFloat);
  value->mutable_t()->add_dims(4);
  for (int i = 0; i < 4; ++i) value->mutable_t()->add_float_data(1.0f);  // 16 bytes.
  onnx::NodeProto& c2 = builder.Node("Constant", {}, {"c2"}, "c2");
  onnx::AttributeProto* ints = c2.add_attribute();
  ints->set_name("value_ints");
  ints->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 3; ++i) ints->add_ints(i);  // 3 x int64 = 24 bytes.
  builder.Add("Add", {"x", "c1"}, {"y"}, "add").Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->memory.weights_bytes, 24 + 16 + 24);
  EXPECT_EQ(analysis->schedule, (std::vector<std::string>{"add"}));  // Constants are not steps.
  EXPECT_EQ(analysis->tensors.size(), 2u);                           // x and y only.
  EXPECT_EQ(analysis->memory.peak_bytes, 64 + 64 + 64);
}

TEST(AnalysisTest, ExactSizesOfSixteenBitSubByteAndEmptyTensors) {
  // With alignment 1 the arena figures are exact byte sizes.
  ModelBuilder builder;
  builder.Input("half", onnx::TensorProto::FLOAT16, {5})    // 10 bytes
      .Input("int4", 22, {3})                               // 12 bits -> 2 bytes
      .Input("bf16", onnx::TensorProto::BFLOAT16, {3})      // 6 bytes
      .Input("empty", kFloat, {0, 4})                       // 0 bytes
      .Input("flags", onnx::TensorProto::BOOL, {3})         // 3 bytes
      .Input("x", kFloat, {3})                              // 12 bytes
      .Add("Relu", {"x"}, {"y"}, "relu")                    // 12 bytes
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, {.device = {.name = "exact", .alignment_bytes = 1}});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(*FindTensor(*analysis, "half").bytes, 10);
  EXPECT_EQ(*FindTensor(*analysis, "int4").bytes, 2);
  EXPECT_EQ(*FindTensor(*analysis, "bf16").bytes, 6);
  EXPECT_EQ(*FindTensor(*analysis, "empty").bytes, 0);
  EXPECT_EQ(*FindTensor(*analysis, "flags").bytes, 3);
  EXPECT_EQ(analysis->memory.naive_bytes, 10 + 2 + 6 + 0 + 3 + 12 + 12);
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 45);  // One step: everything is live.
  EXPECT_EQ(analysis->memory.arena_bytes, 45);
}

TEST(AnalysisTest, SizesAreRoundedToTheAlignment) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {25}).Add("Relu", {"x"}, {"y"}, "relu").Output("y");  // 100 bytes each.
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(*FindTensor(*analysis, "x").bytes, 100);
  EXPECT_EQ(FindTensor(*analysis, "x").aligned_bytes, 128);
  EXPECT_EQ(analysis->memory.naive_bytes, 256);
  for (const TensorRecord& tensor : analysis->tensors) EXPECT_EQ(*tensor.offset % 64, 0) << tensor.name;
  absl::StatusOr<Analysis> wide = AnalyzeBuilt(builder, {.device = {.name = "gpu", .alignment_bytes = 256}});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->memory.naive_bytes, 512);
}

TEST(AnalysisTest, GraphOutOfTopologicalOrderIsSortedStably) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16})
      .Add("Relu", {"b"}, {"y"}, "r2")
      .Add("Relu", {"a"}, {"b"}, "r1")
      .Add("Relu", {"x"}, {"a"}, "r0")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_FALSE(analysis->file_order_was_valid);
  EXPECT_EQ(analysis->schedule, (std::vector<std::string>{"r0", "r1", "r2"}));
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 128);
  ASSERT_FALSE(analysis->warnings.empty());
}

TEST(AnalysisTest, CycleIsAnErrorNamingANodeOnIt) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {4})
      .Add("Relu", {"x"}, {"pre"}, "before")
      .Add("Add", {"pre", "b"}, {"a"}, "left")
      .Add("Relu", {"a"}, {"b"}, "right")
      .Add("Relu", {"b"}, {"y"}, "after")
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_FALSE(analysis.ok());
  const std::string message(analysis.status().message());
  EXPECT_NE(message.find("cycle"), std::string::npos) << message;
  EXPECT_TRUE(message.find("'left' (Add)") != std::string::npos || message.find("'right' (Relu)") != std::string::npos)
      << message;
}

TEST(AnalysisTest, UndefinedInputIsAnErrorNamingNodeAndOp) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {4}).Add("Add", {"x", "nowhere"}, {"y"}, "adder").Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_FALSE(analysis.ok());
  const std::string message(analysis.status().message());
  EXPECT_NE(message.find("'adder' (Add)"), std::string::npos) << message;
  EXPECT_NE(message.find("'nowhere'"), std::string::npos) << message;
}

TEST(AnalysisTest, ValueWrittenTwiceIsAnError) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {4}).Add("Relu", {"x"}, {"y"}, "one").Add("Neg", {"x"}, {"y"}, "two").Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_FALSE(analysis.ok());
  EXPECT_NE(std::string(analysis.status().message()).find("'two' (Neg)"), std::string::npos) << analysis.status();
}

TEST(AnalysisTest, UndefinedGraphOutputIsAnError) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {4}).Add("Relu", {"x"}, {"y"}, "relu").Output("ghost");
  EXPECT_FALSE(AnalyzeBuilt(builder).ok());
}

TEST(AnalysisTest, SymbolicDimsAreUnsizedUntilBound) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {std::string("batch"), 16}).Add("Relu", {"x"}, {"y"}, "relu").Output("y");
  absl::StatusOr<Analysis> unbound = AnalyzeBuilt(builder);
  ASSERT_TRUE(unbound.ok()) << unbound.status();
  EXPECT_EQ(unbound->memory.unsized_tensors, 2);
  EXPECT_FALSE(unbound->memory.complete);
  EXPECT_FALSE(FindTensor(*unbound, "x").bytes.has_value());
  EXPECT_NE(FindTensor(*unbound, "x").unsized_reason.find("batch"), std::string::npos);
  EXPECT_EQ(unbound->memory.naive_bytes, 0);

  absl::StatusOr<Analysis> bound = AnalyzeBuilt(builder, {.dims = {{"batch", 2}}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(bound->memory.unsized_tensors, 0);
  EXPECT_EQ(*FindTensor(*bound, "y").bytes, 2 * 16 * 4);
  EXPECT_EQ(bound->memory.naive_bytes, 256);

  absl::StatusOr<Analysis> typo = AnalyzeBuilt(builder, {.dims = {{"bacth", 2}}});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(std::string(typo.status().message()).find("batch"), std::string::npos) << typo.status();
}

TEST(AnalysisTest, IfHoldsItsLargestBranchAtItsStep) {
  // then: t = Relu(x)                      -> body arena 64
  // else: e = Neg(x); f = Relu(e)          -> body arena 128 (e and f live together)
  // step 0: y = If(cond); step 1: z = Relu(y)
  ModelBuilder then_branch;
  then_branch.Add("Relu", {"x"}, {"t"}, "then_relu").Output("t", kFloat, {16});
  then_branch.graph().set_name("then");
  ModelBuilder else_branch;
  else_branch.Add("Neg", {"x"}, {"e"}, "else_neg").Add("Relu", {"e"}, {"f"}, "else_relu").Output("f", kFloat, {16});
  else_branch.graph().set_name("else");
  ModelBuilder builder;
  builder.Input("cond", onnx::TensorProto::BOOL, {}).Input("x", kFloat, {16});
  onnx::NodeProto& node = builder.Node("If", {"cond"}, {"y"}, "if");
  onnx::AttributeProto* then_attribute = node.add_attribute();
  then_attribute->set_name("then_branch");
  then_attribute->set_type(onnx::AttributeProto::GRAPH);
  *then_attribute->mutable_g() = then_branch.Build().graph();
  onnx::AttributeProto* else_attribute = node.add_attribute();
  else_attribute->set_name("else_branch");
  else_attribute->set_type(onnx::AttributeProto::GRAPH);
  *else_attribute->mutable_g() = else_branch.Build().graph();
  builder.Add("Relu", {"y"}, {"z"}, "after").Output("z");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  ExpectInterval(*analysis, "x", {0, 0});  // Read inside the branches: live until the If's step.
  const TensorRecord& workspace = FindTensor(*analysis, "if/body");
  EXPECT_EQ(workspace.role, TensorRole::kSubgraphWorkspace);
  EXPECT_EQ(*workspace.bytes, 128);
  ExpectInterval(*analysis, "if/body", {0, 0});
  // Step 0: cond 64 + x 64 + y 64 + body 128.
  EXPECT_EQ(analysis->memory.lower_bound_bytes, 320);
  EXPECT_EQ(analysis->memory.naive_bytes, 4 * 64 + 128);
}

TEST(AnalysisTest, ModelWithoutNodesStillReportsItsInputs) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {16}).Output("x");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder);
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  ExpectInterval(*analysis, "x", {0, 0});
  EXPECT_EQ(analysis->memory.arena_bytes, 64);
}

}  // namespace
}  // namespace footprint
