// A scratch directory for one test process.
//
// Usage:
//   const std::string path = footprint::testing::ScratchDir() + "/model.onnx";
//
// Why per process: ctest runs every test case as its own process, several at
// once, and two cases writing "model.onnx" into one shared folder read each
// other's half-written files. The directory is removed when the process ends.
// Header-only, so that the planner, scheduler and devices tests (which link
// nothing of the analyzer) can use it too.
#ifndef ONNX_FOOTPRINT_TESTING_SCRATCH_DIR_H_
#define ONNX_FOOTPRINT_TESTING_SCRATCH_DIR_H_

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "gtest/gtest.h"

namespace footprint::testing {

inline const std::string& ScratchDir() {
  struct Dir {
    std::filesystem::path path;
    Dir()
        : path(std::filesystem::path(::testing::TempDir()) /
               ("onnx_footprint_test_" + std::to_string(static_cast<long>(getpid())))) {
      std::filesystem::create_directories(path);
    }
    ~Dir() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Dir dir;
  static const std::string path = dir.path.string();
  return path;
}

}  // namespace footprint::testing

#endif  // ONNX_FOOTPRINT_TESTING_SCRATCH_DIR_H_
