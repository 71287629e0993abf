// ORT's heap while it creates a session (load_peak.h): the replay on lists
// of buffers, then each load rule on a built model, the expected figure from
// the rule next to the probe of bench/ground_truth/load_probes.py that
// measured it (ORT 1.30, AVX-512).
#include "analyzer/runtimes/onnxruntime/load_peak.h"

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::ort::LoadBuffer;
using ::footprint::ort::LoadStage;
using ::footprint::ort::ReplayLoad;
using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;

constexpr int64_t kMiB = int64_t{1} << 20;

TEST(ReplayLoadTest, ReadingHoldsEveryWeightAndTheLargestOnceMore) {
  // load_plain_8x4: 36.09 MiB; load_plain_2x16: 48.07 MiB.
  std::vector<LoadBuffer> buffers(8, LoadBuffer{.bytes = 4 * kMiB, .kept = true});
  EXPECT_EQ(ReplayLoad(buffers, /*arena=*/true, /*session_bytes=*/0).bytes, 36 * kMiB);
  const ort::LoadPeak two = ReplayLoad({{.bytes = 16 * kMiB, .kept = true}, {.bytes = 16 * kMiB, .kept = true}}, true, 100);
  EXPECT_EQ(two.bytes, 48 * kMiB + 100);
  EXPECT_EQ(two.stage, LoadStage::kReading);
}

TEST(ReplayLoadTest, APassFreesWhatItReplacedOnlyAtItsEnd) {
  // load_conv_4x512: four 9 MiB filters reordered for NCHWc, each with
  // three copies of one filter while it is made: 36 + 36 + 27 = 99.1 MiB.
  std::vector<LoadBuffer> buffers;
  for (int i = 0; i < 4; ++i) buffers.push_back({.bytes = 9 * kMiB});
  for (int i = 0; i < 4; ++i) {
    buffers.push_back(
        {.made_at = LoadStage::kNchwc, .bytes = 9 * kMiB, .transient_bytes = 27 * kMiB, .kept = true, .replaces = {i}});
  }
  const ort::LoadPeak peak = ReplayLoad(buffers, true, 0);
  EXPECT_EQ(peak.bytes, 99 * kMiB);
  EXPECT_EQ(peak.stage, LoadStage::kNchwc);
  // The same filters in an external data file: 63.1 MiB.
  for (int i = 0; i < 4; ++i) buffers[i].bytes = 0;
  EXPECT_EQ(ReplayLoad(buffers, true, 0).bytes, 63 * kMiB);
}

TEST(ReplayLoadTest, PrePackingFreesEachOriginalRightAfterItsLastPacker) {
  // load_matmul_4x2048: four 16 MiB weights packed one by one: 64 + 16 MiB;
  // from an external file, only the packs: 64.1 MiB.
  std::vector<LoadBuffer> buffers;
  for (int i = 0; i < 4; ++i) buffers.push_back({.bytes = 0});
  for (int i = 0; i < 4; ++i) {
    buffers.push_back({.made_at = LoadStage::kPrePack, .bytes = 16 * kMiB, .kept = true, .replaces = {i}});
  }
  EXPECT_EQ(ReplayLoad(buffers, true, 0).bytes, 64 * kMiB);
  for (int i = 0; i < 4; ++i) buffers[i].bytes = 16 * kMiB;
  EXPECT_EQ(ReplayLoad(buffers, true, 0).bytes, 80 * kMiB);
}

TEST(ReplayLoadTest, AnArenaTransientLeavesItsRegionBehind) {
  // A QGemm's transposed B (36 MiB) from the arena: the arena extends by a
  // 64 MiB region (bfc_arena.h, from 1 MiB doubling), kept after packing.
  const std::vector<LoadBuffer> buffers = {
      {.bytes = 36 * kMiB},
      {.made_at = LoadStage::kPrePack, .bytes = 36 * kMiB, .transient_bytes = 36 * kMiB,
       .transient_in_arena = true, .kept = true, .replaces = {0}}};
  const int64_t region = 64 * kMiB + 64 * kMiB / 32;  // And its handles (arena_run.h).
  EXPECT_EQ(ReplayLoad(buffers, /*arena=*/true, 0).bytes, 72 * kMiB + region);
  EXPECT_EQ(ReplayLoad(buffers, /*arena=*/false, 0).bytes, 108 * kMiB);
}

const AnalyzeOptions kOrt = {.alias = true, .inplace = true, .fold_constants = true,
                             .runtime = "onnxruntime-cpu:avx512,noarena"};

// Two 16 MiB weights, each added to a one-float input.
ModelBuilder TwoPlainWeights() {
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1})
      .Initializer("w1", onnx::TensorProto::FLOAT, {4 * kMiB})
      .Initializer("w2", onnx::TensorProto::FLOAT, {4 * kMiB});
  builder.Add("Add", {"x", "w1"}, {"y1"}).Add("Add", {"x", "w2"}, {"y2"}).Output("y1").Output("y2");
  return builder;
}

