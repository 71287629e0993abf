// The small model the plan tests share: every kind of arena tensor and both
// kinds of sharing (header only; the test links footprint_memory).
#ifndef ONNX_FOOTPRINT_ANALYZER_PLAN_PLAN_TEST_UTIL_H_
#define ONNX_FOOTPRINT_ANALYZER_PLAN_PLAN_TEST_UTIL_H_

#include "analyzer/memory/analysis_result.h"
#include "analyzer/testing/model_builder.h"
#include "onnx/onnx_pb.h"

namespace footprint::testing {

// x -> Relu a -> Reshape b (alias of a) -> Relu c (in place over b);
// x2 -> Sigmoid d. Graph inputs x, x2; graph outputs c, d.
inline ModelBuilder SharingModel() {
  constexpr int kFloat = onnx::TensorProto::FLOAT;
  ModelBuilder builder;
  builder.Input("x", kFloat, {4, 8})
      .Input("x2", kFloat, {4, 8})
      .Int64Initializer("shape", {8, 4})
      .Add("Relu", {"x"}, {"a"}, "relu0")
      .Add("Reshape", {"a", "shape"}, {"b"}, "reshape")
      .Add("Relu", {"b"}, {"c"}, "relu1")
      .Add("Sigmoid", {"x2"}, {"d"}, "sig")
      .Output("c", kFloat, {8, 4})
      .Output("d", kFloat, {4, 8});
  return builder;
}

// Every mode on (alias, in-place, optimized schedule), or the baseline.
inline AnalyzeOptions ModesOptions(bool all_modes) {
  AnalyzeOptions options;
  options.alias = options.inplace = options.optimize_schedule = all_modes;
  return options;
}

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_PLAN_PLAN_TEST_UTIL_H_
