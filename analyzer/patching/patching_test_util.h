// What the patching tests share: building a Conv or a string attribute, the
// shapes a built model's analysis gives, ONNX's strict shape inference of a
// written model (and the checks every written model passes), and the CLI's
// modes without a timed search.
#ifndef ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCHING_TEST_UTIL_H_
#define ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCHING_TEST_UTIL_H_

#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/patching/patch_plan.h"
#include "analyzer/patching/rewrite.h"
#include "analyzer/patching/segment.h"
#include "analyzer/testing/analyze_built.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"
#include "onnx/shape_inference/implementation.h"

namespace footprint::patching {

inline constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

inline void SetString(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

// Conv with a filter `name`_w of out x in x k x k.
inline void AddConv(testing::ModelBuilder& builder, const std::string& input, const std::string& output, int64_t in,
                    int64_t out, int64_t kernel, int64_t stride, int64_t pad) {
  builder.Initializer(output + "_w", kFloat, {out, in, kernel, kernel});
  onnx::NodeProto& node = builder.Node("Conv", {input, output + "_w"}, {output}, output + "_conv");
  testing::SetInts(node, "kernel_shape", {kernel, kernel});
  testing::SetInts(node, "strides", {stride, stride});
  testing::SetInts(node, "pads", {pad, pad, pad, pad});
}

// Every tensor's and weight's dims in `analysis` (of the baseline: every node output a tensor).
inline TensorShapes ShapesOfAnalysis(const Analysis& analysis) {
  TensorShapes shapes;
  for (const TensorRecord& tensor : analysis.tensors) {
    std::vector<int64_t> dims;
    for (const Dim& dim : *tensor.shape) dims.push_back(*dim.value);
    shapes[tensor.name] = dims;
  }
  for (const WeightRecord& weight : analysis.weights) {
    std::vector<int64_t> dims;
    for (const Dim& dim : weight.shape) dims.push_back(*dim.value);
    shapes[weight.name] = dims;
  }
  return shapes;
}

// The shapes the builder's model declares, from the analysis' baseline.
inline TensorShapes ShapesOfBuilt(const testing::ModelBuilder& builder) {
  absl::StatusOr<Analysis> analysis = testing::AnalyzeBuilt(builder);
  EXPECT_TRUE(analysis.ok()) << analysis.status();
  return analysis.ok() ? ShapesOfAnalysis(*analysis) : TensorShapes{};
}

// ONNX's shape inference in strict mode accepts `model` (as a runtime's load
// does: every copy's inputs agree, a Concat's pieces have the same rows).
inline ::testing::AssertionResult ShapesInfer(const onnx::ModelProto& model) {
  onnx::ModelProto copy = model;
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/true, /*strict_mode_val=*/1, /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& error) {
    return ::testing::AssertionFailure() << error.what();
  }
  return ::testing::AssertionSuccess();
}

// The CLI's modes with no timed search: a figure, and the analysis of the
// written model that must give it again, may not depend on the machine's load.
inline AnalyzeOptions DefaultModes() {
  return {.planner_time_limit = absl::ZeroDuration(), .optimize_schedule = true,
          .schedule_time_limit = absl::ZeroDuration(), .alias = true, .inplace = true, .fold_constants = true,
          .accumulate = true, .qdq = true};
}

// The model `plan` wrote analyzes to the arena the plan claims, passes
// ONNX's checker and its strict shape inference.
inline void ExpectWrittenModelSound(const PatchPlan& plan) {
  absl::StatusOr<Analysis> again = AnalyzeModel(plan.model, DefaultModes());
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->memory.arena_bytes, plan.analysis.memory.arena_bytes);
  EXPECT_TRUE(CheckModel(*plan.model.model).ok()) << CheckModel(*plan.model.model);
  EXPECT_TRUE(ShapesInfer(*plan.model.model));
}

}  // namespace footprint::patching

#endif  // ONNX_FOOTPRINT_ANALYZER_PATCHING_PATCHING_TEST_UTIL_H_
