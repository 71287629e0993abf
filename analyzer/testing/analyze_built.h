// Analyzing a model built in a test, and finding one of its tensors: what
// the memory and report tests all need (header only; the test links
// footprint_memory).
//
//   absl::StatusOr<Analysis> analysis = AnalyzeBuilt(builder, {.alias = true});
//   EXPECT_EQ(FindTensor(*analysis, "y").offset, 0);
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_ANALYZE_BUILT_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_ANALYZE_BUILT_H_

#include <string>

#include "analyzer/memory/analyze_model.h"
#include "analyzer/testing/model_builder.h"
#include "gtest/gtest.h"

namespace footprint::testing {

// AnalyzeModel on the built model, as if loaded from "test.onnx".
inline absl::StatusOr<Analysis> AnalyzeBuilt(const ModelBuilder& builder, const AnalyzeOptions& options = {}) {
  LoadedModel loaded{.model = builder.Build(), .path = "test.onnx"};
  return AnalyzeModel(loaded, options);
}

// onnxruntime-cpu (AVX-512, no arena) as the command line runs it: the
// file's order optimized, folding, aliasing and in-place on.
inline AnalyzeOptions OrtAsTheCliRunsIt() {
  return {.optimize_schedule = true, .alias = true, .inplace = true, .fold_constants = true,
          .runtime = "onnxruntime-cpu:avx512,noarena"};
}

// The arena tensor named `name`; a test failure (and an empty record) when there is none.
inline const TensorRecord& FindTensor(const Analysis& analysis, const std::string& name) {
  for (const TensorRecord& tensor : analysis.tensors) {
    if (tensor.name == name) return tensor;
  }
  ADD_FAILURE() << "no tensor " << name;
  static const TensorRecord kMissing;
  return kMissing;
}

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_ANALYZE_BUILT_H_
