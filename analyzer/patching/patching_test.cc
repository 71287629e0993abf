#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/patching/chain.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/patching/patching_test_util.h"
#include "analyzer/patching/rewrite.h"
#include "analyzer/patching/second_segment.h"
#include "analyzer/patching/segment.h"
#include "analyzer/patching/spatial_ops.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace footprint::patching {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInt;
using ::footprint::testing::SetInts;
using ::testing::HasSubstr;

// x 1x3x32x32 -> conv3x3 (8 ch) -> relu -> conv3x3 s2 (8 ch) -> GlobalAveragePool.
ModelBuilder TwoConvModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 32, 32});
  AddConv(builder, "x", "a", 3, 8, 3, 1, 1);
  builder.Node("Relu", {"a"}, {"b"}, "relu");
  AddConv(builder, "b", "c", 8, 8, 3, 2, 1);
  builder.Node("GlobalAveragePool", {"c"}, {"y"}, "gap");
  builder.Output("y");
  return builder;
}

TEST(SegmentTest, SegmentsEndWhereThePatchableNodesEnd) {
  ModelBuilder builder = TwoConvModel();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  SegmentSearch found = SegmentsFrom(*facts, "x");
  // a, b (after relu) and c end a segment; the pooled y does not.
  ASSERT_EQ(found.segments.size(), 3u);
  EXPECT_EQ(found.segments[0].output, "a");
  EXPECT_EQ(found.segments[2].output, "c");
  EXPECT_EQ(found.segments[2].nodes.size(), 3u);
}

// The runtime names its layout copies after their values ("c.nchwc",
// "a__nchw.nchwc"): each is its value's producer in the original graph; a
// graph input, a name no cut finds and a node already taken are skipped.
TEST(SegmentTest, TheRuntimesPeakValuesAreTheirProducersInTheOriginalGraph) {
  ModelBuilder builder = TwoConvModel();  // Nodes: a_conv 0, relu 1, c_conv 2, gap 3.
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  Analysis analysis;
  analysis.memory.runtime_peak_values = {"c.nchwc", "x", "a__nchw.nchwc", "unknown__reorder", "b", "a"};
  EXPECT_EQ(RuntimePeakNodes(analysis, *facts, {}, 4), (std::vector<int>{2, 0, 1}));
  EXPECT_EQ(RuntimePeakNodes(analysis, *facts, {}, 2), (std::vector<int>{2, 0}));
  EXPECT_EQ(RuntimePeakNodes(analysis, *facts, {0}, 4), (std::vector<int>{2, 1}));
  EXPECT_TRUE(RuntimePeakNodes(Analysis{}, *facts, {}, 4).empty());  // No --runtime.
}

TEST(SegmentTest, GeometryOfTwoByTwoPatchesHasHalosPadsAndExactMacs) {
  ModelBuilder builder = TwoConvModel();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  const Segment segment = SegmentsFrom(*facts, "x").segments[2];
  const PatchGeometry geometry = GeometryOf(*facts, segment, {.rows = 2, .cols = 2});
  ASSERT_EQ(geometry.patches.size(), 4u);
  // Patch (0, 0): c rows [0, 8) read b rows [-1, 16) -> [0, 16), which read x rows [-1, 17) -> [0, 17).
  const PatchGeometry::Patch& first = geometry.patches[0];
  EXPECT_EQ(first.produced.at("c"), (Region{{0, 8}, {0, 8}}));
  EXPECT_EQ(first.produced.at("b"), (Region{{0, 16}, {0, 16}}));
  EXPECT_EQ(first.produced.at("x"), (Region{{0, 17}, {0, 17}}));
  EXPECT_EQ(first.pads[2].h_begin, 1);  // At the border: the original padding.
  EXPECT_EQ(first.pads[2].h_end, 0);    // Inside: none, the halo is real rows.
  EXPECT_EQ(first.pads[0].h_begin, 1);
  EXPECT_EQ(first.pads[0].h_end, 0);
  // Patch (1, 1): c rows [8, 16) read b rows [15, 32), which read x rows [14, 33) -> [14, 32).
  const PatchGeometry::Patch& last = geometry.patches[3];
  EXPECT_EQ(last.produced.at("b"), (Region{{15, 32}, {15, 32}}));
  EXPECT_EQ(last.produced.at("x"), (Region{{14, 32}, {14, 32}}));
  EXPECT_EQ(last.pads[0].h_begin, 0);
  EXPECT_EQ(last.pads[0].h_end, 1);
  // Conv a: 8 x 32 x 32 outputs x 27 MACs unpatched; patched, row and column 15 twice (33 x 33).
  // Conv c: 8 x 16 x 16 x 72, its patches disjoint.
  EXPECT_EQ(geometry.macs_before, 8 * 32 * 32 * 27 + 8 * 16 * 16 * 72);
  EXPECT_EQ(geometry.macs_after, 8 * 33 * 33 * 27 + 8 * 16 * 16 * 72);
}

