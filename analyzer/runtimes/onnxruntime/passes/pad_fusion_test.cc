// ORT's PadFusion (pad_fusion.cc) on built models through the whole analysis.
// Measured (ORT 1.30, AVX-512): an SSD-shaped detector (TensorFlow-style
// Pads before its stride-2 Convs) ran at 1.564 of ORT's peak without the
// rule and 1.000 with it; ORT's optimized model has no Pad left.

#include <cstring>
#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint {
namespace {

using ::footprint::testing::AnalyzeBuilt;
using ::footprint::testing::ModelBuilder;
using ::footprint::testing::SetInts;

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
const AnalyzeOptions kOrt = testing::OrtAsTheCliRunsIt();

bool IsArenaTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return true;
  }
  return false;
}

// x [1, 16, 64, 64] -> Pad (0, 0, 0, 0 / 0, 0, 1, 1) -> `reader` -> y, at
// `opset`; `value` the Pad's constant value when it is given.
ModelBuilder PadThen(const std::string& reader, int64_t opset, float value = 0.0f, bool give_value = false) {
  ModelBuilder builder;
  builder.Opset("", opset).Input("x", kFloat, {1, 16, 64, 64});
  builder.Int64Initializer("pads", {0, 0, 0, 0, 0, 0, 1, 1});
  std::vector<std::string> inputs = {"x", "pads"};
  if (give_value) {
    onnx::TensorProto* constant = builder.graph().add_initializer();
    constant->set_name("value");
    constant->set_data_type(kFloat);
    constant->set_raw_data(std::string(reinterpret_cast<const char*>(&value), sizeof(value)));
    inputs.push_back("value");
  }
  builder.Node("Pad", inputs, {"padded"});
  if (reader == "Conv") {
    builder.Initializer("w", kFloat, {16, 16, 3, 3});
    onnx::NodeProto& conv = builder.Node("Conv", {"padded", "w"}, {"y"}, "conv");
    SetInts(conv, "strides", {2, 2});
    SetInts(conv, "pads", {0, 0, 0, 0});
    builder.Output("y", kFloat, {1, 16, 32, 32});
  } else {
    builder.Node(reader, {"padded"}, {"y"});
    builder.Output("y", kFloat, {1, 16, 65, 65});
  }
  return builder;
}

TEST(PadFusionTest, AZeroPadBeforeAConvIsTakenIntoItsPads) {
  absl::StatusOr<Analysis> ort = AnalyzeBuilt(PadThen("Conv", 13), kOrt);
  ASSERT_TRUE(ort.ok()) << ort.status();
  EXPECT_FALSE(IsArenaTensor(*ort, "padded"));
  absl::StatusOr<Analysis> zero_value = AnalyzeBuilt(PadThen("Conv", 13, 0.0f, /*give_value=*/true), kOrt);
  ASSERT_TRUE(zero_value.ok()) << zero_value.status();
  EXPECT_FALSE(IsArenaTensor(*zero_value, "padded"));
  absl::StatusOr<Analysis> opset21 = AnalyzeBuilt(PadThen("Conv", 21), kOrt);  // ORT 1.30: every opset.
  ASSERT_TRUE(opset21.ok()) << opset21.status();
  EXPECT_FALSE(IsArenaTensor(*opset21, "padded"));
  absl::StatusOr<Analysis> plain = AnalyzeBuilt(PadThen("Conv", 13), {.alias = true, .inplace = true});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(IsArenaTensor(*plain, "padded"));  // Without --runtime the graph is the file's.
}

TEST(PadFusionTest, WhatORTsRuleLeaves) {
  // A non-zero padding value, a reader that is not a Conv or MaxPool, and a
  // mode other than constant (measured: pad_conv13_v1 keeps its Pad).
  ModelBuilder reflect = PadThen("Conv", 13);
  for (onnx::NodeProto& node : *reflect.graph().mutable_node()) {
    if (node.op_type() != "Pad") continue;
    onnx::AttributeProto* mode = node.add_attribute();
    mode->set_name("mode");
    mode->set_type(onnx::AttributeProto::STRING);
    mode->set_s("reflect");
  }
  for (const auto& [builder, why] : {std::pair{PadThen("Conv", 13, 1.0f, /*give_value=*/true), "value 1"},
                                     std::pair{PadThen("Relu", 13), "a Relu reads it"},
                                     std::pair{reflect, "reflect mode"}}) {
    absl::StatusOr<Analysis> ort = AnalyzeBuilt(builder, kOrt);
    ASSERT_TRUE(ort.ok()) << ort.status();
    EXPECT_TRUE(IsArenaTensor(*ort, "padded")) << why;
  }
}

}  // namespace
}  // namespace footprint
