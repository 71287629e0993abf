// The whole pipeline with the engine: models ONNX alone leaves unsized are
// fully sized once the inputs are bound, formulas when they are not, and the
// sweep and capacity search plan the model per value.
#include "analyzer/loader/model_loader.h"
#include "analyzer/memory/analyze_model.h"
#include "analyzer/memory/sweep.h"
#include "analyzer/shapes/expr.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

// x: batch x seq x 64 -> Reshape to a shape computed from Shape (ONNX 1.12
// cannot size it: the shape holds a symbol) -> Relu.
ModelBuilder ComputedReshape() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {"batch", "seq", 64})
      .Int64Initializer("i0", {0})
      .Int64Initializer("tail", {-1, 16})
      .Add("Shape", {"x"}, {"s"}, "shape")
      .Add("Gather", {"s", "i0"}, {"b"}, "gather")
      .Add("Concat", {"b", "tail"}, {"target"}, "concat")
      .Add("Reshape", {"x", "target"}, {"r"}, "reshape")
      .Add("Relu", {"r"}, {"y"}, "relu")
      .Output("y");
  onnx::AttributeProto* axis = builder.graph().mutable_node(2)->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  return builder;
}

const TensorRecord* Find(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& t : analysis.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(SymbolicAnalysisTest, BoundInputsSizeWhatOnnxAloneCannot) {
  AnalyzeOptions options{.dims = {{"batch", 2}, {"seq", 8}}};
  options.onnx_inference_only = true;
  absl::StatusOr<Analysis> onnx_only = AnalyzeBuilt(ComputedReshape(), options);
  ASSERT_TRUE(onnx_only.ok()) << onnx_only.status();
  options.onnx_inference_only = false;
  absl::StatusOr<Analysis> ours = AnalyzeBuilt(ComputedReshape(), options);
  ASSERT_TRUE(ours.ok()) << ours.status();
  EXPECT_EQ(ours->memory.unsized_tensors, 0);
  EXPECT_TRUE(ours->memory.complete);
  const TensorRecord* y = Find(*ours, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->bytes, 2 * 8 * 64 * 4);  // 2 x 32 x 16 floats.
  EXPECT_GE(onnx_only->memory.unsized_tensors, ours->memory.unsized_tensors);
}

TEST(SymbolicAnalysisTest, DimDefaultAndInputShapeBindEverything) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(ComputedReshape(), {.input_shapes = {{"x", {1, 4, 64}}}});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  EXPECT_EQ(analysis->memory.unsized_tensors, 0);
  EXPECT_EQ(Find(*analysis, "y")->bytes, 4 * 64 * 4);
  absl::StatusOr<Analysis> defaulted = AnalyzeBuilt(ComputedReshape(), {.dim_default = 3});
  ASSERT_TRUE(defaulted.ok()) << defaulted.status();
  EXPECT_EQ(defaulted->memory.unsized_tensors, 0);
  EXPECT_EQ(Find(*defaulted, "y")->bytes, 3 * 3 * 64 * 4);
}

TEST(SymbolicAnalysisTest, UnboundDimsGiveFormulas) {
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(ComputedReshape(), {});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  const TensorRecord* y = Find(*analysis, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_FALSE(y->bytes.has_value());
  EXPECT_EQ(y->bytes_expr, "256*batch*seq");
  EXPECT_NE(y->unsized_reason.find("not bound"), std::string::npos);
  ASSERT_TRUE(analysis->symbolic_memory.has_value());
  const SymbolicMemory& memory = *analysis->symbolic_memory;
  EXPECT_EQ(memory.symbols, (std::vector<std::string>{"batch", "seq"}));
  // x, r and y are 256*batch*seq bytes each (multiples of 64); the small shape
  // tensors 64 bytes each (s, b, target).
  EXPECT_EQ(memory.naive_expr, "768*batch*seq+192");
  // Busiest steps: reshape (x, target, r) and relu (r, y).
  EXPECT_EQ(memory.lower_bound_expr, "512*batch*seq+64");
  // The formula evaluated at bound values equals the planned lower bound there.
  absl::StatusOr<Analysis> bound = AnalyzeBuilt(ComputedReshape(), {.dims = {{"batch", 2}, {"seq", 3}}});
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->memory.lower_bound_bytes, 512 * 6 + 64);
  EXPECT_EQ(bound->memory.naive_bytes, 768 * 6 + 192);
}

