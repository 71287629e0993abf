// The receptive-field rule of each op (spatial_ops.h): windows, transposed
// windows, upsamplings, pointwise ops, and why others end a segment.
#include <string>
#include <utility>
#include <vector>

#include "analyzer/patching/patching_test_util.h"
#include "analyzer/patching/segment.h"
#include "analyzer/patching/spatial_ops.h"
#include "analyzer/testing/model_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace footprint::patching {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInt;
using ::footprint::testing::SetInts;
using ::testing::HasSubstr;

// The rule of `builder`'s node `index`, shapes from the analysis.
absl::StatusOr<SpatialOp> RuleOfBuilt(ModelBuilder& builder, int index) {
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  if (!facts.ok()) return facts.status();
  return SpatialOpIn(*facts, builder.graph().node(index));
}

TEST(SpatialOpsTest, WindowInputSpanFollowsStrideDilationAndPadding) {
  // Output rows [2, 5) of a 3x3 conv, stride 2, pad 1: rows 2*2-1 = 3 to 4*2-1+3 = 10.
  EXPECT_EQ(InputSpanOf({.kernel = 3, .stride = 2, .pad_begin = 1, .pad_end = 1}, {2, 5}), (Span{3, 10}));
  // Dilation 2 widens a 3-tap kernel to 5 rows; the first output row reaches 2 rows into the padding.
  EXPECT_EQ(InputSpanOf({.kernel = 3, .dilation = 2, .pad_begin = 2, .pad_end = 2}, {0, 1}), (Span{-2, 3}));
  EXPECT_EQ(Hull({0, 3}, {5, 7}), (Span{0, 7}));
  EXPECT_EQ(Hull({4, 4}, {5, 7}), (Span{5, 7}));
}

TEST(SpatialOpsTest, OpsThatMoveOrMixPixelsAreNotPatchable) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 8, 8})
      .Initializer("plane", kFloat, {1, 1, 8, 8})
      .Initializer("channel", kFloat, {4, 1, 1});
  builder.Node("Mul", {"x", "plane"}, {"masked"});
  builder.Node("Mul", {"x", "channel"}, {"scaled"});
  SetInt(builder.Node("Concat", {"x", "x"}, {"tall"}), "axis", 2);
  builder.Node("GlobalAveragePool", {"x"}, {"pooled"});
  for (const char* output : {"masked", "scaled", "tall", "pooled"}) builder.Output(output);
  const TensorShapes shapes = ShapesOfBuilt(builder);
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), shapes);
  ASSERT_TRUE(facts.ok());
  const auto rule = [&](int node) {
    return SpatialOpOf(
        builder.graph().node(node), [&](const std::string& v) { return facts->ShapeOf(v); },
        [&](const std::string& v) { return facts->IsStatic(v); });
  };
  EXPECT_THAT(rule(0).status().message(), HasSubstr("varies over H or W"));
  EXPECT_TRUE(rule(1).ok());
  EXPECT_THAT(rule(2).status().message(), HasSubstr("not along channels"));
  EXPECT_THAT(rule(3).status().message(), HasSubstr("GlobalAveragePool has no patch rule"));
}

TEST(SpatialOpsTest, AComputedGateOverTheImageIsPointwise) {
  // An SE block: x * g, g = Sigmoid(GlobalAveragePool(x)) of N x C x 1 x 1: the gate is broadcast over the image.
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 8, 8}).Input("row", kFloat, {1, 4, 1, 8});
  builder.Node("GlobalAveragePool", {"x"}, {"pooled"});
  builder.Node("Sigmoid", {"pooled"}, {"gate"});
  builder.Node("Mul", {"x", "gate"}, {"gated"});
  builder.Node("Mul", {"x", "row"}, {"by_row"});  // Broadcast over H only: each row would read another.
  for (const char* output : {"gated", "by_row"}) builder.Output(output);
  absl::StatusOr<SpatialOp> gated = RuleOfBuilt(builder, 2);
  ASSERT_TRUE(gated.ok()) << gated.status();
  EXPECT_EQ(gated->kind, SpatialKind::kPointwise);
  EXPECT_TRUE(IsImageGate({1, 4, 1, 1}));
  EXPECT_FALSE(IsImageGate({1, 4, 1, 8}));
  EXPECT_THAT(RuleOfBuilt(builder, 3).status().message(), HasSubstr("not an NCHW tensor of the output's H x W"));
}

