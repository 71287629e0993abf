// A neck stage gated by squeeze-and-excitation (PP-OCR's RSEFPN: x + x *
// SE(x)): its Mul by an N x C x 1 x 1 gate is patched, every patch reading
// the gate whole.
#include <string>
#include <vector>

#include "analyzer/memory/analyze_model.h"
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

}  // namespace
}  // namespace footprint::patching