TEST(SegmentTest, AResidualBranchWithASmallerFieldIsCropped) {
  // x -> conv3x3 -> a; s = a + conv3x3(a): the skip reads less of a than the conv.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 16, 16});
  AddConv(builder, "x", "a", 4, 4, 3, 1, 1);
  AddConv(builder, "a", "b", 4, 4, 3, 1, 1);
  builder.Node("Add", {"a", "b"}, {"s"}, "add");
  builder.Node("GlobalAveragePool", {"s"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 4, 1, 1});
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  const SegmentSearch found = SegmentsFrom(*facts, "x");
  ASSERT_FALSE(found.segments.empty());
  const Segment& segment = found.segments.back();
  EXPECT_EQ(segment.output, "s");
  const PatchGeometry geometry = GeometryOf(*facts, segment, {.rows = 2, .cols = 1});
  const PatchGeometry::Patch& top = geometry.patches[0];
  EXPECT_EQ(top.produced.at("a"), (Region{{0, 9}, {0, 16}}));  // b's conv reads a halo row below.
  EXPECT_EQ(top.reads[2][0], (Region{{0, 8}, {0, 16}}));       // The Add reads a's patch only.
  absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(builder.Build(), *facts, {{segment, geometry}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  int slices = 0;
  for (const onnx::NodeProto& node : patched->graph().node()) slices += node.op_type() == "Slice";
  EXPECT_EQ(slices, 4);  // x per patch, and a cropped for the Add per patch.
  EXPECT_TRUE(CheckModel(*patched).ok()) << CheckModel(*patched);
  EXPECT_TRUE(ShapesInfer(*patched));
}

// T back in NCHWc for a reader that is no Conv: a MaxPool 1x1 over T, only
// where the target's NCHWc pools take T's channels (whole blocks) and only on
// a target that has NCHWc at all.
TEST(SegmentTest, TGoesBackIntoTheTargetsBlockedLayoutOnlyInWholeBlocks) {
  for (const int64_t channels : {24, 32}) {
    ModelBuilder builder;
    builder.Input("x", kFloat, {1, 4, 16, 16});
    AddConv(builder, "x", "a", 4, channels, 3, 1, 1);
    builder.Node("Relu", {"a"}, {"r"}, "relu");
    builder.Node("GlobalAveragePool", {"r"}, {"y"}, "gap");
    builder.Output("y", kFloat, {1, channels, 1, 1});
    for (const int64_t block : {int64_t{8}, int64_t{16}, int64_t{0}}) {
      absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder), block);
      ASSERT_TRUE(facts.ok());
      const SegmentSearch found = SegmentsFrom(*facts, "x");
      ASSERT_FALSE(found.segments.empty());
      const Segment& segment = found.segments.front();
      ASSERT_EQ(segment.output, "a");
      const PatchGeometry geometry = GeometryOf(*facts, segment, {.rows = 2, .cols = 2});
      absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(builder.Build(), *facts, {{segment, geometry}});
      ASSERT_TRUE(patched.ok()) << patched.status();
      bool pooled = false;
      for (const onnx::NodeProto& node : patched->graph().node()) {
        pooled |= node.op_type() == "MaxPool" && node.output(0) == "a";
      }
      EXPECT_EQ(pooled, block > 1 && channels % block == 0) << channels << " channels, block " << block;
    }
  }
}

// A CNN whose peak is its first, full-resolution stage.
ModelBuilder EarlyPeakModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 96, 96});
  AddConv(builder, "x", "a", 3, 16, 3, 1, 1);
  builder.Node("Relu", {"a"}, {"ar"}, "relu_a");
  AddConv(builder, "ar", "b", 16, 16, 3, 2, 1);
  builder.Node("Relu", {"b"}, {"br"}, "relu_b");
  AddConv(builder, "br", "c", 16, 32, 3, 2, 1);
  builder.Node("Relu", {"c"}, {"cr"}, "relu_c");
  AddConv(builder, "cr", "d", 32, 64, 3, 2, 1);
  builder.Node("GlobalAveragePool", {"d"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 64, 1, 1});
  return builder;
}

// x -> conv "a" (the first segment); a residual block reading a: conv "b"
// and the Add of a and b (the next segment); then a global pool.
ModelBuilder ResidualPairModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 16, 16});
  AddConv(builder, "x", "a", 4, 8, 3, 1, 1);
  AddConv(builder, "a", "b", 8, 8, 3, 1, 1);
  builder.Node("Add", {"a", "b"}, {"s"}, "add");
  builder.Node("GlobalAveragePool", {"s"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 8, 1, 1});
  return builder;
}

TEST(ChainTest, TheNextSegmentHoldsEveryReaderOfTheTensor) {
  ModelBuilder builder = ResidualPairModel();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  const SegmentSearch first = SegmentsFrom(*facts, "x");
  ASSERT_FALSE(first.segments.empty());
  EXPECT_EQ(first.segments.front().output, "a");
  const absl::flat_hash_set<int> taken(first.segments.front().nodes.begin(), first.segments.front().nodes.end());
  std::optional<Segment> next = NextSegment(*facts, "a", taken);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->input, "a");
  EXPECT_EQ(next->output, "s");  // Not "b": the Add reads a too.
  // s is read by the global pool, which no patch runs: the chain ends there.
  EXPECT_TRUE(ChainAfter(*facts, "a", taken, 8).size() == 1u);
  // A tensor read by a node already taken has no next segment.
  absl::flat_hash_set<int> with_add = taken;
  with_add.insert(next->nodes.back());
  EXPECT_FALSE(NextSegment(*facts, "a", with_add).has_value());
}

TEST(ChainTest, PiecesAreReadWithTheirHaloAndNeverAssembled) {
  ModelBuilder builder = ResidualPairModel();
  const onnx::ModelProto model = builder.Build();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(model.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  const Segment first = SegmentsFrom(*facts, "x").segments.front();
  const std::optional<Segment> next =
      NextSegment(*facts, "a", absl::flat_hash_set<int>(first.nodes.begin(), first.nodes.end()));
  ASSERT_TRUE(next.has_value());
  const std::vector<PlannedSegment> chain{
      {.segment = first, .geometry = GeometryOf(*facts, first, {.rows = 2, .cols = 2}), .output_in_pieces = true},
      {.segment = *next, .geometry = GeometryOf(*facts, *next, {.rows = 2, .cols = 2})}};
  absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(model, *facts, chain);
  ASSERT_TRUE(patched.ok()) << patched.status();
  int concats_of_pieces = 0;
  for (const onnx::NodeProto& node : patched->graph().node()) {
    for (const std::string& output : node.output()) EXPECT_NE(output, "a");  // Never whole.
    if (node.op_type() == "Concat" && node.output(0).rfind("a__", 0) == 0) ++concats_of_pieces;
    if (node.op_type() == "Add" && !node.name().ends_with("_dims_after")) {
      // The skip reads the patch's own piece of a (after the link's barrier, a
      // view of it): no Slice, no Concat.
      EXPECT_THAT(node.input(0), ::testing::MatchesRegex("a__patch[01]_[01]_after_barrier"));
    }
  }
  // Each patch's conv reads a with a one-row, one-column halo from 2 x 2
  // pieces: a Concat along W per row of pieces and one along H (3 per patch).
  EXPECT_EQ(concats_of_pieces, 12);
  EXPECT_TRUE(CheckModel(*patched).ok()) << CheckModel(*patched);
  const LoadedModel written{.model = *patched, .path = "chain.onnx"};
  EXPECT_TRUE(AnalyzeModel(written, {}).ok());
  // Kept in pieces but read outside the next segment (s by the global pool): refused.
  std::vector<PlannedSegment> wrong = chain;
  wrong[1].output_in_pieces = true;
  EXPECT_FALSE(RewriteWithPatches(model, *facts, wrong).ok());
}

// A residual stage of six blocks whose 64-channel stream makes the
// peak: assembling it costs its pieces and itself, more than the model's
// peak, and one segment through the stage recomputes a halo that grows
// with each 3x3 conv (over the MAC budget); a chain of the blocks keeps the
// stream in pieces, each block's halo one row, until the stride-2 conv
// shrinks it.
ModelBuilder ResidualStageModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 64, 64});
  AddConv(builder, "x", "stem", 3, 16, 3, 2, 1);  // 32
  builder.Node("Relu", {"stem"}, {"stem_r"}, "stem_relu");
  AddConv(builder, "stem_r", "s0", 16, 64, 1, 1, 0);
  builder.Node("Relu", {"s0"}, {"r0"}, "relu_0");
  std::string stream = "r0";
  for (int k = 1; k <= 6; ++k) {
    const std::string block = absl::StrCat("blk", k);
    AddConv(builder, stream, block + "_a", 64, 16, 1, 1, 0);
    builder.Node("Relu", {block + "_a"}, {block + "_ar"}, block + "_relu_a");
    AddConv(builder, block + "_ar", block + "_b", 16, 16, 3, 1, 1);
    builder.Node("Relu", {block + "_b"}, {block + "_br"}, block + "_relu_b");
    AddConv(builder, block + "_br", block + "_c", 16, 64, 1, 1, 0);
    builder.Node("Add", {block + "_c", stream}, {block + "_s"}, block + "_add");
    builder.Node("Relu", {block + "_s"}, {block + "_r"}, block + "_relu");
    stream = block + "_r";
  }
  AddConv(builder, stream, "down", 64, 64, 3, 2, 1);  // 16
  builder.Node("GlobalAveragePool", {"down"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 64, 1, 1});
  return builder;
}