TEST(SpatialOpsTest, TransposedAndUpsampledInputSpans) {
  // ConvTranspose 3x3, stride 2, pad 1: output row o gathers input rows i with
  // 2i - 1 + k = o, k in [0, 3). Rows [4, 8) -> i in [ceil((4 + 1 - 2) / 2), floor((7 + 1) / 2) + 1) = [2, 5).
  EXPECT_EQ(TransposedInputSpanOf({.kernel = 3, .stride = 2, .pad_begin = 1, .pad_end = 1}, {4, 8}), (Span{2, 5}));
  // Row 0 needs input row 0 only (ceil(-1 / 2) = 0).
  EXPECT_EQ(TransposedInputSpanOf({.kernel = 3, .stride = 2, .pad_begin = 1, .pad_end = 1}, {0, 1}), (Span{0, 1}));
  // Kernel 2, stride 2, no pad: disjoint 2-row blocks.
  EXPECT_EQ(TransposedInputSpanOf({.kernel = 2, .stride = 2}, {4, 8}), (Span{2, 4}));
  // Nearest x2, no halo: rows [3, 9) read [1, 5); with a halo of 1 each side, [0, 6).
  EXPECT_EQ(UpsampledInputSpanOf({.factor = 2}, {3, 9}), (Span{1, 5}));
  EXPECT_EQ(UpsampledInputSpanOf({.factor = 2, .halo_begin = 1, .halo_end = 1}, {3, 9}), (Span{0, 6}));
}

enum class Factors { kSizes, kZeroScales, kScalesDropped };  // How the Resize is given its output size.

// x 1x4x8x8 -> Resize to `out` x `out` with `attributes` set as strings.
absl::StatusOr<SpatialOp> ResizeRule(const std::vector<std::pair<std::string, std::string>>& attributes,
                                     Factors factors = Factors::kSizes, int64_t out = 16) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 8, 8}).Int64Initializer("sizes", {1, 4, out, out});
  builder.Initializer("scales", kFloat, {4});  // Zeros.
  if (factors == Factors::kScalesDropped) {
    for (onnx::TensorProto& tensor : *builder.graph().mutable_initializer()) {
      if (tensor.name() == "scales") tensor.clear_raw_data(), tensor.clear_float_data();  // As the loader drops large values.
    }
  }
  onnx::NodeProto& resize = builder.Node(
      "Resize", factors == Factors::kSizes ? std::vector<std::string>{"x", "", "", "sizes"} : std::vector<std::string>{"x", "", "scales"},
      {"y"});
  for (const auto& [name, value] : attributes) SetString(resize, name, value);
  builder.Output("y", kFloat, {1, 4, out, out});
  TensorShapes shapes{{"x", {1, 4, 8, 8}}, {"y", {1, 4, out, out}}, {"sizes", {4}}, {"scales", {4}}};
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), shapes);
  if (!facts.ok()) return facts.status();
  return SpatialOpIn(*facts, builder.graph().node(0));
}

TEST(SpatialOpsTest, ResizeByAnIntegerFactorHasAnExactField) {
  absl::StatusOr<SpatialOp> nearest = ResizeRule({{"mode", "nearest"}, {"coordinate_transformation_mode", "asymmetric"}});
  ASSERT_TRUE(nearest.ok()) << nearest.status();
  EXPECT_EQ(nearest->kind, SpatialKind::kUpsample);
  EXPECT_EQ(nearest->up_h.factor, 2);
  // Output row 2k + 1 maps to k + 0.5, which round_prefer_floor (nearest_mode's default) takes to k.
  EXPECT_EQ(nearest->up_h.halo_begin, 0);
  EXPECT_EQ(nearest->up_h.halo_end, 0);
  // Linear, half_pixel: row 2k maps to k - 0.25, so k - 1 and k; row 2k + 1 to k + 0.25, so k and k + 1.
  absl::StatusOr<SpatialOp> linear = ResizeRule({{"mode", "linear"}, {"coordinate_transformation_mode", "half_pixel"}});
  ASSERT_TRUE(linear.ok()) << linear.status();
  EXPECT_EQ(linear->up_w.halo_begin, 1);
  EXPECT_EQ(linear->up_w.halo_end, 1);
  EXPECT_THAT(ResizeRule({{"mode", "linear"}, {"coordinate_transformation_mode", "align_corners"}}).status().message(),
              HasSubstr("align_corners"));
  EXPECT_THAT(ResizeRule({{"mode", "cubic"}}).status().message(), HasSubstr("mode cubic"));
  EXPECT_THAT(ResizeRule({{"mode", "nearest"}}, Factors::kSizes, 20).status().message(), HasSubstr("non-integer"));
  // Scales must be the factors the shapes show; ones whose values the model does not hold cannot be checked.
  EXPECT_THAT(ResizeRule({{"mode", "nearest"}}, Factors::kZeroScales).status().message(), HasSubstr("not integer factors"));
  EXPECT_THAT(ResizeRule({{"mode", "nearest"}}, Factors::kScalesDropped).status().message(),
              HasSubstr("scales of unknown value"));
}