TEST(LoadPeakTest, InlineWeightsAreHeldWithTheLargestCopiedOnceMore) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(TwoPlainWeights(), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_load_peak_bytes - ort->memory.runtime_weights_bytes, 16 * kMiB);
  EXPECT_EQ(ort->memory.runtime_load_peak_step, "reading the weights");
  EXPECT_EQ(ort->memory.runtime_mapped_weights_bytes, 0);
}

TEST(LoadPeakTest, ExternalWeightsAreMappedNotHeap) {
  // load_plain_2x16_ext: 0.08 MiB at creation, 0.07 MiB held.
  ModelBuilder builder = TwoPlainWeights();
  int64_t offset = 0;
  for (onnx::TensorProto& tensor : *builder.graph().mutable_initializer()) {
    tensor.clear_raw_data();
    tensor.set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                                     {"offset", std::to_string(offset)}, {"length", std::to_string(16 * kMiB)}}) {
      onnx::StringStringEntryProto* entry = tensor.add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    offset += 16 * kMiB;
  }
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_mapped_weights_bytes, 32 * kMiB);
  EXPECT_LT(ort->memory.runtime_weights_bytes, kMiB);  // The session's structures only.
  EXPECT_EQ(ort->memory.runtime_load_peak_bytes, ort->memory.runtime_weights_bytes);
}

TEST(LoadPeakTest, AFoldedValueIsMadeBesideItsInputAndTheInputsCopy) {
  // load_fold_16: a 16 MiB weight transposed at load, then added: 48.07 MiB.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {2048, 2048})
      .Initializer("w", onnx::TensorProto::FLOAT, {2048, 2048});
  builder.Add("Transpose", {"w"}, {"wt"}).Add("Add", {"x", "wt"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_load_peak_bytes - ort->memory.runtime_weights_bytes, 32 * kMiB);
  EXPECT_EQ(ort->memory.runtime_load_peak_step, "constant folding");
}

TEST(LoadPeakTest, APackedMatMulWeightIsFreedOnceItsPackIsMade) {
  // load_matmul_4x2048: 64 + 16 = 80.08 MiB at creation, 64.08 MiB held.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT, {1, 2048});
  std::string previous = "x";
  for (int i = 0; i < 4; ++i) {
    const std::string w = "w" + std::to_string(i), y = "y" + std::to_string(i);
    builder.Initializer(w, onnx::TensorProto::FLOAT, {2048, 2048}).Add("MatMul", {previous, w}, {y});
    previous = y;
  }
  builder.Output(previous);
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_load_peak_bytes - ort->memory.runtime_weights_bytes, 16 * kMiB);
}

TEST(LoadPeakTest, AFloat16WeightRunInFloat32IsConvertedBeforeItIsPacked) {
  // Two float16 MatMuls (no float16 MatMul kernel on x86: Casts, and level 4
  // converts each 1000 x 1000 weight): 2 x 2,000,000 float16 + 2 x 4,000,000
  // float32 + one float16 copy while converting; then the packs (1008 x 1000
  // floats each) replace the float32 weights.
  ModelBuilder builder;
  builder.Input("x", onnx::TensorProto::FLOAT16, {1, 1000})
      .Initializer("w1", onnx::TensorProto::FLOAT16, {1000, 1000})
      .Initializer("w2", onnx::TensorProto::FLOAT16, {1000, 1000});
  builder.Add("MatMul", {"x", "w1"}, {"a"}).Add("MatMul", {"a", "w2"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_load_peak_step, "float16 weights to float32");
  EXPECT_EQ(ort->memory.runtime_load_peak_bytes - ort->memory.runtime_weights_bytes,
            2 * 2'000'000 + 2 * 4'000'000 + 2'000'000 - 2 * 1008 * 1000 * 4);
}

TEST(LoadPeakTest, ThePeakIsTheLargerOfCreationAndTheFirstRunAndSaysWhich) {
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(TwoPlainWeights(), kOrt);
  ASSERT_TRUE(plain.ok()) << plain.status();
  // The run writes two 16 MiB outputs: above creation's extra 16 MiB.
  EXPECT_EQ(plain->memory.runtime_peak_phase, "first run");
  EXPECT_GT(plain->memory.peak_bytes, plain->memory.runtime_load_peak_bytes);
  ModelBuilder folded;
  folded.Input("x", onnx::TensorProto::FLOAT, {1}).Initializer("w", onnx::TensorProto::FLOAT, {2048, 2048});
  folded.Add("Transpose", {"w"}, {"wt"}).Add("ReduceSum", {"wt"}, {"s"}).Add("Add", {"x", "s"}, {"y"}).Output("y");
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(folded, kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_EQ(ort->memory.runtime_peak_phase, "session creation");
  EXPECT_EQ(ort->memory.peak_bytes, ort->memory.runtime_load_peak_bytes);
}

}  // namespace
}  // namespace footprint