TEST(ChainTest, AChainOverAResidualStageLowersTheArena) {
  const LoadedModel loaded{.model = ResidualStageModel().Build(), .path = "test.onnx"};
  AnalyzeOptions options = DefaultModes();
  options.schedule_time_limit = absl::ZeroDuration();  // The same figures on every run (no timed search).
  options.planner_time_limit = absl::ZeroDuration();
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, options);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> single = PlanPatches(loaded, options, *given, {.max_chain_segments = 0});
  absl::StatusOr<PatchSearch> chained = PlanPatches(loaded, options, *given, {});
  ASSERT_TRUE(single.ok() && chained.ok());
  EXPECT_FALSE(single->plan.has_value());  // Every single segment assembles the stream or is over the budget.
  ASSERT_TRUE(chained->plan.has_value()) << chained->reason;
  const PatchPlan& plan = *chained->plan;
  EXPECT_LT(plan.analysis.memory.arena_bytes, given->memory.arena_bytes);
  ASSERT_GE(plan.segments.size(), 2u);
  for (size_t k = 0; k + 1 < plan.segments.size(); ++k) {
    EXPECT_TRUE(plan.segments[k].output_in_pieces) << k;
    EXPECT_EQ(plan.segments[k + 1].input, plan.segments[k].output);
  }
  EXPECT_FALSE(plan.segments.back().output_in_pieces);  // The chain's last T is assembled.
  EXPECT_LE(plan.extra_macs_percent, 20.0);
  int64_t extra = 0;
  for (const SegmentChoice& segment : plan.segments) extra += segment.macs_after - segment.macs_before;
  EXPECT_EQ(plan.extra_macs, extra);
  absl::StatusOr<Analysis> again = AnalyzeModel(plan.model, options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->memory.arena_bytes, plan.analysis.memory.arena_bytes);
  EXPECT_TRUE(CheckModel(*plan.model.model).ok()) << CheckModel(*plan.model.model);
  absl::StatusOr<onnx::ModelProto> full = RewriteFullModel(loaded.model, plan);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_TRUE(CheckModel(*full).ok());
}

TEST(PatchPlanTest, PlansTheEarlyStagePatchByPatchWithTheSamePlanner) {
  const LoadedModel loaded{.model = EarlyPeakModel().Build(), .path = "test.onnx"};
  // No timed search: the figure and the re-analysis must not depend on the machine's load.
  AnalyzeOptions modes = DefaultModes();
  modes.schedule_time_limit = absl::ZeroDuration();
  modes.planner_time_limit = absl::ZeroDuration();
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, modes);
  ASSERT_TRUE(given.ok()) << given.status();
  // One segment (chains: ChainTest).
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, modes, *given, {.max_chain_segments = 0});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->plan.has_value()) << found->reason;
  const PatchPlan& plan = *found->plan;
  EXPECT_LT(plan.analysis.memory.arena_bytes, given->memory.arena_bytes * 6 / 10)
      << plan.analysis.memory.arena_bytes << " vs " << given->memory.arena_bytes << ", grid " << plan.segments[0].rows
      << "x" << plan.segments[0].cols << " to " << plan.segments[0].output;
  EXPECT_LE(plan.extra_macs_percent, 20.0);
  ASSERT_EQ(plan.segments.size(), 1u);
  EXPECT_EQ(plan.segments[0].input, "x");
  EXPECT_EQ(plan.extra_macs, plan.segments[0].macs_after - plan.segments[0].macs_before);
  EXPECT_GT(plan.segments[0].rows * plan.segments[0].cols, 1);
  // The figure is the analysis of the written model: analyzing it again gives it exactly.
  absl::StatusOr<Analysis> again = AnalyzeModel(plan.model, modes);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->memory.arena_bytes, plan.analysis.memory.arena_bytes);
  EXPECT_TRUE(CheckModel(*plan.model.model).ok()) << CheckModel(*plan.model.model);
  // A tighter budget never gives more extra MACs.
  absl::StatusOr<PatchSearch> tight = PlanPatches(loaded, modes, *given, {.max_overhead_percent = 5});
  ASSERT_TRUE(tight.ok());
  if (tight->plan.has_value()) EXPECT_LE(tight->plan->extra_macs_percent, 5.0);
}

