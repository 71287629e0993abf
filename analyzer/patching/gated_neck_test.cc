// A neck stage gated by squeeze-and-excitation (PP-OCR's RSEFPN: x + x *
// SE(x)): its Mul by an N x C x 1 x 1 gate is patched, every patch reading
// the gate whole; the tensor the gate pools, needed whole, is recomputed by
// the patches from the smaller one it comes from; and a DBNet-like detector
// (that neck, Resize x2/x4/x8, Concat of four scales, a ConvTranspose head)
// is patched below 0.6x its arena.
#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/patching/patching_test_util.h"
#include "analyzer/patching/rewrite.h"
#include "analyzer/patching/second_segment.h"
#include "analyzer/patching/segment.h"
#include "analyzer/testing/model_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace footprint::patching {
namespace {

using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInts;
using ::testing::Contains;

// An RSE layer on `input`: a Conv to `out` channels (`kernel`), then
// `name` = conv + conv * HardSigmoid(Conv(Relu(Conv(GlobalAveragePool(conv))))).
void AddRseLayer(ModelBuilder& builder, const std::string& input, const std::string& name, int64_t in, int64_t out,
                 int64_t kernel) {
  AddConv(builder, input, name + "_x", in, out, kernel, 1, kernel / 2);
  builder.Node("GlobalAveragePool", {name + "_x"}, {name + "_pooled"}, name + "_pool");
  AddConv(builder, name + "_pooled", name + "_squeezed", out, out / 4, 1, 1, 0);
  builder.Node("Relu", {name + "_squeezed"}, {name + "_squeezed_relu"}, name + "_squeeze_relu");
  AddConv(builder, name + "_squeezed_relu", name + "_excited", out / 4, out, 1, 1, 0);
  builder.Node("HardSigmoid", {name + "_excited"}, {name + "_gate"}, name + "_gate");
  builder.Node("Mul", {name + "_x", name + "_gate"}, {name + "_gated"}, name + "_gated");
  builder.Node("Add", {name + "_x", name + "_gated"}, {name}, name);
}

// x 1x3x64x64 -> c (8 x 32 x 32) -> the lateral RSE layer "in2" (32
// channels) beside d (32 x 16 x 16) upsampled x2 (nearest, asymmetric,
// floor): out2 = in2 + Resize(d), then a 3x3 conv and Relu to y.
onnx::ModelProto RseStageModelProto() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 64, 64}).Int64Initializer("up_sizes", {1, 32, 32, 32});
  AddConv(builder, "x", "c", 3, 8, 3, 2, 1);
  AddRseLayer(builder, "c", "in2", 8, 32, 1);
  AddConv(builder, "c", "d", 8, 32, 3, 2, 1);
  onnx::NodeProto& up = builder.Node("Resize", {"d", "", "", "up_sizes"}, {"u"}, "up");
  SetString(up, "mode", "nearest");
  SetString(up, "coordinate_transformation_mode", "asymmetric");
  SetString(up, "nearest_mode", "floor");
  builder.Node("Add", {"in2", "u"}, {"out2"}, "out2");
  AddConv(builder, "out2", "p", 32, 8, 3, 1, 1);
  builder.Node("Relu", {"p"}, {"y"}, "relu_p");
  builder.Output("y", kFloat, {1, 8, 32, 32});
  return builder.Build();
}

int NodeNamed(const onnx::GraphProto& graph, const std::string& name) {
  for (int i = 0; i < graph.node_size(); ++i) {
    if (graph.node(i).name() == name) return i;
  }
  ADD_FAILURE() << "no node " << name;
  return -1;
}