// Loop(trips, cond, acc) whose body stacks acc + x: the trip count is a graph
// input's value, unknown before running.
ModelBuilder LoopOverInputTrips() {
  onnx::GraphProto body;
  body.set_name("body");
  for (const char* name : {"i", "cond_in", "acc_in"}) body.add_input()->set_name(name);
  onnx::NodeProto* keep = body.add_node();
  keep->set_op_type("Identity");
  keep->add_input("cond_in");
  keep->add_output("cond_out");
  onnx::NodeProto* add = body.add_node();
  add->set_op_type("Add");
  add->add_input("acc_in");
  add->add_input("x");
  add->add_output("acc_out");
  for (const char* name : {"cond_out", "acc_out", "acc_out"}) body.add_output()->set_name(name);
  ModelBuilder builder;
  builder.Input("trips", onnx::TensorProto::INT64, {})
      .Input("cond", onnx::TensorProto::BOOL, {})
      .Input("x", kFloat, {16})
      .Input("acc", kFloat, {16});
  onnx::NodeProto& loop = builder.Node("Loop", {"trips", "cond", "acc"}, {"final", "stacked"}, "loop");
  onnx::AttributeProto* attribute = loop.add_attribute();
  attribute->set_name("body");
  attribute->set_type(onnx::AttributeProto::GRAPH);
  *attribute->mutable_g() = body;
  builder.Output("stacked");
  return builder;
}

TEST(SymbolicAnalysisTest, LoopTripCountIsAFormulaThatDimBinds) {
  absl::StatusOr<Analysis> unbound = AnalyzeBuilt(LoopOverInputTrips(), {});
  ASSERT_TRUE(unbound.ok()) << unbound.status();
  EXPECT_EQ(Find(*unbound, "stacked")->bytes_expr, "64*loop.trip_count");
  absl::StatusOr<Analysis> bound = AnalyzeBuilt(LoopOverInputTrips(), {.dims = {{"loop.trip_count", 5}}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(Find(*bound, "stacked")->bytes, 5 * 16 * 4);
  EXPECT_EQ(bound->memory.unsized_tensors, 0);
  absl::StatusOr<Analysis> typo = AnalyzeBuilt(LoopOverInputTrips(), {.dims = {{"loop.trip_cnt", 5}}});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("no graph input has a dimension named 'loop.trip_cnt'"), std::string::npos)
      << typo.status();
}

TEST(SymbolicAnalysisTest, UnnamedInputDimsGetSymbolsThatDimBinds) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {2, 8}).Add("Relu", {"x"}, {"y"}, "relu").Output("y");
  builder.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->Clear();
  absl::StatusOr<Analysis> unbound = AnalyzeBuilt(builder, {});
  ASSERT_TRUE(unbound.ok()) << unbound.status();
  EXPECT_EQ(Find(*unbound, "y")->bytes_expr, "32*x_dim0");
  absl::StatusOr<Analysis> bound = AnalyzeBuilt(builder, {.dims = {{"x_dim0", 3}}});
  ASSERT_TRUE(bound.ok()) << bound.status();
  EXPECT_EQ(Find(*bound, "y")->bytes, 3 * 8 * 4);
}

TEST(SymbolicAnalysisTest, NegativeComputedDimIsUnsizedNotAnError) {
  // ConstantOfShape(Shape(x) - 10) with x of length 3: a dim of -7.
  ModelBuilder builder;
  builder.Input("x", kFloat, {"n"})
      .Int64Initializer("ten", {10})
      .Add("Shape", {"x"}, {"s"})
      .Add("Sub", {"s", "ten"}, {"d"})
      .Add("ConstantOfShape", {"d"}, {"y"})
      .Output("y");
  absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, {.dims = {{"n", 3}}});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  const TensorRecord* y = Find(*analysis, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_FALSE(y->bytes.has_value());
  EXPECT_NE(y->unsized_reason.find("computed dimension -7 is negative"), std::string::npos) << y->unsized_reason;
}