// ONNX Runtime's planner hands a freed buffer to the next tensor of its
// known shape and keeps it allocated until then: equal-shaped patches would
// keep one patch's buffers for the next. The written patches' input Slices
// take overridable bounds (graph inputs too: ORT infers no dims from them),
// and T gets its static dims back by a Reshape. The bounds' defaults are
// the values: our figures are those of the same model with the bounds
// constant.
// EarlyPeakModel with a BatchNormalization after its first Conv, as exports
// of ResNets have. The written model computes the folded filter and bias
// once from the constants, and every patch's Conv reads them: no copy keeps a
// normalization for a runtime to fuse into a filter of its own.
TEST(PatchPlanTest, ABatchNormalizationIsFoldedOnceForEveryPatch) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 96, 96});
  AddConv(builder, "x", "a", 3, 16, 3, 1, 1);
  for (const char* name : {"bn_scale", "bn_shift", "bn_mean", "bn_var"}) builder.Initializer(name, kFloat, {16});
  builder.Node("BatchNormalization", {"a", "bn_scale", "bn_shift", "bn_mean", "bn_var"}, {"an"}, "bn_a");
  builder.Node("Relu", {"an"}, {"ar"}, "relu_a");
  AddConv(builder, "ar", "b", 16, 16, 3, 2, 1);
  builder.Node("Relu", {"b"}, {"br"}, "relu_b");
  AddConv(builder, "br", "c", 16, 32, 3, 2, 1);
  builder.Node("GlobalAveragePool", {"c"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 32, 1, 1});
  const LoadedModel loaded{.model = builder.Build(), .path = "test.onnx"};
  const AnalyzeOptions modes = DefaultModes();
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, modes);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, modes, *given, {.max_chain_segments = 0});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->plan.has_value()) << found->reason;
  const PatchPlan& plan = *found->plan;
  ASSERT_EQ(plan.segments.size(), 1u);
  ASSERT_GT(plan.segments[0].rows * plan.segments[0].cols, 1);
  absl::StatusOr<onnx::ModelProto> full = RewriteFullModel(loaded.model, plan);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_TRUE(CheckModel(*full).ok()) << CheckModel(*full);
  int norms = 0, folds = 0, convs_on_folded = 0;
  for (const onnx::NodeProto& node : full->graph().node()) {
    norms += node.op_type() == "BatchNormalization";
    if (node.op_type() == "Mul" && node.output(0) == "a_w__folded_an") ++folds;
    if (node.op_type() == "Conv" && node.input(1) == "a_w__folded_an") {
      ++convs_on_folded;
      ASSERT_EQ(node.input_size(), 3);
      EXPECT_EQ(node.input(2), "an__folded_bias");
    }
  }
  EXPECT_EQ(norms, 0);
  EXPECT_EQ(folds, 1);
  EXPECT_EQ(convs_on_folded, plan.segments[0].rows * plan.segments[0].cols);
  // The fold is constant: the analysis folds it at load, as a runtime does.
  absl::StatusOr<Analysis> written = AnalyzeModel(plan.model, modes);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->memory.arena_bytes, plan.analysis.memory.arena_bytes);
  bool folded = false;
  for (const WeightRecord& weight : written->weights) folded |= weight.name == "a_w__folded_an" && weight.folded;
  EXPECT_TRUE(folded);
}

TEST(PatchPlanTest, WrittenPatchesTakeOverridableBoundsAndTGetsItsDimsBack) {
  const LoadedModel loaded{.model = EarlyPeakModel().Build(), .path = "test.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, DefaultModes(), *given, {});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->plan.has_value()) << found->reason;
  const onnx::GraphProto& graph = found->plan->model.model->graph();
  std::set<std::string> inputs;
  for (const onnx::ValueInfoProto& input : graph.input()) inputs.insert(input.name());
  int slices = 0;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Slice" || node.input(0) != "x") continue;
    ++slices;
    for (int j = 1; j < node.input_size(); ++j) EXPECT_TRUE(inputs.contains(node.input(j))) << node.input(j);
  }
  EXPECT_GT(slices, 1);
  const std::string& t = found->plan->segments[0].output;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.output(0) == t) EXPECT_THAT(node.op_type(), ::testing::AnyOf("Reshape", "MaxPool")) << t;
  }
  AnalyzeOptions ort = DefaultModes();
  ort.runtime = "onnxruntime-cpu:avx2,noarena";
  absl::StatusOr<Analysis> overridable = AnalyzeModel(found->plan->model, ort);
  ASSERT_TRUE(overridable.ok()) << overridable.status();
  onnx::ModelProto constant = *found->plan->model.model;
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  for (const onnx::ValueInfoProto& input : constant.graph().input()) {
    if (!input.name().starts_with("patch_bounds_")) *kept.Add() = input;
  }
  constant.mutable_graph()->mutable_input()->Swap(&kept);
  absl::StatusOr<Analysis> folded = AnalyzeModel(LoadedModel{.model = constant, .path = "constant.onnx"}, ort);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_EQ(overridable->memory.arena_bytes, folded->memory.arena_bytes);
}

// A segmenter whose peak is in two places: its full-resolution first stage,
// and its upsampling head (Resize nearest, ConvTranspose, Resize linear) after
// a gate that no patch can run (GlobalAveragePool and a Mul by its result).
ModelBuilder TwoPeakModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 192, 192});
  AddConv(builder, "x", "a", 3, 16, 3, 1, 1);
  builder.Node("Relu", {"a"}, {"ar"}, "relu_a");
  AddConv(builder, "ar", "b", 16, 16, 3, 2, 1);
  builder.Node("Relu", {"b"}, {"br"}, "relu_b");
  AddConv(builder, "br", "b2", 16, 16, 3, 2, 1);
  AddConv(builder, "b2", "c", 16, 16, 3, 2, 1);
  builder.Node("GlobalAveragePool", {"c"}, {"pooled"}, "gap");
  builder.Node("Sigmoid", {"pooled"}, {"gate"}, "gate");
  builder.Node("Mul", {"c", "gate"}, {"f"}, "gated");
  builder.Int64Initializer("up1_sizes", {1, 16, 48, 48}).Int64Initializer("up2_sizes", {1, 8, 192, 192});
  onnx::NodeProto& up1 = builder.Node("Resize", {"f", "", "", "up1_sizes"}, {"u1"}, "up1");
  SetString(up1, "mode", "nearest");
  SetString(up1, "coordinate_transformation_mode", "asymmetric");
  AddConv(builder, "u1", "h", 16, 16, 3, 1, 1);
  builder.Initializer("deconv_w", kFloat, {16, 8, 3, 3});
  onnx::NodeProto& deconv = builder.Node("ConvTranspose", {"h", "deconv_w"}, {"t"}, "deconv");
  SetInts(deconv, "strides", {2, 2});
  SetInts(deconv, "pads", {1, 1, 1, 1});
  SetInts(deconv, "output_padding", {1, 1});
  builder.Node("Relu", {"t"}, {"tr"}, "relu_t");
  onnx::NodeProto& up2 = builder.Node("Resize", {"tr", "", "", "up2_sizes"}, {"u2"}, "up2");
  SetString(up2, "mode", "linear");
  SetString(up2, "coordinate_transformation_mode", "half_pixel");
  AddConv(builder, "u2", "g", 8, 8, 3, 1, 1);
  AddConv(builder, "g", "y", 8, 2, 1, 1, 0);
  builder.Output("y", kFloat, {1, 2, 192, 192});
  return builder;
}