TEST(GatedNeckTest, ASegmentHoldsTheGatedMulAndEveryPatchReadsTheGateWhole) {
  const onnx::ModelProto model = RseStageModelProto();
  absl::StatusOr<Analysis> analysis = AnalyzeModel({.model = model, .path = "rse.onnx"}, {});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(model.graph(), ShapesOfAnalysis(*analysis));
  ASSERT_TRUE(facts.ok());
  const int gated = NodeNamed(model.graph(), "in2_gated");
  const std::vector<Segment> around = MultiInputSegmentsAround(*facts, NodeNamed(model.graph(), "out2"), {});
  const Segment* stage = nullptr;
  for (const Segment& segment : around) stage = segment.output == "y" ? &segment : stage;
  ASSERT_NE(stage, nullptr);
  // The gate's own nodes (pool, 1x1 convs on 1 x 1) are computed once, whole: not in the segment.
  EXPECT_THAT(stage->nodes, Contains(gated));
  EXPECT_THAT(InputsOf(*stage), Contains("in2_gate"));
  EXPECT_THAT(stage->nodes, ::testing::Not(Contains(NodeNamed(model.graph(), "in2_gate"))));
  const PatchGeometry geometry = GeometryOf(*facts, *stage, {.rows = 2, .cols = 2});
  ASSERT_EQ(geometry.patches.size(), 4u);
  for (const PatchGeometry::Patch& patch : geometry.patches) {
    EXPECT_EQ(patch.produced.at("in2_gate"), (Region{{0, 1}, {0, 1}}));
  }
  // Patch (1, 1): y rows [16, 32), the 3x3 conv reads rows [15, 32) of in2_x and of the gated product.
  EXPECT_EQ(geometry.patches[3].produced.at("in2_x"), (Region{{15, 32}, {15, 32}}));
  absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(model, *facts, {{*stage, geometry}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  int gate_slices = 0, gate_readers = 0;
  for (const onnx::NodeProto& node : patched->graph().node()) {
    gate_slices += node.op_type() == "Slice" && node.input(0) == "in2_gate";
    gate_readers += node.op_type() == "Mul" && node.input_size() == 2 && node.input(1) == "in2_gate";
  }
  EXPECT_EQ(gate_slices, 0);
  EXPECT_EQ(gate_readers, 4);  // Each patch's copy of the Mul reads the whole gate.
  EXPECT_TRUE(CheckModel(*patched).ok()) << CheckModel(*patched);
  EXPECT_TRUE(ShapesInfer(*patched));
}

TEST(GatedNeckTest, TheTensorAGateReadsWholeIsRecomputedFromASmallerOne) {
  const onnx::ModelProto model = RseStageModelProto();
  absl::StatusOr<Analysis> analysis = AnalyzeModel({.model = model, .path = "rse.onnx"}, {});
  ASSERT_TRUE(analysis.ok()) << analysis.status();
  absl::StatusOr<GraphFacts> facts = MakeGraphFacts(model.graph(), ShapesOfAnalysis(*analysis));
  ASSERT_TRUE(facts.ok());
  // in2_x (32 x 32 x 32) is read by the pool and by the stage; the stage can
  // compute it from c (8 x 32 x 32), so that in2_x lives only until the pool.
  const int lateral = NodeNamed(model.graph(), "in2_x_conv");
  const int low = NodeNamed(model.graph(), "d_conv");  // Of the 16 x 16 branch: the stage's closure leaves it out.
  const std::vector<Segment> around = MultiInputSegmentsAround(*facts, NodeNamed(model.graph(), "out2"), {});
  const auto recomputing = std::find_if(around.begin(), around.end(), [&](const Segment& segment) {
    return segment.output == "y" && segment.recomputed == std::vector<int>{lateral} &&
           std::find(segment.nodes.begin(), segment.nodes.end(), low) == segment.nodes.end();
  });
  ASSERT_TRUE(recomputing != around.end()) << "no segment recomputes in2_x";
  EXPECT_THAT(InputsOf(*recomputing), Contains("c"));
  EXPECT_THAT(InputsOf(*recomputing), ::testing::Not(Contains("in2_x")));
  // The lateral still runs whole for the pool: each of its copies is extra work.
  const PatchGeometry geometry = GeometryOf(*facts, *recomputing, {.rows = 2, .cols = 2});
  const int64_t lateral_macs = 8 * 32 * 32 * 32;       // 1x1, 8 -> 32 channels at 32 x 32.
  const int64_t stage_macs = 32 * 9 * 8 * 32 * 32;     // The 3x3 conv, 32 -> 8 channels.
  EXPECT_EQ(geometry.macs_before, stage_macs);
  EXPECT_GT(geometry.macs_after, stage_macs + lateral_macs);  // Its copies overlap by the 3x3's halo.
  absl::StatusOr<onnx::ModelProto> patched = RewriteWithPatches(model, *facts, {{*recomputing, geometry}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  int whole = 0, copies = 0;
  for (const onnx::NodeProto& node : patched->graph().node()) {
    whole += node.name() == "in2_x_conv" && node.output(0) == "in2_x";
    copies += node.name().rfind("in2_x_conv__patch", 0) == 0;
  }
  EXPECT_EQ(whole, 1);
  EXPECT_EQ(copies, 4);
  EXPECT_TRUE(CheckModel(*patched).ok()) << CheckModel(*patched);
  EXPECT_TRUE(ShapesInfer(*patched));
}

// A nearest x`factor` Resize (asymmetric, floor: paddle2onnx's) of `input` to `dims`.
void AddUpsample(ModelBuilder& builder, const std::string& input, const std::string& output,
                 const std::vector<int64_t>& dims) {
  builder.Int64Initializer(output + "_sizes", dims);
  onnx::NodeProto& up = builder.Node("Resize", {input, "", "", output + "_sizes"}, {output}, output);
  SetString(up, "mode", "nearest");
  SetString(up, "coordinate_transformation_mode", "asymmetric");
  SetString(up, "nearest_mode", "floor");
}

// BatchNormalization of `input` (`channels`) into `output`, then Relu into `output`_relu.
void AddBatchNormRelu(ModelBuilder& builder, const std::string& input, const std::string& output, int64_t channels) {
  for (const char* part : {"_scale", "_bias", "_mean", "_var"}) builder.Initializer(output + part, kFloat, {channels});
  builder.Node("BatchNormalization", {input, output + "_scale", output + "_bias", output + "_mean", output + "_var"},
               {output}, output);
  builder.Node("Relu", {output}, {output + "_relu"}, output + "_relu");
}

// PP-OCRv4 det's shape at 128 x 128 (bench/ground_truth/detector_models.py
// dbnet at 640): a stem whose two 32 x 64 x 64 tensors make the peak, a
// backbone to stride 32 with 1x1 convs to 12, 18, 42, 360 channels, the
// RSEFPN neck (RSE laterals to 96, Resize x2 + Add top-down, 3x3 RSE layers
// to 24, Resize x8/x4/x2, Concat of four scales at 32 x 32) and DBHead
// (Conv, BN, Relu, ConvTranspose 2x2 s2, BN, Relu, ConvTranspose 2x2 s2,
// Sigmoid).
onnx::ModelProto DbnetLikeModelProto() {
  ModelBuilder builder;
  builder.Input("x", kFloat, {1, 3, 128, 128});
  AddConv(builder, "x", "s0", 3, 16, 3, 2, 1);
  AddConv(builder, "s0", "s1", 16, 32, 1, 1, 0);
  builder.Node("Sigmoid", {"s1"}, {"s1_sigmoid"}, "s1_sigmoid");
  builder.Node("Mul", {"s1", "s1_sigmoid"}, {"stem"}, "stem");
  // Backbone stages at strides 4 to 32 (channels out, the 1x1 lateral's), then the neck after the whole
  // backbone, as the exporter orders it.
  const std::vector<std::tuple<std::string, int64_t, int64_t>> stages{
      {"b2", 48, 12}, {"b3", 96, 18}, {"b4", 192, 42}, {"b5", 384, 360}};
  std::string x = "stem";
  int64_t channels = 32;
  for (const auto& [name, out, lateral] : stages) {
    AddConv(builder, x, name, channels, out, 3, 2, 1);
    builder.Node("Relu", {name}, {name + "_relu"}, name + "_relu");
    x = name + "_relu";
    channels = out;
    AddConv(builder, x, "c_" + name, channels, lateral, 1, 1, 0);
  }
  std::vector<std::string> c;
  for (const auto& [name, out, lateral] : stages) {
    AddRseLayer(builder, "c_" + name, "in_" + name, lateral, 96, 1);
    c.push_back("in_" + name);
  }
  // Top-down: out_i = in_i + Resize(out_{i+1}) x2, from stride 32 to 4.
  std::vector<std::string> outs{c[3]};
  for (int i = 2; i >= 0; --i) {
    const int64_t side = 32 >> i;
    AddUpsample(builder, outs.front(), "up_" + c[i], {1, 96, side, side});
    builder.Node("Add", {c[i], "up_" + c[i]}, {"out_" + c[i]}, "out_" + c[i]);
    outs.insert(outs.begin(), "out_" + c[i]);
  }
  std::vector<std::string> scales;
  for (int i = 3; i >= 0; --i) {
    AddRseLayer(builder, outs[i], "p" + std::to_string(i), 96, 24, 3);
    if (i > 0) AddUpsample(builder, "p" + std::to_string(i), "p_up" + std::to_string(i), {1, 24, 32, 32});
    scales.push_back(i > 0 ? "p_up" + std::to_string(i) : "p0");
  }
  testing::SetInt(builder.Node("Concat", scales, {"fuse"}, "fuse"), "axis", 1);
  AddConv(builder, "fuse", "h1", 96, 24, 3, 1, 1);
  AddBatchNormRelu(builder, "h1", "h1_bn", 24);
  std::string head = "h1_bn_relu";
  for (const auto& [name, out] : {std::tuple{"h2", 24}, std::tuple{"h3", 1}}) {
    builder.Initializer(std::string(name) + "_w", kFloat, {24, out, 2, 2});
    onnx::NodeProto& up = builder.Node("ConvTranspose", {head, std::string(name) + "_w"}, {name}, name);
    SetInts(up, "kernel_shape", {2, 2});
    SetInts(up, "strides", {2, 2});
    head = name;
    if (out > 1) AddBatchNormRelu(builder, name, std::string(name) + "_bn", out), head = std::string(name) + "_bn_relu";
  }
  builder.Node("Sigmoid", {head}, {"maps"}, "maps");
  builder.Output("maps", kFloat, {1, 1, 128, 128});
  return builder.Build();
}

TEST(GatedNeckTest, ADbnetLikeDetectorIsPatchedBelowSixTenthsWithItsInputWhole) {
  const LoadedModel loaded{.model = DbnetLikeModelProto(), .path = "dbnet.onnx"};
  absl::StatusOr<Analysis> given = AnalyzeModel(loaded, DefaultModes());
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_EQ(given->memory.arena_bytes, 2 * 32 * 64 * 64 * 4);  // The stem's two tensors.
  absl::StatusOr<PatchSearch> found = PlanPatches(loaded, DefaultModes(), *given, {});
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_TRUE(found->plan.has_value()) << found->reason;
  const PatchPlan& plan = *found->plan;
  EXPECT_LE(plan.analysis.memory.arena_bytes, given->memory.arena_bytes * 6 / 10)
      << plan.analysis.memory.arena_bytes << " vs " << given->memory.arena_bytes;
  // The neck at stride 4 recomputes its 96-channel lateral from the 12 channels it comes from, and the head
  // (ConvTranspose x2 back to 128 x 128) is a segment reading the gated stride-4 scale and the upsampled others.
  bool recomputes = false, head = false;
  for (const PlannedSegment& planned : plan.planned) {
    recomputes |= !planned.segment.recomputed.empty();
    head |= planned.segment.other_inputs.size() >= 2 &&
            std::any_of(planned.segment.nodes.begin(), planned.segment.nodes.end(), [&](int node) {
              return loaded.model->graph().node(node).op_type() == "ConvTranspose";
            });
  }
  EXPECT_TRUE(recomputes);
  EXPECT_TRUE(head);
  ExpectWrittenModelSound(plan);
}

}  // namespace
}  // namespace footprint::patching
