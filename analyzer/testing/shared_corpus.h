// The shared model corpus: the real models of SOURCES.tsv that some tests read
// from FOOTPRINT_SHARED_DIR/models (by default ../shared/models beside the
// checkout; tools/fetch_test_models.sh fetches them, checked by sha256). A
// test that needs it skips without it, with one line naming it:
//
//   TEST(FitTest, OnTheSharedCnns) {
//     FOOTPRINT_SKIP_WITHOUT_SHARED_MODELS();
//     const std::string model = testing::SharedModel("onnx_onnx/light_resnet50.onnx");
#ifndef ONNX_FOOTPRINT_ANALYZER_TESTING_SHARED_CORPUS_H_
#define ONNX_FOOTPRINT_ANALYZER_TESTING_SHARED_CORPUS_H_

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace footprint::testing {

// The corpus folder, without a trailing slash.
inline std::string SharedModelsDir() { return std::string(FOOTPRINT_SHARED_DIR) + "/models"; }

// A model of the corpus by its path in SOURCES.tsv's first column.
inline std::string SharedModel(const std::string& file) { return SharedModelsDir() + "/" + file; }

inline bool HaveSharedModels() { return std::filesystem::is_directory(SharedModelsDir()); }

// The one line a test that needs the corpus skips with.
inline std::string NoSharedModels() {
  return "needs the shared model corpus, not found at " + SharedModelsDir() +
         " (tools/fetch_test_models.sh fetches it; configure with -DFOOTPRINT_SHARED_DIR=DIR to use it)";
}

}  // namespace footprint::testing

#define FOOTPRINT_SKIP_WITHOUT_SHARED_MODELS() \
  if (!::footprint::testing::HaveSharedModels()) GTEST_SKIP() << ::footprint::testing::NoSharedModels()

#endif  // ONNX_FOOTPRINT_ANALYZER_TESTING_SHARED_CORPUS_H_