TEST(PatchPlanTest, APeakInTheHeadGetsASecondSegment) {
  const LoadedModel loaded{.model = TwoPeakModel().Build(), .path = "test.onnx"};
  // No timed search: the figure and the re-analysis must not depend on the machine's load.
  AnalyzeOptions modes = DefaultModes();
  modes.schedule_time_limit = absl::ZeroDuration();
  modes.planner_time_limit = absl::ZeroDuration();
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, modes);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, modes, *given, {.max_chain_segments = 0});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->plan.has_value()) << found->reason;
  const PatchPlan& plan = *found->plan;
  ASSERT_EQ(plan.segments.size(), 2u);
  EXPECT_EQ(plan.segments[0].input, "x");
  EXPECT_EQ(plan.segments[1].output, "y");  // The head, up to the graph output.
  EXPECT_LT(plan.analysis.memory.arena_bytes, given->memory.arena_bytes / 2)
      << plan.analysis.memory.arena_bytes << " vs " << given->memory.arena_bytes;
  int64_t extra = 0;
  for (const SegmentChoice& segment : plan.segments) extra += segment.macs_after - segment.macs_before;
  EXPECT_EQ(plan.extra_macs, extra);
  EXPECT_LE(plan.extra_macs_percent, 20.0);
  // The head's copies: Resize by scales (not the whole tensor's sizes), ConvTranspose trimmed by its pads.
  int resizes = 0;
  for (const onnx::NodeProto& node : plan.model.model->graph().node()) {
    if (node.op_type() == "Resize" && node.name() != "up1" && node.name() != "up2") {
      ++resizes;
      EXPECT_EQ(node.input_size(), 3) << node.name();
    }
  }
  EXPECT_GT(resizes, 1);
  absl::StatusOr<Analysis> again = AnalyzeModel(plan.model, modes);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->memory.arena_bytes, plan.analysis.memory.arena_bytes);
  EXPECT_TRUE(CheckModel(*plan.model.model).ok()) << CheckModel(*plan.model.model);
}

// A detector's first stage with the ops YOLO, SSD and CenterNet add:
// YOLOv5's Focus (strided Slices over H and W), a TF-style Pad before a
// stride-2 conv, SiLU (Sigmoid * Mul), a C2f block
// (Split along channels, a 3x3 conv on one half, Concat), a Slice of
// channels, HardSwish, a stride-1 MaxPool (SPPF), DepthToSpace; then a
// GlobalAveragePool no patch runs.
ModelBuilder DetectorStemModel() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 96, 96})
      .Int64Initializer("tf_pads", {0, 0, 0, 0, 0, 0, 1, 1})
      .Int64Initializer("halves", {8, 8})
      .Int64Initializer("first", {0})
      .Int64Initializer("last", {16})
      .Int64Initializer("channel_axis", {1});
  // YOLOv5's Focus: two of its pixel phases as channels (x[..., ::2, ::2], x[..., 1::2, 1::2]).
  builder.Int64Initializer("even", {0, 0}).Int64Initializer("odd", {1, 1}).Int64Initializer("to_end", {96, 96});
  builder.Int64Initializer("hw", {2, 3}).Int64Initializer("step2", {2, 2});
  builder.Node("Slice", {"x", "even", "to_end", "hw", "step2"}, {"x_even"}, "focus_even");
  builder.Node("Slice", {"x", "odd", "to_end", "hw", "step2"}, {"x_odd"}, "focus_odd");
  SetInt(builder.Node("Concat", {"x_even", "x_odd"}, {"focus"}, "focus"), "axis", 1);  // 6 x 48 x 48
  AddConv(builder, "focus", "a", 6, 16, 3, 1, 1);
  builder.Node("Sigmoid", {"a"}, {"a_sig"}, "a_sig");
  builder.Node("Mul", {"a", "a_sig"}, {"a_silu"}, "a_silu");
  builder.Node("Pad", {"a_silu", "tf_pads"}, {"padded"}, "tf_pad");
  AddConv(builder, "padded", "b", 16, 16, 3, 2, 0);  // 49 -> 24
  SetInt(builder.Node("Split", {"b", "halves"}, {"b1", "b2"}, "split"), "axis", 1);
  AddConv(builder, "b2", "m", 8, 8, 3, 1, 1);
  builder.Node("HardSwish", {"m"}, {"m_hs"}, "m_hs");
  SetInt(builder.Node("Concat", {"b1", "b2", "m_hs"}, {"cat"}, "cat"), "axis", 1);
  builder.Node("Slice", {"cat", "first", "last", "channel_axis"}, {"kept"}, "keep");
  onnx::NodeProto& pool = builder.Node("MaxPool", {"kept"}, {"pooled"}, "sppf_pool");
  SetInts(pool, "kernel_shape", {5, 5});
  SetInts(pool, "pads", {2, 2, 2, 2});
  SetInt(builder.Node("DepthToSpace", {"pooled"}, {"d2s"}, "d2s"), "blocksize", 2);  // 4 x 48 x 48
  AddConv(builder, "d2s", "c", 4, 32, 3, 4, 1);  // 12 x 12
  builder.Node("GlobalAveragePool", {"c"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 32, 1, 1});
  return builder;
}