// x 1x4x8x8 -> Resize nearest by `factor`, its scales from a Constant node
// (as paddle2onnx writes them), `attributes` set as strings; opset 10's
// Resize (x, scales) when `opset10`.
absl::StatusOr<SpatialOp> NearestRule(const std::vector<std::pair<std::string, std::string>>& attributes,
                                      int64_t factor, bool opset10 = false) {
  ModelBuilder builder;
  if (opset10) builder.Opset("", 10);
  builder.Input("x", kFloat, {1, 4, 8, 8});
  onnx::NodeProto& scales = builder.Node("Constant", {}, {"scales"});
  onnx::AttributeProto* value = scales.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(kFloat);
  value->mutable_t()->add_dims(4);
  for (float f : {1.0f, 1.0f, static_cast<float>(factor), static_cast<float>(factor)}) value->mutable_t()->add_float_data(f);
  onnx::NodeProto& resize = builder.Node(
      "Resize", opset10 ? std::vector<std::string>{"x", "scales"} : std::vector<std::string>{"x", "", "scales"}, {"y"});
  SetString(resize, "mode", "nearest");
  for (const auto& [name, text] : attributes) SetString(resize, name, text);
  builder.Output("y", kFloat, {1, 4, 8 * factor, 8 * factor});
  TensorShapes shapes{{"x", {1, 4, 8, 8}}, {"scales", {4}}, {"y", {1, 4, 8 * factor, 8 * factor}}};
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), shapes);
  if (!facts.ok()) return facts.status();
  return SpatialOpIn(*facts, builder.graph().node(1));
}

TEST(SpatialOpsTest, ANearestResizeReadsTheRowItsNearestModeRoundsTo) {
  // Asymmetric x4: output row 4k + r maps to k + r/4 (0, 0.25, 0.5, 0.75).
  const auto rows_read = [](const std::string& nearest_mode, const Span& out) {
    absl::StatusOr<SpatialOp> op =
        NearestRule({{"coordinate_transformation_mode", "asymmetric"}, {"nearest_mode", nearest_mode}}, 4);
    EXPECT_TRUE(op.ok()) << op.status();
    return op.ok() ? UpsampledInputSpanOf(op->up_h, out) : Span{};
  };
  // floor: every row of block k reads row k, and no more (the x8/x4/x2 of PP-OCR's neck).
  EXPECT_EQ(rows_read("floor", {0, 4}), (Span{0, 1}));
  EXPECT_EQ(rows_read("floor", {6, 11}), (Span{1, 3}));
  // ceil: 4k reads k, 4k + 1 .. 4k + 3 read k + 1. Rows [6, 11) read 2 to 3.
  EXPECT_EQ(rows_read("ceil", {6, 11}), (Span{2, 4}));
  // round_prefer_floor: k, k, k (the tie 0.5 down), k + 1; round_prefer_ceil: k, k, k + 1, k + 1.
  EXPECT_EQ(rows_read("round_prefer_floor", {2, 3}), (Span{0, 1}));
  EXPECT_EQ(rows_read("round_prefer_ceil", {2, 3}), (Span{1, 2}));
  EXPECT_EQ(rows_read("round_prefer_floor", {3, 6}), (Span{1, 2}));
  // half_pixel x2 with floor: row 2k maps to k - 0.25 (row k - 1), row 2k + 1 to k + 0.25 (row k).
  absl::StatusOr<SpatialOp> half = NearestRule({{"coordinate_transformation_mode", "half_pixel"}, {"nearest_mode", "floor"}}, 2);
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_EQ(half->up_h.halo_begin, 1);
  EXPECT_EQ(UpsampledInputSpanOf(half->up_h, {4, 5}), (Span{1, 2}));
  EXPECT_EQ(UpsampledInputSpanOf(half->up_h, {5, 8}), (Span{2, 4}));
  // Opset 10's Resize names no rounding: both neighbours of k + 0.25.
  absl::StatusOr<SpatialOp> opset10 = NearestRule({}, 4, /*opset10=*/true);
  ASSERT_TRUE(opset10.ok()) << opset10.status();
  EXPECT_EQ(UpsampledInputSpanOf(opset10->up_h, {1, 2}), (Span{0, 2}));
  EXPECT_THAT(NearestRule({{"nearest_mode", "stochastic"}}, 2).status().message(), HasSubstr("nearest_mode stochastic"));
}

