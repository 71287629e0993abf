// The layering check: every folder's README says what its code never
// includes, and this reads the #includes of the tree and finds where a file
// does, directly or through the project headers it includes.
//
// Usage (testing/layering_test.cc runs it on the checkout):
//   absl::StatusOr<std::vector<LayeringViolation>> found = CheckLayering("/path/to/checkout");
//   for (const LayeringViolation& v : *found) std::cerr << DescribeViolation(v) << "\n";
//
// Why from the READMEs: the rule a newcomer reads and the rule the build
// enforces are then one text, and cannot drift apart.
//
// The rules, in a folder's README.md:
//   ## Never includes
//   - `analyzer/report/`, `analyzer/cli/`: why (applies to every file below the folder)
//   ## Never includes outside tests
//   - `analyzer/loader/`: why (tests may: they build their input)
// Tests are *_test.cc files, their helpers *_test_util.{h,cc}, and every
// file below a folder named testing/. Each backquoted word of a bullet is an include prefix ("onnx/" forbids
// "onnx/onnx_pb.h"). A folder's rules hold for every source file below it
// (.h, .cc, .c) and add to the rules of the folders above it.
//
// What it checks: quoted includes only ("..."; <...> are the system's), each
// resolved against the checkout's root; a header found there is followed,
// one that is not (onnx/, absl/, generated .pb.h) is matched but not opened.
// What it does not: code that is compiled in without an #include (a CMake
// target linking a library it may not), and macros that build an include
// path.
#ifndef ONNX_FOOTPRINT_TESTING_LAYERING_H_
#define ONNX_FOOTPRINT_TESTING_LAYERING_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace footprint::layering {

struct LayeringRule {
  std::string folder;         // Relative to the root, with a trailing '/' ("" for the root).
  std::string readme;         // The README.md that states it.
  std::string prefix;         // The forbidden include prefix ("onnx/").
  bool tests_exempt = false;  // From "Never includes outside tests".
};

struct LayeringViolation {
  std::string file;                // The source file, relative to the root.
  int line = 0;                    // Its #include line that leads to the forbidden header.
  std::string forbidden_include;   // The header the rule forbids.
  std::vector<std::string> via;    // Project headers between the file and it (empty: direct).
  LayeringRule rule;               // The rule it breaks.
};

// Every rule of every README.md below `root` (build*/ and hidden folders
// skipped). Errors: a README whose rules section has a bullet without a
// backquoted prefix.
absl::StatusOr<std::vector<LayeringRule>> ReadLayeringRules(const std::string& root);

// The violations of those rules in the tree below `root`, sorted by file and line.
absl::StatusOr<std::vector<LayeringViolation>> CheckLayering(const std::string& root);

// "planner/planner.cc:3 includes analyzer/loader/model_loader.h (via ...),
//  which planner/README.md says the folder never includes (`analyzer/`)".
std::string DescribeViolation(const LayeringViolation& violation);

}  // namespace footprint::layering

#endif  // ONNX_FOOTPRINT_TESTING_LAYERING_H_