TEST(PatchPlanTest, DetectorOpsArePatchedAndWrittenCopiesCheck) {
  ModelBuilder builder = DetectorStemModel();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  const SegmentSearch found = SegmentsFrom(*facts, "x");
  ASSERT_FALSE(found.segments.empty()) << found.reason;
  const Segment& segment = found.segments.back();
  EXPECT_EQ(segment.output, "c");  // Every node before the GlobalAveragePool.
  const PatchGeometry geometry = GeometryOf(*facts, segment, {.rows = 2, .cols = 2});
  EXPECT_FALSE(geometry.empty_read);
  // The Pad's copies pad only at the bottom and right border: patch (0, 0) none, (1, 1) one row and column.
  size_t pad_index = 0;
  while (builder.graph().node(segment.nodes[pad_index]).op_type() != "Pad") ++pad_index;
  EXPECT_EQ(geometry.patches[0].pads[pad_index].h_end, 0);
  EXPECT_EQ(geometry.patches[3].pads[pad_index].h_end, 1);
  EXPECT_EQ(geometry.patches[3].pads[pad_index].w_end, 1);
  absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(builder.Build(), *facts, {{segment, geometry}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_TRUE(CheckModel(*patched).ok()) << CheckModel(*patched);
  EXPECT_TRUE(ShapesInfer(*patched));  // The Split's copy computes both outputs over the hull; the Concat crops b1.
  int splits = 0;
  for (const onnx::NodeProto& node : patched->graph().node()) {
    if (node.op_type() == "Split") {
      ++splits;
      EXPECT_EQ(node.output_size(), 2);
      EXPECT_NE(node.output(0), "b1");  // Renamed per patch.
    }
    if (node.op_type() == "SpaceToDepth" || node.op_type() == "DepthToSpace") {
      for (const onnx::AttributeProto& attribute : node.attribute()) EXPECT_NE(attribute.name(), "pads");
    }
  }
  EXPECT_EQ(splits, 4);
  // The Focus copies start at their region's first row: their starts are 0 on H and W.
  for (const onnx::NodeProto& node : patched->graph().node()) {
    if (node.op_type() != "Slice" || node.name().rfind("focus_", 0) != 0) continue;
    const auto stored = std::find_if(patched->graph().initializer().begin(), patched->graph().initializer().end(),
                                     [&](const onnx::TensorProto& t) { return t.name() == node.input(1); });
    ASSERT_NE(stored, patched->graph().initializer().end()) << node.name();
    EXPECT_THAT(std::vector<int64_t>(stored->int64_data().begin(), stored->int64_data().end()), ::testing::ElementsAre(0, 0))
        << node.name();
  }
  // The plan: below 0.6x (the input, held whole, is 0.37x), and the written model analyzed again gives its figure.
  // No timed search (as a CI job runs fit): the two figures must not depend on the machine's speed.
  AnalyzeOptions modes = DefaultModes();
  modes.schedule_time_limit = absl::ZeroDuration();
  modes.planner_time_limit = absl::ZeroDuration();
  const LoadedModel loaded{.model = builder.Build(), .path = "test.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, modes);
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> planned = PlanPatches(loaded, modes, *given, {});
  ASSERT_TRUE(planned.ok()) << planned.status();
  ASSERT_TRUE(planned->plan.has_value()) << planned->reason;
  EXPECT_LT(planned->plan->analysis.memory.arena_bytes, given->memory.arena_bytes * 6 / 10)
      << planned->plan->analysis.memory.arena_bytes << " vs " << given->memory.arena_bytes;
  absl::StatusOr<Analysis> again = AnalyzeModel(planned->plan->model, modes);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->memory.arena_bytes, planned->plan->analysis.memory.arena_bytes);
  EXPECT_TRUE(CheckModel(*planned->plan->model.model).ok()) << CheckModel(*planned->plan->model.model);
}

TEST(PatchPlanTest, APrefixTriesAGridFinerThanEightWithinTheMacs) {
  // A large input held whole beside thin, cheap stages (a 640x640 face
  // detector's MobileNet-0.25): the last patches' pieces and working set sit
  // beside it, and a 16x16 grid costs few MACs.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 256, 256});
  AddConv(builder, "x", "a", 3, 8, 3, 2, 1);  // 128
  builder.Node("Relu", {"a"}, {"ar"}, "relu_a");
  AddConv(builder, "ar", "b", 8, 16, 1, 1, 0);
  builder.Node("Relu", {"b"}, {"br"}, "relu_b");
  AddConv(builder, "br", "c", 16, 16, 3, 2, 1);  // 64
  AddConv(builder, "c", "d", 16, 32, 1, 1, 0);
  builder.Node("GlobalAveragePool", {"d"}, {"y"}, "gap");
  builder.Output("y", kFloat, {1, 32, 1, 1});
  const LoadedModel loaded{.model = builder.Build(), .path = "test.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> coarse = PlanPatches(loaded, DefaultModes(), *given, {.max_fine_patches_per_axis = 8});
  absl::StatusOr<PatchSearch> fine = PlanPatches(loaded, DefaultModes(), *given, {});
  ASSERT_TRUE(coarse.ok() && fine.ok());
  ASSERT_TRUE(coarse->plan.has_value() && fine->plan.has_value());
  EXPECT_LE(std::max(coarse->plan->segments[0].rows, coarse->plan->segments[0].cols), 8);
  EXPECT_GT(std::max(fine->plan->segments[0].rows, fine->plan->segments[0].cols), 8);
  EXPECT_LT(fine->plan->analysis.memory.arena_bytes, coarse->plan->analysis.memory.arena_bytes);
  EXPECT_LE(fine->plan->extra_macs_percent, 20.0);
}

TEST(PatchPlanTest, AStreamedInputIsLiveOnlyPatchByPatch) {
  const LoadedModel loaded{.model = EarlyPeakModel().Build(), .path = "test.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok());
  absl::StatusOr<PatchSearch> whole = PlanPatches(loaded, DefaultModes(), *given, {});
  absl::StatusOr<PatchSearch> streamed = PlanPatches(loaded, DefaultModes(), *given, {.stream_input = true});
  ASSERT_TRUE(whole.ok() && streamed.ok());
  ASSERT_TRUE(whole->plan.has_value() && streamed->plan.has_value()) << streamed->reason;
  // x (1x3x96x96, 110,592 bytes) is never whole: the streamed arena is lower.
  EXPECT_LT(streamed->plan->analysis.memory.arena_bytes, whole->plan->analysis.memory.arena_bytes);
  for (const TensorRecord& tensor : streamed->plan->analysis.tensors) EXPECT_NE(tensor.name, "x");
  EXPECT_FALSE(RewriteFullModel(loaded.model, *streamed->plan).ok());  // A figure, never a file.
}

TEST(PatchPlanTest, AnInputReadOutsideTheSegmentCannotStream) {
  ModelBuilder builder = EarlyPeakModel();
  builder.Node("GlobalAveragePool", {"x"}, {"x_mean"}, "x_mean");
  builder.Output("x_mean", kFloat, {1, 3, 1, 1});
  const LoadedModel loaded{.model = builder.Build(), .path = "test.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok());
  absl::StatusOr<PatchSearch> streamed = PlanPatches(loaded, DefaultModes(), *given, {.stream_input = true});
  ASSERT_TRUE(streamed.ok());
  EXPECT_FALSE(streamed->plan.has_value());
  EXPECT_THAT(streamed->reason, HasSubstr("also read outside the patched segment"));
}

TEST(PatchPlanTest, NoPatchOptionSaysWhy) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 64});
  builder.Initializer("w", kFloat, {64, 64});
  builder.Node("MatMul", {"x", "w"}, {"y"}, "mm");
  builder.Output("y");
  const LoadedModel loaded{.model = builder.Build(), .path = "test.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok());
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, DefaultModes(), *given, {});
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->plan.has_value());
  EXPECT_THAT(found->reason, HasSubstr("not an NCHW tensor"));
}

TEST(PatchPlanTest, NoGridWithinTheOverheadBudgetSaysSo) {
  const LoadedModel loaded{.model = EarlyPeakModel().Build(), .path = "test.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok());
  // Chains off: a chain of one-conv segments recomputes only pointwise ops in its halos (0 MACs).
  absl::StatusOr<PatchSearch> found =
      PlanPatches(loaded, DefaultModes(), *given, {.max_overhead_percent = 0, .max_chain_segments = 0});
  ASSERT_TRUE(found.ok());
  // One conv alone recomputes nothing, but its output is the peak; every longer segment has a halo.
  EXPECT_FALSE(found->plan.has_value());
  EXPECT_THAT(found->reason, HasSubstr("--max-overhead"));
}

// A detector's neck: a thin stem, a skip `p` at 32 x 32 that the backbone
// reads on, a low-resolution branch `f` gated by a global pool (no patch
// runs it: its field is the whole image), then the neck's stage at 32 x 32:
// Resize(f) x2, Concat with p, 3x3 conv, Relu, 1x1 conv to the graph output.
// Around the Concat no single tensor dominates locally: the stage reads f and p.
onnx::ModelProto NeckModelProto() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 64, 64}).Int64Initializer("up_sizes", {1, 64, 32, 32});
  AddConv(builder, "x", "a", 3, 4, 3, 2, 1);
  AddConv(builder, "a", "p", 4, 16, 3, 1, 1);
  AddConv(builder, "p", "q", 16, 64, 3, 2, 1);
  builder.Node("GlobalAveragePool", {"q"}, {"pooled"}, "gap");
  builder.Node("Sigmoid", {"pooled"}, {"gate"}, "gate");
  builder.Node("Mul", {"q", "gate"}, {"f"}, "gated");
  onnx::NodeProto& up = builder.Node("Resize", {"f", "", "", "up_sizes"}, {"u"}, "up");
  SetString(up, "mode", "nearest");
  SetString(up, "coordinate_transformation_mode", "asymmetric");
  SetInt(builder.Node("Concat", {"u", "p"}, {"cat"}, "neck_concat"), "axis", 1);
  AddConv(builder, "cat", "n", 80, 32, 3, 1, 1);
  builder.Node("Relu", {"n"}, {"nr"}, "neck_relu");
  AddConv(builder, "nr", "y", 32, 4, 1, 1, 0);
  builder.Output("y", kFloat, {1, 4, 32, 32});
  return builder.Build();
}

