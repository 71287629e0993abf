// The checkout as the checks of testing/ read it (layering.h, code_shape.h):
// its files, which of them are sources and which test code, their text.
#ifndef ONNX_FOOTPRINT_TESTING_SOURCE_TREE_H_
#define ONNX_FOOTPRINT_TESTING_SOURCE_TREE_H_

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace footprint::layering {

// Every file below `root`, relative to it (links not followed), in sorted
// order. Hidden folders are left out anywhere, build output (build*/,
// cmake-build*/) only at the root, so that a source folder named builders/
// is still read. An unreadable tree is an error, not an empty one: a check
// of nothing would pass.
absl::StatusOr<std::vector<std::string>> FilesBelow(const std::filesystem::path& root);

// A C or C++ source: .h, .cc or .c.
bool IsSource(const std::string& file);

// Test code: *_test.cc files, their helpers (*_test_util.{h,cc} and every
// file below a folder named testing/) and bench/, which may use those helpers.
bool IsTest(const std::string& file);

// The file's bytes; nullopt when it cannot be read.
std::optional<std::string> ReadFile(const std::filesystem::path& path);

}  // namespace footprint::layering

#endif  // ONNX_FOOTPRINT_TESTING_SOURCE_TREE_H_