TEST(SpatialOpsTest, ConvTransposeNeedsEveryOutputRowReached) {
  const auto rule = [](int64_t kernel, int64_t stride, int64_t out) {
    ModelBuilder builder;
    builder.Input("x", kFloat, {1, 4, 8, 8}).Initializer("w", kFloat, {4, 2, kernel, kernel});
    onnx::NodeProto& node = builder.Node("ConvTranspose", {"x", "w"}, {"y"});
    SetInts(node, "strides", {stride, stride});
    builder.Output("y", kFloat, {1, 2, out, out});
    TensorShapes shapes{{"x", {1, 4, 8, 8}}, {"w", {4, 2, kernel, kernel}}, {"y", {1, 2, out, out}}};
    absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), shapes);
    EXPECT_TRUE(facts.ok());
    return SpatialOpIn(*facts, builder.graph().node(0));
  };
  absl::StatusOr<SpatialOp> fits = rule(2, 2, 16);
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->kind, SpatialKind::kTransposedWindow);
  EXPECT_EQ(fits->macs_per_input, 2 * 2 * 2);
  EXPECT_THAT(rule(1, 2, 15).status().message(), HasSubstr("kernel shorter than stride"));
  EXPECT_THAT(rule(2, 2, 17).status().message(), HasSubstr("does not follow"));
}

TEST(SpatialOpsTest, SamePaddingIsResolvedFromTheShapes) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 1, 7, 7}).Initializer("w", kFloat, {2, 1, 4, 4});
  onnx::NodeProto& conv = builder.Node("Conv", {"x", "w"}, {"y"});
  SetInts(conv, "strides", {2, 2});
  conv.add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("auto_pad");
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s("SAME_UPPER");
    return a;
  }());
  builder.Output("y");
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(builder.graph(), ShapesOfBuilt(builder));
  ASSERT_TRUE(facts.ok());
  absl::StatusOr<SpatialOp> op = SpatialOpOf(
      builder.graph().node(0), [&](const std::string& v) { return facts->ShapeOf(v); },
      [&](const std::string& v) { return facts->IsStatic(v); });
  ASSERT_TRUE(op.ok()) << op.status();
  // Out 4 = ceil(7/2): total padding (4-1)*2 + 4 - 7 = 3, SAME_UPPER puts 1 before, 2 after.
  EXPECT_EQ(op->h.pad_begin, 1);
  EXPECT_EQ(op->h.pad_end, 2);
  EXPECT_EQ(op->macs_per_output, 16);
}