TEST(SegmentTest, ANeckStageReadsTwoInputsEachCutByItsOwnField) {
  const onnx::ModelProto model = NeckModelProto();
  const LoadedModel loaded{.model = model, .path = "neck.onnx"};
  absl::StatusOr<Analysis> analysis = AnalyzeModel(loaded, {});  // The baseline: every node output a tensor.
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(model.graph(), ShapesOfAnalysis(*analysis));
  ASSERT_TRUE(facts.ok());
  int concat = -1;
  for (int i = 0; i < model.graph().node_size(); ++i) concat = model.graph().node(i).name() == "neck_concat" ? i : concat;
  // No tensor that dominates the Concat gives a segment (x's field crosses the gate).
  EXPECT_TRUE(SegmentsAround(*facts, concat, {}, {}).empty());
  const std::vector<Segment> around = MultiInputSegmentsAround(*facts, concat, {});
  // The stage to the graph output, kept to its 32 x 32 rows, p read as it is (not recomputed from a).
  const auto stage = std::find_if(around.begin(), around.end(), [](const Segment& segment) {
    return segment.output == "y" && InputsOf(segment) == std::vector<std::string>{"f", "p"};
  });
  ASSERT_NE(stage, around.end());
  const Segment& neck = *stage;
  EXPECT_TRUE(neck.recomputed.empty());
  EXPECT_EQ(neck.nodes.size(), 5u);  // Resize, Concat, conv, Relu, conv.
  const PatchGeometry geometry = GeometryOf(*facts, neck, {.rows = 2, .cols = 2});
  ASSERT_EQ(geometry.patches.size(), 4u);
  // Patch (0, 0): y rows [0, 16); the 3x3 conv reads cat rows [-1, 17) -> [0, 17), so p [0, 17)
  // and u [0, 17), which the nearest x2 Resize reads from f rows [0, 9) (u's row 16 is f's row 8: no halo).
  const PatchGeometry::Patch& first = geometry.patches[0];
  EXPECT_EQ(first.produced.at("p"), (Region{{0, 17}, {0, 17}}));
  EXPECT_EQ(first.produced.at("f"), (Region{{0, 9}, {0, 9}}));
  EXPECT_EQ(first.produced.at("u"), (Region{{0, 18}, {0, 18}}));  // factor x its input rows; the Concat crops.
  // Patch (1, 1): cat rows [15, 33) -> [15, 32); f rows [7, 16) (row 15 maps to 7.5, rounded down to 7),
  // u computed [14, 32).
  const PatchGeometry::Patch& last = geometry.patches[3];
  EXPECT_EQ(last.produced.at("p"), (Region{{15, 32}, {15, 32}}));
  EXPECT_EQ(last.produced.at("f"), (Region{{7, 16}, {7, 16}}));
  EXPECT_EQ(last.reads[1][0], (Region{{15, 32}, {15, 32}}));  // The Concat reads u's rows it needs.
  // The rewrite slices each input per patch and crops u for the Concat.
  absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(model, *facts, {{neck, geometry}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  int slices_of_f = 0, slices_of_p = 0, crops = 0;
  for (const onnx::NodeProto& node : patched->graph().node()) {
    if (node.op_type() != "Slice") continue;
    slices_of_f += node.input(0) == "f";
    slices_of_p += node.input(0) == "p";
    crops += node.input(0).rfind("u__patch", 0) == 0;
  }
  EXPECT_EQ(slices_of_f, 4);
  EXPECT_EQ(slices_of_p, 4);
  EXPECT_EQ(crops, 4);
  EXPECT_TRUE(CheckModel(*patched).ok()) << CheckModel(*patched);
  EXPECT_TRUE(ShapesInfer(*patched));
}

TEST(PatchPlanTest, APeakInANeckGetsASegmentWithTwoInputs) {
  const LoadedModel loaded{.model = NeckModelProto(), .path = "neck.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, DefaultModes(), *given, {});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->plan.has_value()) << found->reason;
  const PatchPlan& plan = *found->plan;
  const SegmentChoice* neck = nullptr;
  for (const SegmentChoice& segment : plan.segments) neck = segment.other_inputs.empty() ? neck : &segment;
  ASSERT_NE(neck, nullptr) << "no segment with two inputs";
  // It reads f and, instead of p (16 channels, also read by q's conv), the 4-channel a its patches recompute
  // p from: p then lives only until q's conv.
  EXPECT_EQ(neck->input, "a");
  EXPECT_EQ(neck->other_inputs, (std::vector<std::string>{"f"}));
  EXPECT_LT(plan.analysis.memory.arena_bytes, given->memory.arena_bytes * 6 / 10)
      << plan.analysis.memory.arena_bytes << " vs " << given->memory.arena_bytes;
  EXPECT_LE(plan.extra_macs_percent, 20.0);
  // Each patch slices both inputs: neck->rows x neck->cols Slices of a and of f.
  int slices_of_a = 0, slices_of_f = 0;
  for (const onnx::NodeProto& node : plan.model.model->graph().node()) {
    slices_of_a += node.op_type() == "Slice" && node.input(0) == "a";
    slices_of_f += node.op_type() == "Slice" && node.input(0) == "f";
  }
  EXPECT_EQ(slices_of_a, neck->rows * neck->cols);
  EXPECT_EQ(slices_of_f, neck->rows * neck->cols);
  ExpectWrittenModelSound(plan);
}

// A U-Net: an encoder whose skips s1 (64 x 64) and s2 (32 x 32) are held
// across a gated bottleneck (no patch runs its pool), and a decoder whose stages
// each read an upsampled tensor and a skip: no segment with one input holds
// a decoder stage.
onnx::ModelProto UNetModelProto() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 64, 64});
  AddConv(builder, "x", "s1", 3, 8, 3, 1, 1);
  onnx::NodeProto& pool1 = builder.Node("MaxPool", {"s1"}, {"p1"}, "pool1");
  SetInts(pool1, "kernel_shape", {2, 2});
  SetInts(pool1, "strides", {2, 2});
  AddConv(builder, "p1", "s2", 8, 16, 3, 1, 1);
  onnx::NodeProto& pool2 = builder.Node("MaxPool", {"s2"}, {"p2"}, "pool2");
  SetInts(pool2, "kernel_shape", {2, 2});
  SetInts(pool2, "strides", {2, 2});
  AddConv(builder, "p2", "b", 16, 32, 3, 1, 1);
  builder.Node("GlobalAveragePool", {"b"}, {"pooled"}, "gap");
  builder.Node("Sigmoid", {"pooled"}, {"gate"}, "gate");
  builder.Node("Mul", {"b", "gate"}, {"f"}, "gated");
  for (const auto& [input, output, in, out] : {std::tuple{"f", "up1", 32, 16}, std::tuple{"d1", "up2", 16, 8}}) {
    builder.Initializer(std::string(output) + "_w", kFloat, {in, out, 2, 2});
    onnx::NodeProto& up = builder.Node("ConvTranspose", {input, std::string(output) + "_w"}, {output}, output);
    SetInts(up, "kernel_shape", {2, 2});
    SetInts(up, "strides", {2, 2});
    if (std::string(output) == "up1") {
      SetInt(builder.Node("Concat", {"s2", "up1"}, {"cat1"}, "cat1"), "axis", 1);
      AddConv(builder, "cat1", "d1", 32, 16, 3, 1, 1);
    }
  }
  SetInt(builder.Node("Concat", {"s1", "up2"}, {"cat2"}, "cat2"), "axis", 1);
  AddConv(builder, "cat2", "d2", 16, 8, 3, 1, 1);
  AddConv(builder, "d2", "y", 8, 1, 1, 1, 0);
  builder.Output("y", kFloat, {1, 1, 64, 64});
  return builder.Build();
}

TEST(PatchPlanTest, AUNetDecoderIsPatchedBySegmentsReadingItsSkips) {
  const LoadedModel loaded{.model = UNetModelProto(), .path = "unet.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok()) << given.status();
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, DefaultModes(), *given, {});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->plan.has_value()) << found->reason;
  const PatchPlan& plan = *found->plan;
  // The decoder is patched by segments with several inputs: the bottleneck before its gate, the gate and both
  // skips are read by them (one segment for the whole decoder, or one per stage, whichever plans lower).
  std::vector<std::string> inputs;
  for (const SegmentChoice& segment : plan.segments) {
    if (segment.other_inputs.empty()) continue;
    inputs.push_back(segment.input);
    inputs.insert(inputs.end(), segment.other_inputs.begin(), segment.other_inputs.end());
  }
  EXPECT_THAT(inputs, ::testing::IsSupersetOf({"b", "gate", "s2", "s1"}));
  EXPECT_LT(plan.analysis.memory.arena_bytes, given->memory.arena_bytes * 6 / 10)
      << plan.analysis.memory.arena_bytes << " vs " << given->memory.arena_bytes;
  ExpectWrittenModelSound(plan);
}

}  // namespace
}  // namespace footprint::patching
