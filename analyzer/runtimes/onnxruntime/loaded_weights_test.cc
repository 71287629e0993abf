// ORT's weights after load (loaded_weights.h) and the first run on its
// default arena (arena_run.h), on built models: each expected figure from the
// rule it checks, next to the probe of bench/ground_truth/arena_probes.py
// that measured it.
#include "analyzer/runtimes/onnxruntime/loaded_weights.h"

#include <cstdint>

#include "analyzer/memory/analyze.h"
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
constexpr int64_t kSession = 63'650;  // The session's structures, and per node:
constexpr int64_t kPerNode = 2'600;

TEST(LoadedWeightsTest, AMatMulsConstantBIsPackedWithNPaddedTo16AndTheOriginalFreed) {
  // w_matmul_1000x1000: 1008 x 1000 floats (MlasGemmPackBSize), measured 4,099,224.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 1000}).Initializer("w", onnx::TensorProto::FLOAT, {1000, 1000});
  builder.Add("MatMul", {"x", "w"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.weights_bytes, 4'000'000);
  EXPECT_EQ(ort->memory.runtime_weights_bytes, 1008 * 1000 * 4 + kSession + kPerNode);
}

TEST(LoadedWeightsTest, AnInitializerAnotherNodeReadsAsItIsStaysBesideItsPackedCopy) {
  // w_matmul_and_add: 2 x 4 MiB, measured 8,459,080.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1024, 1024}).Initializer("w", onnx::TensorProto::FLOAT, {1024, 1024});
  builder.Add("MatMul", {"x", "w"}, {"a"}).Add("Mul", {"a", "w"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_weights_bytes, 2 * 1024 * 1024 * 4 + kSession + 2 * kPerNode);
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
  EXPECT_EQ(defaults->memory.runtime_weights_bytes, 4 * 1024 * 1024 * 33 / 32 + kSession + kPerNode);
  EXPECT_EQ(no_arena->memory.runtime_weights_bytes, 2'359'296 + kSession + kPerNode);
  // The region is given whole (4 MiB < 2 x the filter), so the run extends
  // again: by 4 MiB, the size it grew to (measured 4,430,864 with the copy
  // of the 102,400-byte output).
  EXPECT_EQ(defaults->memory.runtime_reserved_bytes, 4 * 1024 * 1024 * 33 / 32 + 102'400 + 3 * 1024);
  EXPECT_EQ(defaults->memory.peak_bytes,
            defaults->memory.runtime_weights_bytes + defaults->memory.runtime_reserved_bytes);
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