TEST(SpatialOpsTest, SplitAndSliceOverChannelsArePointwiseAndASliceOverRowsIsAWindow) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 8, 6, 6})
      .Int64Initializer("halves", {4, 4})
      .Int64Initializer("starts", {2})
      .Int64Initializer("ends", {6})
      .Int64Initializer("channel_axis", {1})
      .Int64Initializer("row_axis", {2})
      .Int64Initializer("starts3", {0, 0, 1})
      .Int64Initializer("ends3", {1, 8, 5})
      .Int64Initializer("phase_starts", {1, 0})
      .Int64Initializer("phase_ends", {6, 6})
      .Int64Initializer("spatial_axes", {2, 3})
      .Int64Initializer("twos", {2, 2})
      .Int64Initializer("backwards", {-1, 1});
  SetInt(builder.Node("Split", {"x", "halves"}, {"a", "b"}), "axis", 1);
  SetInt(builder.Node("Split", {"x", "halves"}, {"c", "d"}), "axis", 3);  // Along W, 6 = 4 + 4 is no matter: refused first.
  builder.Node("Slice", {"x", "starts", "ends", "channel_axis"}, {"e"});
  builder.Node("Slice", {"x", "starts", "ends", "row_axis"}, {"f"});
  builder.Node("Slice", {"x", "starts3", "ends3"}, {"g"});  // Axes 0, 1, 2 by default.
  builder.Node("Slice", {"x", "phase_starts", "phase_ends", "spatial_axes", "twos"}, {"focus"});  // x[..., 1::2, ::2]
  builder.Node("Slice", {"x", "phase_starts", "phase_ends", "spatial_axes", "backwards"}, {"flipped"});
  for (const char* output : {"a", "b", "e", "f", "g", "focus", "flipped"}) builder.Output(output);
  absl::StatusOr<SpatialOp> split = RuleOfBuilt(builder, 0);
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(split->kind, SpatialKind::kPointwise);
  EXPECT_THAT(RuleOfBuilt(builder, 1).status().message(), HasSubstr("Split not along channels"));
  absl::StatusOr<SpatialOp> slice = RuleOfBuilt(builder, 2);
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->kind, SpatialKind::kPointwise);
  // Rows [2, 6): output row r is input row r + 2, a one-row window starting 2 rows in.
  absl::StatusOr<SpatialOp> rows = RuleOfBuilt(builder, 3);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->kind, SpatialKind::kWindow);
  EXPECT_EQ(InputSpanOf(rows->h, {0, 4}), (Span{2, 6}));
  EXPECT_EQ(InputSpanOf(rows->w, {1, 3}), (Span{1, 3}));  // W untouched.
  ASSERT_TRUE(RuleOfBuilt(builder, 4).ok());  // Axes 0, 1, 2 by default: rows [1, 5).
  // Focus's phase (1, 0): output rows [1, 3) are input rows 3 and 5.
  absl::StatusOr<SpatialOp> focus = RuleOfBuilt(builder, 5);
  ASSERT_TRUE(focus.ok()) << focus.status();
  EXPECT_EQ(InputSpanOf(focus->h, {1, 3}), (Span{3, 6}));
  EXPECT_EQ(InputSpanOf(focus->w, {1, 3}), (Span{2, 5}));
  EXPECT_THAT(RuleOfBuilt(builder, 6).status().message(), HasSubstr("step below 1"));
}

TEST(SpatialOpsTest, PadIsAOneRowWindowPaddedAtTheBorder) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 4, 8, 8})
      .Int64Initializer("after", {0, 0, 0, 0, 0, 0, 1, 2})
      .Int64Initializer("channels", {0, 1, 0, 0, 0, 0, 0, 0});
  builder.Node("Pad", {"x", "after"}, {"p"});
  SetString(builder.Node("Pad", {"x", "after"}, {"r"}), "mode", "reflect");
  builder.Node("Pad", {"x", "channels"}, {"c"});
  for (const char* output : {"p", "r", "c"}) builder.Output(output);
  absl::StatusOr<SpatialOp> pad = RuleOfBuilt(builder, 0);
  ASSERT_TRUE(pad.ok()) << pad.status();
  EXPECT_EQ(pad->kind, SpatialKind::kWindow);
  EXPECT_EQ(pad->h.kernel, 1);
  EXPECT_EQ(pad->h.pad_end, 1);
  EXPECT_EQ(pad->w.pad_end, 2);
  // Output rows [4, 9) of the padded 9 rows read input rows [4, 9): the last is padding.
  EXPECT_EQ(InputSpanOf(pad->h, {4, 9}), (Span{4, 9}));
  EXPECT_THAT(RuleOfBuilt(builder, 1).status().message(), HasSubstr("Pad in mode reflect"));
  EXPECT_THAT(RuleOfBuilt(builder, 2).status().message(), HasSubstr("Pad over N or C"));
}

TEST(SpatialOpsTest, DepthToSpaceUpsamplesAndSpaceToDepthIsAWindow) {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 16, 6, 6});
  SetInt(builder.Node("DepthToSpace", {"x"}, {"up"}), "blocksize", 2);
  SetInt(builder.Node("SpaceToDepth", {"x"}, {"down"}), "blocksize", 2);
  builder.Output("up").Output("down");
  absl::StatusOr<SpatialOp> up = RuleOfBuilt(builder, 0);
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(up->kind, SpatialKind::kUpsample);
  EXPECT_EQ(up->up_h.factor, 2);
  EXPECT_EQ(up->up_h.halo_begin + up->up_h.halo_end, 0);
  // Output rows [3, 8) are input rows 1 to 3: no halo.
  EXPECT_EQ(UpsampledInputSpanOf(up->up_h, {3, 8}), (Span{1, 4}));
  absl::StatusOr<SpatialOp> down = RuleOfBuilt(builder, 1);
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_EQ(down->kind, SpatialKind::kWindow);
  EXPECT_EQ(InputSpanOf(down->w, {1, 3}), (Span{2, 6}));  // Blocks of 2 columns, no overlap.
}

}  // namespace
}  // namespace footprint::patching
