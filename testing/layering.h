// The layering check: every folder's README says what its code never
// includes, and this reads the #includes of the tree and finds where a file
// does, directly or through the project headers it includes.
//
// Usage (testing/layering_test.cc runs it on the checkout):
//   absl::StatusOr<std::vector<LayeringViolation>> found = CheckLayering("/path/to/checkout");
//   for (const LayeringViolation& v : *found) std::cerr << DescribeViolation(v) << "\n";
//
// And the include cycles of a folder, a .h and its .cc counted as one:
//   absl::StatusOr<std::vector<IncludeCycle>> cycles = FindIncludeCycles(root, "analyzer/runtimes/");
//
// Why from the READMEs: the rule a newcomer reads and the rule the build
// enforces are then one text, and cannot drift apart.
//
// The rules, in a folder's README.md:
//   ## Never includes
//   - `analyzer/report/`, `analyzer/cli/`: why (applies to every file below the folder)
//   ## Never includes outside tests
//   - `analyzer/loader/`: why (tests may: they build their input)
// Test code is *_test.cc files, their helpers (*_test_util.{h,cc} and every
// file below a folder named testing/) and bench/. Each backquoted word of a
// bullet before its colon is an include prefix ("onnx/" forbids
// "onnx/onnx_pb.h"); a rule must name them on its first line. A folder's
// rules hold for every source file below it (.h, .cc, .c) and add to the
// rules of the folders above it. Code that is not test code never includes a
// test helper, wherever it is. A heading that mentions "Never includes" in
// another form, or a bullet without its colon, is an error, not a rule lost.
//
// What it checks: every #include, "..." and <...>. A quoted one is looked up
// as the compiler does (the including file's folder, then the checkout's
// root); a header found there is followed. One that is not (onnx/, absl/, a
// generated .pb.h, every <...>) is matched against the rules but not opened.
// Build output (build*/ at the root) and hidden folders are not read.
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

// Every rule of every README.md below `root`. Errors: a malformed rule or
// rules heading (naming the README and line), an unreadable tree, no rule at all.
absl::StatusOr<std::vector<LayeringRule>> ReadLayeringRules(const std::string& root);

// The violations of those rules in the tree below `root`, sorted by file and line.
absl::StatusOr<std::vector<LayeringViolation>> CheckLayering(const std::string& root);

// "planner/planner.cc:3 includes analyzer/loader/model_loader.h (via ...),
//  which planner/README.md says planner/ never includes (`analyzer/`)".
std::string DescribeViolation(const LayeringViolation& violation);

// One step of an include cycle: a unit, and its include of the next one's header.
struct CycleStep {
  std::string unit;      // A .h and the .cc (or .c) of its stem: their path without extension ("a/b").
  std::string file;      // The unit's file whose #include leads to the next step's unit.
  int line = 0;          // That #include's line.
  std::string includes;  // The header it includes: the next step's (the first step's, for the last).
};

struct IncludeCycle {
  std::vector<CycleStep> steps;  // From the unit first in sorted order, round to it again.
};

// The include cycles among the sources below `folder` (relative to `root`,
// "analyzer/runtimes/"), where a .h and the .cc of its stem in the same
// folder are one unit: a.cc including b.h while b.cc includes a.h is a cycle
// (neither header includes the other, but neither pair compiles, links or
// reads without the other). Test code counts like any other file. Only a
// direct #include from one file of the folder of another counts, not a chain
// through headers outside it. Each include that lies on a cycle is reported
// with the shortest cycle through it; a cycle that several of them close,
// once. Sorted by their units. Errors: a missing folder, one without a source.
absl::StatusOr<std::vector<IncludeCycle>> FindIncludeCycles(const std::string& root, const std::string& folder);

// "include cycle a/x -> a/y -> a/x: a/x.cc:3 includes a/y.h, a/y.cc:5 includes a/x.h".
std::string DescribeCycle(const IncludeCycle& cycle);

}  // namespace footprint::layering

#endif  // ONNX_FOOTPRINT_TESTING_LAYERING_H_