// Real exports ONNX 1.12 leaves mostly unsized (see bench/shapes.bench.sh):
// with every input dim bound, every tensor has a size; unbound, the KV cache
// is a formula.
TEST(SymbolicAnalysisTest, TinyLlmsAreFullySizedOnceBound) {
  const std::string dir = std::string(FOOTPRINT_SHARED_DIR) + "/models/microsoft_onnxruntime-genai/";
  for (const char* name : {"tiny-qwen35-cuda__decoder.onnx", "tiny-random-LlamaForCausalLM-fp16/model.onnx",
                           "tiny-random-gpt2-fp32__past.onnx", "tiny-random-lfm2-fp32__decoder.onnx"}) {
    absl::StatusOr<LoadedModel> loaded = LoadModel(dir + name);
    if (!loaded.ok()) GTEST_SKIP() << "shared models not available: " << loaded.status();
    absl::StatusOr<Analysis> analysis = AnalyzeModel(*loaded, {.dim_default = 1});
    ASSERT_TRUE(analysis.ok()) << name << ": " << analysis.status();
    EXPECT_EQ(analysis->memory.unsized_tensors, 0) << name;
    EXPECT_TRUE(analysis->memory.complete) << name;
  }
  absl::StatusOr<LoadedModel> gpt2 = LoadModel(dir + "tiny-random-gpt2-fp32__past.onnx");
  ASSERT_TRUE(gpt2.ok());
  absl::StatusOr<Analysis> unbound = AnalyzeModel(*gpt2, {});
  ASSERT_TRUE(unbound.ok());
  // present_0: (2, batch, 4 heads, past + seq, 8) floats.
  EXPECT_EQ(Find(*unbound, "present_0")->bytes_expr, "256*batch_size*past_seq_len+256*batch_size*seq_len");
  // The formulas, evaluated at some dims, are the figures planned at those dims.
  ASSERT_TRUE(unbound->symbolic_memory.has_value());
  const DimBindings dims = {{"batch_size", 3}, {"seq_len", 5}, {"past_seq_len", 7}, {"total_seq_len", 12}};
  absl::StatusOr<Analysis> bound = AnalyzeModel(*gpt2, {.dims = dims});
  ASSERT_TRUE(bound.ok());
  const symbolic::SymbolValues values(dims.begin(), dims.end());
  EXPECT_EQ(symbolic::Expr::Parse(unbound->symbolic_memory->naive_expr)->Evaluate(values), bound->memory.naive_bytes);
  ASSERT_FALSE(unbound->symbolic_memory->lower_bound_expr.empty());
  EXPECT_EQ(symbolic::Expr::Parse(unbound->symbolic_memory->lower_bound_expr)->Evaluate(values),
            bound->memory.lower_bound_bytes);
}

TEST(SweepTest, PlansEachValue) {
  LoadedModel loaded{.model = ComputedReshape().Build(), .path = "test.onnx"};
  absl::StatusOr<std::vector<SweepPoint>> points =
      Sweep(loaded, {.dims = {{"seq", 4}}}, *ParseSweep("batch=1,2,4"));
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 3u);
  for (const SweepPoint& point : *points) {
    EXPECT_EQ(point.memory.lower_bound_bytes, 512 * point.value * 4 + 64) << point.value;
    EXPECT_EQ(point.memory.unsized_tensors, 0);
  }
  EXPECT_FALSE(ParseSweep("batch").has_value());
  EXPECT_FALSE(ParseSweep("batch=1,x").has_value());
}

TEST(SweepTest, LargestFittingValueSearchesMonotonePeaks) {
  int calls = 0;
  auto peak = [&](int64_t v) -> absl::StatusOr<int64_t> {
    ++calls;
    return 1000 + 64 * v;
  };
  // 1000 + 64 v <= 10000  <=>  v <= 140.
  EXPECT_EQ(*LargestFittingValue(peak, 10000, 1, 1 << 20), 140);
  EXPECT_LT(calls, 50);
  EXPECT_EQ(*LargestFittingValue(peak, 500, 1, 100), std::nullopt);  // Not even 1 fits.
  EXPECT_EQ(*LargestFittingValue(peak, 1 << 30, 1, 100), 100);       // Everything fits.
  EXPECT_EQ(*LargestFittingValue(peak, 1064, 1, 100), 1);
}

TEST(SweepTest, LargestFittingDimOfAModel) {
  LoadedModel loaded{.model = ComputedReshape().Build(), .path = "test.onnx"};
  // Peak at seq = 4: the planned arena, which for this chain is the lower
  // bound 512*batch*4 + 64 (no weights kept: the initializers are 3 small ints).
  absl::StatusOr<Analysis> at_10 = AnalyzeModel(loaded, {.dims = {{"batch", 10}, {"seq", 4}}});
  ASSERT_TRUE(at_10.ok());
  const int64_t capacity = at_10->memory.peak_bytes;
  absl::StatusOr<std::optional<int64_t>> largest =
      LargestFittingDim(loaded, {.dims = {{"seq", 4}}}, "batch", capacity, 1000);
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_EQ(**largest, 10);
}

}  // namespace
}  // namespace footprint
