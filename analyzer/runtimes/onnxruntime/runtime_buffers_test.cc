// ONNX Runtime's allocation planner (runtime_buffers.h) on built models: the
// buffer it keeps for a later tensor of the same shape, the view of a graph
// input that costs nothing, and nothing of it without --runtime.
#include "analyzer/runtimes/onnxruntime/runtime_buffers.h"

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

AnalyzeOptions Ort() { return {.alias = true, .inplace = true, .runtime = "onnxruntime-cpu:avx2"}; }
constexpr int64_t kRow = 256 * 4;  // One float [1, 256] tensor.

// x [1,256] -> Neg -> a -> Concat(a x4) -> big [4,256] -> Neg -> big2 ->
// ReduceMean over axis 0 -> r, [1,256] (keepdims) or [256] -> Neg -> s.
ModelBuilder GapModel(bool keepdims) {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 256}).Add("Neg", {"x"}, {"a"}, "neg");
  SetInt(builder.Node("Concat", {"a", "a", "a", "a"}, {"big"}, "concat"), "axis", 0);
  builder.Add("Neg", {"big"}, {"big2"}, "neg2");
  onnx::NodeProto& reduce = builder.Node("ReduceMean", {"big2"}, {"r"}, "reduce");
  SetInts(reduce, "axes", {0});
  SetInt(reduce, "keepdims", keepdims ? 1 : 0);
  builder.Add("Neg", {"r"}, {"s"}, "neg3").Output("s");
  return builder;
}

TEST(RuntimeBuffersTest, AFreedBufferKeptForALaterTensorOfItsShapeStaysAllocated) {
  // ORT frees `a` after the Concat into its free list and gives that buffer
  // to `r`, of a's shape, two steps later (r is no graph output, which would
  // get its own): it is held while big and big2 are
  // both live, one [1,256] more than any step needs.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(GapModel(/*keepdims=*/true), Ort());
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.lower_bound_bytes, kRow + 8 * kRow);  // x, big, big2 at the second Neg.
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, ort->memory.lower_bound_bytes + kRow);
  // Where it peaks: the buffers live at the second Neg, largest first (ties
  // in allocation order, the graph input first), a's among them.
  EXPECT_EQ(ort->memory.runtime_peak_values, (std::vector<std::string>{"big", "big2", "x", "a"}));
  // The peak follows ORT's defaults: the weights after load, what the first
  // run leaves held on the arena (arena_run.h) and the caller's input x.
  EXPECT_EQ(ort->memory.peak_bytes,
            ort->memory.runtime_weights_bytes + ort->memory.runtime_reserved_bytes + kRow);
}

TEST(RuntimeBuffersTest, ABufferGoesOnlyToTheSameDims) {
  // r is [256]: as many bytes as `a`, but ORT compares dims, so r gets a new
  // buffer and a's is freed at its last use.
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(GapModel(/*keepdims=*/false), Ort());
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, ort->memory.lower_bound_bytes);
}

TEST(RuntimeBuffersTest, AViewOfAGraphInputHoldsNoBytes) {
  // Reshape aliases its input in ORT whatever it is; our alias mode never
  // shares a graph input's bytes (the caller's buffer), so the arena holds
  // x, y and z at the Neg where ORT holds x and z.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 256}).Int64Initializer("shape", {256});
  builder.Add("Reshape", {"x", "shape"}, {"y"}, "reshape").Add("Neg", {"y"}, {"z"}, "neg").Output("z");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, Ort());
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.arena_bytes, 3 * kRow);
  EXPECT_EQ(ort->memory.runtime_tensor_bytes, 2 * kRow);
}

TEST(RuntimeBuffersTest, AnInPlaceKernelTakesOnlyALastUse) {
  // Relu runs in place over `a` only when nothing reads `a` after it: with
  // a second reader, ORT's planner gives Relu a new buffer.
  ModelBuilder last_use;
  last_use.Input("x", onnx::TensorProto::FLOAT, {1, 256}).Add("Neg", {"x"}, {"a"}).Add("Relu", {"a"}, {"b"});
  last_use.Add("Neg", {"b"}, {"c"}).Output("c");
  absl::StatusOr<Analysis> in_place = AnalyzeBuilt(last_use, Ort());
  ASSERT_TRUE(in_place.ok()) << in_place.status();
  EXPECT_EQ(in_place->memory.runtime_tensor_bytes, 3 * kRow);  // x, a = b, c.

  ModelBuilder read_again;
  read_again.Input("x", onnx::TensorProto::FLOAT, {1, 256}).Add("Neg", {"x"}, {"a"}).Add("Relu", {"a"}, {"b"});
  read_again.Add("Add", {"a", "b"}, {"c"}).Output("c");
  absl::StatusOr<Analysis> copied = AnalyzeBuilt(read_again, Ort());
  ASSERT_TRUE(copied.ok()) << copied.status();
  EXPECT_EQ(copied->memory.runtime_tensor_bytes, 4 * kRow);  // x, a, b, c at the Add.
}

TEST(RuntimeBuffersTest, NothingWithoutTheRuntime) {
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(GapModel(/*keepdims=*/true), {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->memory.runtime_tensor_bytes, 0);
  EXPECT_TRUE(plain->memory.runtime_peak_values.empty());
  EXPECT_EQ(plain->memory.peak_bytes, plain->memory.weights_bytes + plain->memory.arena_bytes);
}

}  // namespace
}  // namespace footprint
